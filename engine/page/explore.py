"""Page-level questions answered with many estimates: sweeps for the charts, fit marks for the
pickers, the reverse hardware search, the agent task estimate, use-case verdicts and suggestions.

Everything here is built on :func:`engine.api.estimate` and the catalog loaders only, so it never
disagrees with the main numbers. Each function takes one dict (``{"view": <page view>, ...}``,
see fields.py) and returns plain data; the worker reaches them through ``engine.handle``. Long
lists come in chunks (``offset``/``limit``) so that one call stays short and the page's own
recompute never waits long behind background work.
"""

from __future__ import annotations

import math
from functools import cache

from ..api import estimate
from ..errors import EngineInputError
from ..hardware import load_hardware
from ..models import load_models
from ..quant import load_quants
from .fields import check_view
from .view import default_draft, request_for_view

#: How fast is fast enough (seed 002, physics.md section 10): usable decode speed per use, in
#: tokens/s. ``low`` is where the use starts to work, ``high`` where it is comfortable.
USE_CASES = (
    {"id": "floor", "label": "Streaming at all", "short": "floor", "low": 2, "high": 3,
     "why": "below about 2-3 tok/s a streaming answer feels broken, not slow"},
    {"id": "reading", "label": "Reading along", "short": "reading", "low": 5, "high": 10,
     "why": "people read about 5-10 tokens per second"},
    {"id": "chat", "label": "Interactive chat", "short": "chat", "low": 10, "high": 20,
     "why": "chat is comfortable at 10-20 tok/s, reading speed"},
    {"id": "coding", "label": "Interactive coding", "short": "coding", "low": 30, "high": 40,
     "why": "code has a lot of structure to skim: 30-40 tok/s feels fluid"},
    {"id": "agentic", "label": "Heavy agentic coding", "short": "agents", "low": 60, "high": 100,
     "why": "many model calls and tool calls add up: 60-100+ tok/s"},
)
USE_CASES_SOURCE = "seed 002 (tokens per second for each use case), physics.md section 10"

#: "One card, four models" (seed 000): dense models that double in size, then popular MoEs.
MODEL_SWEEP = ("llama-3.1-8b", "qwen3-14b", "qwen3-32b", "llama-3.3-70b", "gpt-oss-20b", "qwen3-30b-a3b", "gpt-oss-120b")
#: Devices people weigh against each other, from a 12 GB card to a data-center GPU.
HARDWARE_SWEEP = (
    "rtx-3060", "arc-b580", "rtx-4060-ti-16gb", "rtx-3090", "rx-7900-xtx", "rtx-4090", "rtx-5090",
    "rtx-pro-6000-blackwell", "h100-sxm", "apple-m4-pro-20c-48gb", "apple-m4-max-40c-128gb",
    "apple-m3-ultra-80c-512gb", "ryzen-ai-max-plus-395-128gb", "dgx-spark", "amd-ryzen-9-9950x-64gb",
)
#: Context lengths of the speed-vs-context chart (tokens), cut at the model's maximum.
CONTEXT_SWEEP = (256, 1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072, 262144)
#: Concurrent requests of the batch chart.
BATCH_SWEEP = (1, 2, 4, 8, 16, 32, 64, 128, 256)
#: Tokens generated per point of a sweep: enough to average over, short enough to be "at" a context.
SWEEP_GEN_TOKENS = 32
#: Quants tried when the page's quant is not one the model is published in, best first.
PREFERRED_QUANTS = ("Q4_K_M", "UD-Q4_K_XL", "MXFP4", "Q4_0", "MLX-4bit", "AWQ-4bit")
#: Longest chunk a list call computes (estimates per call).
MAX_CHUNK = 64


def _view(args: dict, *allowed: str) -> dict:
    """The complete, checked view of a call's ``{"view": {...}, ...}``; other keys must be in
    ``allowed`` (a misspelt option is an error, not silently ignored)."""
    if not isinstance(args, dict) or not isinstance(args.get("view"), dict):
        raise EngineInputError("expected {'view': {...}}")
    unknown = [key for key in args if key != "view" and key not in allowed]
    if unknown:
        shown = sorted(repr(key)[:40] for key in unknown)
        raise EngineInputError(f"unknown option(s): {', '.join(shown[:5])}{' ...' if len(shown) > 5 else ''}")
    return check_view(args["view"])


def _whole(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _request(view: dict, **overrides) -> dict:
    """The view's request without the stream schedule (sweeps do not play anything)."""
    request = request_for_view(view)
    request.pop("schedule", None)
    request.update(overrides)
    return request


def _point(request: dict) -> dict:
    """The few numbers a chart or a list needs; an impossible set-up is a point with its reason."""
    try:
        result = estimate(request)
    except EngineInputError as exc:
        return {"ok": False, "error": exc.message}
    return {
        "ok": True,
        "decode_tps": result["decode_tps"],
        "decode_tps_low": result["decode_tps_low"],
        "decode_tps_high": result["decode_tps_high"],
        "aggregate_tps": result["aggregate_tps"],
        "ttft_s": result["ttft_s"],
        "prefill_tps": result["prefill_tps"],
        "fit": result["fit"],
        "total_gb": result["memory"]["total_gb"],
        "usable_gb": result["memory"]["usable_gb"],
    }


def quant_for(model_id: str, current: str) -> str:
    """The quant to show a model in: the page's, if the model is published in it (or lists no
    formats); else the first preferred one it is published in; else its first format."""
    for field, value in (("model", model_id), ("quant", current)):
        if not isinstance(value, str):
            raise EngineInputError(f"{field} must be a name, got {value!r:.40}", field=field)
    model = load_models().get(model_id)
    if model is None or not model.quants or current in model.quants:
        return current
    for name in PREFERRED_QUANTS:
        if name in model.quants:
            return name
    return model.quants[0]


def _chunk(items: list, args: dict) -> tuple[list, int]:
    offset = args.get("offset", 0)
    limit = args.get("limit", MAX_CHUNK)
    if not _whole(offset) or not _whole(limit) or offset < 0 or not 1 <= limit <= MAX_CHUNK:
        raise EngineInputError(f"offset must be >= 0 and limit 1..{MAX_CHUNK}")
    return items[offset:offset + limit], len(items)


# ------------------------------------------------------------------ sweeps for the charts


def sweep_context(args: dict) -> dict:
    """Decode speed at growing context, and the TTFT of prefilling that context in one go."""
    view = _view(args)
    base = _request(view)
    max_context = _max_context(view)
    points = []
    for context in [c for c in CONTEXT_SWEEP if c <= max_context] or [max_context]:
        point = _point({**base, "prompt_tokens": context, "depth": 0, "prefix_cached": 0, "gen_tokens": SWEEP_GEN_TOKENS, "reasoning_tokens": 0})
        points.append({"context": context, **point})
    here = base.get("depth", 0) + base["prompt_tokens"]
    return {"kind": "context", "points": points, "current_context": here, "max_context": max_context}


def _max_context(view: dict) -> int:
    model = load_models().get(view.get("model", ""))
    return model.arch.max_context if model and model.arch.max_context else 131072


def sweep_models(args: dict) -> dict:
    """"One card, four models": the same device with models of growing size."""
    view = _view(args)
    ids = list(dict.fromkeys([*MODEL_SWEEP, view.get("model")]))
    models = load_models()
    rows = []
    for model_id in ids:
        if model_id == "custom" or model_id not in models:
            continue
        quant = quant_for(model_id, view.get("quant", "Q4_K_M"))
        sub = {**view, "model": model_id, "quant": quant, "spec": "off"}
        rows.append({"id": model_id, "name": models[model_id].name, "quant": quant,
                     "current": model_id == view.get("model"), **_point(_request(sub))})
    return {"kind": "models", "points": rows}


def sweep_hardware(args: dict) -> dict:
    """The same model on the devices people usually compare, plus the one chosen."""
    view = _view(args)
    ids = list(dict.fromkeys([*HARDWARE_SWEEP, view.get("hw")]))
    devices = load_hardware()
    rows = []
    for device_id in ids:
        if device_id not in devices and device_id != "custom":
            continue
        name = view.get("hw_name", "Custom") if device_id == "custom" else devices[device_id].name
        rows.append({"id": device_id, "name": name, "current": device_id == view.get("hw"),
                     **_point(_request({**view, "hw": device_id}))})
    return {"kind": "hardware", "points": rows}


def sweep_batch(args: dict) -> dict:
    """Concurrent requests: per-stream speed falls, aggregate throughput rises until compute or
    the KV cache of all streams takes over (the roofline)."""
    view = _view(args)
    points = [{"batch": b, **_point(_request({**view, "batch": b}))} for b in BATCH_SWEEP]
    return {"kind": "batch", "points": points}


# ------------------------------------------------------------------ lists


def marks(args: dict) -> dict:
    """Fit mark (fits / offload / no) of every item of a picker for the current choice:
    ``kind`` = hardware (the model on each device), models (each model on the device, in its
    quant per :func:`quant_for`) or quants (each format of the model on the device)."""
    view = _view(args, "kind", "offset", "limit")
    kind = args.get("kind")
    if kind == "hardware":
        items = sorted(load_hardware())
        make = lambda item: {**view, "hw": item}  # noqa: E731 - one line per kind reads best
    elif kind == "models":
        items = sorted(load_models())
        make = lambda item: {**view, "model": item, "quant": quant_for(item, view.get("quant", "")), "spec": "off"}  # noqa: E731
    elif kind == "quants":
        items = [q.name for q in load_quants().values()]
        make = lambda item: {**view, "quant": item}  # noqa: E731
    else:
        raise EngineInputError("kind must be hardware, models or quants", field="kind")
    chunk, total = _chunk(items, args)
    out = {}
    for item in chunk:
        point = _point(_request(make(item)))
        out[item] = point["fit"] if point["ok"] else "error"
    return {"kind": kind, "marks": out, "total": total}


def reverse(args: dict) -> dict:
    """Which devices run this set-up at >= ``min_tps`` decode (at this context)? One chunk of
    the hardware catalog per call, with price and decode tokens/s per 1,000 USD of launch price."""
    view = _view(args, "min_tps", "offset", "limit")
    min_tps = args.get("min_tps", 20)
    if isinstance(min_tps, bool) or not isinstance(min_tps, (int, float)) or not 0 < min_tps <= 100_000:
        raise EngineInputError("the target speed must be a number above 0 tok/s", field="min_tps")
    devices = load_hardware()
    chunk, total = _chunk(sorted(devices), args)
    rows = []
    for device_id in chunk:
        device = devices[device_id]
        point = _point(_request({**view, "hw": device_id}))
        if not point["ok"]:
            continue
        price = device.launch_price_usd
        rows.append({
            "id": device_id,
            "name": device.name,
            "family": device.family,
            "vendor": device.vendor,
            "memory_gib": device.memory_gib,
            "price_usd": price,
            "decode_tps": point["decode_tps"],
            "ttft_s": point["ttft_s"],
            "fit": point["fit"],
            "tps_per_kusd": point["decode_tps"] / price * 1000 if price else None,
            "meets": point["decode_tps"] >= min_tps and point["fit"] != "no",
        })
    return {"rows": rows, "total": total, "min_tps": min_tps}


# ------------------------------------------------------------------ verdicts and suggestions


def verdicts(decode_tps: float) -> list[dict]:
    """Each use case's verdict for a decode speed: good (>= high), ok (>= low) or slow."""
    if isinstance(decode_tps, bool) or not isinstance(decode_tps, (int, float)) or not 0 <= decode_tps < math.inf:
        raise EngineInputError(f"a decode speed must be a finite number >= 0, got {decode_tps!r:.40}", field="decode_tps")
    out = []
    for case in USE_CASES:
        level = "good" if decode_tps >= case["high"] else "ok" if decode_tps >= case["low"] else "slow"
        out.append({**case, "level": level})
    return out


def _lower_quants(view: dict) -> list[str]:
    """Formats of the same kind with fewer bits per weight, nearest first (the model's published
    ones if it lists any)."""
    quants = {q.name: q for q in load_quants().values()}
    current = quants.get(view.get("quant"))
    if current is None:
        return []
    model = load_models().get(view.get("model", ""))
    names = [n for n in (model.quants if model and model.quants else quants) if n in quants]
    lower = [quants[n] for n in names if quants[n].kind == current.kind and quants[n].bits_per_weight < current.bits_per_weight]
    return [q.name for q in sorted(lower, key=lambda q: -q.bits_per_weight)]


def _suggest(view: dict, patch: dict, text: str, base: dict) -> dict | None:
    point = _point(_request({**view, **patch}))
    if not point["ok"]:
        return None
    return {"text": text, "patch": patch, "decode_tps": point["decode_tps"], "fit": point["fit"],
            "ttft_s": point["ttft_s"], "base_decode_tps": base["decode_tps"]}


def advice(args: dict) -> dict:
    """Use-case verdicts for the view, and set-up changes worth trying, each with its numbers
    and the view patch that applies it."""
    view = _view(args)
    base = _point(_request(view))
    if not base["ok"]:
        return {"verdicts": [], "suggestions": [], "error": base["error"]}
    suggestions = []
    model = load_models().get(view.get("model", ""))
    if base["fit"] != "fits":
        for steps, quant in enumerate(_lower_quants(view)[:6], start=1):
            down = "one step down" if steps == 1 else f"{steps} steps down"
            found = _suggest(view, {"quant": quant}, f"{quant}, {down}, fits entirely in memory", base)
            if found and found["fit"] == "fits":
                suggestions.append(found)
                break
        if view.get("kv", "f16") in ("f16", "bf16", "f32"):
            found = _suggest(view, {"kv": "q8_0"}, "An 8-bit KV cache (q8_0) fits", base)
            if found and found["fit"] == "fits":
                suggestions.append(found)
        device = load_hardware().get(view.get("hw", ""))
        if view.get("gpus", 1) == 1 and device is not None and device.kind == "gpu":
            found = _suggest(view, {"gpus": 2}, "Two of these cards hold it all", base)
            if found and found["fit"] == "fits":
                suggestions.append(found)
    if base["fit"] == "offload" and model and model.arch.is_moe and view.get("offload") != "experts":
        found = _suggest(view, {"offload": "experts"}, "MoE expert offload (--n-cpu-moe) instead of whole layers in RAM", base)
        if found and found["fit"] != "no" and found["decode_tps"] > base["decode_tps"]:
            suggestions.append(found)
    if base["fit"] == "fits":
        higher = _higher_quant_that_fits(view, base)
        if higher:
            suggestions.append(higher)
    if view.get("spec", "off") == "off" and model and default_draft(model.id):
        found = _suggest(view, {"spec": "draft", "workload": "code"}, f"A draft model ({load_models()[default_draft(model.id)].name}) on code", base)
        if found and found["decode_tps"] > 1.1 * base["decode_tps"]:
            suggestions.append(found)
    return {"verdicts": verdicts(base["decode_tps"]), "suggestions": suggestions, "source": USE_CASES_SOURCE}


def _higher_quant_that_fits(view: dict, base: dict) -> dict | None:
    """The next format up in quality that still fits, if decode stays above reading speed."""
    quants = {q.name: q for q in load_quants().values()}
    current = quants.get(view.get("quant"))
    model = load_models().get(view.get("model", ""))
    if current is None or not model or not model.quants:
        return None
    higher = sorted((quants[n] for n in model.quants if n in quants and quants[n].kind == current.kind
                     and quants[n].bits_per_weight > current.bits_per_weight), key=lambda q: q.bits_per_weight)
    for quant in higher[:1]:
        found = _suggest(view, {"quant": quant.name}, f"{quant.name} also fits: more bits per weight, better quality", base)
        if found and found["fit"] == "fits" and found["decode_tps"] >= USE_CASES[1]["high"]:
            return found
    return None


# ------------------------------------------------------------------ agent task

#: The agent estimate's inputs: (default, lowest, highest). The defaults are seed 002's worked
#: example: a ReAct agent, 4 turns of 200 tokens, one 300 ms tool call per turn.
AGENT_INPUTS = {
    "turns": (4, 1, 100),
    "gen_tokens": (200, 1, 32_768),
    "tool_calls": (1, 0, 20),
    "tool_latency_s": (0.3, 0.0, 600.0),
    "tool_result_tokens": (300, 0, 200_000),
}


def _agent_inputs(args: dict) -> dict:
    values = {}
    for key, (default, lo, hi) in AGENT_INPUTS.items():
        value = args.get(key, default)
        number = isinstance(value, (int, float)) and not isinstance(value, bool) and lo <= value <= hi
        if not number or (isinstance(default, int) and value != int(value)):
            what = "a number" if isinstance(default, float) else "a whole number"
            raise EngineInputError(f"{key.replace('_', ' ')} must be {what} from {lo:g} to {hi:g}", field=key)
        values[key] = value if isinstance(default, float) else int(value)
    prefix_cache = args.get("prefix_cache", True)
    if not isinstance(prefix_cache, bool):
        raise EngineInputError("prefix_cache must be true or false", field="prefix_cache")
    values["prefix_cache"] = prefix_cache
    return values


def _agent_run(view: dict, inputs: dict, prefix_cache: bool) -> dict:
    """Turn by turn: prefill what is new (or everything again without a prefix cache), generate
    (thinking first, if any), then run the turn's tool calls, whose results join the context."""
    base = _request(view)
    reasoning = base.get("reasoning_tokens", 0)
    context = base.get("depth", 0)
    new_tokens = base["prompt_tokens"]
    turns = []
    for turn in range(1, inputs["turns"] + 1):
        request = {**base, "gen_tokens": inputs["gen_tokens"], "prefix_cached": 0}
        if prefix_cache:
            request.update(depth=context, prompt_tokens=new_tokens)
        else:
            request.update(depth=0, prompt_tokens=context + new_tokens)
        result = estimate(request)
        generated = reasoning + inputs["gen_tokens"]
        generate_s = max(generated - 1, 0) / result["decode_tps"]
        tools_s = inputs["tool_calls"] * inputs["tool_latency_s"]
        turns.append({"turn": turn, "context_tokens": context + new_tokens, "prefill_tokens": request["prompt_tokens"],
                      "ttft_s": result["ttft_s"], "generate_s": generate_s, "tools_s": tools_s,
                      "decode_tps": result["decode_tps"], "fit": result["fit"],
                      "total_s": result["ttft_s"] + generate_s + tools_s})
        context += new_tokens + generated
        new_tokens = max(inputs["tool_calls"] * inputs["tool_result_tokens"], 1)
    totals = {key: sum(t[key] for t in turns) for key in ("ttft_s", "generate_s", "tools_s", "total_s")}
    return {"turns": turns, **totals, "generated_tokens": inputs["turns"] * (reasoning + inputs["gen_tokens"])}


def agent(args: dict) -> dict:
    """End-to-end time of an agent task (seed 002: measure the whole flow, not tok/s alone),
    with and without a prefix cache."""
    view = _view(args, *AGENT_INPUTS, "prefix_cache")
    inputs = _agent_inputs(args)
    chosen = _agent_run(view, inputs, inputs["prefix_cache"])
    other = _agent_run(view, inputs, not inputs["prefix_cache"])
    return {"inputs": inputs, **chosen, "other_total_s": other["total_s"]}


@cache
def functions() -> dict:
    """The names the worker calls (engine.api.handle's table)."""
    return {
        "sweep_context": sweep_context,
        "sweep_models": sweep_models,
        "sweep_hardware": sweep_hardware,
        "sweep_batch": sweep_batch,
        "marks": marks,
        "reverse": reverse,
        "advice": advice,
        "agent": agent,
    }

"""Page-level questions answered with many estimates: sweeps for the charts, fit marks for the
pickers, the reverse hardware search and the agent task estimate (verdicts and suggestions: advice.py).

Everything here is built on :func:`engine.api.estimate` and the catalog loaders only, so it never
disagrees with the main numbers. Each function takes one dict (``{"view": <page view>, ...}``,
see fields.py) and returns plain data; the worker reaches them through ``engine.handle``. Long
lists come in chunks (``offset``/``limit``) so that one call stays short and the page's own
recompute never waits long behind background work.
"""

from __future__ import annotations

from functools import cache

from ..api import estimate
from ..errors import EngineInputError
from ..hardware import load_hardware
from ..models import load_models
from ..quant import load_quants
from . import buying
from .advice import USE_CASES as USE_CASES
from .advice import advice
from .advice import verdicts as verdicts
from .points import MAX_CHUNK as MAX_CHUNK
from .points import call_view, chunk_of, estimate_point, point_request, quant_for

#: "One card, four models" (article 000, docs/sources.md): dense models that double in size, then popular MoEs.
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


# ------------------------------------------------------------------ sweeps for the charts


def sweep_context(args: dict) -> dict:
    """Decode speed at growing context, and the TTFT of prefilling that context in one go."""
    view = call_view(args)
    base = point_request(view)
    max_context = _max_context(view)
    points = []
    for context in [c for c in CONTEXT_SWEEP if c <= max_context] or [max_context]:
        point = estimate_point({**base, "prompt_tokens": context, "depth": 0, "prefix_cached": 0, "gen_tokens": SWEEP_GEN_TOKENS, "reasoning_tokens": 0})
        points.append({"context": context, **point})
    here = base.get("depth", 0) + base["prompt_tokens"]
    return {"kind": "context", "points": points, "current_context": here, "max_context": max_context}


def _max_context(view: dict) -> int:
    model = load_models().get(view.get("model", ""))
    return model.arch.max_context if model and model.arch.max_context else 131072


def sweep_models(args: dict) -> dict:
    """"One card, four models": the same device with models of growing size."""
    view = call_view(args)
    ids = list(dict.fromkeys([*MODEL_SWEEP, view.get("model")]))
    models = load_models()
    rows = []
    for model_id in ids:
        if model_id == "custom" or model_id not in models:
            continue
        quant = quant_for(model_id, view.get("quant", "Q4_K_M"))
        sub = {**view, "model": model_id, "quant": quant, "spec": "off"}
        rows.append({"id": model_id, "name": models[model_id].name, "quant": quant,
                     "current": model_id == view.get("model"), **estimate_point(point_request(sub))})
    return {"kind": "models", "points": rows}


def sweep_hardware(args: dict) -> dict:
    """The same model on the devices people usually compare, plus the one chosen."""
    view = call_view(args)
    ids = list(dict.fromkeys([*HARDWARE_SWEEP, view.get("hw")]))
    devices = load_hardware()
    rows = []
    for device_id in ids:
        if device_id not in devices and device_id != "custom":
            continue
        name = view.get("hw_name", "Custom") if device_id == "custom" else devices[device_id].name
        rows.append({"id": device_id, "name": name, "current": device_id == view.get("hw"),
                     **estimate_point(point_request({**view, "hw": device_id}))})
    return {"kind": "hardware", "points": rows}


def sweep_batch(args: dict) -> dict:
    """Concurrent requests: per-stream speed falls, aggregate throughput rises until compute or
    the KV cache of all streams takes over (the roofline)."""
    view = call_view(args)
    points = [{"batch": b, **estimate_point(point_request({**view, "batch": b}))} for b in BATCH_SWEEP]
    return {"kind": "batch", "points": points}


# ------------------------------------------------------------------ lists


def marks(args: dict) -> dict:
    """Fit mark (fits / offload / no) of every item of a picker for the current choice:
    ``kind`` = hardware (the model on each device), models (each model on the device, in its
    quant per :func:`quant_for`) or quants (each format of the model on the device)."""
    view = call_view(args, "kind", "offset", "limit")
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
    chunk, total = chunk_of(items, args)
    out = {}
    for item in chunk:
        point = estimate_point(point_request(make(item)))
        out[item] = point["fit"] if point["ok"] else "error"
    return {"kind": kind, "marks": out, "total": total}


def reverse(args: dict) -> dict:
    """Which builds run this set-up at >= ``min_tps`` decode (at this context), within
    ``budget_usd`` if one is given? One chunk of the hardware catalog per call; for each device the
    build with the fewest cards that reaches the target (buying.py decides the builds and the
    price), else its fastest build, with its price and decode tokens/s per 1,000 USD of it."""
    view = call_view(args, "min_tps", "budget_usd", "offset", "limit")
    min_tps = args.get("min_tps", 20)
    if isinstance(min_tps, bool) or not isinstance(min_tps, (int, float)) or not 0 < min_tps <= 100_000:
        raise EngineInputError("the target speed must be a number above 0 tok/s", field="min_tps")
    budget = args.get("budget_usd")
    if budget is not None and (isinstance(budget, bool) or not isinstance(budget, (int, float)) or not 0 < budget <= buying.MAX_BUDGET_USD):
        raise EngineInputError(f"the budget must be a number of US dollars above 0 (at most {buying.MAX_BUDGET_USD:,})", field="budget_usd")
    devices = load_hardware()
    chunk, total = chunk_of(sorted(devices), args)
    rows = [row for device_id in chunk if (row := _best_build(view, devices[device_id], min_tps, budget))]
    return {"rows": rows, "total": total, "min_tps": min_tps, "budget_usd": budget, "max_cards": buying.MAX_BUILD_CARDS,
            "board_cards": list(buying.SXM_BOARD_CARDS)}


def _best_build(view: dict, device, min_tps: float, budget: float | None) -> dict | None:
    """The fewest cards of ``device`` that reach ``min_tps`` within the budget, else the fastest build."""
    unit = buying.price(device)
    fastest = None
    for cards in buying.build_counts(device):
        point = estimate_point(point_request({**view, "hw": device.id, "gpus": cards}))
        if not point["ok"]:
            continue
        cost = unit["usd"] * cards if unit else None
        fast = point["decode_tps"] >= min_tps and point["fit"] != "no"
        affordable = budget is None or (cost is not None and cost <= budget)
        row = {
            "id": device.id, "name": device.name, "family": device.family, "vendor": device.vendor,
            "kind": device.kind, "memory_gib": device.memory_gib, "cards": cards,
            "price_usd": cost, "unit_price_usd": unit["usd"] if unit else None,
            "price_kind": unit["kind"] if unit else None, "price_date": unit["date"] if unit else None,
            "price_source": unit["source"] if unit else None, "launch_price_usd": device.launch_price_usd,
            "decode_tps": point["decode_tps"], "ttft_s": point["ttft_s"], "fit": point["fit"],
            "tps_per_kusd": point["decode_tps"] / cost * 1000 if cost else None,
            "meets_speed": fast, "in_budget": affordable, "meets": fast and affordable,
        }
        if fastest is None or row["decode_tps"] > fastest["decode_tps"]:
            fastest = row
        if fast or not affordable:
            # More cards cost more: the first build fast enough is the one to buy, and once a
            # build is over the budget every larger one is too.
            return row if fast else fastest
    return fastest


# ------------------------------------------------------------------ agent task

#: The agent estimate's inputs: (default, lowest, highest). The defaults are article 002's (docs/sources.md) worked
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
    base = point_request(view)
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
    """End-to-end time of an agent task (article 002, docs/sources.md: measure the whole flow, not tok/s alone),
    with and without a prefix cache."""
    view = call_view(args, *AGENT_INPUTS, "prefix_cache")
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

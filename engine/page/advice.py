"""Use-case verdicts and suggestions: how a set-up does for each use (decode speed, and the waits
people feel), what a set-up that cannot load lacks, and set-up changes worth trying, each with its
numbers and the view patch that applies it. Built on estimate() through points.py."""

from __future__ import annotations

import math

from ..errors import EngineInputError
from ..hardware import load_hardware
from ..models import load_models
from ..quant import load_quants
from .fields import check_view
from .points import call_view, estimate_point, point_request
from .view import default_draft

#: How fast is fast enough (article 002 in docs/sources.md; docs/physics.md section 10): usable decode speed per use, in
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
USE_CASES_SOURCE = "article 002, docs/sources.md (tokens per second for each use case), docs/physics.md section 10"

#: How long a wait may be (article 002 in docs/sources.md: TTFT and total time matter as much as tok/s, for chat and
#: agents). ``good_s``/``ok_s``: at most this many seconds is comfortable / still usable. Chat is
#: judged on its first visible words (thinking included): 1 s keeps the user's flow of thought
#: (Nielsen, "Response Times: The 3 Important Limits",
#: https://www.nngroup.com/articles/response-times-3-important-limits/); article 002 says 5-10 s on a
#: long document is already perceived as slowness. An agent acts on the whole answer of each
#: call: 10 s is the limit for keeping attention on a task (Nielsen), and article 002 calls 30 s
#: before the first token unbearable even at 50 tok/s.
WAIT_CASES = (
    {"id": "chat_wait", "label": "Chat: first words", "short": "first words", "measure": "visible_ttft_s", "good_s": 1, "ok_s": 5,
     "why": "the visible answer should start within a second to keep the flow; beyond about 5 s it feels slow"},
    {"id": "agent_wait", "label": "Agents: whole answer", "short": "agent call", "measure": "total_s", "good_s": 10, "ok_s": 30,
     "why": "an agent acts on the complete answer of each call: within 10 s keeps attention, 30 s is too long to wait"},
)
WAIT_CASES_SOURCE = "article 002, docs/sources.md (TTFT and total time); Nielsen, Response Times: The 3 Important Limits (1 s, 10 s)"
#: System RAM sizes (GiB) tried when offloaded weights need more: common desktop and workstation
#: kits (2 or 4 DIMMs of 16-64 GB, 8 channels of 64 GB).
RAM_SIZES_GIB = (32, 48, 64, 96, 128, 192, 256, 384, 512)
#: Card counts tried when one set of cards is too small (a view allows up to 16).
GPU_COUNTS = (2, 3, 4, 6, 8)


def verdicts(decode_tps: float) -> list[dict]:
    """Each use case's verdict for a decode speed: good (>= high), ok (>= low) or slow."""
    if isinstance(decode_tps, bool) or not isinstance(decode_tps, (int, float)) or not 0 <= decode_tps < math.inf:
        raise EngineInputError(f"a decode speed must be a finite number >= 0, got {decode_tps!r:.40}", field="decode_tps")
    out = []
    for case in USE_CASES:
        level = "good" if decode_tps >= case["high"] else "ok" if decode_tps >= case["low"] else "slow"
        out.append({**case, "level": level})
    return out


def wait_verdicts(visible_ttft_s: float, total_s: float) -> list[dict]:
    """Each wait's verdict: good (<= good_s), ok (<= ok_s) or slow, with the seconds judged."""
    waits = {"visible_ttft_s": visible_ttft_s, "total_s": total_s}
    for name, value in waits.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < math.inf:
            raise EngineInputError(f"a wait must be a finite number of seconds >= 0, got {value!r:.40}", field=name)
    out = []
    for case in WAIT_CASES:
        value = waits[case["measure"]]
        level = "good" if value <= case["good_s"] else "ok" if value <= case["ok_s"] else "slow"
        out.append({**case, "kind": "wait", "value_s": value, "level": level})
    return out


def needs(memory: dict) -> dict:
    """What a set-up that cannot load lacks, from its memory report: ``short_of`` device (its
    memory) or system_ram (the offloaded part), with the GB needed and available."""
    if memory.get("short_of") == "system_ram":
        return {"short_of": "system_ram", "need_gb": memory["host_need_gb"], "usable_gb": memory["host_usable_gb"],
                "system_ram_gib": memory["system_ram_gib"]}
    return {"short_of": "device", "need_gb": memory["device_need_gb"], "usable_gb": memory["usable_gb"],
            "system_ram_gib": memory.get("system_ram_gib")}


def _runs(found: dict | None) -> bool:
    return bool(found) and found["fit"] != "no"


def _nearest_runnable(view: dict, base: dict) -> list[dict]:
    """The set-ups nearest to one that cannot load which do run, one per kind of change, each
    the smallest such change: fewer bits per weight; offload (whole layers, all that fit);
    more of the same cards; the same chip with more memory; more system RAM; an 8-bit KV cache."""
    out = []
    lower = _lower_quants(view)
    for steps, quant in enumerate(lower[:8], start=1):
        found = _suggest(view, {"quant": quant}, f"{quant}, {'one step' if steps == 1 else f'{steps} steps'} down, runs", base)
        if _runs(found):
            if found["fit"] == "offload":
                found["text"] = f"{quant}, {'one step' if steps == 1 else f'{steps} steps'} down, runs with offload"
            out.append(found)
            break
    devices = load_hardware()
    device = devices.get(view.get("hw", ""))
    kind = view.get("hw_kind") if view.get("hw") == "custom" else device.kind if device else None
    if kind == "gpu" and view.get("offload") != "auto":
        found = _suggest(view, {"offload": "auto"}, "Offload the layers that do not fit to system RAM", base)
        if _runs(found):
            out.append(found)
    if kind == "gpu":
        for count in (c for c in GPU_COUNTS if c > view.get("gpus", 1)):
            found = _suggest(view, {"gpus": count}, f"{count} of these cards", base)
            if _runs(found):
                out.append(found)
                break
    if device is not None and kind != "gpu":
        bigger = sorted((d for d in devices.values() if d.base_id == device.base_id and d.memory_gib > device.memory_gib), key=lambda d: d.memory_gib)
        for other in bigger:
            found = _suggest(view, {"hw": other.id}, f"The {other.name}", base)
            if _runs(found):
                out.append(found)
                break
    if base["memory"].get("short_of") == "system_ram":
        for size in (r for r in RAM_SIZES_GIB if r > view.get("ram", 0)):
            found = _suggest(view, {"ram": size}, f"{size} GiB of system RAM", base)
            if _runs(found):
                out.append(found)
                break
    if view.get("kv", "f16") in ("f16", "bf16", "f32"):
        found = _suggest(view, {"kv": "q8_0"}, "An 8-bit KV cache (q8_0)", base)
        if _runs(found):
            out.append(found)
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
    try:
        point = estimate_point(point_request(check_view({**view, **patch})))
    except EngineInputError:
        return None
    if not point["ok"]:
        return None
    return {"text": text, "patch": patch, "decode_tps": point["decode_tps"], "fit": point["fit"],
            "ttft_s": point["ttft_s"], "visible_ttft_s": point["visible_ttft_s"], "total_s": point["total_s"],
            "base_decode_tps": base["decode_tps"]}


def advice(args: dict) -> dict:
    """Use-case verdicts for the view (``verdicts`` on decode speed, ``waits`` on the time to the
    first visible token and to the whole answer), and set-up changes worth trying, each with its
    numbers and the view patch that applies it. A set-up that cannot load gets no verdicts, what
    it lacks (``needs``) and the nearest set-ups that run."""
    view = call_view(args)
    base = estimate_point(point_request(view))
    if not base["ok"]:
        return {"verdicts": [], "suggestions": [], "error": base["error"]}
    if base["fit"] == "no":
        # Won't run means won't run: no verdict on a speed it never reaches; what it lacks and
        # the nearest set-ups that do run instead.
        return {"verdicts": [], "waits": [], "suggestions": _nearest_runnable(view, base), "needs": needs(base["memory"]),
                "source": USE_CASES_SOURCE}
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
    return {"verdicts": verdicts(base["decode_tps"]), "waits": wait_verdicts(base["visible_ttft_s"], base["total_s"]),
            "suggestions": suggestions, "source": f"{USE_CASES_SOURCE}; {WAIT_CASES_SOURCE}"}


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


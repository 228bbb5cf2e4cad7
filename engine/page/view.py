"""The page's view mapped to an engine request in one place.

The page keeps its state (``VIEW_FIELDS``, fields.py) in the URL and sends it to the worker as is;
this module turns it into an :func:`engine.api.estimate` request, so the page, the build-time
estimate, the command lines shown for checking and the tests all use one mapping. The answer the
page streams decides how many tokens are generated.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from functools import cache

from ..errors import EngineInputError
from ..options import HARDWARE_FIELD, HARDWARE_FIELDS, OPTION
from .commands import check_commands, cli_command
from ..system import DEFAULT_SYSTEM_RAM_GIB
from .fields import MAX_JSON_DEPTH, MAX_NAME_LENGTH, SLOTS, _refuse_constant, _shown, answers, check_view, json_depth


@cache
def _models() -> dict:
    from ..models import load_models

    return load_models()


def is_reasoning(model_id: str) -> bool:
    _require_name(model_id, "model")
    model = _models().get(model_id)
    return bool(model and model.reasoning)


def default_draft(model_id: str) -> str | None:
    """The smallest catalog model that shares the target's tokenizer and family (a draft must
    speak the same vocabulary) and is at most a quarter of its size."""
    _require_name(model_id, "model")
    target = _models().get(model_id)
    if target is None:
        return None
    candidates = [
        m for m in _models().values()
        if m.id != target.id and m.tokenizer == target.tokenizer and m.family == target.family
        and m.params_b <= target.params_b / 4
    ]
    return min(candidates, key=lambda m: m.params_b).id if candidates else None


def _require_name(value, field: str) -> None:
    if not isinstance(value, str) or len(value) > MAX_NAME_LENGTH:
        raise EngineInputError(f"{field} must be a name (text of at most {MAX_NAME_LENGTH} characters), got {_shown(value)}", field=field)


def custom_hardware(v: dict) -> dict:
    """The custom-hardware request part of a view (the fields engine/options.py maps to the page)."""
    v = check_view(v)
    kind = v["hw_kind"]
    # The page's fields for the options engine/options.py maps to it; a whole number left at 0 is unset.
    spec = {
        option.key: v[option.view]
        for option in HARDWARE_FIELDS
        if option.view and option.applies_to(kind) and not (option.type == "int" and option.default is None and v[option.view] == 0)
    }
    if v["hw_backend"]:
        spec["backend"] = v["hw_backend"]
    if v["hw_bwm"] == "measured":
        spec["bandwidth_measured"] = True
    if HARDWARE_FIELD["cpu_isa"].applies_to(kind):
        spec["cpu_isa"] = v["hw_isa"]
    if v["hw_bwm"] == "peak" and "memory_channels" in spec and "memory_data_rate_mts" in spec:
        # The spec sheet's peak of a CPU whose channels and speed are stated is theirs: the engine
        # computes it (channels x 8 bytes x MT/s), the bandwidth field is not read.
        del spec["bandwidth_gbs"]
    return spec



def custom_model(v: dict) -> dict:
    """The custom-model request part of a view: its pasted config.json, parsed."""
    v = check_view(v)
    if json_depth(v["cfg"]) > MAX_JSON_DEPTH:
        raise EngineInputError(f"custom model: config.json nests deeper than {MAX_JSON_DEPTH} levels", field="cfg")
    try:
        config = json.loads(v["cfg"], parse_constant=_refuse_constant) if v["cfg"] else None
    except json.JSONDecodeError as exc:
        raise EngineInputError(f"custom model: config.json is not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})", field="cfg") from None
    if not isinstance(config, dict):
        raise EngineInputError("custom model: paste a model's config.json (a JSON object)", field="cfg")
    name = config.get("_name_or_path") or config.get("model_type") or "custom model"
    return {"config": config, "name": str(name)[:80]}


def _speculative(v: dict) -> dict:
    if v["spec"] == "mtp":
        return {"mtp": True, "draft_tokens": v["draft_n"], "workload": v["workload"]}
    if v["spec"] == "draft":
        draft = v["draft"] or default_draft(v["model"])
        if not draft:
            raise EngineInputError("no smaller model of this family to draft with: choose a draft model", field="draft")
        return {"draft": draft, "draft_tokens": v["draft_n"], "workload": v["workload"]}
    return {}


def _links(v: dict) -> dict:
    """The slot and bridge settings, for the devices they describe: a slot for PCIe cards, a
    bridge for bridged cards used together. A race lane on a Mac keeps the main view's link
    settings without an error; they do not apply to it."""
    if v["hw"] == "custom":
        bridged = False
    else:
        from ..hardware import load_hardware

        device = load_hardware().get(v["hw"])
        bridged = device is not None and device.nvlink_bridge
    gen, lanes = SLOTS[v["slot"]] if OPTION["slot_pcie_gen"].applies_to(device_kind(v)) else (None, None)
    return {"slot_pcie_gen": gen, "slot_pcie_lanes": lanes, "nvlink": bridged and v["gpus"] > 1 and v["nvlink"] == "yes"}


def device_kind(v: dict) -> str | None:
    """gpu, soc or cpu: the kind of the view's device (None for an unknown id)."""
    if v["hw"] == "custom":
        return v["hw_kind"]
    from ..hardware import load_hardware

    device = load_hardware().get(v["hw"])
    return device.kind if device else None


def _system_ram(v: dict) -> dict:
    """System RAM matters beside discrete GPUs only (elsewhere the device's memory is all there
    is); the default is the engine's own."""
    if v["ram"] == DEFAULT_SYSTEM_RAM_GIB or not OPTION["system_ram_gib"].applies_to(device_kind(v)):
        return {}
    return {"system_ram_gib": v["ram"]}


def _placement(v: dict) -> dict:
    if v["offload"] == "layers":
        return {"gpu_layers": v["gpu_pct"] / 100}
    if v["offload"] == "experts":
        return {"expert_offload": True}
    if v["offload"] == "flags":
        # 0 and empty are unset: every layer on the GPU, no experts or tensors moved.
        return {"n_gpu_layers": v["ngl"] or None, "n_cpu_moe": v["ncmoe"] or None, "tensor_overrides": v["ot"] or None}
    return {}


def request_for_view(view: dict) -> dict:
    """The estimate request for a page view (unknown keys are an error, missing ones default).
    Only settings that differ from the engine's defaults are included, so the command line
    stays short."""
    v = check_view(view)
    answer = answers().get(v["answer"])
    if answer is None:
        raise EngineInputError(f"unknown answer {v['answer']!r}; choose one of {', '.join(answers())}", field="answer")
    request = {
        "hardware": custom_hardware(v) if v["hw"] == "custom" else v["hw"],
        "model": custom_model(v) if v["model"] == "custom" else v["model"],
        "quant": v["quant"],
        "prompt_tokens": v["prompt"],
        "gen_tokens": len(answer["tokens"]),
        "schedule": True,
    }
    if v["engine"]:
        request["engine"] = v["engine"]
    optional = {
        "depth": v["depth"],
        "kv_quant": v["kv"] if v["kv"] != "f16" else None,
        "gpus": v["gpus"] if v["gpus"] > 1 else None,
        "split": v["split"] if v["gpus"] > 1 and v["split"] != "layer" else None,
        **_links(v),
        **_system_ram(v),
        "batch": v["batch"] if v["batch"] > 1 else None,
        "threads": v["threads"] or None,
        "file_gb": v["file"] or None,
        "context_size": v["ctx"] or None,
        "ubatch": v["ub"] if v["ub"] != OPTION["ubatch"].default else None,
        "nbatch": v["nb"] if v["nb"] != OPTION["nbatch"].default else None,
        "llama_cpp_build": v["build"] or None,
        "rocm_gemm": v["gemm"] if v["gemm"] != OPTION["rocm_gemm"].default else None,
        "reasoning_tokens": v["think"] if v["model"] != "custom" and is_reasoning(v["model"]) else 0,
        **_speculative(v),
    }
    request.update({key: value for key, value in optional.items() if value})
    # A share of 0% is a placement (-ngl 0), not an unset one.
    request.update({key: value for key, value in _placement(v).items() if value is not None})
    if v["fa"] != "auto":
        request["flash_attn"] = v["fa"] == "on"
    if v["cold"] == "on":
        request["cold_start"] = True
    if v["pipe"] != "auto" and v["gpus"] > 1 and v["split"] == "layer":
        request["pipeline"] = v["pipe"] == "on"
    return request


def estimate_view(view: dict) -> dict:
    """Request, estimate (with the stream schedule), CLI line and check commands for a view:
    ``view_numbers`` with the estimate's ``schedule`` from ``view_schedule``."""
    answer = view_numbers(view)
    answer["estimate"]["schedule"] = view_schedule(view)["schedule"]
    return answer


#: The schedules of the views whose numbers were answered last, not yet asked for: a function
#: each, computing from the system those numbers were built on (a few: the page asks for a view's
#: schedule right after its numbers).
_schedules: OrderedDict[str, object] = OrderedDict()
KEPT_SCHEDULES = 4


def _schedule_key(request: dict) -> str:
    return json.dumps(request, sort_keys=True, separators=(",", ":"))


def view_numbers(view: dict) -> dict:
    """A view's numbers, all the page shows of them (request, estimate, CLI line and check
    commands), without the stream's per-token schedule: the page asks for that next
    (``view_schedule``), so the numbers are on screen one schedule sooner."""
    from ..api import estimate_then_schedule

    request = request_for_view(view)
    result, schedule = estimate_then_schedule(request)
    key = _schedule_key(request)
    _schedules[key] = schedule
    _schedules.move_to_end(key)
    while len(_schedules) > KEPT_SCHEDULES:
        _schedules.popitem(last=False)
    return {"request": request, "estimate": result, "cli": cli_command(request), "commands": check_commands(request, result)}


def view_schedule(view: dict) -> dict:
    """``{"schedule": ...}``: the arrival time of every token of the view's stream (what
    ``estimate_view`` puts in its estimate), from the system its numbers were built on when they
    were just answered, else estimated afresh."""
    from ..api import estimate_then_schedule

    request = request_for_view(view)
    schedule = _schedules.pop(_schedule_key(request), None)
    if schedule is None:
        schedule = estimate_then_schedule(request)[1]
    return {"schedule": schedule()}

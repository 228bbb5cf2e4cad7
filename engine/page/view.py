"""The page's view: the settings a visitor picks, mapped to an engine request in one place.

The page keeps its state (``VIEW_FIELDS``) in the URL and sends it to the worker as is; this module
turns it into an :func:`engine.api.estimate` request, so the page, the build-time estimate, the
command lines shown for checking and the tests all use one mapping. The answer the page streams
decides how many tokens are generated.
"""

from __future__ import annotations

import json
import math
import re
import shlex
from functools import cache
from urllib.parse import unquote_to_bytes

from ..catalog import DATA_DIR
from ..errors import EngineInputError
from ..quant import KV_TYPES
from ..request import KNOWN_KEYS, SPLITS, WORKLOADS, parse_options

#: Hidden reasoning ("thinking") tokens a reasoning model spends before its answer, by default.
#: Reasoning models commonly think for several hundred to a few thousand tokens on a chat
#: question; 600 keeps the thinking phase visible without dwarfing the answer.
DEFAULT_THINK_TOKENS = 600

#: PCIe slots (or risers) a view can name, as (generation, lanes); "card" = the card's own link.
SLOTS = {"card": (None, None), "5x16": (5, 16), "4x16": (4, 16), "4x8": (4, 8), "4x4": (4, 4), "3x16": (3, 16), "3x8": (3, 8), "3x4": (3, 4), "3x1": (3, 1)}

#: View keys, their defaults and meaning. The page reads this table (rendered into it by the
#: build) to parse and write its URL; ``kind`` names the validator (state.js).
VIEW_FIELDS = {
    "hw": {"default": "rtx-4090", "kind": "hardware", "doc": "hardware id, or 'custom' (the hw_* fields)"},
    "model": {"default": "llama-3.1-8b", "kind": "model", "doc": "model id, or 'custom' (cfg)"},
    "quant": {"default": "Q4_K_M", "kind": "quant", "doc": "weight format name"},
    "engine": {"default": "", "kind": "engine", "doc": "engine id; empty = the device's usual one"},
    "prompt": {"default": 512, "kind": "int", "min": 1, "max": 1_000_000, "doc": "prompt tokens"},
    "answer": {"default": "chat", "kind": "answer", "doc": "which canned answer to stream"},
    "depth": {"default": 0, "kind": "int", "min": 0, "max": 1_000_000, "doc": "tokens already in the chat (KV cache)"},
    "kv": {"default": "f16", "kind": "choice", "choices": list(KV_TYPES), "doc": "KV-cache type"},
    "gpus": {"default": 1, "kind": "int", "min": 1, "max": 16, "doc": "identical devices used together"},
    "split": {"default": "layer", "kind": "choice", "choices": list(SPLITS), "doc": "how several devices share the model"},
    "nvlink": {"default": "no", "kind": "choice", "choices": ["no", "yes"], "doc": "NVLink bridges fitted between the cards (bridged models only)"},
    "slot": {"default": "card", "kind": "choice", "choices": list(SLOTS), "doc": "PCIe slots the cards sit in: 'card' = the card's own link, else gen x lanes"},
    "offload": {"default": "auto", "kind": "choice", "choices": ["auto", "layers", "experts"], "doc": "what goes to system RAM"},
    "gpu_pct": {"default": 50, "kind": "int", "min": 0, "max": 100, "doc": "percent of layers on the GPU (offload=layers)"},
    "spec": {"default": "off", "kind": "choice", "choices": ["off", "draft", "mtp"], "doc": "speculative decoding"},
    "draft": {"default": "", "kind": "draft", "doc": "draft model id (spec=draft); empty = the family's smallest"},
    "draft_n": {"default": 4, "kind": "int", "min": 1, "max": 16, "doc": "tokens drafted per cycle"},
    "workload": {"default": "chat", "kind": "choice", "choices": list(WORKLOADS), "doc": "sets the draft acceptance"},
    "batch": {"default": 1, "kind": "int", "min": 1, "max": 256, "doc": "concurrent requests"},
    "threads": {"default": 0, "kind": "int", "min": 0, "max": 1024, "doc": "CPU threads of a CPU device (llama.cpp -t); 0 = its physical cores"},
    "think": {"default": DEFAULT_THINK_TOKENS, "kind": "int", "min": 0, "max": 32_768, "doc": "thinking tokens (reasoning models)"},
    "hw_name": {"default": "My hardware", "kind": "text", "max_length": 60, "doc": "custom hardware: name"},
    "hw_kind": {"default": "gpu", "kind": "choice", "choices": ["gpu", "soc", "cpu"], "doc": "custom hardware: kind"},
    "hw_mem": {"default": 24, "kind": "number", "min": 0.5, "max": 4096, "doc": "custom hardware: memory in GiB"},
    "hw_bw": {"default": 1000, "kind": "number", "min": 1, "max": 20000, "doc": "custom hardware: bandwidth in GB/s"},
    "hw_tf": {"default": 80, "kind": "number", "min": 0.005, "max": 20000, "doc": "custom hardware: FP16 TFLOPS"},
    "cfg": {"default": "", "kind": "json", "max_length": 20_000, "doc": "custom model: its config.json"},
    "lane1": {"default": "", "kind": "lane", "doc": "race lane 2: hw*model*quant*engine*spec (empty part = as above)"},
    "lane2": {"default": "", "kind": "lane", "doc": "race lane 3"},
    "lane3": {"default": "", "kind": "lane", "doc": "race lane 4"},
}
DEFAULT_VIEW = {key: spec["default"] for key, spec in VIEW_FIELDS.items()}
LANE_KEYS = ("lane1", "lane2", "lane3")
#: The parts of a lane, in order; an empty part keeps the main view's value.
LANE_PARTS = ("hw", "model", "quant", "engine", "spec")
LANE_SEPARATOR = "*"
#: View kinds whose value is a catalog id (or an answer's name); which may be empty.
ID_KINDS = ("hardware", "model", "quant", "engine", "answer", "draft")
EMPTY_ALLOWED = ("engine", "draft")
#: Longest id or name a view may carry (catalog ids are far shorter; state.js uses the same).
MAX_NAME_LENGTH = 200
#: A pasted config.json nests a few levels (rope_scaling, text_config, quantization_config); a
#: deeper one is refused before it is parsed, so no reader recurses without bound (state.js too).
MAX_JSON_DEPTH = 16
#: A page link longer than this is refused whole rather than cut (a cut value could still parse,
#: silently wrong): the longest valid one is a 20,000-character config.json percent-encoded at up
#: to 9 characters per character, plus the other settings (state.js uses the same).
MAX_QUERY_LENGTH = 200_000


@cache
def answers() -> dict:
    """The canned answers and their token strings (data/answers/tokens.json)."""
    return json.loads((DATA_DIR / "answers" / "tokens.json").read_text(encoding="utf-8"))["answers"]


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
    """The custom-hardware request part of a view."""
    v = check_view(v)
    return {
        "name": v["hw_name"],
        "kind": v["hw_kind"],
        "memory_gib": v["hw_mem"],
        "bandwidth_gbs": v["hw_bw"],
        "fp16_tflops": v["hw_tf"],
    }


def json_depth(text: str) -> int:
    """How deeply brackets nest in a JSON text, outside strings (state.js jsonDepth is the same)."""
    if not isinstance(text, str):
        raise EngineInputError(f"a JSON text must be text, got {_shown(text)}", field="cfg")
    depth = deepest = 0
    in_string = escaped = False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth -= 1
    return deepest


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


def _refuse_constant(name: str):
    """JSON has no NaN or Infinity (Python's reader accepts them; the page's does not)."""
    raise json.JSONDecodeError(f"{name} is not JSON", name, 0)


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
        card, bridged = v["hw_kind"] == "gpu", False
    else:
        from ..hardware import load_hardware

        device = load_hardware().get(v["hw"])
        card, bridged = device is not None and device.kind == "gpu", device is not None and device.nvlink_bridge
    gen, lanes = SLOTS[v["slot"]] if card else (None, None)
    return {"slot_pcie_gen": gen, "slot_pcie_lanes": lanes, "nvlink": bridged and v["gpus"] > 1 and v["nvlink"] == "yes"}


def _placement(v: dict) -> dict:
    if v["offload"] == "layers":
        return {"gpu_layers": v["gpu_pct"] / 100}
    if v["offload"] == "experts":
        return {"expert_offload": True}
    return {}


def _shown(value) -> str:
    """A bad value as an error message quotes it: short, whatever it is."""
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _check_value(key: str, value):
    """One view setting as JSON gives it, checked against VIEW_FIELDS; returns it normalised."""
    spec = VIEW_FIELDS[key]
    kind = spec["kind"]
    if kind in ("int", "number"):
        number = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
        whole = number and (kind == "number" or value == int(value))
        if not whole or not spec["min"] <= value <= spec["max"]:
            what = "a whole number" if kind == "int" else "a number"
            raise EngineInputError(f"{key} must be {what} from {spec['min']:g} to {spec['max']:g}, got {_shown(value)}", field=key)
        return int(value) if kind == "int" else value
    if not isinstance(value, str):
        raise EngineInputError(f"{key} must be text, got {_shown(value)}", field=key)
    if kind == "choice" and value not in spec["choices"]:
        raise EngineInputError(f"{key} must be one of {', '.join(spec['choices'])}, got {_shown(value)}", field=key)
    if len(value) > spec.get("max_length", MAX_NAME_LENGTH * (len(LANE_PARTS) if kind == "lane" else 1)):
        raise EngineInputError(f"{key} is too long ({len(value):,} characters)", field=key)
    if kind == "text" and _CONTROL.search(value):
        raise EngineInputError(f"{key} must not contain control characters", field=key)
    if kind in ID_KINDS and not value and kind not in EMPTY_ALLOWED:
        raise EngineInputError(f"{key} must not be empty", field=key)
    return value


def check_view(view: dict) -> dict:
    """The complete view (missing settings take their defaults) after checking every setting's
    type and range; unknown settings and bad values raise EngineInputError naming the setting."""
    if not isinstance(view, dict):
        raise EngineInputError("a view must be an object")
    unknown = sorted(_shown(key) for key in view if key not in VIEW_FIELDS)
    if unknown:
        raise EngineInputError(f"unknown view setting(s): {', '.join(unknown[:5])}{' ...' if len(unknown) > 5 else ''}")
    return {**DEFAULT_VIEW, **{key: _check_value(key, value) for key, value in view.items()}}


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
        "batch": v["batch"] if v["batch"] > 1 else None,
        "threads": v["threads"] or None,
        "reasoning_tokens": v["think"] if v["model"] != "custom" and is_reasoning(v["model"]) else 0,
        **_placement(v),
        **_speculative(v),
    }
    request.update({key: value for key, value in optional.items() if value})
    return request


def lane_views(view: dict) -> list[dict]:
    """The race: the main view, then one view per non-empty lane (its parts override the main
    view's; an unknown part is an error)."""
    v = check_view(view)
    main = {key: value for key, value in v.items() if key not in LANE_KEYS}
    views = [main]
    for key in LANE_KEYS:
        if v[key]:
            views.append({**main, **parse_lane(v[key])})
    return views


def parse_lane(text: str) -> dict:
    """``"rtx-3090**Q8_0"`` -> ``{"hw": "rtx-3090", "quant": "Q8_0"}``."""
    if not isinstance(text, str) or len(text) > MAX_NAME_LENGTH * len(LANE_PARTS):
        raise EngineInputError(f"a race lane is text of at most {MAX_NAME_LENGTH * len(LANE_PARTS)} characters, got {_shown(text)}", field="lane")
    parts = text.split(LANE_SEPARATOR)
    if len(parts) > len(LANE_PARTS):
        raise EngineInputError(f"a race lane has at most {len(LANE_PARTS)} parts ({', '.join(LANE_PARTS)})", field="lane")
    overrides = {}
    for key, value in zip(LANE_PARTS, parts):
        if value:
            overrides[key] = value
    if overrides.get("spec") not in (None, "off", "mtp"):
        overrides["draft"] = overrides.pop("spec")
        overrides["spec"] = "draft"
    return overrides


def view_from_query(query: str) -> dict:
    """The view a page URL's query string carries, exactly as the page reads it (state.js):
    a value it would ignore takes its default here too (see :func:`parse_query`)."""
    return parse_query(query)[0]


_INT_TEXT = re.compile(r"[0-9]{1,9}")
_NUMBER_TEXT = re.compile(r"[0-9]{1,9}(\.[0-9]{1,6})?")
_CONTROL = re.compile("[\u0000-\u001f\u007f]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def _utf16_length(text: str) -> int:
    """A string's length as JavaScript counts it (UTF-16 code units)."""
    return len(text) + sum(1 for char in text if ord(char) > 0xFFFF)


def _js_number(value) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def _form_decode(text: str) -> str:
    """application/x-www-form-urlencoded decoding as URLSearchParams does it (WHATWG URL)."""
    raw = _SURROGATE.sub("\ufffd", text.replace("+", " "))
    return unquote_to_bytes(raw).decode("utf-8", "replace")


def _form_pairs(query: str):
    text = query[1:] if query.startswith("?") else query
    for part in text.split("&"):
        if part:
            name, _, value = part.partition("=")
            yield _form_decode(name), _form_decode(value)


@cache
def _ids() -> dict[str, frozenset]:
    """The ids the page accepts per view kind (its catalogs are list_catalog's, see build.py)."""
    from ..listing import list_catalog

    models = frozenset(m["id"] for m in list_catalog("models"))
    return {
        "hardware": frozenset(["custom", *(d["id"] for d in list_catalog("hardware"))]),
        "model": models | {"custom"},
        "quant": frozenset(q["name"] for q in list_catalog("quants")),
        "engine": frozenset(["", *(e["id"] for e in list_catalog("engines"))]),
        "answer": frozenset(answers()),
        "draft": models | {""},
    }


def _parse_json_object(raw: str) -> dict:
    if json_depth(raw) > MAX_JSON_DEPTH:
        return {"ok": False, "reason": "nested too deeply"}
    try:
        value = json.loads(raw, parse_constant=_refuse_constant)
    except (json.JSONDecodeError, RecursionError):
        return {"ok": False, "reason": "not valid JSON"}
    return {"ok": True, "value": raw} if isinstance(value, dict) else {"ok": False, "reason": "not a JSON object"}


def _lane_part_ok(name: str, raw: str) -> bool:
    ids = _ids()
    if name == "speculative decoding":
        return raw in ("off", "mtp") or raw in ids["model"]
    return raw in ids[name]


#: A lane's parts as the page names them in its notice (schema.js laneParts).
_LANE_PART_NAMES = ("hardware", "model", "quant", "engine", "speculative decoding")


def _parse_value(key: str, raw: str) -> dict:
    """One URL value through the page's validator for its key (state.js, schema.js)."""
    spec = VIEW_FIELDS[key]
    kind = spec["kind"]
    if kind in ID_KINDS:
        return {"ok": True, "value": raw} if raw in _ids()[kind] else {"ok": False, "reason": "unknown"}
    if kind in ("int", "number"):
        pattern = _INT_TEXT if kind == "int" else _NUMBER_TEXT
        if re.match("-[0-9]", raw):
            return {"ok": False, "reason": "negative"}
        if not pattern.fullmatch(raw):
            return {"ok": False, "reason": "not a whole number" if kind == "int" else "not a number"}
        value = int(raw) if kind == "int" else float(raw)
        if not spec["min"] <= value <= spec["max"]:
            return {"ok": False, "reason": f"outside {_js_number(spec['min'])}-{_js_number(spec['max'])}"}
        return {"ok": True, "value": value}
    if kind == "choice":
        return {"ok": True, "value": raw} if raw in spec["choices"] else {"ok": False, "reason": "unknown"}
    if kind == "text":
        if _utf16_length(raw) > spec["max_length"]:
            return {"ok": False, "reason": "too long"}
        if _CONTROL.search(raw):
            return {"ok": False, "reason": "control characters"}
        return {"ok": True, "value": raw}
    if kind == "json":
        return _parse_json_object(raw)
    values = raw.split(LANE_SEPARATOR)
    if len(values) > len(LANE_PARTS):
        return {"ok": False, "reason": "too many parts"}
    for name, value in zip(_LANE_PART_NAMES, values):
        if value and not _lane_part_ok(name, value):
            return {"ok": False, "reason": f"unknown {name}"}
    return {"ok": True, "value": raw}


def parse_query(query: str) -> tuple[dict, list[dict]]:
    """(view, ignored) for a page URL's query string, the way state.js parseState reads it: every
    value its validator rejects (unknown id, not a number, out of range, too long, given twice,
    unknown setting) is left at its default and listed in ``ignored`` as ``{key, reason}``."""
    if not isinstance(query, str):
        raise EngineInputError(f"a query string must be text, got {_shown(query)}")
    view = dict(DEFAULT_VIEW)
    if _utf16_length(query) > MAX_QUERY_LENGTH:
        return view, [{"key": "(link)", "reason": "too long"}]
    ignored = []
    seen = set()
    for key, raw in _form_pairs(query):
        if key not in VIEW_FIELDS:
            ignored.append({"key": key[:40], "reason": "unknown setting"})
            continue
        if key in seen:
            ignored.append({"key": key, "reason": "given twice"})
            continue
        seen.add(key)
        if _utf16_length(raw) > VIEW_FIELDS[key].get("max_length", MAX_NAME_LENGTH):
            ignored.append({"key": key, "reason": "too long"})
            continue
        result = _parse_value(key, raw)
        if result["ok"]:
            view[key] = result["value"]
        else:
            ignored.append({"key": key, "reason": result["reason"]})
    return view, ignored


# ------------------------------------------------------------------ command lines

#: ``python -m engine estimate`` flags for request keys that take a value.
CLI_FLAGS = {
    "hardware": "--hardware",
    "model": "--model",
    "quant": "--quant",
    "engine": "--engine",
    "prompt_tokens": "--prompt",
    "gen_tokens": "--gen",
    "depth": "--depth",
    "batch": "--batch",
    "threads": "--threads",
    "gpus": "--gpus",
    "split": "--split",
    "slot_pcie_gen": "--slot-pcie-gen",
    "slot_pcie_lanes": "--slot-pcie-lanes",
    "gpu_layers": "--gpu-layers",
    "kv_quant": "--kv-quant",
    "draft": "--draft",
    "draft_tokens": "--draft-tokens",
    "workload": "--workload",
    "reasoning_tokens": "--reasoning",
}
#: Flags for request keys that are switches.
CLI_SWITCHES = {"expert_offload": "--expert-offload", "mtp": "--mtp", "nvlink": "--nvlink"}


def _check_request(request: dict) -> None:
    """A request as estimate() takes it: every option valid, hardware and model names or dicts."""
    unknown = sorted(_shown(key) for key in request if key not in KNOWN_KEYS) if isinstance(request, dict) else []
    if unknown:
        raise EngineInputError(f"unknown request key(s): {', '.join(unknown[:5])}{' ...' if len(unknown) > 5 else ''}")
    parse_options(request)
    for key in ("hardware", "model"):
        if not isinstance(request[key], (str, dict)):
            raise EngineInputError(f"{key} must be a name or an object, got {_shown(request[key])}", field=key)
    if not isinstance(request["quant"], str):
        raise EngineInputError(f"quant must be a name, got {_shown(request['quant'])}", field="quant")


def _check_result(result: dict) -> None:
    """The parts of an estimate() result the check commands read."""
    model = result.get("model") if isinstance(result, dict) else None
    ok = (
        isinstance(model, dict) and isinstance(model.get("name"), str)
        and isinstance(model.get("layers", 0), int) and not isinstance(model.get("layers", 0), bool)
        and isinstance(result.get("quant"), str) and isinstance(result.get("engine"), str)
    )
    if not ok:
        raise EngineInputError("expected the result of estimate() for this request")


def cli_command(request: dict) -> str:
    """The command line that reproduces a request's numbers: ``python -m engine estimate``
    (custom hardware as ``--hardware-json``), or, for a pasted config.json (the page has no file
    to name), the same request through the Python API."""
    _check_request(request)
    request = {key: value for key, value in request.items() if key != "schedule"}
    if isinstance(request["model"], dict):
        program = "import json, sys, engine; print(json.dumps(engine.estimate(json.loads(sys.argv[1])), indent=2))"
        return shlex.join(["python", "-c", program, json.dumps(request, separators=(",", ":"))])
    parts = ["python", "-m", "engine", "estimate"]
    for key, flag in CLI_FLAGS.items():
        value = request.get(key)
        if key == "hardware" and isinstance(value, dict):
            parts += ["--hardware-json", json.dumps(value, separators=(",", ":"))]
        elif value not in (None, "", 0):
            parts += [flag, str(value)]
    for key, flag in CLI_SWITCHES.items():
        if request.get(key):
            parts.append(flag)
    return shlex.join(parts + ["--json"])


def _gguf_name(request: dict, result: dict) -> str:
    return f"{result['model']['name'].replace(' ', '-')}-{result['quant']}.gguf"


def _llama_common(request: dict, result: dict) -> list[str]:
    """llama.cpp flags shared by llama-bench and llama-server for this placement."""
    flags = []
    layers = result["model"].get("layers") or 0
    if request.get("gpu_layers") is not None:
        flags += ["-ngl", str(round(request["gpu_layers"] * layers))]
    else:
        flags += ["-ngl", "99"]
    if request.get("expert_offload"):
        flags += ["-ncmoe", str(layers or 99)]
    if request.get("gpus", 1) > 1:
        flags += ["-sm", "row" if request.get("split") in ("row", "tensor") else "layer"]
    kv = request.get("kv_quant")
    if kv:
        flags += ["-ctk", kv, "-ctv", kv]
    if request.get("threads"):
        flags += ["-t", str(request["threads"])]
    return flags


def check_commands(request: dict, result: dict) -> list[dict]:
    """Commands a user runs to check this prediction on real hardware (physics.md section 11:
    llama-bench's pp/tg figures, llama-server's per-request timings), with what to compare."""
    _check_request(request)
    _check_result(result)
    gguf = _gguf_name(request, result)
    prompt = request["prompt_tokens"]
    depth = request.get("depth", 0)
    bench = ["llama-bench", "-m", gguf, "-p", str(prompt), "-n", "128"]
    if depth:
        bench += ["-d", str(depth)]
    bench += _llama_common(request, result) + ["-fa", "1"]
    context = depth + prompt + request["gen_tokens"] + request.get("reasoning_tokens", 0)
    server = ["llama-server", "-m", gguf, "-c", str(max(4096, context)), "--port", "8080"]
    server += _llama_common(request, result) + ["-fa", "on"]
    if request.get("draft"):
        server += ["-md", f"{request['draft']}-{result['quant']}.gguf", "--draft-max", str(request.get("draft_tokens", 4))]
    if request.get("batch", 1) > 1:
        server += ["-np", str(request["batch"])]
    commands = [
        {
            "tool": "llama-bench",
            "command": shlex.join(bench),
            "compare": f"tg128 against decode, pp{prompt} against prefill",
        },
        {
            "tool": "llama-server",
            "command": shlex.join(server),
            "compare": "then measure it from this page (below), or read the eval and prompt-eval tok/s it logs per request",
        },
    ]
    if result["engine"] == "mlx-lm":
        commands.append({
            "tool": "mlx-lm",
            "command": shlex.join(["mlx_lm.generate", "--model", f"<mlx repo of {result['model']['name']}>", "--prompt", "Hello", "--max-tokens", "256"]),
            "compare": "its Generation tokens-per-sec against decode, Prompt tokens-per-sec against prefill",
        })
    if result["engine"] == "Ollama":
        commands.append({
            "tool": "ollama",
            "command": shlex.join(["ollama", "run", "<model>", "--verbose"]),
            "compare": "eval rate against decode, prompt eval rate against prefill",
        })
    return commands


def estimate_view(view: dict) -> dict:
    """Request, estimate (with the stream schedule), CLI line and check commands for a view."""
    from ..api import estimate

    request = request_for_view(view)
    result = estimate(request)
    return {"request": request, "estimate": result, "cli": cli_command(request), "commands": check_commands(request, result)}

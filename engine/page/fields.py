"""The page's view schema: the settings a visitor picks (``VIEW_FIELDS``), their limits, and the
check every view passes before it becomes a request (view.py), a race (lanes.py) or a URL (query.py).
"""

from __future__ import annotations

import json
import math
import re
from functools import cache

from ..catalog import DATA_DIR
from ..devices import CUSTOM_KINDS
from ..engines import BACKEND_NAMES, kv_backends
from ..errors import EngineInputError
from ..options import HARDWARE_FIELD, MAX_SCHEDULE_TOKENS, OPTION, hardware_view_field
from ..system import DEFAULT_SYSTEM_RAM_GIB

#: PCIe slots (or risers) a view can name, as (generation, lanes); "card" = the card's own link.
SLOTS = {"card": (None, None), "5x16": (5, 16), "4x16": (4, 16), "4x8": (4, 8), "4x4": (4, 4), "3x16": (3, 16), "3x8": (3, 8), "3x4": (3, 4), "3x1": (3, 1)}

#: The backends a custom device can name on the page (the hardware catalog has a few more).
CUSTOM_BACKENDS = ("cuda", "rocm", "vulkan", "metal", "sycl", "cpu")

#: The parts of a race lane, in order, with the names the page's link notice gives them; an empty
#: part keeps the main view's value (but see lanes.py lane_view: a device that cannot be combined
#: runs alone). New parts go at the end so old links still parse. The page reads them from
#: VIEW_FIELDS (schema.js).
LANE_PARTS = ("hw", "model", "quant", "engine", "spec", "gpus")
LANE_PART_NAMES = ("hardware", "model", "quant", "engine", "speculative decoding", "GPU count")
LANE_SEPARATOR = "*"
_LANE = {"kind": "lane", "parts": list(LANE_PARTS), "part_names": list(LANE_PART_NAMES), "separator": LANE_SEPARATOR}
#: A decode rate measured on this computer (Measure your own), kept in the URL like a lane so a
#: copied link shows it: the device and set-up it was measured with, then the rate.
MEASURED_RUN = {"kind": "lane", "parts": ["hw", "model", "quant", "tps"], "part_names": ["hardware", "model", "quant", "measured tok/s"],
                "separator": LANE_SEPARATOR, "min": 0.01, "max": 1_000_000, "default": "",
                "doc": "a decode rate measured on this computer: hardware*model*quant*tok/s (the race's this-computer lane shows it, labelled measured)"}


def _option(key: str, **page) -> dict:
    """The view field of a request option (engine/options.py), with page-only overrides."""
    return {**OPTION[key].view_field(), **page}


#: View keys, their defaults and meaning. The page reads this table (rendered into it by the
#: build) to parse and write its URL, to bound its inputs and to fill its menus (``labels``, in
#: the order shown); ``kind`` names the validator (state.js); ``devices``: the device kinds the
#: setting applies to. Settings that carry a request option take all this from engine/options.py.
VIEW_FIELDS = {
    "hw": {"default": "rtx-4090", "kind": "hardware", "doc": "hardware id, or 'custom' (the hw_* fields)"},
    "model": {"default": "llama-3.1-8b", "kind": "model", "doc": "model id, or 'custom' (cfg)"},
    "quant": {"default": "Q4_K_M", "kind": "quant", "doc": "weight format name"},
    "engine": {"default": "", "kind": "engine", "doc": "engine id; empty = the device's usual one"},
    "prompt": _option("prompt_tokens"),
    "answer": {"default": "chat", "kind": "answer", "doc": "which canned answer to stream"},
    "depth": _option("depth"),
    # runs_on: the backends each KV cache type runs on (engines.kv_backends), for the page's picker.
    "kv": _option("kv_quant", runs_on={kv: list(kv_backends(kv)) for kv in OPTION["kv_quant"].choices}),
    "fa": _option("flash_attn", labels={"auto": "the engine's default", "on": "on", "off": "off (-fa 0)"}),
    "gpus": _option("gpus"),
    "pipe": _option("pipeline", labels={"auto": "as llama.cpp decides", "on": "on (micro-batches overlap)", "off": "off (cards take turns)"}),
    "split": _option("split", labels={"layer": "by layers (pipeline)", "row": "by rows (llama.cpp -sm row)", "tensor": "tensor parallel (vLLM)"}),
    "nvlink": {"default": "no", "kind": "choice", "choices": ["no", "yes"], "devices": list(OPTION["nvlink"].devices),
               "doc": "NVLink bridges fitted between the cards (bridged models only)"},
    "slot": {"default": "card", "kind": "choice", "choices": list(SLOTS), "devices": list(OPTION["slot_pcie_gen"].devices),
             "doc": "PCIe slots the cards sit in: 'card' = the card's own link, else gen x lanes"},
    "offload": {"default": "auto", "kind": "choice", "choices": ["auto", "layers", "experts", "flags"], "devices": list(OPTION["gpu_layers"].devices),
                "labels": {"auto": "what does not fit (automatic)", "layers": "a share of the layers", "experts": "MoE experts (--cpu-moe)",
                           "flags": "as llama.cpp flags say (-ngl, --n-cpu-moe, -ot)"},
                "doc": "what goes to system RAM"},
    # offload=flags: the placement as a llama.cpp command line states it (engine/offload.py).
    "ngl": _option("n_gpu_layers", doc="llama.cpp -ngl: layers on the GPU, counted from the last (offload=flags; 0 = all)"),
    "ncmoe": _option("n_cpu_moe", doc="llama.cpp --n-cpu-moe: layers whose routed experts stay in system RAM (offload=flags)"),
    "ot": _option("tensor_overrides", doc="llama.cpp -ot PATTERN=CPU[,...] over GGUF tensor names, e.g. exps=CPU (offload=flags)"),
    # The page takes whole GiB; it starts at the host platform's default (system.py DEFAULT_HOST).
    "ram": _option("system_ram_gib", kind="int", default=DEFAULT_SYSTEM_RAM_GIB,
                   doc="system RAM beside discrete GPUs, GiB: where offloaded weights live"),
    # 0 = unset: the format's recipe decides the weights' size, the request its KV cache's.
    "file": _option("file_gb", default=0, min=0, doc="the weight file's size, GB (0 = the format's recipe)"),
    "ctx": _option("context_size", doc="KV cache allocated per sequence, tokens (0 = what the request uses)"),
    "ub": _option("ubatch"),
    "nb": _option("nbatch"),
    "build": _option("llama_cpp_build", doc="llama.cpp build number of the run, bNNNN (0 = a current release)"),
    "cold": _option("cold_start", labels={"off": "no (a warmed-up process)", "on": "yes (a fresh process's first prompt)"}),
    "gemm": _option("rocm_gemm", labels={"hipblaslt": "hipBLASLt (rocBLAS's default)", "tensile": "Tensile (ROCBLAS_USE_HIPBLASLT=0)"}),
    "gpu_pct": {"default": 50, "kind": "int", "min": round(OPTION["gpu_layers"].lo * 100), "max": round(OPTION["gpu_layers"].hi * 100),
                "devices": list(OPTION["gpu_layers"].devices), "doc": "percent of layers on the GPU (offload=layers): llama.cpp -ngl round(percent / 100 x layers)"},
    "spec": {"default": "off", "kind": "choice", "choices": ["off", "draft", "mtp"], "doc": "speculative decoding",
             "labels": {"off": "off", "draft": "draft model", "mtp": "the model's MTP head"}},
    "draft": {"default": "", "kind": "draft", "doc": "draft model id (spec=draft); empty = the family's smallest"},
    "draft_n": _option("draft_tokens"),
    "workload": _option("workload", labels={"chat": "chat", "code": "code (drafts accepted more)", "creative": "creative (fewer)"}),
    "batch": _option("batch"),
    "threads": _option("threads"),
    # The page streams every thinking token: at most half the longest schedule (stream.py).
    "think": _option("reasoning_tokens", max=MAX_SCHEDULE_TOKENS // 2, doc="thinking tokens (reasoning models)"),
    "hw_name": hardware_view_field("name"),
    "hw_kind": {**hardware_view_field("kind"),
                "labels": {"gpu": "Graphics card (its own memory)", "soc": "Unified-memory chip", "cpu": "CPU only"}},
    # The page offers the backend and a unified-memory box; the kind follows from them (custom.js):
    # the cpu backend is a CPU, unified memory a soc, else a card. Empty = the kind's usual backend.
    "hw_backend": {"default": "", "kind": "choice", "choices": ["", *CUSTOM_BACKENDS], "by_kind": dict(CUSTOM_KINDS),
                   "labels": {b: BACKEND_NAMES[b] + (" (any vendor's GPU)" if b == "vulkan" else "") for b in CUSTOM_BACKENDS},
                   "doc": "custom hardware: the backend it runs (empty = the kind's usual one: cuda, metal, cpu)"},
    "hw_mem": hardware_view_field("memory_gib"),
    "hw_bw": hardware_view_field("bandwidth_gbs"),
    "hw_tf": hardware_view_field("fp16_tflops"),
    "hw_cores": hardware_view_field("cpu_cores"),
    "hw_threads": hardware_view_field("cpu_threads"),
    # Channels and data rate: with both stated and the bandwidth the spec sheet's peak (hw_bwm),
    # the engine derives the bandwidth from them (devices.custom_device), not the page.
    "hw_ch": hardware_view_field("memory_channels"),
    "hw_mts": hardware_view_field("memory_data_rate_mts"),
    "hw_isa": {"default": "avx2", "kind": "choice", "devices": list(HARDWARE_FIELD["cpu_isa"].devices),
               "doc": "custom CPU: the vector/matrix instructions its kernels can use",
               "labels": {"avx2": "x86 AVX2", "avx-vnni": "x86 AVX-VNNI (Intel 12th gen+)", "avx512": "x86 AVX-512 (no VNNI)",
                          "avx512-vnni": "x86 AVX-512 VNNI (Zen 4+, Ice Lake+)", "amx": "x86 AMX (Xeon 4th gen+)", "neon": "Arm NEON",
                          "dotprod": "Arm dot product", "i8mm": "Arm int8 matrix multiply", "sve": "Arm SVE2"}},
    "hw_bwm": {"default": "peak", "kind": "choice", "choices": ["peak", "measured"],
               "doc": "custom hardware: the bandwidth is the spec sheet's peak or measured (STREAM, Intel MLC)",
               "labels": {"peak": "the spec sheet's peak (channels × speed)", "measured": "measured (STREAM, Intel MLC)"}},
    "cfg": {"default": "", "kind": "json", "max_length": 20_000, "doc": "custom model: its config.json"},
    "me": {"default": "", "kind": "device", "doc": "this computer: its device, detected by the page or confirmed (empty = not known); the race and the headline compare with it"},
    "lane1": {"default": "", **_LANE, "doc": "race lane 2: hw*model*quant*engine*spec*gpus (empty part = as above)"},
    "lane2": {"default": "", **_LANE, "doc": "race lane 3"},
    "lane3": {"default": "", **_LANE, "doc": "race lane 4"},
    "me_run": MEASURED_RUN,
}
# A menu's choices are the ones it labels (system.py ISA_LEVELS has more than the page offers).
VIEW_FIELDS["hw_isa"]["choices"] = list(VIEW_FIELDS["hw_isa"]["labels"])
DEFAULT_VIEW = {key: spec["default"] for key, spec in VIEW_FIELDS.items()}
LANE_KEYS = ("lane1", "lane2", "lane3")


def lane_gpus(raw: str) -> int | None:
    """A lane's GPU count part as the page writes it: a whole number in the gpus range (state.js
    intField), else None."""
    spec = VIEW_FIELDS["gpus"]
    if not re.fullmatch(r"[0-9]{1,9}", raw) or not spec["min"] <= int(raw) <= spec["max"]:
        return None
    return int(raw)


#: View kinds whose value is a catalog id (or an answer's name); which may be empty.
ID_KINDS = ("hardware", "model", "quant", "engine", "answer", "draft", "device")
EMPTY_ALLOWED = ("engine", "draft", "device")
#: Longest id or name a view may carry (catalog ids are far shorter; state.js uses the same).
MAX_NAME_LENGTH = 200
#: A pasted config.json nests a few levels (rope_scaling, text_config, quantization_config); a
#: deeper one is refused before it is parsed, so no reader recurses without bound (state.js too).
MAX_JSON_DEPTH = 16
#: A page link longer than this is refused whole rather than cut (a cut value could still parse,
#: silently wrong): the longest valid one is a 20,000-character config.json percent-encoded at up
#: to 9 characters per character, plus the other settings (state.js uses the same).
MAX_QUERY_LENGTH = 200_000
#: An ignored URL key is quoted back with at most this many characters.
SHOWN_KEY_LENGTH = 40
#: The limits the page's URL parser applies (state.js reads them from the page, build.py).
URL_LIMITS = {"max_query_length": MAX_QUERY_LENGTH, "max_json_depth": MAX_JSON_DEPTH, "max_value_length": MAX_NAME_LENGTH,
              "shown_key_length": SHOWN_KEY_LENGTH}


@cache
def answers() -> dict:
    """The canned answers and their token strings (data/answers/tokens.json)."""
    return json.loads((DATA_DIR / "answers" / "tokens.json").read_text(encoding="utf-8"))["answers"]


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


def _refuse_constant(name: str):
    """JSON has no NaN or Infinity (Python's reader accepts them; the page's does not)."""
    raise json.JSONDecodeError(f"{name} is not JSON", name, 0)


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
    if len(value) > spec.get("max_length", MAX_NAME_LENGTH * len(spec.get("parts", [key]))):
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


_CONTROL = re.compile("[\u0000-\u001f\u007f]")

"""An estimate request: plain data in, a validated :class:`Setup` out.

The request is a dict (from the CLI, a test, or the page's worker) with these keys; every one but
the first three is optional:

=================  =========================================================  ==============
key                meaning                                                    default
=================  =========================================================  ==============
hardware           catalog name/alias, or a dict of custom specs              required
model              catalog name/alias, or ``{"config": <config.json>}``      required
quant              weight format name (``Q4_K_M``, ``MLX-4bit`` ...)          required
engine             ``llama.cpp``, ``mlx-lm``, ``vllm`` ...                    the device's
backend            ``cuda``, ``metal``, ``rocm``, ``vulkan``, ``sycl``,       the device's
                   ``cpu``
prompt_tokens      tokens to prefill                                          512
depth              tokens already in the KV cache before the prompt          0
gen_tokens         tokens to generate                                         128
batch              concurrent sequences                                       1
gpus               identical devices used together (CPU: sockets)            1
split              ``layer``, ``row`` or ``tensor``                           ``layer``
nvlink             NVLink bridges fitted between the cards (bridged models)   None = built-in
                                                                              links only
slot_pcie_gen      PCIe generation of the slots/risers the cards sit in       the card's
slot_pcie_lanes    PCIe lanes of those slots                                  the card's
gpu_layers         fraction of layers on the GPU (0..1); None = all that fit  None
expert_offload     routed experts in system RAM (llama.cpp ``--n-cpu-moe``)  False
kv_quant           ``f16``, ``q8_0``, ``q4_0`` ...                            ``f16``
flash_attn         bool; None = the engine's default                          None
prefix_cached      tokens of the prompt already in the prompt cache           0
draft              draft model name for speculative decoding                  None
mtp                use the model's multi-token-prediction head                False
draft_tokens       tokens the draft proposes per cycle                        4
acceptance         per-token acceptance of drafted tokens (0..1)              by workload
workload           ``code``, ``chat``, ``creative`` (sets the acceptance)     ``chat``
host               CPU platform holding offloaded weights (catalog name)      see DEFAULTS
system_ram_gib     system RAM of that platform, GiB (offloaded weights and   the host's
                   their KV cache live there; discrete GPUs only)            (64)
reasoning_tokens   hidden thinking tokens before the visible answer           0
threads            CPU threads of a cpu backend                               physical cores
ubatch             prompt-processing micro-batch (llama.cpp ``-ub``)          512
file_gb            the weight file's size, GB, when known (scales every       None = the format's
                   tensor: custom mixes read what their file holds)           recipe
nbatch             logical batch pipelined over a layer split (``-b``)       2048
schedule           return per-token times for the page's stream               False
=================  =========================================================  ==============
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .errors import EngineInputError

SPLITS = ("layer", "row", "tensor")
WORKLOADS = ("code", "chat", "creative")

#: Upper bounds that keep every computation finite and every answer meaningful.
MAX_TOKENS = 10_000_000
MAX_BATCH = 4096
MAX_GPUS = 64
#: Largest system RAM a request may name, GiB (an 8-socket server holds a few TiB).
MAX_SYSTEM_RAM_GIB = 16384

DEFAULTS = {
    "prompt_tokens": 512,
    "depth": 0,
    "gen_tokens": 128,
    "batch": 1,
    "gpus": 1,
    "split": "layer",
    "nvlink": None,
    "slot_pcie_gen": None,
    "slot_pcie_lanes": None,
    "gpu_layers": None,
    "expert_offload": False,
    "kv_quant": "f16",
    "flash_attn": None,
    "prefix_cached": 0,
    "draft": None,
    "mtp": False,
    "draft_tokens": 4,
    "acceptance": None,
    "workload": "chat",
    "host": None,
    "system_ram_gib": None,
    "reasoning_tokens": 0,
    "file_gb": None,
    "threads": None,
    "ubatch": 512,
    "nbatch": 2048,
    "schedule": False,
    "engine": None,
    "backend": None,
}
REQUIRED = ("hardware", "model", "quant")
KNOWN_KEYS = frozenset(DEFAULTS) | frozenset(REQUIRED)


def _int_field(request: dict, key: str, lo: int, hi: int) -> int:
    value = request[key]
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise EngineInputError(f"{key} must be a whole number, got {value!r}", field=key)
    if not math.isfinite(value) or value != int(value):
        raise EngineInputError(f"{key} must be a whole number, got {value!r}", field=key)
    value = int(value)
    if not lo <= value <= hi:
        raise EngineInputError(f"{key} must be between {lo:,} and {hi:,}, got {value:,}", field=key)
    return value


def _float_field(request: dict, key: str, lo: float, hi: float) -> float | None:
    value = request[key]
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise EngineInputError(f"{key} must be a number, got {value!r}", field=key)
    if not lo <= value <= hi:
        raise EngineInputError(f"{key} must be between {lo:g} and {hi:g}, got {value:g}", field=key)
    return float(value)


def _bool_field(request: dict, key: str, allow_none: bool = False) -> bool | None:
    value = request[key]
    if value is None and allow_none:
        return None
    if not isinstance(value, bool):
        raise EngineInputError(f"{key} must be true or false, got {value!r}", field=key)
    return value


def _choice_field(request: dict, key: str, choices: tuple[str, ...]) -> str:
    value = request[key]
    if not isinstance(value, str) or value.lower() not in choices:
        raise EngineInputError(f"{key} must be one of {', '.join(choices)}, got {value!r}", field=key)
    return value.lower()


@dataclass(frozen=True)
class Options:
    """The numeric and switch options of a request, validated (names as in the table above)."""

    prompt_tokens: int
    depth: int
    gen_tokens: int
    batch: int
    gpus: int
    split: str
    nvlink: bool | None
    slot_pcie_gen: int | None
    slot_pcie_lanes: int | None
    gpu_layers: float | None
    expert_offload: bool
    kv_quant: str
    flash_attn: bool | None
    prefix_cached: int
    draft: str | None
    mtp: bool
    draft_tokens: int
    acceptance: float | None
    workload: str
    host: str | None
    system_ram_gib: float | None
    reasoning_tokens: int
    threads: int | None
    file_gb: float | None
    ubatch: int
    nbatch: int
    schedule: bool


def parse_options(request: dict) -> Options:
    """Validate everything but the three names; unknown keys are an error (a typo is not silent)."""
    if not isinstance(request, dict):
        raise EngineInputError("a request must be a JSON object")
    unknown = sorted(map(str, set(request) - KNOWN_KEYS))
    if unknown:
        shown = ", ".join(repr(key[:40]) for key in unknown[:5]) + (f" and {len(unknown) - 5} more" if len(unknown) > 5 else "")
        raise EngineInputError(f"unknown request key(s): {shown}", field=unknown[0][:40])
    for key in REQUIRED:
        if request.get(key) in (None, ""):
            raise EngineInputError(f"{key} is required", field=key)
    merged = {**DEFAULTS, **{k: v for k, v in request.items() if v is not None}}
    for key in ("kv_quant", "draft", "host"):
        value = merged[key]
        if value is not None and (not isinstance(value, str) or not value.strip() or len(value) > 200):
            raise EngineInputError(f"{key} must be a name, got {value!r}", field=key)
    options = Options(
        prompt_tokens=_int_field(merged, "prompt_tokens", 1, MAX_TOKENS),
        depth=_int_field(merged, "depth", 0, MAX_TOKENS),
        gen_tokens=_int_field(merged, "gen_tokens", 1, MAX_TOKENS),
        batch=_int_field(merged, "batch", 1, MAX_BATCH),
        gpus=_int_field(merged, "gpus", 1, MAX_GPUS),
        split=_choice_field(merged, "split", SPLITS),
        nvlink=_bool_field(merged, "nvlink", allow_none=True),
        slot_pcie_gen=None if merged["slot_pcie_gen"] is None else _int_field(merged, "slot_pcie_gen", 1, 6),
        slot_pcie_lanes=None if merged["slot_pcie_lanes"] is None else _int_field(merged, "slot_pcie_lanes", 1, 16),
        gpu_layers=_float_field(merged, "gpu_layers", 0.0, 1.0),
        expert_offload=_bool_field(merged, "expert_offload"),
        kv_quant=merged["kv_quant"].lower(),
        flash_attn=_bool_field(merged, "flash_attn", allow_none=True),
        prefix_cached=_int_field(merged, "prefix_cached", 0, MAX_TOKENS),
        draft=merged["draft"],
        mtp=_bool_field(merged, "mtp"),
        draft_tokens=_int_field(merged, "draft_tokens", 1, 32),
        acceptance=_float_field(merged, "acceptance", 0.0, 0.99),
        workload=_choice_field(merged, "workload", WORKLOADS),
        host=merged["host"],
        system_ram_gib=_float_field(merged, "system_ram_gib", 1.0, MAX_SYSTEM_RAM_GIB),
        reasoning_tokens=_int_field(merged, "reasoning_tokens", 0, MAX_TOKENS),
        threads=None if merged["threads"] is None else _int_field(merged, "threads", 1, 1024),
        file_gb=_float_field(merged, "file_gb", 0.01, 100_000),
        ubatch=_int_field(merged, "ubatch", 1, 65536),
        nbatch=_int_field(merged, "nbatch", 1, 1_000_000),
        schedule=_bool_field(merged, "schedule"),
    )
    if options.prefix_cached > options.prompt_tokens:
        raise EngineInputError("prefix_cached cannot exceed prompt_tokens", field="prefix_cached")
    total = options.depth + options.prompt_tokens + options.reasoning_tokens + options.gen_tokens
    if total > MAX_TOKENS:
        raise EngineInputError(f"depth + prompt + generated tokens must stay below {MAX_TOKENS:,}", field="depth")
    if options.draft and options.mtp:
        raise EngineInputError("choose a draft model or MTP, not both", field="draft")
    return options

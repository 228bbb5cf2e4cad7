"""The inference-engine catalog (``data/engines.toml``): which backends and weight formats each
engine runs, and which engine's kernels it borrows when it has no calibration of its own."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache

from .catalog import AliasIndex, CatalogError, Field, read_toml_document, validate_entry
from .errors import EngineInputError
from .hardware import BACKENDS
from .quant import GGML_TYPES, KV_TYPES

SCHEMA = (
    Field("name", str, required=True),
    Field("base", str),
    Field("serves_for", str),
    Field("superseded", bool),
    Field("backends", list, required=True),
    Field("formats", list, required=True),
    Field("flash_attn_default", bool, required=True),
    Field("aliases", list, required=True),
    Field("source", str, required=True),
    Field("sources", dict),
    Field("notes", str),
    Field("cpu_tiled_types", list),
    Field("kv_types", list),
    Field("gguf_types", list),
    Field("quant_aliases", dict),
    Field("recurrent_state_passes", float),
    Field("recurrent_extra_kernels", float),
    Field("decode_layer_kernels", float),
    Field("vlm_layer_sync_s", float),
    Field("tp_allreduce_via_host", bool),
    Field("prefill_chunk_tokens", int),
)


@dataclass(frozen=True)
class Engine:
    id: str
    name: str
    backends: tuple[str, ...]
    formats: tuple[str, ...]
    flash_attn_default: bool
    aliases: tuple[str, ...]
    source: str
    base: str = ""
    #: An engine another engine hands some formats to (Ollama runs MLX weights through MLX on
    #: Macs): asking for ``serves_for`` with one of this engine's formats on one of its backends
    #: runs this engine.
    serves_for: str = ""
    #: Older builds of ``base``, fitted apart because their per-token decode path differs (no
    #: graph capture, no flash attention by default, an older dispatch): a current engine never
    #: borrows their decode values (engine/tools/borrowing.py).
    superseded: bool = False
    notes: str = ""
    #: ggml storage types whose CPU matrix multiplications run as tiled GEMMs over repacked
    #: rows (each unpacked weight serves several tokens); ``("*",)`` = every type, ``("none",)``
    #: = no type; empty = not stated (the base engine's list applies).
    cpu_tiled_types: tuple[str, ...] = ()
    #: KV cache types (quant/kv.py KV_TYPES) it stores the cache in; ``("*",)`` = every type;
    #: empty = not stated (the base engine's list applies).
    kv_types: tuple[str, ...] = ()
    #: ggml storage types its GGUF loader has kernels for (vLLM's are a subset); empty = all.
    gguf_types: tuple[str, ...] = ()
    #: Format names that mean another format with this engine ("INT4" is AWQ/GPTQ-style int4 in
    #: vLLM, Ollama's MLX int4 elsewhere): {name as people write it: catalog format name}.
    quant_aliases: dict = field(default_factory=dict, compare=False, hash=False)
    #: Its own decode path for gated-DeltaNet layers as unfused tensor ops (decode.py
    #: ``unfused_recurrent``): F32 state-sized reads and writes per layer and step beyond a fused
    #: kernel's one read and one write, and kernels per layer beyond the fused path's; 0 = fused.
    recurrent_state_passes: float = 0.0
    recurrent_extra_kernels: float = 0.0
    #: Kernels its captured single-token step runs per dense layer, where it fuses the layer into a
    #: shorter chain than llama.cpp's (layerchain.py); 0 = llama.cpp's chain.
    decode_layer_kernels: float = 0.0
    #: Seconds per layer and decode step of host synchronisation on its vision-language path (a
    #: model with a vision tower, models.Model.vision_language): layerchain.vlm_sync_s; 0 = none.
    vlm_layer_sync_s: float = 0.0
    #: Its tensor-parallel all-reduce stages the partial sums through pinned host memory and one
    #: CPU thread sums them (parallel.host_allreduce_s_per_byte); False = on the GPUs (NCCL).
    tp_allreduce_via_host: bool = False
    #: Prompt tokens it processes per forward pass (its own chunking), where it ignores llama.cpp's
    #: -ub; 0 = options.ubatch.
    prefill_chunk_tokens: int = 0

    def kv_cache_types(self) -> tuple[str, ...]:
        """The KV cache types this engine offers (its own list, else its base's, and so on)."""
        engines = load_engines()
        for engine_id in self.lineage():
            if engines[engine_id].kv_types:
                types = engines[engine_id].kv_types
                return KV_TYPES if "*" in types else types
        return ("f16",)

    def cpu_tiles(self, type_name: str) -> bool:
        """Whether this engine's CPU backend multiplies ``type_name`` weights in tiled kernels."""
        engines = load_engines()
        for engine_id in self.lineage():
            tiled = engines[engine_id].cpu_tiled_types
            if tiled:
                return "*" in tiled or type_name in tiled
        return False

    def lineage(self) -> tuple[str, ...]:
        """This engine's id, then its base's, and so on: where to look for calibration."""
        chain = [self.id]
        engines = load_engines()
        while engines[chain[-1]].base:
            chain.append(engines[chain[-1]].base)
        return tuple(chain)

    def runs_mainline_ggml(self, *, with_legacy: bool) -> bool:
        """Whether this engine runs mainline llama.cpp's ggml kernels (:func:`mainline_ggml`)."""
        return mainline_ggml(self.lineage(), with_legacy=with_legacy)


def mainline_ggml(lineage: tuple[str, ...], *, with_legacy: bool) -> bool:
    """Whether an engine of ``lineage`` runs mainline llama.cpp's ggml kernels: llama.cpp and the
    engines built on it (Ollama, LM Studio), not ik_llama.cpp's fork, which rewrote them.
    ``with_legacy``: whether llama.cpp's builds before b3000 (``llama-cpp-legacy``) count; a rule
    about a kernel those builds did not have yet says False."""
    if "llama-cpp" not in lineage or "ik-llama-cpp" in lineage:
        return False
    return with_legacy or "llama-cpp-legacy" not in lineage


@cache
def load_engines() -> dict[str, Engine]:
    document = read_toml_document("engines.toml")
    engines = {}
    for engine_id in sorted(document):
        raw = validate_entry("engine", engine_id, document[engine_id], SCHEMA)
        unknown = sorted(set(raw["backends"]) - set(BACKENDS))
        if unknown:
            raise CatalogError(f"engine {engine_id!r}: unknown backend(s) {', '.join(unknown)}")
        lists = ("backends", "formats", "aliases", "cpu_tiled_types", "kv_types", "gguf_types")
        for key, known in (("kv_types", (*KV_TYPES, "*")), ("gguf_types", GGML_TYPES)):
            bad = sorted(set(raw.get(key, ())) - set(known))
            if bad:
                raise CatalogError(f"engine {engine_id!r}: unknown {key} {', '.join(bad)}")
        fields = {k: v for k, v in raw.items() if k not in ("sources", *lists)}
        engines[engine_id] = Engine(id=engine_id, **{key: tuple(raw.get(key, ())) for key in lists}, **fields)
    for engine in engines.values():
        if engine.base and engine.base not in engines:
            raise CatalogError(f"engine {engine.id!r}: base {engine.base!r} is not an engine")
        if engine.serves_for and engine.serves_for not in engines:
            raise CatalogError(f"engine {engine.id!r}: serves_for {engine.serves_for!r} is not an engine")
    return engines


@cache
def engine_index() -> AliasIndex:
    index = AliasIndex("engine")
    for engine in load_engines().values():
        for name in (engine.id, engine.name, *engine.aliases):
            index.add(name, engine.id)
    return index


#: The catch-all engine (benchmark rows that name no known engine): it runs what named engines run.
CATCH_ALL = "other"
#: Backends as the page names them (plain words first, the backend after).
BACKEND_NAMES = {
    "cuda": "NVIDIA (CUDA)",
    "rocm": "AMD (ROCm)",
    "metal": "Apple Silicon (Metal)",
    "vulkan": "Vulkan",
    "vulkan-amdvlk": "AMD (Vulkan, AMDVLK)",
    "sycl": "Intel (SYCL)",
    "cpu": "CPU",
}


@cache
def kv_backends(kv_type: str) -> tuple[str, ...]:
    """The backends a KV cache type runs on: those of the named engines that offer it (the
    catch-all adds none), so MLX and TurboQuant caches run on Metal only, fp8 where vLLM runs."""
    backends = {b for e in load_engines().values() if e.id != CATCH_ALL and kv_type in e.kv_cache_types() for b in e.backends}
    return tuple(sorted(backends))


@cache
def format_backends(format_kind: str) -> tuple[str, ...]:
    """The backends weights of ``format_kind`` run on: those of the engines that load the kind
    themselves. An engine that hands the kind to another (Ollama's MLX tags run in its MLX engine,
    ``serves_for``) adds only that engine's backends, and the catch-all adds none: so MLX weights
    run on Metal only, GGUF wherever llama.cpp runs. The one rule the CLI, the page's pickers and
    the estimate share."""
    engines = load_engines()
    handed = {(e.serves_for, kind) for e in engines.values() if e.serves_for for kind in e.formats}
    backends = set()
    for engine in engines.values():
        if engine.id == CATCH_ALL or format_kind not in engine.formats or any((e, format_kind) in handed for e in engine.lineage()):
            continue
        backends |= set(engine.backends)
    return tuple(sorted(backends))


def engine_runs(engine: Engine, backend: str, format_kind: str) -> bool:
    """``engine`` runs ``format_kind`` weights on ``backend``, itself or through the engine it
    hands them to there; the catch-all wherever the format runs at all."""
    if backend not in format_backends(format_kind):
        return False
    if engine.id == CATCH_ALL:
        return format_kind in engine.formats and backend in engine.backends
    served = engine_for_format(engine, backend, format_kind)
    handed = any(e.serves_for == engine.id and format_kind in e.formats for e in load_engines().values())
    if served is engine and handed:
        return False  # it hands this format to another engine, which has no such backend
    return format_kind in served.formats and backend in served.backends


def engine_for_format(engine: Engine, backend: str, format_kind: str) -> Engine:
    """The engine that really runs ``format_kind`` when ``engine`` is asked for on ``backend``:
    itself, or the engine it or an engine of its lineage hands that format to there
    (``serves_for``: Ollama's releases before 0.30 ran its MLX tags in the same MLX engine)."""
    lineage = engine.lineage()
    for other in load_engines().values():
        if other.serves_for in lineage and backend in other.backends and format_kind in other.formats:
            return other
    return engine


def quant_name_for(engine: Engine, name):
    """The format ``name`` means with ``engine``: its own reading of a shared name ("INT4" in
    vLLM is a W4A16 int4 checkpoint, in Ollama the MLX int4 tag), else ``name`` unchanged."""
    if not isinstance(name, str):
        return name
    wanted = name.strip().lower()
    return next((target for alias, target in engine.quant_aliases.items() if alias.lower() == wanted), name)


def check_engine_limits(engine: Engine, quant_name: str, storage_types: tuple[str, ...], kv_type: str) -> None:
    """What ``engine`` cannot run even where it runs the format: a GGUF storage type its kernels
    lack (vLLM), a KV cache type it does not offer. ``storage_types``: the weights' ggml types
    (only needed when the engine lists ``gguf_types``)."""
    missing = sorted(set(storage_types) - set(engine.gguf_types)) if engine.gguf_types else []
    if missing:
        raise EngineInputError(
            f"{engine.name} has no GGUF kernels for {', '.join(missing)}, which {quant_name} stores: "
            f"pick a K-quant, IQ or legacy GGUF (Q4_K_M, Q8_0 ...) or another engine",
            field="quant",
        )
    offered = engine.kv_cache_types()
    if kv_type not in offered:
        raise EngineInputError(
            f"{engine.name} has no {kv_type} KV cache; it offers {', '.join(offered)}", field="kv_quant", suggestions=offered
        )


#: Ollama's first release that runs every GGUF in upstream llama-server instead of its Go engine
#: and vendored ggml, as (major, minor): 0.30 (https://github.com/ollama/ollama/pull/16031, merged
#: 2026-05-29; its release candidates, tags v0.30.0-rc0 on, already have no runner/ollamarunner).
#: Earlier releases are the engine ollama-legacy (data/engines.toml).
OLLAMA_LLAMA_SERVER_RELEASE = (0, 30)
#: An Ollama version as its API reports it (GET /api/version -> {"version": "0.23.1"},
#: https://github.com/ollama/ollama/blob/main/docs/api.md#version) and rows' notes name it
#: (backend_version=0.23.1): major.minor, an optional patch and pre-release ("0.30.0-rc1").
OLLAMA_VERSION = re.compile(r"v?(\d{1,4})\.(\d{1,4})(?:\.(\d{1,6}))?(?:-[0-9A-Za-z.-]{1,40})?")
#: What a build of Ollama from source reports: version/version.go's default "0.0.0", which only
#: release builds replace (-ldflags -X ...version.Version=, .github/workflows/release.yaml).
OLLAMA_UNVERSIONED = (0, 0, 0)


def ollama_engine_for_version(version) -> str | None:
    """The engine an Ollama release runs GGUFs in: ``"ollama-legacy"`` before 0.30, ``"ollama"``
    from 0.30 on (release candidates included), None when ``version`` names no release (missing,
    not text, not a version number, or a build from source). The one rule for calibration rows
    (engine/tools/score.py) and the page's Measure your own (engine/page/server.py)."""
    if not isinstance(version, str):
        return None
    match = OLLAMA_VERSION.fullmatch(version.strip())
    if not match:
        return None
    release = (int(match.group(1)), int(match.group(2)), int(match.group(3) or 0))
    if release == OLLAMA_UNVERSIONED:
        return None
    return "ollama-legacy" if release[:2] < OLLAMA_LLAMA_SERVER_RELEASE else "ollama"

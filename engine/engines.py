"""The inference-engine catalog (``data/engines.toml``): which backends and weight formats each
engine runs, and which engine's kernels it borrows when it has no calibration of its own."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from .catalog import AliasIndex, CatalogError, Field, read_toml_document, validate_entry
from .hardware import BACKENDS

SCHEMA = (
    Field("name", str, required=True),
    Field("base", str),
    Field("serves_for", str),
    Field("backends", list, required=True),
    Field("formats", list, required=True),
    Field("flash_attn_default", bool, required=True),
    Field("aliases", list, required=True),
    Field("source", str, required=True),
    Field("sources", dict),
    Field("notes", str),
    Field("cpu_tiled_types", list),
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
    notes: str = ""
    #: ggml storage types whose CPU matrix multiplications run as tiled GEMMs over repacked
    #: rows (each unpacked weight serves several tokens); ``("*",)`` = every type, ``("none",)``
    #: = no type; empty = not stated (the base engine's list applies).
    cpu_tiled_types: tuple[str, ...] = ()

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


@cache
def load_engines() -> dict[str, Engine]:
    document = read_toml_document("engines.toml")
    engines = {}
    for engine_id in sorted(document):
        raw = validate_entry("engine", engine_id, document[engine_id], SCHEMA)
        unknown = sorted(set(raw["backends"]) - set(BACKENDS))
        if unknown:
            raise CatalogError(f"engine {engine_id!r}: unknown backend(s) {', '.join(unknown)}")
        fields = {k: v for k, v in raw.items() if k not in ("sources", "backends", "formats", "aliases", "cpu_tiled_types")}
        engines[engine_id] = Engine(
            id=engine_id,
            backends=tuple(raw["backends"]),
            formats=tuple(raw["formats"]),
            aliases=tuple(raw["aliases"]),
            cpu_tiled_types=tuple(raw.get("cpu_tiled_types", ())),
            **fields,
        )
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
        if engine.id == CATCH_ALL or format_kind not in engine.formats or (engine.id, format_kind) in handed:
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
    itself, or the engine it hands that format to there (``serves_for``)."""
    for other in load_engines().values():
        if other.serves_for == engine.id and backend in other.backends and format_kind in other.formats:
            return other
    return engine

"""The catalog of weight formats, data/quants.toml: its schema, cross-field checks and name index."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache

from ..catalog import AliasIndex, CatalogError, Field, prevalidated, read_toml_document, validate_entry
from .llamacpp import FTYPE_DEFAULT_TYPE
from .recipes import RECIPES
from .storage import GGML_TYPES, type_bits

KINDS = ("gguf", "mlx", "fp8", "nvfp4", "awq", "gptq", "exl3", "int", "dense")
COMPUTE_FORMATS = ("fp16", "int8", "fp8", "fp4")
ENGINES = ("llama.cpp", "ik_llama.cpp", "ollama", "mlx-lm", "mlx-vlm", "vllm", "vllm-mlx", "omlx", "exllamav3", "other")

SCHEMA = (
    Field("name", str, required=True),
    Field("kind", str, required=True, choices=KINDS),
    Field("bits_per_weight", float, required=True, lo=1.0, hi=32.0),
    Field("compute_format", str, required=True, choices=COMPUTE_FORMATS),
    Field("engines", list, required=True),
    Field("recipe", str, required=True, choices=tuple(RECIPES)),
    Field("weight_type", str, required=True),
    Field("llama_ftype", str, choices=tuple(FTYPE_DEFAULT_TYPE)),
    Field("upgrade_type", str, choices=tuple(GGML_TYPES)),
    Field("hybrid_upgrade_type", str, choices=tuple(GGML_TYPES)),
    Field("dense_hybrid_upgrade_type", str, choices=tuple(GGML_TYPES)),
    Field("token_embedding_type", str, choices=tuple(GGML_TYPES)),
    Field("output_tensor_type", str, choices=tuple(GGML_TYPES)),
    Field("imatrix", bool),
    Field("aliases", list, required=True),
    Field("source", str, required=True),
    Field("sources", dict),
    Field("notes", str),
)


@dataclass(frozen=True)
class QuantFormat:
    """One weight format of data/quants.toml (or a parametric EXL3 name derived from one)."""

    id: str
    name: str
    kind: str
    bits_per_weight: float
    compute_format: str
    engines: tuple[str, ...]
    recipe: str
    weight_type: str
    aliases: tuple[str, ...]
    source: str
    llama_ftype: str = ""
    upgrade_type: str = ""
    hybrid_upgrade_type: str = ""
    dense_hybrid_upgrade_type: str = ""
    token_embedding_type: str = ""
    output_tensor_type: str = ""
    imatrix: bool = True
    notes: str = ""
    sources: dict = field(default_factory=dict, compare=False, hash=False)

    def summary(self) -> dict:
        return {"id": self.id, "name": self.name, "bits_per_weight": self.bits_per_weight}


def _check_entry(entry_id: str, raw: dict) -> None:
    """Cross-field rules: the stated bpw is the weight type's, recipes get what they need."""
    where = f"quant {entry_id!r}"
    bad = sorted(set(raw["engines"]) - set(ENGINES))
    if bad or not raw["engines"]:
        raise CatalogError(f"{where}: engines must be some of {', '.join(ENGINES)} (got {bad or 'none'})")
    try:
        bits = type_bits(raw["weight_type"])
    except KeyError as exc:
        raise CatalogError(f"{where}: {exc.args[0]}") from exc
    if abs(bits - raw["bits_per_weight"]) > 1e-9:
        raise CatalogError(f"{where}: bits_per_weight {raw['bits_per_weight']} but {raw['weight_type']} has {bits:g}")
    recipe = raw["recipe"]
    ftype = raw.get("llama_ftype")
    if recipe in ("llama.cpp", "llama.cpp-pure", "unsloth-dynamic"):
        if ftype is None:
            raise CatalogError(f"{where}: recipe {recipe} needs llama_ftype")
        if FTYPE_DEFAULT_TYPE[ftype] != raw["weight_type"]:
            raise CatalogError(f"{where}: llama_ftype {ftype} stores {FTYPE_DEFAULT_TYPE[ftype]}, not {raw['weight_type']}")
    else:
        for key in ("llama_ftype", "token_embedding_type", "output_tensor_type", "imatrix"):
            if key in raw:
                raise CatalogError(f"{where}: {key} only applies to llama.cpp recipes")
    for key in ("upgrade_type", "hybrid_upgrade_type"):
        if (recipe == "unsloth-dynamic") != (key in raw):
            raise CatalogError(f"{where}: {key} is required by, and only by, the unsloth-dynamic recipe")
    if "dense_hybrid_upgrade_type" in raw and recipe != "unsloth-dynamic":
        raise CatalogError(f"{where}: dense_hybrid_upgrade_type only applies to the unsloth-dynamic recipe")


def read_quants(text: str, origin: str = "quants.toml") -> dict[str, QuantFormat]:
    """Parse and validate a quants catalog (the text of a TOML file), keyed by id."""
    import tomllib  # here: the page's bundle reads the compiled catalogs, never TOML

    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise CatalogError(f"{origin}: {exc}") from exc
    return quants_from_document(document, origin)


def quants_from_document(document: dict, origin: str = "quants.toml", check: bool = True) -> dict[str, QuantFormat]:
    """The formats of a parsed quants catalog, keyed by id; ``check=False`` only for the page's
    bundle, whose catalogs the build checked (engine/catalog.py prevalidated)."""
    quants: dict[str, QuantFormat] = {}
    for entry_id, raw in document.items():
        if not isinstance(raw, dict):
            raise CatalogError(f"{origin}: top-level key {entry_id!r} must be a table (one format)")
        if check:
            validate_entry("quant", entry_id, raw, SCHEMA)
            _check_entry(entry_id, raw)
        fields = {k: v for k, v in raw.items() if k not in ("engines", "aliases", "sources")}
        quants[entry_id] = QuantFormat(
            id=entry_id,
            engines=tuple(raw["engines"]),
            aliases=tuple(raw["aliases"]),
            sources=dict(raw.get("sources", {})),
            **fields,
        )
    return quants


@cache
def load_quants() -> dict[str, QuantFormat]:
    """Every weight format of ``data/quants.toml``, keyed by id."""
    return quants_from_document(read_toml_document("quants.toml"), check=not prevalidated())


def build_index(quants: dict[str, QuantFormat]) -> AliasIndex:
    """Normalised ids, names and aliases -> id; a name claimed by two formats is a CatalogError."""
    index = AliasIndex("quant")
    for quant in quants.values():
        for name in (quant.id, quant.name, *quant.aliases):
            index.add(name, quant.id)
    return index


@cache
def quant_index() -> AliasIndex:
    """Every name of every format of the catalog -> id."""
    return build_index(load_quants())

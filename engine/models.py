"""The model catalog: schema, loader and the :class:`Model` record.

Entries live in ``data/models/*.toml``. Each keeps a verbatim subset of the model's published
config.json in its ``config`` table; :func:`engine.arch.architecture_from_config` turns it into
tensors, exactly as it does for a config.json pasted by a user.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from functools import cache, cached_property

from .arch import Architecture, architecture_from_config
from .catalog import DATA_DIR, AliasIndex, CatalogError, Field, check_provenance, normalise_name, prevalidated, read_toml_tables, validate_entry
from .errors import EngineInputError

SCHEMA = (
    Field("name", str, required=True),
    Field("family", str, required=True),
    Field("org", str, required=True),
    Field("license", str, required=True),
    Field("release_date", str, required=True),
    Field("hf_repo", str, required=True),
    Field("params_b", float, required=True, lo=0.01, hi=5000),
    Field("active_params_b", float, required=True, lo=0.01, hi=5000),
    Field("vision_params_b", float, lo=0, hi=100),
    Field("vision_tower", bool),
    Field("reasoning", bool, required=True),
    Field("tokenizer", str, required=True),
    Field("config", dict, required=True),
    Field("gguf_sizes_gb", dict),
    Field("quants", list),
    Field("aliases", list, required=True),
    Field("source", str, required=True),
    Field("sources", dict),
    Field("notes", str),
    Field("finetunes", dict),
    Field("verified_from", str),
    Field("unverified", str),
)

#: A ``finetunes`` value: the fine-tune's published config.json on Hugging Face, which must have the
#: entry's architecture (same shapes) - so it runs at the entry's speed under its own name.
FINETUNE_SOURCE = re.compile(r"^https://huggingface\.co/([\w.-]+/[\w.-]+)/blob/[\w.-]+/config\.json$")

DATE_PATTERN = re.compile(r"^\d{4}-\d{2}(-\d{2})?$")


@dataclass(frozen=True)
class Model:
    id: str
    name: str
    family: str
    org: str
    license: str
    release_date: str
    hf_repo: str
    params_b: float
    active_params_b: float
    reasoning: bool
    tokenizer: str
    config: dict
    aliases: tuple[str, ...]
    source: str
    sources: dict
    vision_params_b: float = 0.0
    #: Its config.json has a vision_config (a vision-language model) even where the encoder's
    #: size is not stated (vision_params_b 0): VLM servers (mlx-vlm, oMLX) load it as one.
    vision_tower: bool = False
    gguf_sizes_gb: dict | None = None
    quants: tuple[str, ...] = ()
    notes: str = ""
    #: Fine-tunes sharing this architecture: name -> URL of its config.json.
    finetunes: dict | None = None
    #: Provenance (engine/catalog.py check_provenance): the file actually read whose numbers match
    #: ``config`` (a commit-pinned copy where huggingface.co itself was out of reach), or a statement
    #: that the numbers were NOT read from the published config.json. Neither = not stated.
    verified_from: str = ""
    unverified: str = ""

    @cached_property
    def arch(self) -> Architecture:
        return architecture_from_config(self.config)

    @property
    def vision_language(self) -> bool:
        """A vision-language model: a vision tower stated, or its encoder's size."""
        return self.vision_tower or self.vision_params_b > 0

    def __hash__(self) -> int:  # config is a dict; identity by id is what we want
        return hash(self.id)

    def summary(self) -> dict:
        return {
            "id": self.id,
            "name": self.name,
            "params_b": self.params_b,
            "active_params_b": self.active_params_b,
        }


def _model_from_raw(entry_id: str, raw: dict, check: bool = True) -> Model:
    if not check:  # the page's bundle: the build checked it (engine/catalog.py prevalidated)
        return Model(id=entry_id, aliases=tuple(raw["aliases"]), sources=dict(raw.get("sources", {})), quants=tuple(raw.get("quants", ())),
                     **{k: v for k, v in raw.items() if k not in ("aliases", "sources", "quants")})
    validate_entry("model", entry_id, raw, SCHEMA)
    if not DATE_PATTERN.match(raw["release_date"]):
        raise CatalogError(f"model {entry_id!r}: release_date must be YYYY-MM-DD or YYYY-MM")
    if raw["active_params_b"] > raw["params_b"] * 1.0001:
        raise CatalogError(f"model {entry_id!r}: active_params_b exceeds params_b")
    for quant, size in raw.get("gguf_sizes_gb", {}).items():
        if isinstance(size, bool) or not isinstance(size, (int, float)) or not 0.01 < size < 5000:
            raise CatalogError(f"model {entry_id!r}: gguf_sizes_gb.{quant} must be a size in GB")
    if raw.get("gguf_sizes_gb") and "gguf_sizes_gb" not in raw.get("sources", {}):
        raise CatalogError(f"model {entry_id!r}: gguf_sizes_gb needs sources.gguf_sizes_gb")
    check_provenance("model", entry_id, raw)
    for name, source in raw.get("finetunes", {}).items():
        if not isinstance(source, str) or not FINETUNE_SOURCE.match(source):
            raise CatalogError(f"model {entry_id!r}: finetunes.{name} must be the URL of its config.json on huggingface.co")
    fields = {k: v for k, v in raw.items() if k not in ("aliases", "sources", "quants")}
    model = Model(
        id=entry_id,
        aliases=tuple(raw["aliases"]),
        sources=dict(raw.get("sources", {})),
        quants=tuple(raw.get("quants", ())),
        **fields,
    )
    try:
        model.arch  # noqa: B018 - a catalog config must be readable
    except EngineInputError as exc:
        raise CatalogError(f"model {entry_id!r}: {exc.message}") from exc
    return model


@cache
def load_models() -> dict[str, Model]:
    """Every model of ``data/models/*.toml``, keyed by id."""
    checked = prevalidated()
    return {
        entry_id: _model_from_raw(entry_id, raw, check=not checked)
        for entry_id, (raw, _file) in read_toml_tables(DATA_DIR / "models", "model").items()
    }


@cache
def model_index() -> AliasIndex:
    index = AliasIndex("model")
    for model in load_models().values():
        for name in (model.id, model.name, *model.aliases):
            index.add(name, model.id)
        for name, source in (model.finetunes or {}).items():
            index.add(name, model.id)
            index.add(FINETUNE_SOURCE.match(source).group(1), model.id)
    return index


def as_finetune(model: Model, query: str) -> Model:
    """``model`` under the name of the fine-tune ``query`` names, if it names one of its
    ``finetunes`` (exactly, or by all of its words), marked "architecture of <model>"; else ``model``."""
    if query == model.id:
        return model  # the page names models by id: nothing to normalise (~5% of a view's CPU)
    key = normalise_name(query)
    own = [normalise_name(n) for n in (model.id, model.name, *model.aliases)]
    if any(key and set(key.split()) <= set(n.split()) for n in own):
        return model  # the query names the base model itself
    for name, source in (model.finetunes or {}).items():
        names = (normalise_name(name), normalise_name(FINETUNE_SOURCE.match(source).group(1)))
        if key in names or any(key and set(key.split()) <= set(n.split()) for n in names):
            return replace(model, name=f"{name} (architecture of {model.name})")
    return model

"""Strict, lazy loaders for the catalogs in ``data/``.

Each catalog kind has a schema (a tuple of :class:`Field`). Loading checks every entry against it:
unknown keys, missing required fields, wrong types, implausible values, missing sources, duplicate
ids and duplicate aliases are all :class:`CatalogError`. Files are read in sorted order and only
when first needed (``functools.cache``), so importing the engine costs nothing.

The data directory is ``<repo>/data`` next to the ``engine`` package in a checkout and in the page's
bundle (build.py zips both side by side); an installed wheel carries it as ``engine/data``
(pyproject.toml maps it there). The page's bundle holds the TOML catalogs already parsed, in one
JSON file the build wrote after its own strict load of the same files passed (``catalogs.json``):
reading JSON is far faster than parsing TOML under Pyodide, and the loaders skip the checks the
build already made (:func:`prevalidated`).
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from .errors import CatalogError

_PACKAGE_DIR = Path(__file__).resolve().parent
#: Where the catalogs live: ``engine/data`` in an installed wheel, else ``data/`` beside the
#: ``engine`` package (a checkout, the page's bundle).
DATA_DIR = _PACKAGE_DIR / "data" if (_PACKAGE_DIR / "data").is_dir() else _PACKAGE_DIR.parent / "data"
#: The calibrated parameters (written by ``python -m engine calibrate``, read by params.py).
FIT_FILE = DATA_DIR / "calibration" / "fit.json"

#: The bundle's parsed catalogs, {path under data/: TOML document} (build.py compile_catalogs).
COMPILED_CATALOGS = DATA_DIR / "catalogs.json"

#: GiB -> bytes. Device memory is stored in GiB (see data/README.md, "Units").
GIB = 2**30
#: 10^9, the SI giga (GHz -> Hz, GFLOPS -> FLOP/s).
GIGA = 10**9
#: GB -> bytes. Every other byte quantity is SI.
GB = GIGA

ID_PATTERN = re.compile(r"^[a-z0-9][a-z0-9.\-]*$")


@dataclass(frozen=True)
class Field:
    """One key of a catalog entry: its type, whether it is required, its plausible range."""

    name: str
    type: type | tuple[type, ...]
    required: bool = False
    lo: float | None = None
    hi: float | None = None
    choices: tuple[str, ...] = ()
    #: A number that must be backed by ``source`` or ``sources[name]`` (all numbers are).
    doc: str = ""


def _check_value(kind: str, entry_id: str, spec: Field, value: Any) -> None:
    where = f"{kind} {entry_id!r}: {spec.name}"
    types = spec.type if isinstance(spec.type, tuple) else (spec.type,)
    if float in types and int not in types:
        types = types + (int,)
    if isinstance(value, bool) and bool not in types:
        raise CatalogError(f"{where} must be {spec.type}, got a boolean")
    if not isinstance(value, types):
        raise CatalogError(f"{where} must be {' or '.join(t.__name__ for t in types)}, got {type(value).__name__}")
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if not math.isfinite(value):
            raise CatalogError(f"{where} is not finite")
        if spec.lo is not None and value < spec.lo:
            raise CatalogError(f"{where} = {value} is implausibly small (< {spec.lo})")
        if spec.hi is not None and value > spec.hi:
            raise CatalogError(f"{where} = {value} is implausibly large (> {spec.hi})")
    if spec.choices and value not in spec.choices:
        raise CatalogError(f"{where} = {value!r} is not one of {', '.join(spec.choices)}")
    if isinstance(value, list):
        for item in value:
            if isinstance(item, bool) or not isinstance(item, (str, int, float)):
                raise CatalogError(f"{where} holds an item of type {type(item).__name__}")


#: Characters a ``source`` (or a ``sources`` value) needs at least to name where a number comes from.
SOURCE_MIN_LENGTH = 8


def _check_source(kind: str, entry_id: str, text: Any, what: str) -> None:
    if not isinstance(text, str) or len(text.strip()) < SOURCE_MIN_LENGTH:
        raise CatalogError(f"{kind} {entry_id!r}: {what} must name where the number comes from")


def check_provenance(kind: str, entry_id: str, raw: dict) -> None:
    """``verified_from`` names the URL of what was read (and found to match); ``unverified`` says the
    numbers were not read from their source. An entry says one or neither, never both."""
    if raw.get("verified_from") and raw.get("unverified"):
        raise CatalogError(f"{kind} {entry_id!r}: verified_from and unverified contradict each other")
    if "verified_from" in raw and "https://" not in raw["verified_from"]:
        raise CatalogError(f"{kind} {entry_id!r}: verified_from must hold the URL that was read")
    if "unverified" in raw:
        _check_source(kind, entry_id, raw["unverified"], "unverified")


def provenance(entry: Any) -> str:
    """``read`` (numbers checked against ``verified_from``), ``unverified`` or ``not stated``."""
    if entry.verified_from:
        return "read"
    return "unverified" if entry.unverified else "not stated"


def validate_entry(kind: str, entry_id: str, raw: dict, schema: tuple[Field, ...]) -> dict:
    """Check one raw entry against ``schema``; return it with defaults filled in."""
    if not ID_PATTERN.match(entry_id):
        raise CatalogError(f"{kind} id {entry_id!r} must be lower-case letters, digits, '.' and '-'")
    specs = {spec.name: spec for spec in schema}
    unknown = sorted(set(raw) - set(specs))
    if unknown:
        hint = ""
        if any(isinstance(raw[key], dict) for key in unknown):
            hint = ' (an id with a dot must be quoted: ["qwen2.5-7b"], else TOML splits it into nested tables)'
        raise CatalogError(f"{kind} {entry_id!r}: unknown key(s) {', '.join(unknown)}{hint}")
    for spec in schema:
        if spec.name not in raw:
            if spec.required:
                raise CatalogError(f"{kind} {entry_id!r}: missing required key {spec.name}")
            continue
        _check_value(kind, entry_id, spec, raw[spec.name])
    if "source" in specs:
        _check_source(kind, entry_id, raw.get("source"), "source")
    sources = raw.get("sources", {})
    for key, text in sources.items():
        if key not in specs:
            raise CatalogError(f"{kind} {entry_id!r}: sources names unknown field {key!r}")
        _check_source(kind, entry_id, text, f"sources.{key}")
    return dict(raw)


@cache
def compiled_catalogs() -> dict[str, dict] | None:
    """The bundle's parsed catalogs, or None where there are only the TOML files (checkout, wheel)."""
    if not COMPILED_CATALOGS.is_file():
        return None
    return json.loads(COMPILED_CATALOGS.read_text(encoding="utf-8"))


def prevalidated() -> bool:
    """True in the page's bundle: its catalogs passed the build's strict load, so loaders need not
    check them again (a checkout or a wheel reads the TOML files and checks every entry)."""
    return compiled_catalogs() is not None


def read_toml_document(relative: str) -> dict:
    """One catalog file (``relative`` to data/, e.g. ``engines.toml``), parsed."""
    compiled = compiled_catalogs()
    if compiled is not None:
        return compiled[relative]
    import tomllib  # here: the page's bundle never parses TOML, and importing tomllib is part of its boot otherwise

    try:
        return tomllib.loads((DATA_DIR / relative).read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise CatalogError(f"{Path(relative).name}: {exc}") from exc


def toml_files(folder: str) -> list[str]:
    """The catalog files of a data/ sub-folder (e.g. ``hardware``), relative to data/, sorted."""
    compiled = compiled_catalogs()
    if compiled is not None:
        return sorted(name for name in compiled if name.startswith(f"{folder}/"))
    return sorted(path.relative_to(DATA_DIR).as_posix() for path in (DATA_DIR / folder).glob("*.toml"))


def read_toml_tables(folder: Path, kind: str) -> dict[str, tuple[dict, str]]:
    """All top-level tables of ``folder/*.toml``, sorted by file name: id -> (table, file name)."""
    entries: dict[str, tuple[dict, str]] = {}
    files = toml_files(folder.relative_to(DATA_DIR).as_posix())
    if not files:
        raise CatalogError(f"no {kind} catalog files in {folder}")
    for relative in files:
        name = Path(relative).name
        document = read_toml_document(relative)
        for entry_id, table in document.items():
            if not isinstance(table, dict):
                raise CatalogError(f"{name}: top-level key {entry_id!r} must be a table (one entry)")
            if entry_id in entries:
                raise CatalogError(f"duplicate {kind} id {entry_id!r} in {name} and {entries[entry_id][1]}")
            entries[entry_id] = (table, name)
    return entries


def normalise_name(text: str) -> str:
    """The form names are compared in: lower case, only letters and digits, single spaces.

    ``"NVIDIA GeForce RTX-4090 24GB"`` -> ``"nvidia geforce rtx 4090 24gb"``.
    """
    return " ".join(re.findall(r"[a-z0-9]+(?:\.[0-9]+)?", text.lower()))


@dataclass
class AliasIndex:
    """Names (ids, display names, aliases) of one catalog -> entry id, with duplicates refused."""

    kind: str
    names: dict[str, str] = field(default_factory=dict)

    def add(self, name: str, entry_id: str) -> None:
        key = normalise_name(name)
        if not key:
            raise CatalogError(f"{self.kind} {entry_id!r}: empty alias {name!r}")
        owner = self.names.get(key)
        if owner is not None and owner != entry_id:
            raise CatalogError(f"{self.kind} alias {name!r} names both {owner!r} and {entry_id!r}")
        self.names[key] = entry_id


#: JSON Schema type names of the Python types a Field may have.
JSON_TYPES = {bool: "boolean", int: "integer", float: "number", str: "string", list: "array", dict: "object"}


def _field_json_schema(spec: Field, field_names: tuple[str, ...]) -> dict:
    types = spec.type if isinstance(spec.type, tuple) else (spec.type,)
    names = sorted({JSON_TYPES[t] for t in types})
    out: dict[str, Any] = {"type": names[0] if len(names) == 1 else names}
    if spec.doc:
        out["description"] = spec.doc
    if spec.choices:
        out["enum"] = list(spec.choices)
    if spec.lo is not None:
        out["minimum"] = spec.lo
    if spec.hi is not None:
        out["maximum"] = spec.hi
    if list in types:
        # _check_value: list items are strings or numbers, never booleans or tables.
        out["items"] = {"type": ["string", "number"]}
    if spec.name == "source":
        out["minLength"] = SOURCE_MIN_LENGTH
    if spec.name == "sources":
        # validate_entry: keys are field names of the same entry, values say where they come from.
        out["propertyNames"] = {"enum": list(field_names)}
        out["additionalProperties"] = {"type": "string", "minLength": SOURCE_MIN_LENGTH}
    return out


def json_schema(schema: tuple[Field, ...], title: str, description: str) -> dict:
    """A JSON Schema (draft-07, which every TOML editor's validator reads) of a catalog file whose
    top-level tables are entries of ``schema``: what :func:`validate_entry` checks field by field,
    for editors (Taplo, Even Better TOML) to check and complete a file while it is typed.
    Cross-field rules (one of two memory fields, a format's bits per weight) stay with the loaders."""
    names = tuple(spec.name for spec in schema)
    entry = {
        "type": "object",
        "properties": {spec.name: _field_json_schema(spec, names) for spec in schema},
        "required": [spec.name for spec in schema if spec.required],
        "additionalProperties": False,
    }
    return {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "title": title,
        "description": description,
        "type": "object",
        "propertyNames": {"pattern": ID_PATTERN.pattern},
        "additionalProperties": entry,
    }

"""The JSON Schemas of data/schema/: fresh, valid draft-07, the loaders' Field schemas field by
field, every catalog file valid against its schema, and a broken entry refused by the schema and
by the loader alike."""

from __future__ import annotations

import copy
import json
import tomllib

import jsonschema
import pytest

from conftest import ROOT, run_cli
from engine import engines, hardware, models, quant
from engine.catalog import JSON_TYPES, validate_entry
from engine.errors import CatalogError
from engine.tools.schemas import SCHEMA_DIR, all_schemas

#: Catalog kind -> (its loader's fields, the files it reads).
CATALOGS = {
    "hardware": (hardware.SCHEMA, sorted((ROOT / "data" / "hardware").glob("*.toml"))),
    "models": (models.SCHEMA, sorted((ROOT / "data" / "models").glob("*.toml"))),
    "quants": (quant.SCHEMA, [ROOT / "data" / "quants.toml"]),
    "engines": (engines.SCHEMA, [ROOT / "data" / "engines.toml"]),
}


def schema_of(kind: str) -> dict:
    return json.loads((SCHEMA_DIR / f"{kind}.schema.json").read_text(encoding="utf-8"))


def validator(kind: str) -> jsonschema.Draft7Validator:
    return jsonschema.Draft7Validator(schema_of(kind))


def test_committed_schemas_are_fresh():
    result = run_cli("schemas", "--check")
    assert result.returncode == 0, result.stderr
    assert sorted(p.name for p in SCHEMA_DIR.glob("*.json")) == sorted(all_schemas())


@pytest.mark.parametrize("kind", CATALOGS)
def test_schema_is_valid_draft_7_and_says_what_the_loader_says(kind):
    """Round trip: each property of the schema is the loader's Field of that name."""
    schema = schema_of(kind)
    jsonschema.Draft7Validator.check_schema(schema)
    entry = schema["additionalProperties"]
    fields, _files = CATALOGS[kind]
    assert list(entry["properties"]) == [f.name for f in fields]
    assert entry["required"] == [f.name for f in fields if f.required]
    assert entry["additionalProperties"] is False
    for f in fields:
        prop = entry["properties"][f.name]
        assert prop["type"] == JSON_TYPES[f.type], f.name
        assert prop.get("minimum") == f.lo and prop.get("maximum") == f.hi, f.name
        assert prop.get("enum", []) == list(f.choices), f.name


def _tables(kind: str):
    _fields, files = CATALOGS[kind]
    for path in files:
        yield path, tomllib.loads(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize("kind", CATALOGS)
def test_every_catalog_file_validates_against_its_schema(kind):
    check = validator(kind)
    entries = 0
    for path, document in _tables(kind):
        errors = [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in check.iter_errors(document)]
        assert not errors, f"{path.name}: {errors[:3]}"
        entries += len(document)
    assert entries > 0


def _an_entry(kind: str) -> tuple[str, dict]:
    _path, document = next(_tables(kind))
    entry_id = sorted(document)[0]
    return entry_id, document[entry_id]


#: Ways to break an entry: (label, function of (entry, kind) that breaks it in place).
BREAKAGES = {
    "unknown key": lambda e, k: e.update(speed_of_light=3e8),
    "missing required field": lambda e, k: e.pop("name"),
    "wrong type": lambda e, k: e.update(name=42),
    "list of tables": lambda e, k: e.update(aliases=[{"a": 1}]),
    "boolean for a string": lambda e, k: e.update(source=True),
    "source too short to name anything": lambda e, k: e.update(source="x"),
    "sources names an unknown field": lambda e, k: e.update(sources={"warp_factor": "https://example.org/spec"}),
    "sources value not a text": lambda e, k: e.update(sources={"name": 7}),
}


@pytest.mark.parametrize("kind", CATALOGS)
@pytest.mark.parametrize("breakage", BREAKAGES)
def test_a_broken_entry_is_refused_by_schema_and_loader(kind, breakage):
    fields, _files = CATALOGS[kind]
    entry_id, entry = _an_entry(kind)
    assert validator(kind).is_valid({entry_id: entry})
    broken = copy.deepcopy(entry)
    BREAKAGES[breakage](broken, kind)
    assert not validator(kind).is_valid({entry_id: broken})
    with pytest.raises(CatalogError):
        validate_entry(kind, entry_id, broken, fields)


def _refused_by_both(kind: str, entry_id: str, entry: dict) -> None:
    fields, _files = CATALOGS[kind]
    assert not validator(kind).is_valid({entry_id: entry})
    with pytest.raises(CatalogError):
        validate_entry(kind, entry_id, entry, fields)


@pytest.mark.parametrize("kind", ["hardware", "models", "quants"])
def test_an_implausible_number_is_refused(kind):
    fields, _files = CATALOGS[kind]
    entry_id, entry = _an_entry(kind)
    spec = next(f for f in fields if f.type in (int, float) and f.hi is not None)
    _refused_by_both(kind, entry_id, {**entry, spec.name: spec.hi * 10})
    _refused_by_both(kind, entry_id, {**entry, spec.name: spec.lo - 1})


@pytest.mark.parametrize("kind", ["hardware", "quants"])
def test_a_value_outside_the_choices_is_refused(kind):
    fields, _files = CATALOGS[kind]
    entry_id, entry = _an_entry(kind)
    spec = next(f for f in fields if f.choices)
    _refused_by_both(kind, entry_id, {**entry, spec.name: "not-a-" + spec.name})


@pytest.mark.parametrize("kind", CATALOGS)
def test_an_id_that_is_not_lower_case_is_refused(kind):
    _entry_id, entry = _an_entry(kind)
    _refused_by_both(kind, "Upper-Case", entry)

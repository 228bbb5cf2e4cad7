"""One option table (engine/options.py): every place that states a request option's bounds,
choices or defaults gets them from it, and no rule is written a second time.

Checked here: the request parser, the CLI's argparse options and the command line the page shows,
the page's view fields, the inputs and menus of the built page, the custom-hardware limits, the
request's JSON Schema, and the page's JavaScript (which must hold no literal copy of a list the
engine hands it)."""

from __future__ import annotations

import argparse
import html.parser
import json
import re
from pathlib import Path

import jsonschema
import pytest

from engine import EngineInputError, estimate
from engine.cli import _add_estimate
from engine.options import HARDWARE_FIELD, HARDWARE_FIELDS, OPTION, OPTIONS, request_json_schema
from engine.page.commands import CLI_FLAGS, CLI_SWITCHES
from engine.page.points import PREFERRED_QUANTS
from engine.page.fields import URL_LIMITS, VIEW_FIELDS, check_view
from engine.page.view import custom_hardware
from engine.request import DEFAULTS, KNOWN_KEYS, parse_options
from engine.system import CUSTOM_OPTIONAL, CUSTOM_REQUIRED

ROOT = Path(__file__).resolve().parent.parent
BASE = {"hardware": "rtx-4090", "model": "llama-3.1-8b", "quant": "Q4_K_M"}
NUMERIC = [o for o in OPTIONS if o.type in ("int", "float")]


def passes_own_check(request: dict) -> None:
    """The request's options pass their own checks (a cross-field rule such as the total token
    budget may still refuse the request as a whole)."""
    try:
        parse_options(request)
    except EngineInputError as exc:
        assert "must be" not in exc.message, exc.message


def view_options():
    return [o for o in (*OPTIONS, *HARDWARE_FIELDS) if o.view]


def test_the_request_parser_knows_exactly_the_table():
    assert KNOWN_KEYS == {*OPTION, "hardware", "model", "quant"}
    assert DEFAULTS == {o.key: o.default for o in OPTIONS}
    options = parse_options(BASE)
    assert {key: getattr(options, key) for key in OPTION} == {o.key: o.default for o in OPTIONS}


@pytest.mark.parametrize("option", NUMERIC, ids=lambda o: o.key)
def test_every_numeric_bound_is_the_parsers(option):
    """The bounds are inclusive and enforced: lo and hi pass the option's own check (a cross-field
    rule such as the total token budget may still refuse them), just outside fails, naming it."""
    for value in (option.lo, option.hi):
        if option.choices and value not in option.choices:
            continue
        passes_own_check({**BASE, option.key: value})
    step = 1 if option.type == "int" else 1e-6 * max(1.0, option.hi)
    for value in (option.lo - step, option.hi + step):
        with pytest.raises(EngineInputError) as caught:
            parse_options({**BASE, option.key: value})
        assert caught.value.field == option.key


def test_view_fields_take_their_options_bounds_and_choices():
    """A page setting that carries an option has its bounds, choices and devices (an unset whole
    number is 0 on the page, and so is an unset size whose page default is 0; the thinking budget
    is capped by the stream, see fields.py)."""
    assert {o.view for o in view_options()} <= set(VIEW_FIELDS)
    for option in view_options():
        field = VIEW_FIELDS[option.view]
        if option.type in ("int", "float"):
            low = 0 if option.default is None and (option.type == "int" or field["default"] == 0) else option.lo
            assert field["min"] == low, option.key
            high = option.hi if option.view != "think" else min(option.hi, field["max"])
            assert field["max"] == high, option.key
        if option.type == "choice":
            assert field["choices"] == list(option.choices), option.key
        assert field.get("devices", []) == list(option.devices), option.key


@pytest.mark.parametrize("option", [o for o in view_options() if o.type in ("int", "float")], ids=lambda o: o.key)
def test_the_page_and_the_engine_refuse_the_same_numbers(option):
    """Just above a page setting's maximum, the view check refuses it; at the maximum, the request
    it becomes passes the request parser (or the custom-hardware check) too."""
    field = VIEW_FIELDS[option.view]
    above = field["max"] + (1 if field["kind"] == "int" else field["max"] * 1e-6)
    with pytest.raises(EngineInputError):
        check_view({option.view: above})
    if option.key in HARDWARE_FIELD:
        custom = custom_hardware({"hw_kind": option.devices[0]} if option.devices else {})
        for value, ok in ((field["max"], True), (above, False)):
            request = {**BASE, "hardware": {**custom, option.key: value}}
            if ok:
                estimate(request)
            else:
                with pytest.raises(EngineInputError):
                    estimate(request)
    else:
        passes_own_check({**BASE, option.key: field["max"]})


def test_custom_hardware_limits_are_the_tables():
    assert CUSTOM_REQUIRED == {o.key: (o.lo, o.hi) for o in HARDWARE_FIELDS if o.required}
    assert set(CUSTOM_OPTIONAL) | set(CUSTOM_REQUIRED) == {o.key for o in HARDWARE_FIELDS if o.type in ("int", "float")}


def cli_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser()
    _add_estimate(parser.add_subparsers(dest="command"))
    return parser


def test_the_cli_offers_every_flagged_option_and_the_page_writes_the_same_flags():
    estimate_parser = cli_parser()._subparsers._group_actions[0].choices["estimate"]
    actions = {flag: action for action in estimate_parser._actions for flag in action.option_strings}
    for option in OPTIONS:
        if not option.flag:
            continue
        action = actions[option.flag]
        assert action.dest == option.key
        if option.type in ("int", "float"):
            assert action.type is {"int": int, "float": float}[option.type], option.key
        if option.type == "choice" and action.choices is not None:
            assert list(action.choices) == list(option.choices), option.key
    assert {**CLI_FLAGS, **CLI_SWITCHES} == {"hardware": "--hardware", "model": "--model", "quant": "--quant",
                                              **{o.key: o.flag for o in OPTIONS if o.flag}}


def test_the_cli_leaves_defaults_to_the_request():
    """A flag not given stays None, so the request parser's default (the table's) applies."""
    args = cli_parser().parse_args(["estimate", "--hardware", "x", "--model", "y", "--quant", "z"])
    assert all(getattr(args, o.key) is None for o in OPTIONS if o.flag)


def test_the_json_schema_says_what_the_parser_says():
    schema = request_json_schema()
    jsonschema.Draft7Validator.check_schema(schema)
    validator = jsonschema.Draft7Validator(schema)
    assert validator.is_valid(BASE) and validator.is_valid({**BASE, **{k: v for k, v in DEFAULTS.items()}})
    assert set(schema["properties"]) == KNOWN_KEYS
    for option in NUMERIC:
        assert not validator.is_valid({**BASE, option.key: option.hi * 2 + 1}), option.key
    for option in (o for o in OPTIONS if o.type == "choice"):
        assert not validator.is_valid({**BASE, option.key: "no such choice"}), option.key
    committed = json.loads((ROOT / "data" / "schema" / "request.schema.json").read_text(encoding="utf-8"))
    assert committed == schema, "data/schema/request.schema.json is stale: run python -m engine schemas"


class _Controls(html.parser.HTMLParser):
    """name -> attributes of the page's inputs, and name -> option values of its menus."""

    def __init__(self):
        super().__init__()
        self.inputs, self.menus, self._menu = {}, {}, None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "input" and attrs.get("name"):
            self.inputs[attrs["name"]] = attrs
        elif tag == "select":
            self._menu = attrs.get("name")
            self.menus.setdefault(self._menu, [])
        elif tag == "option" and self._menu:
            self.menus[self._menu].append(attrs.get("value"))

    def handle_endtag(self, tag):
        if tag == "select":
            self._menu = None


def test_the_page_inputs_and_menus_state_the_tables_bounds_and_choices(built_site):
    controls = _Controls()
    controls.feed((built_site / "index.html").read_text(encoding="utf-8"))
    checked = 0
    for key, field in VIEW_FIELDS.items():
        attrs = controls.inputs.get(key)
        if attrs and field["kind"] in ("int", "number") and "min" in attrs:
            assert (float(attrs["min"]), float(attrs["max"])) == (field["min"], field["max"]), key
            checked += 1
        if attrs and "maxlength" in attrs:
            assert int(attrs["maxlength"]) == field["max_length"], key
        if key in controls.menus and controls.menus[key]:
            assert sorted(controls.menus[key]) == sorted(field["choices"]), key
            assert list(field["labels"]) == controls.menus[key], key
            checked += 1
    assert checked >= 10, "the page's controls were not found"


def test_the_templates_write_no_bound_or_choice_of_a_view_setting():
    """The template renders the view fields' bounds and menus; it states none itself."""
    for path in (ROOT / "site" / "templates").rglob("*.j2"):
        text = path.read_text(encoding="utf-8")
        for match in re.finditer(r"<(input|select)\b[^>]*\bname=\"([a-z_0-9]+)\"[^>]*>", text):
            tag, name = match.groups()
            if name not in VIEW_FIELDS:
                continue
            assert not re.search(r"\b(min|max|maxlength)=\"[0-9]", match.group(0)), f"{path.name}: {match.group(0)}"
            if tag == "select":
                after = text[match.end():text.index("</select>", match.end())]
                assert "<option" not in after, f"{path.name}: the {name} menu lists its own options"


def _js_sources() -> dict[str, str]:
    return {path.relative_to(ROOT).as_posix(): path.read_text(encoding="utf-8") for path in (ROOT / "site" / "js").rglob("*.js")}


def _literal_list(items) -> re.Pattern:
    """Two consecutive items of a list as a JS literal would write them ("a", "b")."""
    quoted = [rf"[\"']{re.escape(str(item))}[\"']" for item in items[:2]]
    return re.compile(r"\s*,\s*".join(quoted))


def test_the_javascript_holds_no_copy_of_the_engines_lists():
    lists = {f"{key} choices": field["choices"] for key, field in VIEW_FIELDS.items() if len(field.get("choices", ())) >= 2}
    lists["lane parts"] = VIEW_FIELDS["lane1"]["parts"]
    lists["lane part names"] = VIEW_FIELDS["lane1"]["part_names"]
    lists["preferred quants"] = list(PREFERRED_QUANTS)
    lists["device kinds"] = list(HARDWARE_FIELD["kind"].choices)
    found = [f"{name} in {path}" for path, text in _js_sources().items() for name, items in lists.items()
             if _literal_list(items).search(text)]
    assert not found, f"the page must read these from the generated data: {found}"


def test_the_javascript_sets_no_limit_the_engine_sets():
    """A limit the engine declares (a MAX_* or other constant of engine/options.py or engine/page,
    or one of the URL parser's limits) is read by the page from the generated data, never written
    into its JavaScript as a number."""
    sources = [ROOT / "engine" / "options.py", *(ROOT / "engine" / "page").glob("*.py")]
    names = {name for path in sources for name in re.findall(r"^([A-Z][A-Z0-9_]+) = [0-9]", path.read_text(encoding="utf-8"), re.M)}
    names |= {key.upper() for key in URL_LIMITS}
    assert {"MAX_QUERY_LENGTH", "MAX_JSON_DEPTH", "MAX_GPUS", "SHOWN_KEY_LENGTH"} <= names
    found = [f"{path}: {match.group(0)}" for path, text in _js_sources().items()
             for match in re.finditer(r"\b(?:const|let|var)\s+([A-Z][A-Z0-9_]+)\s*=\s*[0-9]", text) if match.group(1) in names]
    assert not found, found


def _js_function(text: str, name: str) -> str:
    start = text.index(f"export function {name}(")
    return text[start:text.index("\n}\n", start)]


def test_number_precision_is_written_once():
    """The CLI (engine/textformat.py) and the page (site/js/format.js) take the decimals of rates,
    sizes and durations from one table; the page's functions state no threshold or precision."""
    from engine.textformat import DECIMALS, rate, seconds

    assert [rate(v) for v in (0.421, 4.2, 42.04, 4200.4)] == ["0.42", "4.20", "42.0", "4,200"]
    assert [seconds(v) for v in (0.00045, 0.0045, 0.45, 1.254, 12.54)] == ["0.45 ms", "4.5 ms", "450 ms", "1.25 s", "12.5 s"]
    text = (ROOT / "site" / "js" / "format.js").read_text(encoding="utf-8")
    for name, kinds in (("rate", ["rate"]), ("gigabytes", ["gigabytes"]), ("duration", ["milliseconds", "seconds"])):
        body = _js_function(text, name)
        assert all(f'fixed("{kind}"' in body for kind in kinds), name
        assert not re.search(r"toFixed\([0-9]|>= ?(10|100)\b", body.split("< 3600")[0]), f"format.js {name} states its own precision"
    assert set(DECIMALS) == {"rate", "gigabytes", "seconds", "milliseconds"}

"""The page URL's query string read exactly as the page reads it (site/js/state.js parseState):
tests cross-check the two, so a link shows the same numbers in the page and the CLI."""

from __future__ import annotations

import json
import re
from functools import cache
from urllib.parse import unquote_to_bytes

from ..errors import EngineInputError
from .fields import (
    _CONTROL,
    DEFAULT_VIEW,
    ID_KINDS,
    MAX_JSON_DEPTH,
    MAX_NAME_LENGTH,
    MAX_QUERY_LENGTH,
    SHOWN_KEY_LENGTH,
    VIEW_FIELDS,
    _refuse_constant,
    _shown,
    answers,
    json_depth,
    lane_gpus,
)


def view_from_query(query: str) -> dict:
    """The view a page URL's query string carries, exactly as the page reads it (state.js):
    a value it would ignore takes its default here too (see :func:`parse_query`)."""
    return parse_query(query)[0]


_INT_TEXT = re.compile(r"[0-9]{1,9}")
_NUMBER_TEXT = re.compile(r"[0-9]{1,9}(\.[0-9]{1,6})?")
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
    text = query.removeprefix("?")
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
        "device": frozenset(["", *(d["id"] for d in list_catalog("hardware"))]),
    }


def _parse_json_object(raw: str) -> dict:
    if json_depth(raw) > MAX_JSON_DEPTH:
        return {"ok": False, "reason": "nested too deeply"}
    try:
        value = json.loads(raw, parse_constant=_refuse_constant)
    except (json.JSONDecodeError, RecursionError):
        return {"ok": False, "reason": "not valid JSON"}
    return {"ok": True, "value": raw} if isinstance(value, dict) else {"ok": False, "reason": "not a JSON object"}


def _part_ok(spec: dict, part: str, raw: str) -> bool:
    """One part of a lane-like setting (a race lane, a measured run), as schema.js checks it."""
    ids = _ids()
    if part == "gpus":
        return lane_gpus(raw) is not None
    if part == "spec":
        return raw in ("off", "mtp") or raw in ids["model"]
    if part == "tps":
        return bool(_NUMBER_TEXT.fullmatch(raw)) and spec["min"] <= float(raw) <= spec["max"]
    return raw in ids[{"hw": "hardware"}.get(part, part)]


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
    values = raw.split(spec["separator"])
    if len(values) > len(spec["parts"]):
        return {"ok": False, "reason": "too many parts"}
    for part, name, value in zip(spec["parts"], spec["part_names"], values):
        if value and not _part_ok(spec, part, value):
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
            ignored.append({"key": key[:SHOWN_KEY_LENGTH], "reason": "unknown setting"})
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

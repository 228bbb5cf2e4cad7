"""An estimate request: plain data in, validated :class:`Options` out.

The request is a dict (from the CLI, a test, or the page's worker): ``hardware``, ``model`` and
``quant`` are required, every other key is an option of engine/options.py ``OPTIONS`` (its type,
default, bounds and meaning are declared there; the table below is generated from it).
"""

from __future__ import annotations

import math
from dataclasses import make_dataclass

from .errors import EngineInputError
from .options import MAX_NAME_LENGTH, MAX_TOKENS, OPTIONS, REQUIRED, SPLITS, WORKLOADS, Option

__all__ = ["DEFAULTS", "KNOWN_KEYS", "MAX_TOKENS", "REQUIRED", "SPLITS", "WORKLOADS", "Options", "parse_options"]

DEFAULTS = {option.key: option.default for option in OPTIONS}
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


_PYTHON_TYPES = {"int": "int", "float": "float", "bool": "bool", "choice": "str", "name": "str", "text": "str"}

#: The validated options of a request, one attribute per option of OPTIONS.
Options = make_dataclass(
    "Options",
    [(o.key, _PYTHON_TYPES[o.type] + (" | None" if o.default is None else "")) for o in OPTIONS],
    frozen=True,
)
Options.__module__ = __name__


def _name_field(request: dict, key: str) -> str | None:
    value = request[key]
    if value is not None and (not isinstance(value, str) or not value.strip() or len(value) > MAX_NAME_LENGTH):
        raise EngineInputError(f"{key} must be a name, got {value!r}", field=key)
    return value


def _option(request: dict, option: Option):
    """One option's value, checked against its declaration; None stays None where it may."""
    if request[option.key] is None and option.default is None:
        return None
    if option.type == "int":
        value = _int_field(request, option.key, option.lo, option.hi)
        if option.choices and value not in option.choices:
            raise EngineInputError(f"{option.key} must be {', '.join(map(str, option.choices[:-1]))} or {option.choices[-1]}, got {value}", field=option.key)
        return value
    if option.type == "float":
        return _float_field(request, option.key, option.lo, option.hi)
    if option.type == "bool":
        return _bool_field(request, option.key, allow_none=option.default is None)
    if option.type == "choice":
        return _choice_field(request, option.key, option.choices)
    if option.type == "text":
        value, longest = request[option.key], option.extra["max_length"]
        if not isinstance(value, str) or not value.strip() or len(value) > longest:
            raise EngineInputError(f"{option.key} must be text of 1 to {longest} characters, got {str(value)[:40]!r}", field=option.key)
        return value.strip()
    return _name_field(request, option.key)


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
    options = Options(**{option.key: _option(merged, option) for option in OPTIONS})
    if options.prefix_cached > options.prompt_tokens:
        raise EngineInputError("prefix_cached cannot exceed prompt_tokens", field="prefix_cached")
    total = options.depth + options.prompt_tokens + options.reasoning_tokens + options.gen_tokens
    if total > MAX_TOKENS:
        raise EngineInputError(f"depth + prompt + generated tokens must stay below {MAX_TOKENS:,}", field="depth")
    if options.draft and options.mtp:
        raise EngineInputError("choose a draft model or MTP, not both", field="draft")
    return options



def options_table() -> str:
    """The options as a text table (key, meaning, default), for this module's documentation."""
    rows = [(o.key, o.help + (f" ({o.unit})" if o.unit and o.unit not in o.help else ""), "unset" if o.default is None else repr(o.default))
            for o in OPTIONS]
    width = max(len(key) for key, _, _ in rows)
    return "\n".join(f"{key:<{width}}  {meaning}  [{default}]" for key, meaning, default in rows)


__doc__ += "\n" + options_table() + "\n"

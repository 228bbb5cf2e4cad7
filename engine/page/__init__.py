"""The page layer: what the worker calls (views, sweeps, verdicts, command lines).

It stands on the core (``engine.estimate`` and the catalogs) and the core never imports it.
"""

from __future__ import annotations

import json
from collections import OrderedDict

from ..api import estimate
from ..errors import EngineInputError
from ..listing import list_catalog
from .detect import detect_device
from .server import server_model
from .explore import functions as explore_functions
from .lanes import estimate_lane
from .view import estimate_view, view_numbers, view_schedule

__all__ = ["handle"]


def _decode_message(message_json) -> dict:
    """The worker's message as a dict, or EngineInputError for anything else (not text, not
    JSON, nested beyond Python's recursion limit, not an object)."""
    if not isinstance(message_json, str):
        raise EngineInputError("a message must be JSON text")
    try:
        message = json.loads(message_json)
    except (ValueError, RecursionError) as exc:
        raise EngineInputError(f"a message must be JSON ({type(exc).__name__})") from exc
    if not isinstance(message, dict):
        raise EngineInputError('a message must be a JSON object {"fn": ..., "args": ...}')
    return message


#: Functions whose answer is the page's main numbers for a view (``view``; or ``numbers`` then
#: ``schedule``, the same answer in two calls so the numbers show before the stream's schedule
#: is computed), a pure function of the message and the catalogs: their answers are kept by
#: message, so a view asked for again (a visitor flipping between two set-ups, back and
#: forward) costs a look-up instead of an estimate.
PER_VIEW = ("view", "numbers", "schedule", "lane")
#: Answers kept (about 6-18 kB each: 64 of them are under 1.2 MB).
KEPT_ANSWERS = 64
_answers: OrderedDict[str, str] = OrderedDict()


def handle(message_json: str) -> str:
    """The worker's boundary: ``{"fn": name, "args": {...}}`` in, ``{"ok": ..., ...}`` out (JSON).

    Never raises: input errors come back as ``{"ok": false, "error": {...}}`` so the page can
    show them; anything else as an internal error with its message.
    """
    kept = _answers.get(message_json) if isinstance(message_json, str) else None
    if kept is not None:
        _answers.move_to_end(message_json)
        return kept
    answer = _answer(message_json)
    # Only answers of per-view functions, and no internal error (it may not happen again).
    if answer.startswith('{"ok": true') and _function(message_json) in PER_VIEW:
        _answers[message_json] = answer
        if len(_answers) > KEPT_ANSWERS:
            _answers.popitem(last=False)
    return answer


def _function(message_json: str) -> str | None:
    try:
        name = json.loads(message_json).get("fn")
    except (ValueError, RecursionError, AttributeError):
        return None
    return name if isinstance(name, str) else None


def _answer(message_json: str) -> str:
    functions = {"estimate": estimate, "list": list_catalog, "view": estimate_view, "numbers": view_numbers, "schedule": view_schedule, "lane": estimate_lane, "detect_device": detect_device, "server_model": server_model, **explore_functions()}
    try:
        message = _decode_message(message_json)
        name = message.get("fn")
        fn = functions.get(name) if isinstance(name, str) else None
        if fn is None:
            raise EngineInputError(f"unknown function; expected one of {', '.join(functions)}")
        args = message.get("args", {})
        if fn is list_catalog:
            result = fn(args.get("kind") if isinstance(args, dict) else args)
        else:
            result = fn(args)
        return json.dumps({"ok": True, "result": result}, allow_nan=False)
    except EngineInputError as exc:
        return json.dumps({"ok": False, "error": exc.as_dict()})
    except Exception as exc:  # noqa: BLE001 - the page must get a message, not a dead worker
        return json.dumps({"ok": False, "error": {"message": f"internal error: {type(exc).__name__}: {exc}", "field": None}})

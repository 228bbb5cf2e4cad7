"""The page's view: the few settings a visitor picks, mapped to an engine request in one place.

The page keeps its state (``VIEW_FIELDS``) in the URL and sends it to the worker as is; this module
turns it into an :func:`engine.api.estimate` request, so the page, the build-time estimate and
the CLI line shown for checking all use one mapping. The answer the page streams decides how many
tokens are generated.
"""

from __future__ import annotations

import json
import shlex
from functools import cache

from .catalog import DATA_DIR
from .errors import EngineInputError

#: View keys, their defaults and meaning. The page reads this table (rendered into it by the
#: build) to parse and write its URL.
VIEW_FIELDS = {
    "hw": {"default": "rtx-4090", "kind": "hardware", "doc": "hardware id"},
    "model": {"default": "llama-3.1-8b", "kind": "model", "doc": "model id"},
    "quant": {"default": "Q4_K_M", "kind": "quant", "doc": "weight format name"},
    "engine": {"default": "", "kind": "engine", "doc": "engine id; empty = the device's usual one"},
    "prompt": {"default": 512, "kind": "int", "min": 1, "max": 1_000_000, "doc": "prompt tokens"},
    "answer": {"default": "chat", "kind": "answer", "doc": "which canned answer to stream"},
}
DEFAULT_VIEW = {key: spec["default"] for key, spec in VIEW_FIELDS.items()}


@cache
def answers() -> dict:
    """The canned answers and their token strings (data/answers/tokens.json)."""
    return json.loads((DATA_DIR / "answers" / "tokens.json").read_text(encoding="utf-8"))["answers"]


def request_for_view(view: dict) -> dict:
    """The estimate request for a page view (unknown keys are an error, missing ones default)."""
    if not isinstance(view, dict):
        raise EngineInputError("a view must be an object")
    unknown = sorted(set(view) - set(VIEW_FIELDS))
    if unknown:
        raise EngineInputError(f"unknown view setting(s): {', '.join(map(str, unknown))}")
    v = {**DEFAULT_VIEW, **view}
    answer = answers().get(v["answer"])
    if answer is None:
        raise EngineInputError(f"unknown answer {v['answer']!r}; choose one of {', '.join(answers())}", field="answer")
    request = {
        "hardware": v["hw"],
        "model": v["model"],
        "quant": v["quant"],
        "prompt_tokens": v["prompt"],
        "gen_tokens": len(answer["tokens"]),
        "schedule": True,
    }
    if v["engine"]:
        request["engine"] = v["engine"]
    return request


def cli_command(request: dict) -> str:
    """The ``python -m engine estimate`` line that reproduces a request's numbers."""
    flags = {
        "hardware": "--hardware",
        "model": "--model",
        "quant": "--quant",
        "engine": "--engine",
        "prompt_tokens": "--prompt",
        "gen_tokens": "--gen",
    }
    parts = ["python", "-m", "engine", "estimate"]
    for key, flag in flags.items():
        if request.get(key) not in (None, ""):
            parts += [flag, str(request[key])]
    return shlex.join(parts + ["--json"])


def estimate_view(view: dict) -> dict:
    """Request, estimate (with the stream schedule) and CLI line for a page view."""
    from .api import estimate

    request = request_for_view(view)
    return {"request": request, "estimate": estimate(request), "cli": cli_command(request)}

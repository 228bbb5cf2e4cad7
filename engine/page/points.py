"""What the page-level questions share: a call's checked view, its estimate request without the
stream schedule, the few numbers of one estimate (a point), the quant a model is shown in, and
chunks of long lists."""

from __future__ import annotations

from ..api import estimate
from ..errors import EngineInputError
from ..models import load_models
from .fields import check_view
from .view import request_for_view

#: Quants tried when the page's quant is not one the model is published in, best first.
PREFERRED_QUANTS = ("Q4_K_M", "UD-Q4_K_XL", "MXFP4", "Q4_0", "MLX-4bit", "AWQ-4bit")
#: Longest chunk a list call computes (estimates per call).
MAX_CHUNK = 64


def call_view(args: dict, *allowed: str) -> dict:
    """The complete, checked view of a call's ``{"view": {...}, ...}``; other keys must be in
    ``allowed`` (a misspelt option is an error, not silently ignored)."""
    if not isinstance(args, dict) or not isinstance(args.get("view"), dict):
        raise EngineInputError("expected {'view': {...}}")
    unknown = [key for key in args if key != "view" and key not in allowed]
    if unknown:
        shown = sorted(repr(key)[:40] for key in unknown)
        raise EngineInputError(f"unknown option(s): {', '.join(shown[:5])}{' ...' if len(shown) > 5 else ''}")
    return check_view(args["view"])


def whole(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def point_request(view: dict, **overrides) -> dict:
    """The view's request without the stream schedule (sweeps do not play anything)."""
    request = request_for_view(view)
    request.pop("schedule", None)
    request.update(overrides)
    return request


def estimate_point(request: dict) -> dict:
    """The few numbers a chart or a list needs; an impossible set-up is a point with its reason."""
    try:
        result = estimate(request)
    except EngineInputError as exc:
        return {"ok": False, "error": exc.message}
    return {
        "ok": True,
        "decode_tps": result["decode_tps"],
        "decode_tps_low": result["decode_tps_low"],
        "decode_tps_high": result["decode_tps_high"],
        "aggregate_tps": result["aggregate_tps"],
        "ttft_s": result["ttft_s"],
        "visible_ttft_s": result["visible_ttft_s"],
        "total_s": result["total_s"],
        "prefill_tps": result["prefill_tps"],
        "fit": result["fit"],
        "total_gb": result["memory"]["total_gb"],
        "usable_gb": result["memory"]["usable_gb"],
        "memory": result["memory"],
    }


def quant_for(model_id: str, current: str) -> str:
    """The quant to show a model in: the page's, if the model is published in it (or lists no
    formats); else the first preferred one it is published in; else its first format."""
    for field, value in (("model", model_id), ("quant", current)):
        if not isinstance(value, str):
            raise EngineInputError(f"{field} must be a name, got {value!r:.40}", field=field)
    model = load_models().get(model_id)
    if model is None or not model.quants or current in model.quants:
        return current
    for name in PREFERRED_QUANTS:
        if name in model.quants:
            return name
    return model.quants[0]


def chunk_of(items: list, args: dict) -> tuple[list, int]:
    offset = args.get("offset", 0)
    limit = args.get("limit", MAX_CHUNK)
    if not whole(offset) or not whole(limit) or offset < 0 or not 1 <= limit <= MAX_CHUNK:
        raise EngineInputError(f"offset must be >= 0 and limit 1..{MAX_CHUNK}")
    return items[offset:offset + limit], len(items)


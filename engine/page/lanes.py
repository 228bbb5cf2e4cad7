"""Race lanes: a lane is a short text ``hw*model*quant*engine*spec*gpus`` in the URL; each
non-empty part overrides the main view's setting, and :func:`lane_view` makes it a whole set-up."""

from __future__ import annotations

from functools import cache

from ..errors import EngineInputError
from .fields import LANE_KEYS, LANE_PARTS, LANE_SEPARATOR, MAX_NAME_LENGTH, VIEW_FIELDS, _shown, check_view, lane_gpus
from .view import device_kind, estimate_view


def lane_views(view: dict) -> list[dict]:
    """The race: the main view, then one whole view per non-empty lane (:func:`lane_view`; an
    unknown part is an error)."""
    v = check_view(view)
    main = {key: value for key, value in v.items() if key not in LANE_KEYS}
    views = [main]
    for key in LANE_KEYS:
        if v[key]:
            views.append(lane_view(main, v[key]))
    return views


def lane_view(main: dict, text: str) -> dict:
    """One race lane's whole view: the main view with the lane's parts. What the lane leaves
    empty is the main view's, unless it cannot apply to the lane's own set-up: only cards take
    the main set-up's GPU count (a Mac cannot be combined, and a CPU's count means sockets);
    on one memory for everything nothing is offloaded; expert offload needs a MoE model; a
    draft chosen for the main model gives way to the lane model's own when the lane changes it."""
    main = {key: value for key, value in check_view(main).items() if key not in LANE_KEYS}
    overrides = parse_lane(text)
    v = {**main, **overrides}
    kind = device_kind(v)
    if "gpus" not in overrides and kind != "gpu":
        v["gpus"] = 1
    if kind != "gpu" and v["offload"] != "auto":
        v["offload"] = "auto"
    if v["offload"] == "experts" and not _is_moe(v["model"]):
        v["offload"] = "auto"
    if "model" in overrides and "spec" not in overrides and v["spec"] == "draft" and v["model"] != main["model"]:
        v["draft"] = ""
    return v


@cache
def _moe_ids() -> frozenset:
    from ..models import load_models

    return frozenset(m.id for m in load_models().values() if m.arch.is_moe)


def _is_moe(model_id: str) -> bool:
    return model_id in _moe_ids()


def parse_lane(text: str) -> dict:
    """``"rtx-3090**Q8_0"`` -> ``{"hw": "rtx-3090", "quant": "Q8_0"}``; ``"rtx-3090*****2"`` ->
    ``{"hw": "rtx-3090", "gpus": 2}``."""
    if not isinstance(text, str) or len(text) > MAX_NAME_LENGTH * len(LANE_PARTS):
        raise EngineInputError(f"a race lane is text of at most {MAX_NAME_LENGTH * len(LANE_PARTS)} characters, got {_shown(text)}", field="lane")
    parts = text.split(LANE_SEPARATOR)
    if len(parts) > len(LANE_PARTS):
        raise EngineInputError(f"a race lane has at most {len(LANE_PARTS)} parts ({', '.join(LANE_PARTS)})", field="lane")
    overrides = {}
    for key, value in zip(LANE_PARTS, parts):
        if value:
            overrides[key] = value
    if "gpus" in overrides:
        gpus = lane_gpus(overrides["gpus"])
        if gpus is None:
            spec = VIEW_FIELDS["gpus"]
            raise EngineInputError(f"a race lane's GPU count must be a whole number from {spec['min']} to {spec['max']}, got {_shown(overrides['gpus'])}", field="lane")
        overrides["gpus"] = gpus
    if overrides.get("spec") not in (None, "off", "mtp"):
        overrides["draft"] = overrides.pop("spec")
        overrides["spec"] = "draft"
    return overrides


def estimate_lane(args: dict) -> dict:
    """A race lane's numbers: ``{"view": <main view>, "lane": "hw*model*quant*engine*spec*gpus"}``
    -> :func:`estimate_view` of :func:`lane_view`, with that whole view (what the lane runs)."""
    if not isinstance(args, dict) or not isinstance(args.get("view"), dict) or not isinstance(args.get("lane"), str) or set(args) - {"view", "lane"}:
        raise EngineInputError("expected {'view': {...}, 'lane': 'hw*model*quant*engine*spec*gpus'}")
    view = lane_view(args["view"], args["lane"])
    return {**estimate_view(view), "view": view}

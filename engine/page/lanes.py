"""Race lanes: a lane is a short text ``hw*model*quant*engine*spec`` in the URL; each non-empty
part overrides the main view's setting."""

from __future__ import annotations

from ..errors import EngineInputError
from .fields import LANE_KEYS, LANE_PARTS, LANE_SEPARATOR, MAX_NAME_LENGTH, _shown, check_view


def lane_views(view: dict) -> list[dict]:
    """The race: the main view, then one view per non-empty lane (its parts override the main
    view's; an unknown part is an error)."""
    v = check_view(view)
    main = {key: value for key, value in v.items() if key not in LANE_KEYS}
    views = [main]
    for key in LANE_KEYS:
        if v[key]:
            views.append({**main, **parse_lane(v[key])})
    return views


def parse_lane(text: str) -> dict:
    """``"rtx-3090**Q8_0"`` -> ``{"hw": "rtx-3090", "quant": "Q8_0"}``."""
    if not isinstance(text, str) or len(text) > MAX_NAME_LENGTH * len(LANE_PARTS):
        raise EngineInputError(f"a race lane is text of at most {MAX_NAME_LENGTH * len(LANE_PARTS)} characters, got {_shown(text)}", field="lane")
    parts = text.split(LANE_SEPARATOR)
    if len(parts) > len(LANE_PARTS):
        raise EngineInputError(f"a race lane has at most {len(LANE_PARTS)} parts ({', '.join(LANE_PARTS)})", field="lane")
    overrides = {}
    for key, value in zip(LANE_PARTS, parts):
        if value:
            overrides[key] = value
    if overrides.get("spec") not in (None, "off", "mtp"):
        overrides["draft"] = overrides.pop("spec")
        overrides["spec"] = "draft"
    return overrides

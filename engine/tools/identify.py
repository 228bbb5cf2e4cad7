"""Joint identification of a fitted unit's values at the fit: the rank and condition number of
their Jacobian columns on the unit's rows (what ``python -m engine bench`` prints per unit).

A column is d log(predicted) / d log(value) over every row of the unit, moving a slot's value on
the keys that share it (engine/tools/pools.py) and on no other.
"""

from __future__ import annotations

import math
from dataclasses import replace

from ..params import BackendParams
from .calibrate import BOUNDS, TOLERANCE, Case, _clamp, _log_errors, group_cases
from .fit import condition_number, independent_columns
from .pools import slot


def _columns(rows: dict[str, list[Case]], params: dict[str, BackendParams], labels: tuple[str, ...], into_box: bool) -> list[list[float]]:
    keys = sorted(rows)
    base = {k: _log_errors(rows[k], params[k]) for k in keys}
    columns = []
    for label in labels:
        name, sharing = slot(label, keys)
        # Step into the box: a value on its upper bound (soc_bw_factor's 1) is probed downward.
        up = any(getattr(params[k], name) * math.exp(1e-4) > BOUNDS[name][1] for k in sharing)
        step = -1e-4 if into_box and up else 1e-4
        column = []
        for k in keys:
            if k not in sharing:
                column += [0.0] * len(base[k])
                continue
            value = getattr(params[k], name) * math.exp(step)
            moved = replace(params[k], **{name: _clamp(name, value) if into_box else value})
            column += [(b - a) / step for a, b in zip(base[k], _log_errors(rows[k], moved))]
        columns.append(column)
    return columns


def jacobian_report(cases: list[Case], fit: dict) -> dict[str, tuple[int, int, float]]:
    """Per unit: (joint rank of its fitted values' Jacobian columns on its rows, the number
    fitted, the columns' condition number), at the fitted values (fit.PivotTest: a column whose
    part the others leave unexplained is below 1e-3 of its norm adds no rank). The fit freed each
    value by the rows and devices it moves at its start; this checks them jointly at the optimum."""
    groups = group_cases(cases)
    out = {}
    for unit, entry in sorted(fit.get("units", {}).items()):
        rows = {k: groups[k]["tg"] + groups[k]["pp"] for k in entry["keys"]}
        params = {k: BackendParams.from_dict(fit["backends"][k]["params"]) for k in entry["keys"]}
        labels = tuple(entry["fitted"])
        rank = len(independent_columns(_columns(rows, params, labels, True), TOLERANCE)) if labels else 0
        columns = _columns(rows, params, labels, False)
        gram = [[sum(x * y for x, y in zip(ci, cj)) for cj in columns] for ci in columns]
        out[unit] = (rank, len(labels), math.sqrt(condition_number(gram)) if columns else 1.0)
    return out

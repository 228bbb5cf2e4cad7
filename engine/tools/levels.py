"""The fit by levels: values shared by every engine on a kind of hardware, then per backend, then
per engine family, each freed only where rows of >= 3 devices identify it.

A key's (engine/backend's) value of parameter ``p`` is

    value[key, p] = clamp(prior[backend, p] * exp(sum of theta[unit, p] over the key's chain))

Its chain: ``kind:gpu`` (every GPU backend) or ``kind:cpu``; ``backend:<b>`` (llama.cpp on a GPU
backend, shared by every engine there); then one unit per engine of its lineage below llama.cpp
(``engine:mlx-lm/metal`` covers mlx-lm and every engine built on it on Metal: mlx-vlm, oMLX,
vLLM-MLX, Ollama's MLX runner). A unit's offset ``theta[unit, p]`` is *free* only when rows of at
least :data:`MIN_DEVICES` distinct devices under it move by 1% when the value is doubled or halved,
and its Jacobian column adds a direction the unit's earlier free columns do not span (fit.PivotTest,
the joint check). Everything else is 0: the parent's value, ultimately the prior.

The units are fitted top-down (kind, backend, engines, a base engine before the engines built on
it), each by the Levenberg-Marquardt of engine/tools/fit.py on all rows under it with the units
above fixed. An engine measured on one or two devices therefore predicts with its family's,
backend's or kind's values, in sample as out of sample: the values it would have had are that
device's factors (issue 12).

Folds (:func:`cross_validate`) refit, top-down, every unit that loses rows, warm-started from the
full fit with at most calibrate.FOLD_ITERATIONS iterations, a value whose support falls below
MIN_DEVICES devices back at its parent's: the per-key fit's approximation, so the two compare.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import replace

from ..engines import load_engines
from ..params import PRIORS, BackendParams
from .calibrate import ALL_PARAMS, BOUNDS, FOLD_ITERATIONS, IDENTIFIED, _rounded, record_held_out, residual_stats
from .fit import independent_columns, robust_least_squares
from .score import Case, predict

#: A value is fitted only where rows of this many distinct devices identify it (issue 12).
MIN_DEVICES = 3
#: Share of a column's norm the unit's earlier free columns must leave unexplained (1 - R^2).
TOLERANCE = 1e-3
#: The reference engine: a backend unit is its value on that backend.
REFERENCE_ENGINE = "llama-cpp"
ITERATIONS = 60
#: Selections per unit: at the parent's value, then at the fitted optimum.
ROUNDS = 4
STEP = 1e-4


def kind_of(backend: str) -> str:
    return "cpu" if backend == "cpu" else "gpu"


def chain(key: str) -> tuple[str, ...]:
    """The units whose offsets a key's values carry, top-down."""
    engine_id, backend = key.split("/")
    engines = load_engines()
    lineage = engines[engine_id].lineage() if engine_id in engines else (engine_id,)
    out = [f"kind:{kind_of(backend)}"]
    if backend != "cpu":
        out.append(f"backend:{backend}")
    out += [f"engine:{e}/{backend}" for e in reversed(lineage) if e != REFERENCE_ENGINE]
    return tuple(out)


def _order(unit: str) -> tuple:
    level, _sep, rest = unit.partition(":")
    depth = 0
    if level == "engine":
        engine_id = rest.split("/")[0]
        engines = load_engines()
        depth = len(engines[engine_id].lineage()) if engine_id in engines else 9
    return ({"kind": 0, "backend": 1, "engine": 2}[level], depth, unit)


def params_of(key: str, theta: dict, shift: tuple[str, str, float] | None = None) -> BackendParams:
    """A key's parameters from the offsets ``theta[unit][name]`` (``shift``: one more offset)."""
    backend = key.split("/")[1]
    prior = PRIORS.get(backend, BackendParams())
    values = {}
    for name in ALL_PARAMS:
        log_value = math.log(getattr(prior, name)) + sum(theta.get(u, {}).get(name, 0.0) for u in chain(key))
        if shift and shift[1] == name and shift[0] in chain(key):
            log_value += shift[2]
        lo, hi = BOUNDS[name]
        values[name] = min(max(math.exp(log_value), lo), hi)
    return replace(prior, **values)


def _residual(case: Case, params: BackendParams) -> float:
    predicted = predict(case, params)
    return math.log(predicted / case.measured) if predicted > 0 and math.isfinite(predicted) else 10.0


def _moved(cases: list[Case], keys: list[str], theta: dict, unit: str) -> dict[str, list[bool]]:
    """Per parameter, whether doubling or halving the unit's value moves each row by 1%."""
    base = {key: params_of(key, theta) for key in keys}
    base_pred = [predict(c, base[c.key]) for c in cases]
    out = {}
    for name in ALL_PARAMS:
        moved = [False] * len(cases)
        for factor in (math.log(2), -math.log(2)):
            shifted = {key: params_of(key, theta, (unit, name, factor)) for key in keys}
            for i, c in enumerate(cases):
                if not moved[i] and base_pred[i] > 0 and getattr(shifted[c.key], name) != getattr(base[c.key], name):
                    moved[i] = abs(predict(c, shifted[c.key]) / base_pred[i] - 1) > IDENTIFIED
        out[name] = moved
    return out


def _joint(cases: list[Case], theta: dict, unit: str, names: list[str]) -> list[str]:
    """The names whose Jacobian columns on ``cases`` add a direction (pivoted Cholesky, in order)."""
    keys = sorted({c.key for c in cases})
    base = [_residual(c, params_of(c.key, theta)) for c in cases]
    columns = []
    for name in names:
        shifted = {key: params_of(key, theta, (unit, name, STEP)) for key in keys}
        columns.append([(_residual(c, shifted[c.key]) - b) / STEP for c, b in zip(cases, base)])
    return [names[i] for i in independent_columns(columns, TOLERANCE)]


def _fit_unit(cases: list[Case], theta: dict, unit: str, names: list[str], start: dict, iterations: int) -> dict:
    """The unit's offsets for ``names`` minimising the robust loss on ``cases`` (others fixed)."""
    keys = sorted({c.key for c in cases})
    without = {**theta, unit: {}}
    bases = {key: params_of(key, without) for key in keys}
    lower, upper = [], []
    for name in names:
        logs = [math.log(getattr(bases[k], name)) for k in keys]
        lower.append(math.log(BOUNDS[name][0]) - max(logs) - 1e-6)
        upper.append(math.log(BOUNDS[name][1]) - min(logs) + 1e-6)

    def residuals(point: list[float]) -> list[float]:
        trial = {**theta, unit: dict(zip(names, point))}
        params = {key: params_of(key, trial) for key in keys}
        return [_residual(c, params[c.key]) for c in cases]

    x0 = [min(max(start.get(n, 0.0), lo + 1e-3), hi - 1e-3) for n, lo, hi in zip(names, lower, upper)]
    best = robust_least_squares(residuals, x0, lower, upper, iterations)
    return dict(zip(names, best))


def units_of(cases: list[Case]) -> dict[str, list[int]]:
    """Every unit with the indices of the rows under it, top-down."""
    rows: dict = defaultdict(list)
    for i, case in enumerate(cases):
        for unit in chain(case.key):
            rows[unit].append(i)
    return {unit: rows[unit] for unit in sorted(rows, key=_order)}


def fit_units(cases: list[Case]) -> tuple[dict, dict]:
    """(theta, report): each unit's free offsets, and per unit its rows, devices and free names."""
    theta: dict = {}
    report: dict = {}
    for unit, idx in units_of(cases).items():
        rows = [cases[i] for i in idx]
        devices = {c.system.device.id for c in rows}
        entry = {"rows": len(rows), "devices": len(devices), "fitted": []}
        report[unit] = entry
        theta[unit] = {}
        if len(devices) < MIN_DEVICES:
            continue
        free: list = []
        # Select at the parent's value, fit, select again at the optimum (a value that 3 devices'
        # rows no longer see there goes back to the parent) and refit if the selection changed.
        for _round in range(ROUNDS):
            moved = _moved(rows, sorted({c.key for c in rows}), theta, unit)
            candidates = [n for n in ALL_PARAMS if len({rows[j].system.device.id for j, m in enumerate(moved[n]) if m}) >= MIN_DEVICES]
            selected = _joint(rows, theta, unit, candidates) if candidates else []
            if _round == ROUNDS - 1:
                # The last round only drops: the selection must settle.
                selected = [n for n in free if n in selected]
            if _round and selected == free:
                break
            free = selected
            theta[unit] = _fit_unit(rows, theta, unit, free, theta[unit], ITERATIONS) if free else {}
        entry["fitted"] = free
    return theta, report


def fit_levels(cases: list[Case], cross_validated: bool = True) -> dict:
    """Fit every unit; returns the content of fit.json (keys' resolved values under ``backends``,
    the units' offsets under ``units``)."""
    resolved = [c for c in cases if c.resolved]
    theta, report = fit_units(resolved)
    by_key: dict = defaultdict(list)
    for case in resolved:
        by_key[case.key].append(case)
    backends = {}
    for key, rows in sorted(by_key.items()):
        params = params_of(key, theta)
        backends[key] = {
            "params": _rounded(params),
            "fitted": sorted({n for u in chain(key) for n in report.get(u, {}).get("fitted", [])}),
            "units": [u for u in chain(key) if report.get(u, {}).get("fitted")],
            "devices": len({c.system.device.id for c in rows}),
            "residuals": {t: residual_stats([c for c in rows if c.test == t], params) for t in ("tg", "pp") if any(c.test == t for c in rows)},
        }
    backend_names = sorted({key.split("/")[1] for key in by_key} | set(PRIORS))
    result = {
        "generated_by": "python -m engine calibrate",
        "measurements": "data/calibration/measurements.csv",
        "design": "levels: kind, backend (llama.cpp), engine family; a value freed by rows of >= 3 devices",
        "rows": len(resolved),
        "fitted_values": sum(len(entry["fitted"]) for entry in report.values()),
        "units": {
            unit: {
                "rows": entry["rows"],
                "devices": entry["devices"],
                "fitted": entry["fitted"],
                "log_offset": {n: float(f"{theta[unit][n]:.6g}") for n in entry["fitted"]},
            }
            for unit, entry in report.items()
        },
        # What an engine without rows of its own gets on a backend: llama.cpp's values there.
        "population": {b: _rounded(params_of(f"{REFERENCE_ENGINE}/{b}", theta)) for b in backend_names},
        "backends": backends,
    }
    if cross_validated:
        record_held_out(backends, resolved, cross_validate(resolved, result, [c.system.device.id for c in resolved]))
    return result


def _theta_of(fit: dict) -> dict:
    return {unit: dict(entry["log_offset"]) for unit, entry in fit["units"].items()}


def cross_validate(cases: list[Case], fit: dict, group_of_case: list, report: dict | None = None) -> list[float]:
    """Out-of-sample log(predicted/measured) of every case: each group's cases (a device's, or a
    source's) predicted by a fit that never saw them. Every unit that loses rows is refitted
    top-down from the full fit's offsets (at most FOLD_ITERATIONS iterations) on the remaining
    rows; a value whose identifying rows (at the full fit) leave fewer than MIN_DEVICES devices
    returns to its parent's."""
    full = _theta_of(fit)
    units = units_of(cases)
    support = report or _support(cases, fit)
    out = [0.0] * len(cases)
    for group in sorted(set(group_of_case), key=str):
        held = {i for i, g in enumerate(group_of_case) if g == group}
        theta = {u: dict(v) for u, v in full.items()}
        order = list(units)
        for position, (unit, idx) in enumerate(units.items()):
            if not held.intersection(idx) or not fit["units"].get(unit, {}).get("fitted"):
                continue
            kept = [i for i in idx if i not in held]
            free = [
                n for n in fit["units"][unit]["fitted"]
                if len({cases[i].system.device.id for i in support[unit][n] if i not in held}) >= MIN_DEVICES
            ]
            # As in the full fit, a unit is fitted with the units below it at 0.
            above = {u: theta[u] for u in order[:position]}
            theta[unit] = _fit_unit([cases[i] for i in kept], above, unit, free, full[unit], FOLD_ITERATIONS) if free else {}
        params = {}
        for i in sorted(held):
            case = cases[i]
            if case.key not in params:
                params[case.key] = params_of(case.key, theta)
            out[i] = _residual(case, params[case.key])
    return out


def _support(cases: list[Case], fit: dict) -> dict:
    """Per unit and fitted parameter, the rows whose prediction it moves at the fit."""
    theta = _theta_of(fit)
    out = {}
    for unit, idx in units_of(cases).items():
        names = fit["units"].get(unit, {}).get("fitted", [])
        if not names:
            out[unit] = {}
            continue
        rows = [cases[i] for i in idx]
        moved = _moved(rows, sorted({c.key for c in rows}), {u: v for u, v in theta.items() if u != unit} | {unit: theta[unit]}, unit)
        out[unit] = {n: [idx[j] for j, m in enumerate(moved[n]) if m] for n in names}
    return out

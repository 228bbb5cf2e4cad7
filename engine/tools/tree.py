"""The shared fit as a whole: fit.json-shaped results and cross-validation of a tree structure.

engine/tools/shared.py defines the tree (kind, backend and engine offsets shrunk toward the
priors, each freed by rows of >= 3 devices and a joint rank test); this module fits each of its
independent parts (GPU, CPU), shapes the result like ``data/calibration/fit.json`` and predicts
every row without its device or source. ``python -m engine bench --structures`` compares the
candidate structures (shared.CANDIDATES) with the per-key fit of engine/tools/calibrate.py by
leave-one-device-out and leave-one-source-out error.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import replace

from ..params import PRIORS, BackendParams
from .calibrate import _rounded, record_held_out, residual_stats
from .score import Case
from .shared import BOUNDS, CANDIDATES, DEFAULT, ENGINE_SPECIFIC, NAMES, Problem, Solution, Structure, conditioning, fold
from .shared import fit as shared_fit
from .shared import identified, key_moments, key_path, kind_of, names_of, normal_equations, precision, published
from .shared import robust_weight, support


def population(problem: Problem, theta: dict, backend: str) -> BackendParams:
    """llama.cpp's values on ``backend`` (its kind and backend nodes), with the engine-specific
    parameters at the prior: what an engine without a fit of its own gets on the page."""
    prior = PRIORS.get(backend, BackendParams())
    values = {}
    for name in NAMES:
        path = key_path(f"llama-cpp/{backend}", name, problem.structure)
        log_value = math.log(getattr(prior, name)) + sum(theta.get((node, name), 0.0) for node in path)
        lo, hi = BOUNDS[name]
        values[name] = getattr(prior, name) if name in ENGINE_SPECIFIC else min(max(math.exp(log_value), lo), hi)
    return replace(prior, **values)


def _at_bound(params: BackendParams, name: str) -> bool:
    lo, hi = BOUNDS[name]
    return abs(math.log(getattr(params, name) / lo)) < 1e-6 or abs(math.log(getattr(params, name) / hi)) < 1e-6


def fit_tree(cases: list[Case], structure: Structure = DEFAULT, cross_validated: bool = True) -> dict:
    """Fit the shared tree on ``cases``; returns a content shaped like fit.json's.

    Unless ``cross_validated`` is False, each key's residuals are replaced by leave-one-device-out
    ones (the in-sample ones stay under ``in_sample``).
    """
    resolved = [c for c in cases if c.resolved]
    # The GPU and the CPU trees share no node: each is fitted on its own (a refit of the CPU rows
    # alone reproduces their part of fit.json exactly).
    parts = [(idx, problem, shared_fit(problem)) for idx, problem in _parts(resolved, structure)]
    theta = {}
    nodes: dict = defaultdict(lambda: {"fitted": [], "log_offset": {}, "devices": {}, "rows": {}})
    nuisance: dict = defaultdict(dict)
    backends = {}
    for _idx, problem, solution in parts:
        own = published(solution.report, solution.theta)
        theta.update(own)
        for pair in identified(solution):
            entry = nodes[pair[0]]
            entry["fitted"].append(pair[1])
            entry["log_offset"][pair[1]] = float(f"{own[pair]:.6g}")
            entry["devices"][pair[1]] = solution.report[pair]["devices"]
            entry["rows"][pair[1]] = solution.report[pair]["rows"]
        for pair in solution.free:
            if pair not in own:
                nuisance[pair[0]][pair[1]] = float(f"{solution.theta[pair]:.6g}")
        fitted_names = names_of(problem, identified(solution))
        for key in problem.keys:
            params = problem.params(key, own)
            rows = [problem.cases[i] for i in problem.rows[key]]
            backends[key] = {
                "params": _rounded(params),
                "fitted": list(fitted_names[key]),
                "own": sorted(n for (node, n) in identified(solution) if node == f"engine:{key}"),
                "at_bound": sorted(n for n in fitted_names[key] if _at_bound(params, n)),
                "devices": len({c.system.device.id for c in rows}),
                "residuals": {t: residual_stats([c for c in rows if c.test == t], params) for t in ("tg", "pp") if any(c.test == t for c in rows)},
            }
    problem = parts[0][1] if parts else Problem([], structure)
    backend_names = sorted({key.split("/")[1] for key in problem.keys} | set(PRIORS))
    result = {
        "generated_by": "python -m engine calibrate",
        "measurements": "data/calibration/measurements.csv",
        "structure": structure.name,
        "rows": len(resolved),
        "fitted_values": sum(len(identified(solution)) for _i, _p, solution in parts),
        "condition_number": float(f"{max([conditioning(solution) for _i, _p, solution in parts] or [1.0]):.3g}"),
        "iterations": max([solution.iterations for _i, _p, solution in parts] or [0]),
        "nodes": {node: dict(entry) for node, entry in sorted(nodes.items())},
        "nuisance": {node: dict(sorted(v.items())) for node, v in sorted(nuisance.items())},
        "population": {backend: _rounded(population(problem, theta, backend)) for backend in backend_names},
        "backends": backends,
    }
    if cross_validated:
        record_held_out(backends, resolved, cross_validate_tree(resolved, result, [c.system.device.id for c in resolved], parts))
    return result


def _parts(cases: list[Case], structure: Structure) -> list[tuple[list[int], Problem]]:
    out = []
    for kind in sorted({kind_of(c.system.backend) for c in cases}):
        idx = [i for i, c in enumerate(cases) if kind_of(c.system.backend) == kind]
        out.append((idx, Problem([cases[i] for i in idx], structure)))
    return out


def restore(cases: list[Case], fit: dict) -> list[tuple[list[int], Problem, Solution]]:
    """The solved problems behind a fit.json content (its offsets, at its optimum)."""
    structure = next((s for s in CANDIDATES if s.name == fit.get("structure")), DEFAULT)
    out = []
    for idx, problem in _parts(cases, structure):
        mine = {pair for pair in problem.members}
        free = [(node, name) for node, entry in fit["nodes"].items() for name in entry["fitted"] if (node, name) in mine]
        theta = {(node, name): fit["nodes"][node]["log_offset"][name] for node, name in free}
        extra = [(node, name) for node, values in fit.get("nuisance", {}).items() for name in values if (node, name) in mine]
        theta.update({(node, name): fit["nuisance"][node][name] for node, name in extra})
        free += extra
        residuals = problem.residuals(theta)
        secants = problem.secants(theta)
        sens = problem.sensitivities(theta, residuals, names_of(problem, free), secants)
        report = {}
        for pair in free:
            rows, devices = support(problem, secants, pair)
            report[pair] = {"rows": rows, "devices": devices, "free": True, "why": "", "nuisance": pair in extra}
        prec = {a: precision(problem, report, a) for a in free}
        weights = {i: robust_weight(r) for i, r in residuals.items()}
        gram, grad = normal_equations(problem, free, key_moments(problem, sens, weights, residuals))
        out.append((idx, problem, Solution(theta, free, report, prec, residuals, sens, gram, grad, 0, secants)))
    return out


def cross_validate_tree(cases: list[Case], fit: dict, group_of_case: list, solved: list | None = None) -> list[float]:
    """Out-of-sample log(predicted/measured) of every case: each group's cases (a device's, or a
    source's) predicted by a fit that never saw them.

    A fold is one Newton step of the penalised objective from the full optimum without the
    group's rows (engine/tools/shared.fold), every offset that loses its support (rows of fewer
    than 3 devices left) returned to its prior: an engine measured only on the held-out device
    falls back to its base engine's values, as an unmeasured engine does on the page.
    """
    out = [0.0] * len(cases)
    for idx, problem, solution in solved if solved is not None else restore(cases, fit):
        groups = [group_of_case[i] for i in idx]
        for group in sorted(set(groups), key=str):
            held = {j for j, g in enumerate(groups) if g == group}
            theta = published(solution.report, fold(problem, solution, held))
            for key in sorted({problem.cases[j].key for j in held}):
                params = problem.params(key, theta)
                for j in problem.rows[key]:
                    if j in held:
                        out[idx[j]] = problem.residual(j, params)
    return out



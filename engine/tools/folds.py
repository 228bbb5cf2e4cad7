"""Held-out errors by exact refits: each group's rows (a device's, or a source's) predicted by
``fit_all`` run on every other row, as if the group had never been measured.

Issue 12 makes leave-one-device-out and leave-one-source-out error the score. A fold warm-started
from the full fit is cheaper but not out of sample: it re-runs the
identification check at values the held-out rows helped set, and refits a few iterations from
there (the design until this module). Measured at ba9c75e, it put the Ryzen 9 7950X's ik_llama.cpp decode at MdAPE 0.156 where
a refit without the device gives 0.251, the M4 Max's vLLM-MLX at 0.122 (refit 0.360) and the
M2 Ultra's llama.cpp Metal at 0.110 (refit 0.403) (docs/calibration.md). A refit costs one full
fit per group (about 16 s of CPU each), so the groups run in parallel processes.
"""

from __future__ import annotations

import math
import multiprocessing
import os

#: (cases, group of each case, fit, params_for) for the worker processes, set before they fork.
_WORK: tuple = ()


def cross_validate_exact(cases: list, group_of_case: list, fit_all, params_for, workers: int | None = None) -> list[float]:
    """Out-of-sample log(predicted/measured) of every case, each group's rows predicted by
    ``fit_all`` run on all the other rows, through ``params_for`` (calibrate's: the page's own
    parameter rule, so a key left without rows takes its base engine's or its backend's
    population values, as an unmeasured engine does)."""
    global _WORK
    groups = sorted(set(group_of_case), key=str)
    _WORK = (cases, group_of_case, fit_all, params_for)
    workers = max(1, min(workers or os.cpu_count() or 1, len(groups)))
    try:
        if workers == 1 or "fork" not in multiprocessing.get_all_start_methods():
            results = [_fold(group) for group in groups]
        else:
            with multiprocessing.get_context("fork").Pool(workers) as pool:
                results = pool.map(_fold, groups, chunksize=1)
    finally:
        _WORK = ()
    out = [0.0] * len(cases)
    for pairs in results:
        for i, error in pairs:
            out[i] = error
    return out


def _fold(group) -> list[tuple[int, float]]:
    from .score import predict

    cases, group_of_case, fit_all, params_for = _WORK
    held = [i for i, g in enumerate(group_of_case) if g == group]
    held_set = set(held)
    fit = fit_all([c for i, c in enumerate(cases) if i not in held_set], cross_validated=False)
    out = []
    for i in held:
        case = cases[i]
        predicted = predict(case, params_for(case, fit))
        out.append((i, math.log(predicted / case.measured) if predicted > 0 and math.isfinite(predicted) else 10.0))
    return out

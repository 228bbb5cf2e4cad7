"""``python -m engine calibrate``: fit the physics' free parameters on the calibration set.

For every engine/backend pair with measurements in ``data/calibration/measurements.csv`` the fit
finds the few parameters of :class:`engine.params.BackendParams` (bandwidth efficiency, fixed
per-token and per-layer overhead, KV read cost, decode compute efficiency, prefill efficiency,
attention cost, micro-batch overhead, per-core bandwidth on CPUs) that minimise a robust loss of
log(predicted / measured) over its rows: decode parameters on ``tg`` rows, prefill parameters on
``pp`` rows. Parameters the rows cannot tell apart keep their prior (a parameter that moves no
prediction by 1% when doubled is not identified by the data). The result, with each key's
residual statistics, goes to ``data/calibration/fit.json``; ``--check`` re-runs the fit and fails
if the committed file differs (the fit is deterministic).

A key's ``residuals`` in fit.json, from which the page draws its range, are leave-one-device-out:
each device's rows predicted by a refit without them (:func:`cross_validate`), so an engine
measured on one device gets the spread of its backend's population, not its own in-sample fit.
"""

from __future__ import annotations

import json
import math
import statistics
import sys
from collections import defaultdict
from dataclasses import fields, replace

from ..catalog import DATA_DIR
from ..engines import load_engines
from .fit import robust_least_squares
from ..params import PRIORS, BackendParams, resolve_params
from .score import Case, load_cases, percentile, predict

MEASUREMENTS = DATA_DIR / "calibration" / "measurements.csv"
FIT_FILE = DATA_DIR / "calibration" / "fit.json"
DOCS = DATA_DIR.parent / "docs" / "calibration.md"

#: t_layer_batched_s is not fitted: batched decode rows come from one device per backend (DGX Spark
#: on CUDA, M2 Ultra on Metal), so it keeps its sourced prior (engine/params.py PRIORS; issue 12:
#: a value is fitted only where rows of at least 3 devices identify it).
TG_PARAMS = (
    "eta_bw", "t_token_s", "t_layer_s", "t_moe_layer_decode_s", "kv_read_factor", "eta_decode_compute", "eta_attn_decode", "core_bw_gbs", "t_sync_thread_s",
    "moe_batch_exponent", "dequant_ops", "codebook_ops", "kv_codebook_ops", "sync_factor", "sync_data_factor", "soc_bw_factor",
)
PP_PARAMS = ("eta_pp", "pp_quant_cost", "attn_cost_fa", "attn_cost_nofa", "t_ubatch_s", "expert_pp_cost", "sync_factor", "sync_data_factor")
ALL_PARAMS = TG_PARAMS + tuple(name for name in PP_PARAMS if name not in TG_PARAMS)
#: Physical bounds each parameter must stay within (an efficiency above 1 is impossible).
BOUNDS = {
    "eta_bw": (0.05, 1.0),
    "t_token_s": (1e-5, 0.2),
    "t_layer_s": (1e-7, 0.005),
    "t_layer_batched_s": (1e-7, 0.005),
    "t_moe_layer_decode_s": (1e-7, 0.005),
    "kv_read_factor": (0.5, 20.0),
    "eta_decode_compute": (0.005, 1.0),
    "eta_attn_decode": (0.002, 1.0),
    "moe_batch_exponent": (0.2, 1.0),
    "dequant_ops": (0.01, 300.0),
    "codebook_ops": (0.01, 300.0),
    "kv_codebook_ops": (0.01, 1000.0),
    "sync_factor": (0.05, 200.0),
    "sync_data_factor": (0.05, 200.0),
    "soc_bw_factor": (0.3, 1.0),
    "core_bw_gbs": (2.0, 200.0),
    "t_sync_thread_s": (1e-8, 1e-4),
    "eta_pp": (0.005, 1.0),
    "attn_cost_fa": (0.3, 30.0),
    "attn_cost_nofa": (0.3, 60.0),
    "t_ubatch_s": (1e-5, 2.0),
    "pp_quant_cost": (0.5, 5.0),
    "expert_pp_cost": (1.0, 20.0),
}
#: Properties of an engine's implementation rather than of the backend: a key that cannot
#: identify them inherits them from its base engine (Ollama from llama.cpp), never from another
#: engine on the same backend, else keeps the prior. llama.cpp's CUDA backend launches every kernel
#: of a batched step (its graph capture is single-token only); vLLM captures graphs for batches
#: too. sync_factor scales the latency of a split's exchanges (parallel.py's NCCL-based prior):
#: vLLM and ExLlamaV3 all-reduce their tensor-parallel partial sums twice a layer on the GPUs,
#: llama.cpp's row split gathers after every split matmul through copies between the cards
#: (parallel.py), so a median over a backend's engines handed llama.cpp's split latency to an
#: engine measured nowhere else. sync_data_factor (the MB-sized prefill activations) stays shared:
#: the bytes cross the same PCIe link whichever engine sends them.
ENGINE_SPECIFIC = ("t_layer_batched_s", "sync_factor")
#: A parameter must move some prediction by this much when doubled to count as identified.
IDENTIFIED = 0.01
#: Cross-validation folds refit the keys that lost rows with at most this many LM iterations,
#: warm-started from the full fit (a full refit per fold would take hours on two cores).
FOLD_ITERATIONS = 6


def _clamp(name: str, value: float) -> float:
    lo, hi = BOUNDS[name]
    return min(max(value, lo), hi)


def _log_errors(cases: list[Case], params: BackendParams, host: BackendParams | None = None) -> list[float]:
    out = []
    for case in cases:
        predicted = predict(case, params, host)
        out.append(math.log(predicted / case.measured) if predicted > 0 and math.isfinite(predicted) else 10.0)
    return out


def _identified(cases: list[Case], params: BackendParams, name: str) -> bool:
    """Does doubling or halving ``name`` (within its bounds) move some prediction by 1%?"""
    base = [predict(c, params) for c in cases]
    for factor in (2.0, 0.5):
        moved = replace(params, **{name: _clamp(name, getattr(params, name) * factor)})
        if any(abs(predict(c, moved) / b - 1) > IDENTIFIED for c, b in zip(cases, base) if b > 0):
            return True
    return False


def fit_params(
    cases: list[Case], start: BackendParams, names: tuple[str, ...], iterations: int = 80
) -> tuple[BackendParams, tuple[str, ...]]:
    """Fit the identified ``names`` on ``cases`` from ``start``; returns (params, fitted names)."""
    free = tuple(n for n in names if _identified(cases, start, n)) if cases else ()
    if not free:
        return start, ()

    def build(point: list[float]) -> BackendParams:
        return replace(start, **{n: _clamp(n, math.exp(v)) for n, v in zip(free, point)})

    best = robust_least_squares(
        lambda point: _log_errors(cases, build(point)),
        [math.log(getattr(start, n)) for n in free],
        [math.log(BOUNDS[n][0]) for n in free],
        [math.log(BOUNDS[n][1]) for n in free],
        iterations,
    )
    return build(best), free


def population(fits: dict[str, tuple[BackendParams, tuple[str, ...]]], backend: str) -> BackendParams:
    """Each parameter's median over the keys of ``backend`` whose data identified it, else the
    backend's prior: what an engine's unidentified parameters (and an unmeasured engine) get."""
    prior = PRIORS.get(backend, BackendParams())
    values = {}
    for f in fields(BackendParams):
        seen = sorted(
            getattr(params, f.name) for key, (params, free) in fits.items() if key.endswith(f"/{backend}") and f.name in free
        )
        values[f.name] = statistics.median(seen) if seen and f.name not in ENGINE_SPECIFIC else getattr(prior, f.name)
    return BackendParams(**values)


def inherited(key: str, fits: dict[str, tuple[BackendParams, tuple[str, ...]]]) -> dict[str, float]:
    """Engine-specific parameters ``key`` cannot identify, from the nearest base engine on the
    same backend that did."""
    engine_id, backend = key.split("/")
    engines = load_engines()
    out = {}
    for name in ENGINE_SPECIFIC:
        for base in engines[engine_id].lineage()[1:] if engine_id in engines else ():
            params, free = fits.get(f"{base}/{backend}", (None, ()))
            if name in free:
                out[name] = getattr(params, name)
                break
    return out


def residual_stats(cases: list[Case], params: BackendParams) -> dict:
    """Spread of measured/predicted over ``cases``: what the page's range is made of."""
    return _error_stats(_log_errors(cases, params)) if cases else {}


def group_cases(cases: list[Case]) -> dict[str, dict[str, list[Case]]]:
    groups: dict[str, dict[str, list[Case]]] = defaultdict(lambda: {"tg": [], "pp": []})
    for case in cases:
        if case.resolved:
            groups[case.key][case.test].append(case)
    return groups


def _rounded(params: BackendParams) -> dict:
    # Six significant digits: the fit's precision, and stable across platforms' last bits.
    return {f.name: float(f"{getattr(params, f.name):.6g}") for f in fields(BackendParams)}


def fit_all(cases: list[Case], cross_validated: bool = True) -> dict:
    """Fit every engine/backend key; returns the content of fit.json.

    Two passes: each key is fitted from its backend's prior; then every parameter its own data
    cannot identify is set to the median over the same backend's keys that could (a population
    prior, better than a guess when the page extrapolates, e.g. prefill for an engine measured
    only in decode), and the identified ones are refitted around them. Then, unless
    ``cross_validated`` is False, each key's residuals are replaced by leave-one-device-out ones
    (the in-sample ones stay under ``in_sample``).
    """
    groups = group_cases(cases)
    first = {}
    for key, tests in sorted(groups.items()):
        prior = PRIORS.get(key.split("/")[1], BackendParams())
        # One joint fit over decode and prefill rows: they share eta_bw (prefill's memory bound)
        # and the interconnect factor.
        first[key] = fit_params(tests["tg"] + tests["pp"], prior, ALL_PARAMS)
    backend_names = sorted({key.split("/")[1] for key in groups} | set(PRIORS))
    common = {backend: population(first, backend) for backend in backend_names}
    backends = {}
    for key, tests in sorted(groups.items()):
        fitted, free = first[key]
        start = replace(common[key.split("/")[1]], **{**inherited(key, first), **{n: getattr(fitted, n) for n in free}})
        params, _free = fit_params(tests["tg"] + tests["pp"], start, free)
        backends[key] = {
            "params": _rounded(params),
            "fitted": sorted(free),
            "devices": len({c.system.device.id for c in tests["tg"] + tests["pp"]}),
            "residuals": {test: residual_stats(rows, params) for test, rows in tests.items() if rows},
        }
    result = {
        "generated_by": "python -m engine calibrate",
        "measurements": "data/calibration/measurements.csv",
        "rows": sum(1 for c in cases if c.resolved),
        "fitted_values": sum(len(entry["fitted"]) for entry in backends.values()),
        "population": {backend: _rounded(params) for backend, params in common.items()},
        "backends": backends,
    }
    if cross_validated:
        resolved = [c for c in cases if c.resolved]
        record_held_out(backends, resolved, cross_validate(resolved, result, [c.system.device.id for c in resolved]))
    return result


def record_held_out(backends: dict, resolved: list[Case], errors: list[float]) -> None:
    """Each key's error statistics become its in-sample ones, and its held-out-device errors
    (``errors``, one per resolved case) its ``residuals``, the ranges' source."""
    by_key: dict = defaultdict(lambda: {"tg": [], "pp": []})
    for case, error in zip(resolved, errors):
        by_key[case.key][case.test].append(error)
    for key, entry in backends.items():
        entry["in_sample"] = entry["residuals"]
        entry["residuals"] = {test: _error_stats(v) for test, v in by_key[key].items() if v}


def _error_stats(log_errors: list[float]) -> dict:
    ratios = [math.exp(-e) for e in log_errors]
    apes = [abs(1 / r - 1) for r in ratios]
    return {
        "n": len(log_errors),
        "mdape": round(statistics.median(apes), 4),
        "p90_ape": round(percentile(apes, 0.9), 4),
        "ratio_p10": round(percentile(ratios, 0.1), 4),
        "ratio_p90": round(percentile(ratios, 0.9), 4),
    }


def cross_validate(cases: list[Case], fit: dict, group_of_case: list) -> list[float]:
    """Out-of-sample log(predicted/measured) of every case: each group's cases (a device's, or a
    source's) predicted by a fit that never saw them.

    Affordable on two cores because a fold only refits the keys that lost rows, warm-started
    from the full fit (at most FOLD_ITERATIONS LM iterations), with the identification check
    re-run on the remaining rows: a parameter only the held-out device identified goes back to
    the population's value. A key left without rows disappears from the fold's fit, so its rows
    fall back to their base engine's key or the backend's population, as an unmeasured engine
    does on the page. Other keys and the populations keep their full-fit values (an
    approximation: a held-out device also moved the population medians a little).
    """
    out = [0.0] * len(cases)
    for group in sorted(set(group_of_case), key=str):
        held = [i for i, g in enumerate(group_of_case) if g == group]
        held_set = set(held)
        fold = {**fit, "backends": dict(fit["backends"])}
        for key in sorted({cases[i].key for i in held}):
            train = [c for i, c in enumerate(cases) if c.key == key and i not in held_set]
            if not train:
                del fold["backends"][key]
                continue
            entry = fit["backends"][key]
            full = BackendParams.from_dict(entry["params"])
            backend = key.split("/")[1]
            base = BackendParams.from_dict(fit["population"][backend])
            free = tuple(n for n in entry["fitted"] if _identified(train, full, n))
            start = replace(full, **{n: getattr(base, n) for n in entry["fitted"] if n not in free})
            params, _free = fit_params(train, start, free, FOLD_ITERATIONS) if free else (start, ())
            fold["backends"][key] = {**entry, "params": params.as_dict(), "fitted": list(free)}
        # The populations are medians over the remaining keys: an engine measured on the held-out
        # device alone must not find its own fit there.
        fold["population"] = dict(fit["population"])
        for backend in sorted({cases[i].key.split("/")[1] for i in held}):
            keys = {k: (BackendParams.from_dict(e["params"]), tuple(e["fitted"])) for k, e in fold["backends"].items()}
            fold["population"][backend] = population(keys, backend).as_dict()
        for i in held:
            case = cases[i]
            predicted = predict(case, params_for(case, fold))
            out[i] = math.log(predicted / case.measured) if predicted > 0 and math.isfinite(predicted) else 10.0
    return out


def jacobian_report(cases: list[Case], fit: dict) -> dict[str, tuple[int, int, float]]:
    """Per key: (joint rank of its fitted parameters' Jacobian columns on its rows, the number
    fitted, the columns' condition number). The fit's own identification test is one parameter at
    a time; this is the joint check (fit.PivotTest: a column whose part the others leave
    unexplained is below 1e-3 of its norm adds no rank)."""
    from .fit import PivotTest, condition_number

    groups = group_cases(cases)
    out = {}
    for key, entry in sorted(fit["backends"].items()):
        rows = groups[key]["tg"] + groups[key]["pp"]
        params = BackendParams.from_dict(entry["params"])
        base = _log_errors(rows, params)
        columns = []
        for name in entry["fitted"]:
            moved = replace(params, **{name: getattr(params, name) * math.exp(1e-4)})
            columns.append([(b - a) / 1e-4 for a, b in zip(base, _log_errors(rows, moved))])
        gram = [[sum(x * y for x, y in zip(ci, cj)) for cj in columns] for ci in columns]
        test = PivotTest(1e-3)
        accepted: list[int] = []
        for i in range(len(columns)):
            if test.add([gram[i][j] for j in accepted], gram[i][i]) >= 1e-3:
                accepted.append(i)
        out[key] = (len(accepted), len(columns), math.sqrt(condition_number(gram)) if columns else 1.0)
    return out


def calibrate_main(check: bool = False) -> int:
    cases = load_cases(str(MEASUREMENTS))
    result = fit_all(cases)
    text = json.dumps(result, indent=2, sort_keys=True) + "\n"
    if check:
        committed = FIT_FILE.read_text(encoding="utf-8") if FIT_FILE.exists() else ""
        if committed != text:
            print("data/calibration/fit.json differs from a fresh fit: run python -m engine calibrate", file=sys.stderr)
            return 1
        print("data/calibration/fit.json reproduces")
        return 0
    FIT_FILE.write_text(text, encoding="utf-8")
    for key, entry in result["backends"].items():
        stats = " ".join(f"{t}: n={s['n']} mdape={s['mdape']:.3f} p90={s['p90_ape']:.3f}" for t, s in entry["residuals"].items())
        print(f"{key:<22} {stats}")
    return 0


def params_for(case: Case, fit: dict) -> BackendParams:
    """The parameters a fit gives a case, by the page's own rule (engine.params.resolve_params)."""
    return resolve_params(case.system.engine.lineage(), case.system.backend, fit=fit).params

"""``python -m engine calibrate``: fit the physics' free parameters on the calibration set.

For every engine/backend pair with measurements in ``data/calibration/measurements.csv`` the fit
finds the few parameters of :class:`engine.params.BackendParams` (bandwidth efficiency, fixed
per-token and per-layer overhead, KV read cost, decode compute efficiency, prefill efficiency,
attention cost, micro-batch overhead, per-core bandwidth on CPUs) that minimise a robust loss of
log(predicted / measured) over its rows: decode parameters on ``tg`` rows, prefill parameters on
``pp`` rows. Parameters the rows cannot tell apart keep their prior (a parameter that moves no
prediction by 1% when doubled is not identified by the data). A key measured on fewer than
borrowing.KEY_MIN_DEVICES devices fits nothing (issue 12: its values would be that device's factors) and
predicts with its base engine's values, else its backend's (with its engine family's priors). The result, with each key's residual
statistics and each fitted value's evidence (rows, devices), goes to
``data/calibration/fit.json``; ``--check`` re-runs the fit and fails
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
from .borrowing import borrowed, fits_own, inherited, populations, unit_of, units_of
from .fit import robust_least_squares
from .folds import cross_validate_exact
from .pools import ALL_NAMES, DECODE_NAMES, labels_for, names_for, pooled, slot
from ..params import PRIORS, BackendParams, resolve_params
from .score import Case, load_cases, percentile, predict

MEASUREMENTS = DATA_DIR / "calibration" / "measurements.csv"
FIT_FILE = DATA_DIR / "calibration" / "fit.json"
DOCS = DATA_DIR.parent / "docs" / "calibration.md"

#: t_layer_batched_s is not fitted: batched decode rows come from one device per backend (DGX Spark
#: on CUDA, M2 Ultra on Metal), so it keeps its sourced prior (engine/params.py PRIORS; issue 12:
#: a value is fitted only where rows of at least 3 devices identify it).
#: t_sync_thread_s is not fitted either: on the CPU rows it trades against t_moe_layer_decode_s
#: (both are a fixed cost per layer at one thread count), and folds that leave out one device
#: moved it between its floor and 4.5x its sourced prior (the Threadripper PRO 5975WX held out:
#: 9 us, its rows predicted 1.28x too fast); at the prior, CPU decode held out by device went
#: 0.184 / 0.397 -> 0.159 / 0.392 (docs/calibration.md, CPU decode).
TG_PARAMS = DECODE_NAMES
PP_PARAMS = ("eta_pp", "pp_quant_cost", "attn_cost_fa", "attn_cost_nofa", "t_ubatch_s", "t_cold_batch_s", "expert_pp_cost", "sync_factor",
             "sync_data_factor")
ALL_PARAMS = ALL_NAMES
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
    "inflight_kib_per_sm": (0.5, 64.0),
    "t_sync_thread_s": (1e-8, 1e-4),
    "eta_pp": (0.005, 1.0),
    "attn_cost_fa": (0.3, 30.0),
    "attn_cost_nofa": (0.3, 60.0),
    "t_ubatch_s": (1e-5, 2.0),
    "t_cold_batch_s": (1e-4, 2.0),
    "pp_quant_cost": (0.5, 5.0),
    "expert_pp_cost": (1.0, 20.0),
}
#: A parameter must move some prediction by this much when doubled to count as identified.
IDENTIFIED = 0.01
#: Issue 12's rule: a value is fitted only where rows of this many distinct devices identify it.
#: The fit does not meet it yet; the bench and docs/calibration.md count the values that do.
MIN_DEVICES = 3
#: Share of a Jacobian column's norm the earlier columns must leave unexplained (1 - R^2,
#: fit.PivotTest): the joint rank the bench reports.
TOLERANCE = 1e-3
#: The fit by levels (engine/tools/levels.py) refits a fold's units with at most this many LM
#: iterations, warm-started from its full fit.
FOLD_ITERATIONS = 6
#: Parameters a unit frees only where rows of at least MIN_DEVICES devices move them (issue 12's
#: rule, applied per parameter where it held out of sample); where fewer do, the unit keeps its
#: backend population's value (the median over the units that did identify it), else the prior.
#: Folds re-apply the rule to the remaining rows. Each name was kept on leave-one-device-out and
#: leave-one-source-out error, GPU and CPU apart (docs/calibration.md, "Changes").
#: Kept where no held-out median or p90 (LODO, LOSO; GPU, CPU; decode, prefill) got worse by more
#: than 0.003 (the folds' 6-iteration refits move figures by that much), each group tried alone:
#: - values these keys' fits left at the prior anyway (an SoC's bandwidth share at 1 on the Vulkan
#:   and CPU keys whose few SoC rows did not move it): with the same on Metal (and its routing
#:   exponent at 1) GPU decode LODO 0.121 / 0.407 -> 0.120 / 0.407, LOSO 0.129 / 0.434 -> 0.128 /
#:   0.425 on 9eeb99a; after f8b72e9's Metal unpacking physics the Metal part cost LODO GPU decode
#:   0.120 -> 0.125 (Metal 0.122 -> 0.139), so Metal keeps them;
#: - ik_llama.cpp's SoC share too and mainline's CPU codebook cost (20 rows of 2 devices): CPU
#:   decode LOSO 0.109 / 0.363 -> 0.108 / 0.352, prefill 0.157 / 0.451 -> 0.149 / 0.452.
#: Tried, not kept: the Metal keys' micro-batch overhead at the prior (docs/calibration.md); today's
#: builds' alone is unfitted since 2026-12-07 (below), the 2023 builds' stays fitted.
BY_MIN_DEVICES: frozenset[str] = frozenset(
    [f"soc_bw_factor@{key}" for key in ("llama-cpp/vulkan", "llama-cpp/vulkan-amdvlk", "llama-cpp/cpu")]
    + ["soc_bw_factor@ik-llama-cpp/cpu", "codebook_ops@llama-cpp/cpu"]
    # In the CPU pool only the 2023 builds' 4 rows at depth (two Macs) move these; fitted on them
    # they set every mainline CPU's depth cost (a 2-core Zen 4 slice at 4k tokens of context fell
    # to 0.23x of its empty-context rate, measured 0.61x: tests/test_cpu_physics.py).
    + ["eta_attn_decode@llama-cpp/cpu", "kv_read_factor@llama-cpp/cpu"]
    # ROCm's unpacking cost: its key has 2 devices, and the Ryzen AI Max+ 395's rows (steps of
    # 19-300 ms) cannot tell unpacking from the per-layer cost: with the R9700 held out they put
    # dequant_ops on its floor and t_layer_s at 2.7x (358 us), which the R9700's fast MoE steps
    # then paid (held out 0.86-0.65x). At the prior (4), ROCm decode LODO = LOSO 0.136 / 0.390 ->
    # 0.088 / 0.332 (docs/calibration.md, Changes).
    + ["dequant_ops@llama-cpp/rocm"]
    # The Vulkan keys' per-micro-batch constant: with the experts' padded tiles modelled
    # (moe.vulkan_expert_tile) only one device's rows (10) still move it (0.128 s had stood in for
    # the padded work, 3 devices); at the prior (10 ms) unless 3 devices identify it again.
    + [f"t_ubatch_s@{key}" for key in ("llama-cpp/vulkan", "llama-cpp/vulkan-amdvlk")]
    # Metal's routing exponent: below 32 tokens llama.cpp's mul_mv_id reads an expert per (token,
    # slot) pair whatever the routing (matvec_batch.metal_expert_slot_reads), so only the M2
    # Ultra's 32-sequence MoE rows still moved it; at the prior 1 (independent routing, which
    # mul_mm_id's grouped reads then follow) unless 3 devices identify it (in the list below).
    # Values that rows of 1-2 devices move and whose fits sat at (or near) the value they take
    # unfitted, or that only one device's rows move (a fold that holds it out never had them).
    # Measured together (2026-12-07, issue 12; docs/calibration.md, Changes), exact LODO: CPU
    # prefill 0.161 / 0.485 -> 0.160 / 0.488, the rest within 0.001 (LOSO not measured). Not kept
    # with them: the decode arithmetic's efficiency on both CUDA keys (0.295 and 0.300 fitted, prior
    # 0.3; rows of 2 devices each), which cost CUDA decode held out 0.060 / 0.306 -> 0.071 / 0.311
    # (in the RTX 3090's fold the remaining rows had moved it).
    # - today's llama.cpp Metal prefill values, which only the M2 Ultra's rows move (its flash
    #   attention, matmul efficiency, quantised-matmul cost, micro-batch constant: the M2 Ultra's
    #   fold never had them), its routing exponent (fitted at the prior 1) and KV read factor (M3
    #   Max and M2 Ultra; fitted 1.7, prior 1.5; in either Mac's fold the key has one device and
    #   fits no value of its own anyway);
    + [f"{name}@llama-cpp/metal" for name in ("attn_cost_fa", "eta_pp", "pp_quant_cost", "t_ubatch_s", "kv_read_factor", "moe_batch_exponent")]
    # - vLLM-MLX's SoC share (fitted 1, the prior) and ik_llama.cpp's CPU attention cost without
    #   flash attention (2 rows of 1 device).
    + ["soc_bw_factor@vllm-mlx/metal", "attn_cost_nofa@ik-llama-cpp/cpu"]
    # Tried with these and not kept (full exact LODO, 2026-12-07): vLLM-MLX's per-token cost,
    # decode attention, unpacking, routing exponent and decode arithmetic and the 2023 Metal
    # builds' decode arithmetic unfitted: in a fold that holds out the M2 Ultra (or the M3 Max)
    # llama.cpp's Metal key has one device and takes the population's values, which then fell to
    # the bare priors (t_token_s 3 ms for 10 us): M2 Ultra llama.cpp decode 0.142 / 0.446 ->
    # 0.176 / 0.587, Metal decode 0.102 / 0.374 -> 0.107 / 0.379.
)


def _needed(name: str, keys: tuple[str, ...]) -> int:
    """Distinct devices whose rows must move ``name`` (shared by ``keys``) for a unit to free it:
    BY_MIN_DEVICES holds names (every key) and ``name@key`` (that key's value)."""
    return MIN_DEVICES if name in BY_MIN_DEVICES or any(f"{name}@{k}" in BY_MIN_DEVICES for k in keys) else 1


def _clamp(name: str, value: float) -> float:
    lo, hi = BOUNDS[name]
    return min(max(value, lo), hi)


def _log_errors(cases: list[Case], params: BackendParams, host: BackendParams | None = None) -> list[float]:
    out = []
    for case in cases:
        predicted = predict(case, params, host)
        out.append(math.log(predicted / case.measured) if predicted > 0 and math.isfinite(predicted) else 10.0)
    return out


def _evidence(rows: dict[str, list[Case]], params: dict[str, BackendParams], name: str) -> tuple[int, int]:
    """(rows, distinct devices) whose prediction moves by 1% when ``name`` is doubled or halved
    (within its bounds) on every key of ``rows``."""
    moved_rows, devices = 0, set()
    for key in sorted(rows):
        base = params[key]
        shifted = [replace(base, **{name: _clamp(name, getattr(base, name) * f)}) for f in (2.0, 0.5)]
        for case in rows[key]:
            b = predict(case, base)
            if b > 0 and any(abs(predict(case, s) / b - 1) > IDENTIFIED for s in shifted):
                moved_rows += 1
                devices.add(case.system.device.id)
    return moved_rows, len(devices)


def fit_unit(
    rows: dict[str, list[Case]],
    starts: dict[str, BackendParams],
    names: tuple[str, ...],
    iterations: int = 80,
    select: bool = True,
) -> tuple[dict[str, BackendParams], tuple[str, ...], dict[str, tuple[int, int]]]:
    """Fit one value per slot label (engine/tools/pools.py: a name all keys of ``rows`` share, or
    ``name@key``), as a log-offset from each key's ``starts`` value; returns (each key's params,
    the fitted labels, each fitted label's evidence: the rows and distinct devices it moves at the
    start).

    With ``select``, a label is fitted only when doubling or halving it (within its bounds) moves
    rows of _needed(name) devices by 1%; without, exactly ``names`` are fitted (the second pass,
    the folds)."""
    keys = sorted(k for k in rows if rows[k])
    pooled_rows = {k: rows[k] for k in keys}
    slots = {label: slot(label, keys) for label in names}
    evidence = {}
    if select:
        for label, (name, ks) in slots.items():
            evidence[label] = _evidence({k: pooled_rows[k] for k in ks if k in pooled_rows}, starts, name)
    # A pooled key measured on fewer devices than a unit needs (pools.pooled) fits no value of
    # its own, only shares the pool's.
    few = {k for k in keys if not fits_own(c.system.device.id for c in pooled_rows[k])}
    free = (
        tuple(label for label in names if evidence[label][1] >= _needed(*slots[label]) and set(slots[label][1]) - few)
        if select
        else tuple(names)
    )
    point = _fit_offsets(pooled_rows, starts, [slots[label] for label in free], iterations) if free else dict(starts)
    return point, free, {label: evidence[label] for label in free if label in evidence}


def _fit_offsets(rows: dict[str, list[Case]], base: dict[str, BackendParams], free: list, iterations: int) -> dict[str, BackendParams]:
    keys = sorted(rows)
    # A key's errors depend on its own params only: the Jacobian's columns for another key's slots
    # reuse them (a pool of keys costs what its keys cost apart).
    memo: dict[str, dict] = {k: {} for k in keys}

    def build(point: list[float]) -> dict[str, BackendParams]:
        changes: dict[str, dict] = defaultdict(dict)
        for (name, ks), v in zip(free, point):
            for k in ks:
                changes[k][name] = _clamp(name, getattr(base[k], name) * math.exp(v))
        return {k: replace(start, **changes[k]) if changes[k] else start for k, start in base.items()}

    def errors(k: str, params: BackendParams) -> list[float]:
        if params not in memo[k]:
            if len(memo[k]) > 64:
                memo[k].clear()
            memo[k][params] = _log_errors(rows[k], params)
        return memo[k][params]

    def residuals(point: list[float]) -> list[float]:
        params = build(point)
        return [e for k in keys for e in errors(k, params[k])]

    # Offsets in log space, wide enough for every key to reach both bounds from its start.
    lower = [math.log(BOUNDS[n][0]) - max(math.log(getattr(base[k], n)) for k in ks) - 1e-9 for n, ks in free]
    upper = [math.log(BOUNDS[n][1]) - min(math.log(getattr(base[k], n)) for k in ks) + 1e-9 for n, ks in free]
    return build(robust_least_squares(residuals, [0.0] * len(free), lower, upper, iterations))


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
    """Fit every unit (borrowing.units_of: a key measured on enough devices, borrowing.fits_own); returns
    the content of fit.json, with each unit's fitted values and their evidence under ``units``
    (a value counts once however many keys share it).

    Two passes: each unit is fitted from its backends' priors; then every parameter a unit's
    rows cannot identify is set to the median over the same backend's units that could (a
    population prior, better than a guess when the page extrapolates, e.g. prefill for an engine
    measured only in decode), and the identified ones are refitted around them. A key in no unit
    borrows its values (:func:`borrowed`). Then,
    unless ``cross_validated`` is False, each key's residuals are replaced by
    leave-one-device-out ones (the in-sample ones stay under ``in_sample``).
    """
    groups = group_cases(cases)
    rows_of = {key: tests["tg"] + tests["pp"] for key, tests in groups.items()}
    devices = {key: {c.system.device.id for c in rows} for key, rows in rows_of.items()}
    units = pooled(units_of(devices), set(devices))
    owner = unit_of(units)
    first = {}
    selected = {}
    for unit, keys in units.items():
        # One joint fit over decode and prefill rows: they share eta_bw (prefill's memory bound)
        # and the interconnect factor.
        starts = {k: PRIORS.get(k.split("/")[1], BackendParams()) for k in keys}
        params, free, selected[unit] = fit_unit({k: rows_of[k] for k in keys}, starts, labels_for(unit, keys, ALL_PARAMS))
        first.update({k: (params[k], tuple(names_for(k, free, keys))) for k in keys})
        selected[unit] = (free, selected[unit])
    backend_names = sorted({key.split("/")[1] for key in groups} | set(PRIORS))
    # A key measured on too few devices to be a unit of its own (pooled, pools.pooled) lends no
    # value to other keys: its share of a pool's values is partly its one device's.
    lenders = {k for k in first if fits_own(devices[k])}
    common = populations({k: v for k, v in first.items() if k in lenders}, backend_names, owner)
    backends = {}
    unit_entries = {}
    for unit, keys in units.items():
        free, evidence = selected[unit]
        starts = {
            k: replace(common[k.split("/")[1]], **{**inherited(k, first), **{n: getattr(first[k][0], n) for n in first[k][1]}})
            for k in keys
        }
        params, free, _at_fit = fit_unit({k: rows_of[k] for k in keys}, starts, free, select=False)
        unit_entries[unit] = {
            "keys": keys,
            "rows": sum(len(rows_of[k]) for k in keys),
            "devices": len(set().union(*(devices[k] for k in keys))),
            "fitted": sorted(free),
            "evidence": {n: {"rows": evidence[n][0], "devices": evidence[n][1]} for n in sorted(free)},
        }
        for k in keys:
            backends[k] = {"params": _rounded(params[k]), "fitted": names_for(k, free, keys), "unit": unit}
    fitted_keys = {k: (BackendParams.from_dict(e["params"]), tuple(e["fitted"])) for k, e in backends.items() if k in lenders}
    for key in sorted(groups):
        if key not in backends:
            backends[key] = {"params": _rounded(borrowed(key, fitted_keys, owner, common)), "fitted": [], "unit": None}
    for key, entry in backends.items():
        params = BackendParams.from_dict(entry["params"])
        entry["devices"] = len(devices[key])
        entry["residuals"] = {test: residual_stats(rows, params) for test, rows in groups[key].items() if rows}
    backends = dict(sorted(backends.items()))
    result = {
        "generated_by": "python -m engine calibrate",
        "measurements": "data/calibration/measurements.csv",
        "rows": sum(1 for c in cases if c.resolved),
        "fitted_values": sum(len(entry["fitted"]) for entry in unit_entries.values()),
        "population": {backend: _rounded(params) for backend, params in common.items()},
        "units": unit_entries,
        "backends": backends,
    }
    if cross_validated:
        resolved = [c for c in cases if c.resolved]
        record_held_out(backends, resolved, cross_validate(resolved, [c.system.device.id for c in resolved]))
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


def cross_validate(cases: list[Case], group_of_case: list) -> list[float]:
    """Out-of-sample log(predicted/measured) of every case: each group's cases (a device's, or a
    source's) predicted by :func:`fit_all` run on all the other rows (engine/tools/folds.py)."""
    return cross_validate_exact(cases, group_of_case, fit_all, params_for)


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

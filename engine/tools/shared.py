"""The shared fit: one value per mechanism, offsets per backend and engine shrunk toward priors.

An engine/backend key's value of parameter ``p`` is

    value[key, p] = clamp(prior[backend, p] * exp(sum of theta[node, p] over the key's path))

The path of a key: its *kind* (``kind:gpu``, shared by every GPU backend, or ``kind:cpu``), its
*backend* (``backend:cuda``: llama.cpp on CUDA, shared by every engine there), then one node per
engine of its lineage below llama.cpp (``engine:ik-llama-cpp/cuda``, ``engine:llama-cpp-legacy/
cuda``, ``engine:mlx-lm/metal`` then ``engine:mlx-vlm/metal`` ...). Ollama, LM Studio and the legacy
builds therefore share llama.cpp's values on a backend unless their own rows say otherwise.
Engine-specific parameters (:data:`ENGINE_SPECIFIC`) skip the kind and backend nodes for engines
not built on llama.cpp.

A node's theta is a log-deviation from its parent, pulled to 0 by a penalty (shrinkage) with a
prior standard deviation per level (:class:`Structure`). It is *free* only when (1) rows of at
least ``min_devices`` distinct devices under the node are sensitive to it (doubling it moves them
by 1%), and (2) its Jacobian column adds a direction the free columns before it (kind, then
backend, then engine level) do not span (fit.PivotTest). Everything else stays at 0: the
parent's value, ultimately the prior, and the out-of-sample range of the rows shows it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

from ..engines import load_engines
from ..params import PRIORS, BackendParams
from .fit import LOSS_SCALE, PivotTest, condition_number, damped_step, robust_weight, row_loss, solve

__all__ = ["robust_weight"]
from .borrowing import ENGINE_SPECIFIC
from .calibrate import ALL_PARAMS, BOUNDS, IDENTIFIED, PP_PARAMS, TG_PARAMS
from .score import Case, predict

NAMES = ALL_PARAMS
#: Parameters fitted on decode rows (eta_bw also bounds memory-bound prefill; the interconnect
#: factors, which prefill rows fit too, are not among them).
DECODE = tuple(n for n in TG_PARAMS if n not in PP_PARAMS)
#: The reference engine: the backend node is its value on that backend.
REFERENCE_ENGINE = "llama-cpp"
SENSITIVE = IDENTIFIED / math.log(2)
STEP = 1e-4


@dataclass(frozen=True)
class Structure:
    """A candidate design of the fit: which levels carry offsets and how hard they are shrunk."""

    name: str
    #: Prior standard deviation of a node's log-offset, by level.
    sigma: tuple = (("kind", 1.0), ("backend", 0.15), ("engine", 0.15))
    min_devices: int = 3
    #: Offsets fitted for backends and engines measured on fewer than min_devices devices but
    #: never used to predict (nuisance): they keep such an engine's level from leaking into the
    #: shared values (its rows still teach the shared slopes: depth, size, batch), while its
    #: predictions use its parent's values like any unidentified engine.
    nuisance: tuple = ()
    #: Share of a column's norm the free columns before it must leave unexplained (1 - R^2).
    tolerance: float = 1e-3
    #: Prior standard deviations by level for the decode-only parameters (:data:`DECODE`) where
    #: they differ from ``sigma``; a level named only here (``key``) carries decode offsets alone.
    decode_sigma: tuple = ()

    def level_sigma(self, level: str, name: str = "") -> float | None:
        if name in DECODE and level in dict(self.decode_sigma):
            return dict(self.decode_sigma)[level]
        return dict(self.sigma).get(level)


LEVELS = ("eta_bw", "t_token_s", "eta_pp", "t_ubatch_s")
DEFAULT = Structure("kind + backend + engine offsets, sigma 0.15")
#: The hybrid: decode values of its own for every engine (and engine family: llama.cpp and the
#: engines built on it, mlx-lm and its) on a backend whose rows come from >= 3 devices, barely
#: shrunk (sigma 3, as the per-key design), prefill values from the shared tree (sigma 0.5, which
#: predicted held-out prefill better than per-key values); an engine of fewer devices decodes
#: with its family's, backend's or kind's values, fitted jointly.
HYBRID = Structure(
    "hybrid: decode per engine family of >= 3 devices (sigma 3), prefill shared (sigma 0.5)",
    (("kind", 1.0), ("backend", 0.5), ("engine", 0.5)),
    decode_sigma=(("engine", 3.0), ("reference", 3.0)),
)
CANDIDATES = (
    DEFAULT,
    Structure("kind + backend + engine offsets, sigma 0.5", (("kind", 1.0), ("backend", 0.5), ("engine", 0.5))),
    Structure("sigma 0.5, nuisance levels", (("kind", 1.0), ("backend", 0.5), ("engine", 0.5)), nuisance=LEVELS),
    # The design before issue 12 in the same machinery: every key its own values from any number
    # of devices (weakly shrunk offsets of one node per key on the prior).
    Structure("per key, any number of devices", (("key", 3.0),), min_devices=1),
    HYBRID,
)


def kind_of(backend: str) -> str:
    return "cpu" if backend == "cpu" else "gpu"


def key_path(key: str, name: str, structure: Structure) -> tuple[str, ...]:
    engine_id, backend = key.split("/")
    engines = load_engines()
    lineage = engines[engine_id].lineage() if engine_id in engines else (engine_id,)
    shared = lineage[-1] == REFERENCE_ENGINE or name not in ENGINE_SPECIFIC
    path = []
    if shared and structure.level_sigma("kind", name) is not None:
        path.append(f"kind:{kind_of(backend)}")
    if shared and backend != "cpu" and structure.level_sigma("backend", name) is not None:
        path.append(f"backend:{backend}")
    if structure.level_sigma("engine", name) is not None:
        # With a "reference" level, llama.cpp has a node of its own on a backend (the backend
        # node is shared by every engine there) that the engines built on it inherit.
        own = structure.level_sigma("reference", name) is not None
        path += [f"engine:{e}/{backend}" for e in reversed(lineage) if e != REFERENCE_ENGINE or own]
    if structure.level_sigma("key", name) is not None:
        path.append(f"key:{key}")
    return tuple(path)


def level_of(node: str) -> str:
    return node.split(":")[0]


def _clamp_log(name: str, log_value: float) -> float:
    lo, hi = BOUNDS[name]
    return min(max(log_value, math.log(lo)), math.log(hi))


@dataclass
class Problem:
    """The calibration rows, grouped by key, with each key's paths and each node's members."""

    cases: list[Case]
    structure: Structure
    keys: list[str] = field(default_factory=list)
    rows: dict = field(default_factory=dict)  # key -> row indices
    paths: dict = field(default_factory=dict)  # (key, name) -> nodes
    members: dict = field(default_factory=dict)  # (node, name) -> keys

    def __post_init__(self):
        for i, case in enumerate(self.cases):
            self.rows.setdefault(case.key, []).append(i)
        self.keys = sorted(self.rows)
        for key in self.keys:
            for name in NAMES:
                path = key_path(key, name, self.structure)
                self.paths[key, name] = path
                for node in path:
                    self.members.setdefault((node, name), []).append(key)

    def prior(self, key: str) -> BackendParams:
        return PRIORS.get(key.split("/")[1], BackendParams())

    def log_value(self, key: str, name: str, theta: dict) -> float:
        base = math.log(getattr(self.prior(key), name))
        return base + sum(theta.get((node, name), 0.0) for node in self.paths[key, name])

    def params(self, key: str, theta: dict, shift: tuple[str, float] | None = None) -> BackendParams:
        values = {}
        for name in NAMES:
            log_value = self.log_value(key, name, theta) + (shift[1] if shift and shift[0] == name else 0.0)
            values[name] = math.exp(_clamp_log(name, log_value))
        return replace(self.prior(key), **values)

    def residual(self, i: int, params: BackendParams) -> float:
        case = self.cases[i]
        predicted = predict(case, params)
        return math.log(predicted / case.measured) if predicted > 0 and math.isfinite(predicted) else 10.0

    def residuals(self, theta: dict, keys=None) -> dict:
        out = {}
        for key in keys or self.keys:
            params = self.params(key, theta)
            for i in self.rows[key]:
                out[i] = self.residual(i, params)
        return out

    def sensitivities(self, theta: dict, residuals: dict, names_of: dict, mask: dict | None = None) -> dict:
        """d log(predicted) / d log(parameter) of each row, for the names ``names_of[key]`` (and,
        with ``mask``, only where the row's secant says the parameter moves it at all)."""
        out = {}
        for key in self.keys:
            names = names_of.get(key, ())
            per_row = {i: {} for i in self.rows[key]}
            for name in names:
                # Step into the box: a parameter on its upper bound is probed downward.
                step = -STEP if self.log_value(key, name, theta) + STEP > math.log(BOUNDS[name][1]) else STEP
                shifted = self.params(key, theta, (name, step))
                for i in self.rows[key]:
                    if mask is not None and name not in mask[i]:
                        continue
                    d = (self.residual(i, shifted) - residuals[i]) / step
                    if d:
                        per_row[i][name] = d
            out.update(per_row)
        return out

    def secants(self, theta: dict) -> dict:
        """log(predicted at twice the parameter / at half of it) / log 4 of each row, within the
        bounds: the identification test's sensitivity, which sees a bound that a halving or a
        doubling would make binding (a max() the local derivative is blind to)."""
        out = {}
        for key in self.keys:
            per_row = {i: {} for i in self.rows[key]}
            for name in NAMES:
                up, down = self.params(key, theta, (name, math.log(2))), self.params(key, theta, (name, -math.log(2)))
                span = math.log(getattr(up, name) / getattr(down, name))
                if span <= 0:
                    continue
                for i in self.rows[key]:
                    d = (self.residual(i, up) - self.residual(i, down)) / span
                    if d:
                        per_row[i][name] = d
            out.update(per_row)
        return out

    def device(self, i: int) -> str:
        return self.cases[i].system.device.id


def candidates(problem: Problem) -> list[tuple[str, str]]:
    """Every (node, name) pair in the order the identifiability test offers them: shared levels
    first (kind, backend), then engines, a base engine before the engines built on it."""
    engines = load_engines()

    def order(pair):
        node, name = pair
        level = level_of(node)
        depth = 0
        if level == "engine":
            engine_id = node.split(":")[1].split("/")[0]
            depth = len(engines[engine_id].lineage()) if engine_id in engines else 9
        return ({"kind": 0, "backend": 1, "engine": 2, "key": 3}[level], depth, node, NAMES.index(name))

    return sorted(problem.members, key=order)


def support(problem: Problem, sens: dict, pair: tuple[str, str], held: set | None = None) -> tuple[int, int]:
    """(rows, distinct devices) under ``pair``'s node whose prediction the parameter moves."""
    node, name = pair
    rows, devices = 0, set()
    for key in problem.members[pair]:
        for i in problem.rows[key]:
            if (held is None or i not in held) and abs(sens[i].get(name, 0.0)) >= SENSITIVE:
                rows += 1
                devices.add(problem.device(i))
    return rows, len(devices)


def key_moments(problem: Problem, sens: dict, weights: dict, residuals: dict, rows_of=None) -> dict:
    """Per key: (sum w s_p s_q, sum w s_p r) over its rows (or ``rows_of[key]``)."""
    out = {}
    for key in problem.keys:
        mm: dict = {}
        mg: dict = {}
        for i in (rows_of or problem.rows)[key] if rows_of is None or key in rows_of else ():
            w, s, r = weights[i], sens[i], residuals[i]
            items = sorted(s.items())
            for a, (p, sp) in enumerate(items):
                wsp = w * sp
                mg[p] = mg.get(p, 0.0) + wsp * r
                for q, sq in items[a:]:
                    mm[p, q] = mm.get((p, q), 0.0) + wsp * sq
        out[key] = (mm, mg)
    return out


def _moment(mm: dict, p: str, q: str) -> float:
    return mm.get((p, q), 0.0) if p <= q else mm.get((q, p), 0.0)


def normal_equations(problem: Problem, free: list, moments: dict) -> tuple[list[list[float]], list[float]]:
    """J^T W J and J^T W r over the free pairs, assembled from the per-key moments."""
    n = len(free)
    keysets = [set(problem.members[a]) for a in free]
    gram = [[0.0] * n for _ in range(n)]
    grad = [0.0] * n
    for a, (_node, p) in enumerate(free):
        grad[a] = sum(moments[k][1].get(p, 0.0) for k in sorted(keysets[a]))
        for b in range(a, n):
            q = free[b][1]
            common = keysets[a] & keysets[b]
            value = sum(_moment(moments[k][0], p, q) for k in sorted(common))
            gram[a][b] = gram[b][a] = value
    return gram, grad


def column(problem: Problem, free: list, pair: tuple[str, str], moments: dict) -> tuple[list[float], float]:
    """Inner products of ``pair``'s Jacobian column with the free columns, and with itself."""
    keys = set(problem.members[pair])
    p = pair[1]
    cross = []
    for other in free:
        common = sorted(keys & set(problem.members[other]))
        cross.append(sum(_moment(moments[k][0], p, other[1]) for k in common))
    return cross, sum(_moment(moments[k][0], p, p) for k in sorted(keys))


def select(problem: Problem, sens: dict, held: set | None = None) -> tuple[list, dict]:
    """The free pairs (in candidate order) and, for every candidate, why it is or is not free."""
    unit = {i: 1.0 for i in sens}
    zero = {i: 0.0 for i in sens}
    rows_of = None if held is None else {k: [i for i in problem.rows[k] if i not in held] for k in problem.keys}
    moments = key_moments(problem, sens, unit, zero, rows_of)
    test = PivotTest(problem.structure.tolerance)
    free: list = []
    report = {}
    for pair in candidates(problem):
        rows, devices = support(problem, sens, pair, held)
        if devices < problem.structure.min_devices:
            report[pair] = {"rows": rows, "devices": devices, "free": False, "why": f"{devices} device(s)"}
            continue
        cross, diagonal = column(problem, free, pair, moments)
        share = test.add(cross, diagonal)
        ok = share >= problem.structure.tolerance
        report[pair] = {"rows": rows, "devices": devices, "free": ok, "why": "" if ok else f"collinear (1-R^2 {share:.1e})"}
        if ok:
            free.append(pair)
    for pair in candidates(problem):
        entry = report[pair]
        if entry["free"] or entry["devices"] == 0 or level_of(pair[0]) == "kind" or pair[1] not in problem.structure.nuisance:
            continue
        cross, diagonal = column(problem, free, pair, moments)
        if test.add(cross, diagonal) >= problem.structure.tolerance:
            entry["nuisance"] = True
            free.append(pair)
    return free, report


def precision(problem: Problem, report: dict, pair: tuple[str, str]) -> float:
    """Penalty curvature of a pair: a deviation of one prior sigma weighs as much as one device's
    worth of rows being off by the loss scale (rows per device * LOSS_SCALE^2 / sigma^2)."""
    sigma = problem.structure.level_sigma(level_of(pair[0]), pair[1])
    entry = report[pair]
    return entry["rows"] / max(entry["devices"], 1) * LOSS_SCALE**2 / sigma**2


def objective(problem: Problem, theta: dict, residuals: dict, prec: dict) -> float:
    return sum(row_loss(r) for r in residuals.values()) + 0.5 * sum(c * theta.get(a, 0.0) ** 2 for a, c in prec.items())


@dataclass
class Solution:
    theta: dict
    free: list
    report: dict
    prec: dict
    residuals: dict
    sens: dict
    gram: list
    grad: list
    iterations: int
    secants: dict = field(default_factory=dict)


def published(report: dict, theta: dict) -> dict:
    """The offsets predictions use: the identified ones (nuisance offsets dropped)."""
    return {a: v for a, v in theta.items() if not report.get(a, {}).get("nuisance")}


def identified(solution) -> list:
    return [a for a in solution.free if not solution.report[a].get("nuisance")]


def names_of(problem: Problem, free: list) -> dict:
    out = {}
    free_set = set(free)
    for key in problem.keys:
        out[key] = tuple(n for n in NAMES if any((node, n) in free_set for node in problem.paths[key, n]))
    return out


def fit(problem: Problem, theta: dict | None = None, iterations: int = 40, rounds: int = 2) -> Solution:
    """Select the free pairs, fit them by penalised IRLS Levenberg-Marquardt, re-select at the
    optimum and refit if the free set changed (at most ``rounds`` selections)."""
    theta = dict(theta or {})
    free: list = []
    for _round in range(rounds):
        secants = problem.secants(theta)
        new_free, report = select(problem, secants)
        if new_free == free and _round:
            break
        free = new_free
        theta = {a: theta.get(a, 0.0) for a in free}
        prec = {a: precision(problem, report, a) for a in free}
        theta, state = _minimise(problem, free, theta, prec, iterations, secants)
    return Solution(theta, free, report, prec, *state, secants)


def _minimise(problem: Problem, free: list, theta: dict, prec: dict, iterations: int, mask: dict):
    names = names_of(problem, free)
    residuals = problem.residuals(theta)
    value = objective(problem, theta, residuals, prec)
    damping = 1e-3
    done = 0
    for _iteration in range(iterations):
        done += 1
        sens = problem.sensitivities(theta, residuals, names, mask)
        weights = {i: robust_weight(r) for i, r in residuals.items()}
        gram, grad = normal_equations(problem, free, key_moments(problem, sens, weights, residuals))
        hess = [[gram[a][b] + (prec[free[a]] if a == b else 0.0) for b in range(len(free))] for a in range(len(free))]
        g = [grad[a] + prec[free[a]] * theta[free[a]] for a in range(len(free))]

        def evaluate(point: list[float]) -> tuple[float, dict]:
            trial = dict(zip(free, point))
            r_trial = problem.residuals(trial)
            return objective(problem, trial, r_trial, prec), r_trial

        point, value, r_new, damping, improved = damped_step(
            hess, g, [theta[a] for a in free], value, damping, evaluate, attempts=10, clip=3.0, ridge=1e-12, tolerance=1e-7
        )
        theta = dict(zip(free, point))
        residuals = r_new if r_new is not None else residuals
        if not improved:
            break
    sens = problem.sensitivities(theta, residuals, names, mask)
    weights = {i: robust_weight(r) for i, r in residuals.items()}
    gram, grad = normal_equations(problem, free, key_moments(problem, sens, weights, residuals))
    return theta, (residuals, sens, gram, grad, done)


def fold(problem: Problem, solution: Solution, held: set) -> dict:
    """Theta without the ``held`` rows: one Newton step of the penalised objective from the full
    optimum (approximate leave-out), with every pair that loses its support (fewer than
    min_devices devices left) returned to its prior (0)."""
    free = solution.free
    held_rows = {k: [i for i in problem.rows[k] if i in held] for k in problem.keys}
    weights = {i: robust_weight(solution.residuals[i]) for i in held}
    held_gram, held_grad = normal_equations(problem, free, key_moments(problem, solution.sens, weights, solution.residuals, held_rows))
    needed = {a: 1 if solution.report[pair].get("nuisance") else problem.structure.min_devices for a, pair in enumerate(free)}
    keep = [a for a, pair in enumerate(free) if support(problem, solution.secants, pair, held)[1] >= needed[a]]
    fixed = [a for a in range(len(free)) if a not in set(keep)]
    theta = solution.theta
    prec = solution.prec
    step_fixed = {a: -theta[free[a]] for a in fixed}
    hess = [[solution.gram[a][b] - held_gram[a][b] + (prec[free[a]] if a == b else 0.0) for b in range(len(free))] for a in range(len(free))]
    grad = [solution.grad[a] - held_grad[a] + prec[free[a]] * theta[free[a]] for a in range(len(free))]
    rhs = [-grad[a] - sum(hess[a][b] * step_fixed[b] for b in fixed) for a in keep]
    system = [[hess[a][b] + (1e-6 * (hess[a][a] + 1e-12) if a == b else 0.0) for b in keep] for a in keep]
    delta = solve(system, rhs) if keep else []
    out = dict(theta)
    for a, d in zip(keep, delta):
        out[free[a]] = theta[free[a]] + max(min(d, 3.0), -3.0)
    for a in fixed:
        out[free[a]] = 0.0
    return out


def conditioning(solution: Solution) -> float:
    """Condition number of the free columns of the Jacobian (square root of the Gram's)."""
    return math.sqrt(condition_number(solution.gram))

"""The calibration's minimiser, linear algebra and robust loss, standard library only.

The objective is a sum over measured rows of a pseudo-Huber loss of log(predicted / measured)
(plus, in the shared fit of engine/tools/shared.py, a penalty on each fitted log-offset). It is
minimised by Levenberg-Marquardt on iteratively re-weighted least squares
(:func:`robust_least_squares`): robust, because rows the physics cannot explain count linearly,
not quadratically. Parameters are optimised in log space, which keeps them positive and makes
"twice as large" and "half as large" equally far apart. The pivoted-Cholesky test
(:class:`PivotTest`) decides whether a candidate parameter adds a direction the free ones do not
already span; :func:`condition_number` is what the calibration report prints.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

#: Scale of the pseudo-Huber loss on log(predicted/measured): errors below ~10% count
#: quadratically, larger ones linearly, so a few rows the physics cannot explain (an old build,
#: a power cap) do not drag the fit of all the others.
LOSS_SCALE = 0.05


def robust_loss(log_ratios: Sequence[float]) -> float:
    """Mean pseudo-Huber loss of log errors."""
    if not log_ratios:
        return 0.0
    s = LOSS_SCALE
    return sum(s * s * (math.sqrt(1 + (r / s) ** 2) - 1) for r in log_ratios) / len(log_ratios)


def solve(matrix: list[list[float]], vector: list[float]) -> list[float]:
    """Solve a small dense linear system by Gaussian elimination with partial pivoting."""
    n = len(vector)
    a = [row[:] + [vector[i]] for i, row in enumerate(matrix)]
    for col in range(n):
        pivot = max(range(col, n), key=lambda r: abs(a[r][col]))
        if abs(a[pivot][col]) < 1e-300:
            continue
        a[col], a[pivot] = a[pivot], a[col]
        for r in range(col + 1, n):
            factor = a[r][col] / a[col][col]
            if factor:
                for c in range(col, n + 1):
                    a[r][c] -= factor * a[col][c]
    out = [0.0] * n
    for r in range(n - 1, -1, -1):
        if abs(a[r][r]) < 1e-300:
            out[r] = 0.0
            continue
        out[r] = (a[r][n] - sum(a[r][c] * out[c] for c in range(r + 1, n))) / a[r][r]
    return out


def robust_least_squares(
    residuals: Callable[[list[float]], list[float]],
    start: list[float],
    lower: list[float],
    upper: list[float],
    iterations: int = 80,
) -> list[float]:
    """Minimise the mean pseudo-Huber loss of ``residuals(x)`` with ``lower < x < upper``.

    Levenberg-Marquardt on iteratively re-weighted least squares (the weights make squared
    residuals behave like the pseudo-Huber loss), with a forward-difference Jacobian. The box is
    handled by optimising z with x = lower + (upper - lower) * sigmoid(z), so a parameter pressing
    against a bound never stalls the others. Converges in a few dozen iterations on ~10
    parameters where a simplex method stalls.
    """
    span = [hi - lo for lo, hi in zip(lower, upper)]

    def to_x(z: list[float]) -> list[float]:
        return [lo + w / (1 + math.exp(-min(max(zi, -40.0), 40.0))) for zi, lo, w in zip(z, lower, span)]

    def to_z(x: list[float]) -> list[float]:
        out = []
        for xi, lo, w in zip(x, lower, span):
            t = min(max((xi - lo) / w, 1e-4), 1 - 1e-4)
            out.append(math.log(t / (1 - t)))
        return out

    z = to_z(start)
    r = residuals(to_x(z))
    value = robust_loss(r)
    damping = 1e-3
    step = 1e-4
    n = len(z)
    for _ in range(iterations):
        weights = [1 / math.sqrt(1 + (ri / LOSS_SCALE) ** 2) for ri in r]
        columns = []
        for i in range(n):
            shifted = list(z)
            shifted[i] += step
            ri_shifted = residuals(to_x(shifted))
            columns.append([(b - a) / step for a, b in zip(r, ri_shifted)])
        jtj = [[sum(w * ci * cj for w, ci, cj in zip(weights, columns[i], columns[j])) for j in range(n)] for i in range(n)]
        jtr = [sum(w * ci * ri for w, ci, ri in zip(weights, columns[i], r)) for i in range(n)]

        def evaluate(candidate: list[float]) -> tuple[float, list[float]]:
            r_candidate = residuals(to_x(candidate))
            return robust_loss(r_candidate), r_candidate

        z, value, r_new, damping, improved = damped_step(jtj, jtr, z, value, damping, evaluate, attempts=12, clip=5.0, ridge=1e-9, tolerance=1e-9)
        r = r_new if r_new is not None else r
        if not improved:
            break
    return to_x(z)


def damped_step(
    hess: list[list[float]],
    grad: list[float],
    point: list[float],
    value: float,
    damping: float,
    evaluate: Callable[[list[float]], tuple[float, object]],
    attempts: int,
    clip: float,
    ridge: float,
    tolerance: float,
) -> tuple[list[float], float, object, float, bool]:
    """One Levenberg-Marquardt step: solve (H + damping diag(H)) d = -g, clip each component of
    d to +-``clip``, and accept the first trial point that lowers ``evaluate``'s objective,
    raising the damping 4x after each refused trial (at most ``attempts``) and lowering it 3x
    after an accepted one. ``ridge`` keeps a zero diagonal invertible.

    Returns (point, value, what evaluate returned beside the value or None if nothing was
    accepted, damping, improved); ``improved`` is False when no trial was accepted or the gain
    was below ``tolerance`` of the objective (converged).
    """
    n = len(point)
    for _attempt in range(attempts):
        system = [[hess[i][j] + (damping * (hess[i][i] + ridge) if i == j else 0.0) for j in range(n)] for i in range(n)]
        delta = solve(system, [-v for v in grad])
        candidate = [p + max(min(d, clip), -clip) for p, d in zip(point, delta)]
        candidate_value, extra = evaluate(candidate)
        if candidate_value < value:
            converged = value - candidate_value < tolerance * (value + 1e-12)
            return candidate, candidate_value, extra, max(damping / 3, 1e-9), not converged
        damping *= 4
    return point, value, None, damping, False


def robust_weight(r: float) -> float:
    """IRLS weight of a residual under the pseudo-Huber loss (its loss is ~ weight * r^2 / 2)."""
    return 1 / math.sqrt(1 + (r / LOSS_SCALE) ** 2)


def row_loss(r: float) -> float:
    s = LOSS_SCALE
    return s * s * (math.sqrt(1 + (r / s) ** 2) - 1)


class PivotTest:
    """Joint identifiability of a growing set of columns (pivoted Cholesky of their Gram matrix).

    ``add(cross, diagonal)`` offers a column with its inner products with the accepted columns
    (``cross``) and with itself; it is accepted when the part of it the accepted columns cannot
    explain keeps at least ``tolerance`` of its squared norm (1 - R^2 of the column on the
    others). A column that is (nearly) a combination of the accepted ones, e.g. a bandwidth
    efficiency and an SoC bandwidth factor on a backend whose every device is an SoC, is refused.
    """

    def __init__(self, tolerance: float):
        self.tolerance = tolerance
        self.rows: list[list[float]] = []
        self.norms: list[float] = []

    def add(self, cross: list[float], diagonal: float) -> float:
        """The unexplained share of the column (accepted when >= tolerance; 0 if empty)."""
        if diagonal <= 0:
            return 0.0
        norm = math.sqrt(diagonal)
        c = [x / (norm * n) for x, n in zip(cross, self.norms)]
        y = []
        for i, row in enumerate(self.rows):
            y.append((c[i] - sum(row[j] * y[j] for j in range(i))) / row[i])
        share = 1 - sum(v * v for v in y)
        if share >= self.tolerance:
            self.rows.append(y + [math.sqrt(share)])
            self.norms.append(norm)
        return max(share, 0.0)


def independent_columns(columns: list[list[float]], tolerance: float) -> list[int]:
    """Indices of the columns (in order) that each add a direction the earlier accepted ones do
    not span (:class:`PivotTest` at ``tolerance``): the jointly identified ones."""
    test = PivotTest(tolerance)
    accepted: list[int] = []
    for i, col in enumerate(columns):
        cross = [sum(x * y for x, y in zip(col, columns[j])) for j in accepted]
        if test.add(cross, sum(x * x for x in col)) >= tolerance:
            accepted.append(i)
    return accepted


def cholesky(matrix: list[list[float]]) -> list[list[float]] | None:
    n = len(matrix)
    low = [[0.0] * n for _ in range(n)]
    for i in range(n):
        for j in range(i + 1):
            value = matrix[i][j] - sum(low[i][k] * low[j][k] for k in range(j))
            if i == j:
                if value <= 0:
                    return None
                low[i][i] = math.sqrt(value)
            else:
                low[i][j] = value / low[j][j]
    return low


def _cholesky_solve(low: list[list[float]], vector: list[float]) -> list[float]:
    n = len(vector)
    y = [0.0] * n
    for i in range(n):
        y[i] = (vector[i] - sum(low[i][k] * y[k] for k in range(i))) / low[i][i]
    x = [0.0] * n
    for i in range(n - 1, -1, -1):
        x[i] = (y[i] - sum(low[k][i] * x[k] for k in range(i + 1, n))) / low[i][i]
    return x


def condition_number(matrix: list[list[float]], iterations: int = 60) -> float:
    """Condition number of a symmetric positive semi-definite matrix after scaling it to a unit
    diagonal (power iteration for the largest eigenvalue, inverse iteration for the smallest);
    inf when it is singular. For a Gram matrix J^T J it is the square of J's."""
    n = len(matrix)
    if n == 0:
        return 1.0
    scale = [1 / math.sqrt(matrix[i][i]) if matrix[i][i] > 0 else 0.0 for i in range(n)]
    a = [[matrix[i][j] * scale[i] * scale[j] for j in range(n)] for i in range(n)]
    low = cholesky(a)
    if low is None:
        return math.inf

    def iterate(apply) -> float:
        v = [1.0 + 0.01 * i for i in range(n)]
        value = 0.0
        for _ in range(iterations):
            w = apply(v)
            norm = math.sqrt(sum(x * x for x in w))
            if norm == 0:
                return 0.0
            value = norm / math.sqrt(sum(x * x for x in v))
            v = [x / norm for x in w]
        return value

    largest = iterate(lambda v: [sum(r[j] * v[j] for j in range(n)) for r in a])
    smallest_inverse = iterate(lambda v: _cholesky_solve(low, v))
    return largest * smallest_inverse

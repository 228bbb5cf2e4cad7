"""``python -m engine bench``: how fast and how accurate the engine is, as numbers.

1. estimates per second in this Python (the page runs the same code under Pyodide);
2. the SCORE line on the calibration set (data/calibration/measurements.csv);
3. leave-one-source-out cross-validation by backend: each source's rows predicted by a fit
   that never saw them (the honest accuracy for hardware and software nobody measured).
A benchmark, not a test: it prints, it does not pass or fail.
"""

from __future__ import annotations

import statistics
import time

from ..api import estimate
from .calibrate import MEASUREMENTS, cross_validate
from .score import load_cases, percentile, score_cases

#: A mix of requests like the page's: small and big models, dense and MoE, GPUs, Macs, CPUs.
BENCH_REQUESTS = (
    {"hardware": "rtx-4090", "model": "llama-3.1-8b", "quant": "Q4_K_M"},
    {"hardware": "rtx-3090", "model": "qwen3-30b-a3b", "quant": "Q4_K_M", "prompt_tokens": 4000},
    {"hardware": "Apple M2 Ultra", "model": "llama-3.1-70b", "quant": "Q4_K_M", "depth": 16000},
    {"hardware": "AMD Ryzen 9 7950X 64GB", "model": "llama-3.1-8b", "quant": "Q8_0"},
    {"hardware": "dgx-spark", "model": "gpt-oss-120b", "quant": "MXFP4", "batch": 8},
)


def estimates_per_second(seconds: float = 2.0) -> tuple[float, float]:
    """(estimates/s without a schedule, estimates/s with a 500-token stream schedule)."""
    rates = []
    for extra in ({}, {"schedule": True, "gen_tokens": 500}):
        count = 0
        start = time.perf_counter()
        while time.perf_counter() - start < seconds:
            for request in BENCH_REQUESTS:
                estimate({**request, **extra, "prompt_tokens": request.get("prompt_tokens", 512) + count % 7})
                count += 1
        rates.append(count / (time.perf_counter() - start))
    return rates[0], rates[1]


def _row(name: str, apes: dict) -> str:
    cells = []
    for test in ("tg", "pp"):
        values = apes.get(test, [])
        if values:
            cells.append(f"{len(values):>5} {statistics.median(values):>6.3f} {percentile(values, 0.9):>6.3f}")
        else:
            cells.append(f"{'-':>5} {'-':>6} {'-':>6}")
    return f"{name:<34} " + "   ".join(cells)


def bench_main() -> int:
    plain, scheduled = estimates_per_second()
    print(f"estimates per second (CPython): {plain:,.0f} plain, {scheduled:,.0f} with a 500-token schedule")
    cases = load_cases(str(MEASUREMENTS))
    _predictions, line = score_cases(cases)
    print("\nleave-one-source-out cross-validation (fit without the source, predict it)")
    header = f"{'':<34} {'tg n':>5} {'mdape':>6} {'p90':>6}   {'pp n':>5} {'mdape':>6} {'p90':>6}"
    result = cross_validate(cases)
    print(f"{'by backend':<34}" + header[34:])
    for backend, apes in sorted(result["backend"].items()):
        print(_row(backend, apes))
    all_apes = {"tg": [], "pp": []}
    for apes in result["backend"].values():
        for test in all_apes:
            all_apes[test] += apes[test]
    print(_row("all", all_apes))
    print(f"\n{'by held-out source':<34}" + header[34:])
    for source, apes in sorted(result["source"].items()):
        print(_row(source, apes))
    print()
    print(line)
    return 0

"""The MLX engines' own priors on Metal (engine/params.py ``FAMILY_PRIORS``), used where no key
of the MLX family is fitted: a fold that holds out the M3 Max (or the M4 Max) leaves vLLM-MLX,
the family's only fitted key, one device, and the MLX engines fell back to the Metal backend's
prior (eta_bw 0.75), 10-24% too slow.

Sources: https://github.com/ml-explore/mlx/issues/3852 (M3 Max, mlx 0.32.0, a 4-bit 5120 x 17408
matrix-vector product from DRAM: 47 MB in 0.126 ms) and https://github.com/ml-explore/mlx/issues/4521
(M3 Ultra, mlx 0.32.2: 3,200 tiny dependent kernels in 8.8 ms at 50 per command buffer, 7.7 ms at
200; ~20 us of GPU time per command-buffer boundary, about one a layer for tens-of-MB weights).
"""

from __future__ import annotations

import pytest

from engine.engines import load_engines
from engine.params import FAMILY_PRIORS, PRIORS, BackendParams, family_prior, resolve_params
from engine.tools.borrowing import borrowed

MLX = FAMILY_PRIORS[("mlx-lm", "metal")]
M3_MAX_PEAK_GBS = 400.0
M3_GPU_MHZ = 1398.0


def test_eta_bw_is_the_published_cold_matvec_rate():
    assert MLX["eta_bw"] == pytest.approx(47e-3 / 0.126e-3 / M3_MAX_PEAK_GBS, abs=0.01)


def test_t_layer_is_the_kernel_chain_and_one_command_buffer():
    per_kernel_s = (7.7e-3 - 16 * 20e-6) / 3200  # 200 per buffer: 16 boundaries of ~20 us
    assert per_kernel_s == pytest.approx(2.3e-6, rel=0.02)
    at_m3_clock_s = 17 * per_kernel_s + 20e-6
    assert MLX["t_layer_s"] == pytest.approx(at_m3_clock_s * M3_GPU_MHZ / 1500, rel=0.02)


def test_every_mlx_engine_is_in_the_family():
    engines = load_engines()
    for engine_id in ("mlx-lm", "mlx-vlm", "vllm-mlx", "omlx", "omlx-legacy", "ollama-mlx"):
        assert engines[engine_id].lineage()[-1] == "mlx-lm"
    assert engines["ollama"].lineage()[-1] != "mlx-lm"


def test_an_unfitted_family_takes_its_priors_over_the_population():
    """No MLX key fitted (no vLLM-MLX rows on two devices): the population's values stand for
    everything but the family's own priors; llama.cpp's keys are untouched."""
    population = BackendParams(eta_bw=0.96, t_layer_s=9.6e-5, dequant_ops=16.0)
    fit = {"backends": {}, "population": {"metal": population.as_dict()}}
    got = resolve_params(("mlx-vlm", "mlx-lm"), "metal", fit=fit).params
    assert (got.eta_bw, got.t_layer_s, got.dequant_ops) == (MLX["eta_bw"], MLX["t_layer_s"], 16.0)
    assert resolve_params(("llama-cpp",), "metal", fit=fit).params == population
    lent = borrowed("mlx-lm/metal", {}, {}, {"metal": population})
    assert (lent.eta_bw, lent.t_layer_s) == (MLX["eta_bw"], MLX["t_layer_s"])
    assert family_prior(("mlx-lm",), "cuda", PRIORS["cuda"]) == PRIORS["cuda"]


def test_a_fitted_sibling_does_not_replace_the_family_priors():
    """vLLM-MLX fitted (two devices) lends mlx-lm nothing: the family's priors stand, in the full
    fit as in a fold without the M3 Max (engine/tools/borrowing.borrowed)."""
    fitted = BackendParams(eta_bw=1.0, t_layer_s=6.2e-5)
    lent = borrowed("mlx-lm/metal", {"vllm-mlx/metal": (fitted, ("eta_bw", "t_layer_s"))}, {}, {"metal": PRIORS["metal"]})
    assert (lent.eta_bw, lent.t_layer_s) == (MLX["eta_bw"], MLX["t_layer_s"])
    assert resolve_params(("mlx-lm",), "metal").params.eta_bw == MLX["eta_bw"]
    assert resolve_params(("vllm-mlx", "mlx-lm"), "metal").key == "vllm-mlx/metal"


def _measured_row(source: str, model: str, test: str, depth: str) -> dict:
    import csv

    from engine.tools.calibrate import MEASUREMENTS

    with open(MEASUREMENTS, newline="", encoding="utf-8") as handle:
        return next(
            r for r in csv.DictReader(handle)
            if r["source_id"] == source and r["model"] == model and r["test"] == test and r["depth"] == depth
        )


def test_an_unfitted_mlx_engine_decodes_a_big_dense_row_at_the_published_kernel_rate():
    """chigkim's mlx-lm row (https://github.com/ml-explore/mlx-examples/issues/1029, M3 Max,
    Llama-3.3-70B MLX-4bit, 9.35 tok/s after 260 tokens): ~40 GB a token is ~370 GB/s, the
    cold matrix-vector rate of mlx issue 3852. From the Metal prior with the family's values the
    row comes out within 10%; from the bare Metal prior (eta_bw 0.75) over 15% slow."""
    from engine.tools.score import case_from_row, predict

    row = _measured_row("chigkim_mlx_examples_1029", "Llama-3.3-70B", "tg", "260")
    case = case_from_row(row)
    assert case.resolved, case.status
    nothing_fitted = {"backends": {}, "population": {}}
    with_family = predict(case, resolve_params(case.system.engine.lineage(), "metal", fit=nothing_fitted).params)
    assert with_family / case.measured == pytest.approx(1.0, abs=0.10)
    assert predict(case, PRIORS["metal"]) / case.measured < 0.85

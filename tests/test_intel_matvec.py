"""llama.cpp's Vulkan integer-dot mat-vec on Intel GPUs (engine/intel_matvec.py), pinned to the
published Linux/Windows pairs behind its prior and to the Arc Pro B70's calibration rows."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from engine import estimate, intel_matvec
from engine.system import build_system

ROWS = Path(__file__).resolve().parents[1] / "data" / "calibration" / "measurements.csv"


def test_prior_is_the_a770_linux_over_windows_ratio_of_k_quants_and_mxfp4():
    """llama.cpp PR 19988 (A770, build 8191, Linux / Windows tg): Llama 3 8B Q4_K_M 32 / 52,
    gpt-oss-20b MXFP4 36 / 62; Q4_0, float shader on both, 44 / 56 (a smaller, general gap)."""
    assert 36 / 62 <= intel_matvec.MMVQ_STREAM_SHARE <= 32 / 52
    assert intel_matvec.MMVQ_STREAM_SHARE < 44 / 56
    assert intel_matvec.INTEL_FLOAT_MATVEC == {"q4_0", "q5_1"}


@pytest.mark.parametrize(
    "hardware, backend, quant, low, high",
    [
        ("Arc Pro B70", "vulkan", "Q4_K_M", 1.5, 1.67),  # nearly every byte through MMVQ
        ("Arc Pro B70", "vulkan", "Q4_0", 1.0, 1.1),  # float shader; only the Q6_K head is not
        ("Arc Pro B70", "vulkan", "BF16", 1.0, 1.0),  # 16-bit weights: float shader
        ("Arc Pro B70", "sycl", "Q4_K_M", 1.0, 1.0),  # another backend
        ("Radeon AI PRO R9700", "vulkan", "Q4_K_M", 1.0, 1.0),  # AMD: MMVQ where it is faster
    ],
)
def test_only_intel_under_vulkan_streams_quantised_weights_slower(hardware, backend, quant, low, high):
    system = build_system({"hardware": hardware, "model": "Llama-3.1-8B", "quant": quant, "backend": backend})
    assert low <= intel_matvec.stream_factor(system) <= high


def test_short_rows_take_the_float_shader():
    """k < 2048: Qwen3.6-35B-A3B's experts' down projection has rows of 512."""
    system = build_system({"hardware": "Arc Pro B70", "model": "Qwen3.6-35B-A3B", "quant": "Q4_K_M", "backend": "vulkan"})
    full = build_system({"hardware": "Arc Pro B70", "model": "Llama-3.1-8B", "quant": "Q4_K_M", "backend": "vulkan"})
    assert intel_matvec.stream_factor(system) < intel_matvec.stream_factor(full)


def _tg(model: str, quant: str, backend: str = "vulkan") -> float:
    """The B70's measured decode rate at an empty cache (kyuz0's rows) on ``backend``."""
    for row in csv.DictReader(ROWS.open(encoding="utf-8")):
        if ("Arc Pro B70" in row["hardware"] and row["backend"] == backend and row["model"] == model
                and row["quant"] == quant and row["test"] == "tg" and row["depth"] == "0"):
            return float(row["tokens_per_s"])
    raise AssertionError(f"no {backend} row {model} {quant}")


def test_b70_rows_decode_8_bit_slower_than_bf16_and_the_engine_follows():
    """kyuz0's B70 Vulkan rows: Qwen3.5-9B UD-Q8_K_XL 21.5 tok/s against BF16 28.2, though it reads
    ~0.6x the bytes. Without the mechanism the engine had the 8-bit file about 1.4x faster; with it the
    two come out within 10% (the R9700, AMD, keeps the 8-bit file well ahead)."""
    measured = _tg("Qwen3.5-9B", "UD-Q8_K_XL") / _tg("Qwen3.5-9B", "BF16")
    assert measured < 0.8

    def ratio(hardware: str) -> float:
        tps = {q: estimate({"hardware": hardware, "model": "Qwen3.5-9B", "quant": q, "backend": "vulkan"})["decode_tps"]
               for q in ("UD-Q8_K_XL", "BF16")}
        return tps["UD-Q8_K_XL"] / tps["BF16"]

    assert ratio("Arc Pro B70") < 1.1
    assert ratio("Radeon AI PRO R9700") > 1.2


def test_the_explain_breakdown_names_the_factor():
    """The explain panel's "Integer-dot kernel" row reads breakdown.weight_stream_factor."""
    b70 = estimate({"hardware": "Arc Pro B70", "model": "Llama-3.1-8B", "quant": "Q4_K_M", "backend": "vulkan"})
    r9700 = estimate({"hardware": "Radeon AI PRO R9700", "model": "Llama-3.1-8B", "quant": "Q4_K_M", "backend": "vulkan"})
    assert b70["breakdown"]["weight_stream_factor"] > 1.5
    assert r9700["breakdown"]["weight_stream_factor"] == 1.0


# SYCL: BF16 weights before llama.cpp PR 21580 (https://github.com/ggml-org/llama.cpp/pull/21580).


def _sycl(model: str, quant: str, build: int | None):
    request = {"hardware": "Arc Pro B70", "model": model, "quant": quant, "backend": "sycl"}
    if build is not None:
        request["llama_cpp_build"] = build
    return build_system(request)


def test_sycl_bf16_prior_is_pr_21580s_measurement():
    """PR 21580: "~4x tg speedup on Intel Arc" (an Arc Pro B70), merged 2026-05-22: after b9247
    (ramalama PR 2761, 2026-05-20) and before b9512 (2026-06-04); the B70 rows are b9039."""
    assert intel_matvec.SYCL_BF16_GEMM_SLOWDOWN == 4.0
    assert 9247 < intel_matvec.SYCL_BF16_DMMV_BUILD <= 9512


@pytest.mark.parametrize(
    "model, quant, build, factor",
    [
        ("Qwen3.5-9B", "BF16", 9039, 4.0),  # the B70 rows' build: every matrix on the FP32 GEMM
        ("Qwen3.5-9B", "BF16", 9600, 1.0),  # after PR 21580: the DMMV kernel
        ("Qwen3.5-9B", "BF16", None, 1.0),  # no stated build: today's
        ("Qwen3.5-9B", "F16", 9039, 1.0),  # F16 always had its DMMV kernel
        ("Qwen3.5-9B", "UD-Q8_K_XL", 9039, 1.0),  # a mixed file: none (bf16_byte_share)
        ("Llama-3.1-8B", "Q4_K_M", 9039, 1.0),  # quantised: MMVQ/DMMV
    ],
)
def test_sycl_bf16_fallback_by_build_and_format(model, quant, build, factor):
    assert intel_matvec.stream_factor(_sycl(model, quant, build)) == pytest.approx(factor, abs=0.01)


def test_b70_sycl_bf16_rows_decode_at_the_fallbacks_rate():
    """kyuz0's B70 SYCL rows (b9039): Qwen3.5-9B BF16 5.42 tok/s, 16.68 GiB a token: ~97 GB/s, 16%
    of 608 GB/s (PR 21580: "~14% memory bandwidth utilization"), while its UD-Q8_K_XL file streams
    12.07 GiB at 38.8 tok/s (~83%). The engine at the rows' build lands within 25% of both."""
    bf16_gbs = _tg("Qwen3.5-9B", "BF16", "sycl") * 16.68 * 2**30 / 1e9
    assert 0.12 < bf16_gbs / 608 < 0.2
    for model in ("Qwen3.5-9B", "Ministral-3-8B", "Ministral-3-14B"):
        predicted = estimate({"hardware": "Arc Pro B70", "model": model, "quant": "BF16", "backend": "sycl",
                              "llama_cpp_build": 9039})["decode_tps"]
        assert 0.75 < predicted / _tg(model, "BF16", "sycl") < 1.25, model
    today = estimate({"hardware": "Arc Pro B70", "model": "Qwen3.5-9B", "quant": "BF16", "backend": "sycl"})
    assert today["decode_tps"] > 3.5 * _tg("Qwen3.5-9B", "BF16", "sycl")
    assert today["breakdown"]["weight_stream_kernel"] is None
    old = estimate({"hardware": "Arc Pro B70", "model": "Qwen3.5-9B", "quant": "BF16", "backend": "sycl", "llama_cpp_build": 9039})
    assert old["breakdown"]["weight_stream_kernel"] == "sycl-bf16-gemm"

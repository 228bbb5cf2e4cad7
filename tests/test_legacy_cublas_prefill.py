"""llama.cpp before mid-2024 on CUDA: prompt micro-batches dequantise the weights to 16 bits and
multiply them with cuBLAS (engine/cublas_prefill.py), pinned to published llama.cpp numbers."""

from __future__ import annotations

import pytest

from engine.api import estimate
from engine.cublas_prefill import REDUNDANT_PASS_FIXED_BUILD

LEGACY = {"engine": "llama.cpp (before mid-2024)", "model": "llama-2-7b", "prompt_tokens": 512, "flash_attn": False}


def _prefill_s(request: dict) -> float:
    return estimate(request)["breakdown"]["prefill_s"]


def test_the_pass_is_what_q4_k_m_adds_to_f16_on_an_rtx_a6000():
    """PR 3816's own table (RTX A6000, b1431, CUBLAS_COMPUTE_16F, https://github.com/ggml-org/llama.cpp/pull/3816):
    LLaMA 7B pp512 at 4098.15 tok/s in F16 and 3450.93 in Q4_K_M, 23.4 ms more per 512 tokens. The
    quantised file runs the F16 GEMM after a pass over its weights (read the packed bytes, write
    2 bytes each), so the pass is that difference and F16 pays none."""
    a6000 = {**LEGACY, "hardware": "rtx-a6000", "llama_cpp_build": 1431}
    q4 = estimate({**a6000, "quant": "Q4_K_M"})["breakdown"]
    f16 = estimate({**a6000, "quant": "F16"})["breakdown"]
    published_s = 512 / 3450.93 - 512 / 4098.15
    assert q4["prefill_dequant_s"] == pytest.approx(published_s, rel=0.15)
    assert f16["prefill_dequant_s"] == 0
    assert q4["prefill_s"] - f16["prefill_s"] == pytest.approx(published_s, rel=0.25)


def test_builds_before_pr_4809_converted_the_32_weight_blocks_twice():
    """PR 4809 (https://github.com/ggml-org/llama.cpp/pull/4809): the q4_0 ... q8_0 conversion
    kernel read and wrote each value twice; the fix took LLaMA 7B Q4_0 pp512 on an RTX 3090 from
    3351.16 to 3663.45 tok/s, 13.0 ms per 512 tokens. K-quants had kernels of their own."""
    card = {**LEGACY, "hardware": "rtx-3090"}
    before, after = (dict(card, quant="Q4_0", llama_cpp_build=b) for b in (REDUNDANT_PASS_FIXED_BUILD - 10, REDUNDANT_PASS_FIXED_BUILD))
    assert _prefill_s(before) - _prefill_s(after) == pytest.approx(512 / 3351.16 - 512 / 3663.45, rel=0.3)
    k_before, k_after = ({**b, "quant": "Q4_K_M"} for b in (before, after))
    assert _prefill_s(k_before) == _prefill_s(k_after)


def test_the_pass_applies_only_where_those_builds_took_the_cublas_branch():
    card = {**LEGACY, "hardware": "rtx-4090", "quant": "Q4_K_M"}

    def dequant_s(**changes) -> float:
        return estimate({**card, **changes})["breakdown"]["prefill_dequant_s"]

    assert dequant_s() > 0
    # Micro-batches of up to MMQ_MAX_BATCH_SIZE (32) tokens stay on the MMQ kernels.
    assert dequant_s(prompt_tokens=32) == 0 and dequant_s(prompt_tokens=33) > 0
    # Today's llama.cpp multiplies quantised weights in its int8 tensor-core MMQ kernels (PRs 7676, 7860).
    assert dequant_s(engine="llama.cpp") == 0
    # Below compute capability 7.0 the FP16 branch is not taken (P100: FP32 cuBLAS, left to the roofline).
    assert dequant_s(hardware="p100-pcie-16gb") == 0
    # A row split's slices take the FP32 branch: 4 bytes written per weight, F16 weights converted too.
    two = {"gpus": 2, "split": "row"}
    assert dequant_s(**two) > 1.3 * dequant_s() / 2
    assert dequant_s(quant="F16", **two) > 0 and dequant_s(quant="F16") == 0

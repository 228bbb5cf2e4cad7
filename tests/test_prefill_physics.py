"""Prefill physics pinned to published llama.cpp numbers (engine/prefill.py, engine/moe.py)."""

from __future__ import annotations

import pytest

from engine.api import estimate
from engine.moe import MMQ_TILE_COLUMNS, padded_columns


def test_an_expert_with_few_tokens_still_computes_a_whole_tile():
    """mmq.cuh picks one column tile for the micro-batch (128 wide for 512 tokens): an expert
    that 512 tokens reach with probability 8/128 gets ~32 of them but computes ~128 columns."""
    share = 8 / 128
    assert padded_columns(512, share, MMQ_TILE_COLUMNS) == pytest.approx(128, rel=0.01)
    # Many tokens per expert: the waste is at most part of the last tile.
    assert 512 * 0.5 <= padded_columns(512, 0.5, MMQ_TILE_COLUMNS) <= 512 * 0.5 + 128
    # A short prompt gets a narrow tile (the token count rounded up to 8 columns).
    assert padded_columns(5, 1.0, MMQ_TILE_COLUMNS) == 8


@pytest.mark.parametrize(
    ("request_", "published"),
    [
        # JohannesGaessler, llama.cpp PR 15525 (CUDA: MoE helper in device code), RTX 3090,
        # deepseek2 16B Q4_0, -ub 512 pp512: 4260.97 t/s (https://github.com/ggml-org/llama.cpp/pull/15525).
        ({"hardware": "rtx-3090", "model": "deepseek-v2-lite", "quant": "Q4_0", "prompt_tokens": 512}, 4261),
        # llama.cpp PR 15631 (CUDA: fuse adds), RTX 4090, gpt-oss 20B MXFP4, -ub 2048 pp4096:
        # 10649 t/s (https://github.com/ggml-org/llama.cpp/pull/15631).
        ({"hardware": "rtx-4090", "model": "gpt-oss-20b", "quant": "MXFP4", "prompt_tokens": 4096, "ubatch": 2048}, 10649),
    ],
)
def test_moe_prefill_on_discrete_cuda_cards_matches_published_runs(request_, published):
    """A fixed cost per MoE layer fitted on a slow system-on-chip made these 1.6-2.4x too slow;
    the experts' own roofline with tile padding and the routing traffic at the card's bandwidth
    (engine/moe.py) put them within 30%."""
    assert 0.7 * published <= estimate(request_)["prefill_tps"] <= 1.3 * published


def test_many_small_experts_waste_more_of_the_matrix_units_than_few_big_ones():
    """At -ub 512, Qwen3-30B-A3B (128 experts, top-8: ~32 tokens per expert) computes ~4x the
    useful columns, gpt-oss-20b (32 experts, top-4: ~64 per expert) ~2x; a dense model none."""

    def waste(experts: int, top_k: int) -> float:
        share = top_k / experts
        return padded_columns(512, share, MMQ_TILE_COLUMNS) / (512 * share)

    assert waste(128, 8) == pytest.approx(4, rel=0.05)
    assert waste(32, 4) == pytest.approx(2, rel=0.1)
    card = {"hardware": "rtx-4090", "prompt_tokens": 512, "quant": "Q4_K_M"}
    assert estimate({**card, "model": "qwen3-30b-a3b"})["breakdown"]["prefill_experts_s"] > 0
    dense = estimate({**card, "model": "llama-3.1-8b"})["breakdown"]
    assert dense["prefill_experts_s"] == 0 and dense["prefill_dispatch_s"] == 0


def test_an_older_llama_cpp_build_runs_rdna4_flash_attention_on_the_shader_units():
    """Before llama.cpp PR 18481 (after b7653, January 2026) RDNA4's prefill attention ran the tile
    kernel on the shader ALUs (fa_kernels.rocm_tile_layer); RDNA3/3.5 got the WMMA kernel with PR 22880
    (b9158). The build is an input (CLI --llama-cpp-build) and the calibration rows' stated builds
    are read from their notes."""
    deep = {"model": "qwen3-30b-a3b", "quant": "Q4_K_M", "prompt_tokens": 2048, "depth": 16384, "ubatch": 2048}
    r9700 = {**deep, "hardware": "radeon-ai-pro-r9700"}
    assert estimate({**r9700, "llama_cpp_build": 7423})["prefill_tps"] < 0.75 * estimate(r9700)["prefill_tps"]
    assert estimate({**r9700, "llama_cpp_build": 9187})["prefill_tps"] == estimate(r9700)["prefill_tps"]
    strix = {**deep, "hardware": "ryzen-ai-max-plus-395-128gb", "backend": "rocm"}
    assert estimate({**strix, "llama_cpp_build": 7423})["prefill_tps"] < 0.8 * estimate(strix)["prefill_tps"]
    assert estimate({**strix, "llama_cpp_build": 9187})["prefill_tps"] == estimate(strix)["prefill_tps"]


def test_rocblas_tensile_runs_rdna4_16_bit_gemms_off_the_matrix_units():
    """kyuz0's R9700 toolboxes (github.com/kyuz0/amd-r9700-ai-toolboxes, b7423, 2x R9700, gemma-3-27b
    BF16 pp512): 1580 t/s with ROCBLAS_USE_HIPBLASLT=1 (rocBLAS's default backend on gfx12) against
    176 t/s with =0, which forces its Tensile library (engine/prefill.py gemm_slowdown). Only 16-bit
    weights go through rocBLAS; quantised ones run llama.cpp's MMQ kernels, and RDNA3.5's WMMA runs at
    its ALUs' rate, so neither moves. The notes' ROCBLAS_USE_HIPBLASLT is read per row (score.py)."""
    from engine.tools.score import row_request

    card = {"hardware": "radeon-ai-pro-r9700", "gpus": 2, "model": "gemma-3-27b", "prompt_tokens": 512}
    bf16 = {**card, "quant": "BF16"}
    slow = estimate({**bf16, "rocm_gemm": "tensile"})
    assert slow["prefill_tps"] < estimate(bf16)["prefill_tps"] / 2.5
    assert slow["breakdown"]["prefill_gemm_slowdown"] == pytest.approx(4.0, rel=0.01)
    quant = {**card, "quant": "Q4_K_M"}
    assert estimate({**quant, "rocm_gemm": "tensile"})["prefill_tps"] == estimate(quant)["prefill_tps"]
    strix = {**bf16, "hardware": "ryzen-ai-max-plus-395-128gb", "gpus": 1, "backend": "rocm"}
    assert estimate({**strix, "rocm_gemm": "tensile"})["prefill_tps"] == estimate(strix)["prefill_tps"]
    row = {"hardware": "AMD Radeon AI PRO R9700 32GB", "model": "gemma-3-27b", "quant": "BF16", "engine": "llama.cpp",
           "backend": "rocm", "notes": "src backend='llama.cpp rocm-7.9 (ROCm) ROCBLAS_USE_HIPBLASLT=0'; build=7423"}
    assert row_request(row)["rocm_gemm"] == "tensile"


def test_a_quantised_files_16_bit_tensors_go_through_rocblas():
    """kyuz0's R9700 toolboxes (b7423, gemma-3-12b UD-Q8_K_XL, llama-bench size 13.40 GiB, pp512):
    ROCBLAS_USE_HIPBLASLT=0 prefills 1.45x slower than the default (1.23-1.47 over the toolboxes),
    where plain Q4_0/Q3_K_S/Q4_K_M/MXFP4 files of the same runs differ by 2% at most: ggml-cuda
    multiplies only quantised types in its MMQ kernels, so the file's BF16 tensors (its embedding,
    and ~1 billion more weights that the stated size holds beyond the recipe) go through rocBLAS
    (engine/blas.py). Not on CUDA, not for a file without 16-bit tensors."""
    from engine.blas import blas_share
    from engine.system import build_system

    ud = {"hardware": "radeon-ai-pro-r9700", "model": "gemma-3-12b", "quant": "UD-Q8_K_XL", "prompt_tokens": 512,
          "file_gb": 13.40 * 2**30 / 1e9}
    share = blas_share(build_system(ud))
    assert 0.06 < share < 0.13
    slow = estimate({**ud, "rocm_gemm": "tensile"})
    ratio = estimate(ud)["prefill_tps"] / slow["prefill_tps"]
    assert 1.2 < ratio < 1.7
    assert slow["breakdown"]["prefill_blas_share"] == pytest.approx(share)
    assert slow["breakdown"]["prefill_gemm_slowdown"] == pytest.approx(4.0, rel=0.01)
    q4 = {**ud, "quant": "Q4_0", "file_gb": None}
    assert estimate({**q4, "rocm_gemm": "tensile"})["prefill_tps"] == estimate(q4)["prefill_tps"]
    assert estimate({**q4, "rocm_gemm": "tensile"})["breakdown"]["prefill_gemm_slowdown"] == 1.0
    assert blas_share(build_system({**ud, "hardware": "rtx-4090"})) == 0.0


def test_metal_builds_before_the_september_2023_rework_prefill_at_half_the_rate():
    """llama.cpp's Metal prefill roughly doubled in September 2023 (PRs 2959 and 3084): the M2 Ultra's
    llama-bench pp512 of LLaMA 7B Q4_0 was 629.6 t/s on master at PR 2917 (2023-08-30) and 1164.0
    with PR 3084 (2023-09-09). A stated build before engine/prefill.py METAL_PP_REWORK_BUILD
    prefills at that ratio; decode and other backends do not move. The calibration's build-1026 rows
    (XiongjieDai, M1 Max 24-core, Aug 2023: LLaMA-7B F16 213.6 t/s over 265 tokens) show the same
    ratio against the December 2023 builds' 7B F16 rate on that GPU class (llama.cpp discussion
    4167: M1 Max 24-core F16 pp512 453: 0.47)."""
    from engine.metal_eras import EARLY_METAL_PP_SHARE

    assert EARLY_METAL_PP_SHARE == pytest.approx(629.6 / 1164.0)
    mac = {"hardware": "apple-m2-ultra-76c-192gb", "model": "llama-2-7b", "quant": "Q4_0", "prompt_tokens": 512,
           "engine": "llama.cpp (before mid-2024)"}
    early, later = estimate({**mac, "llama_cpp_build": 1026}), estimate({**mac, "llama_cpp_build": 1619})
    assert early["prefill_tps"] == pytest.approx(EARLY_METAL_PP_SHARE * later["prefill_tps"], rel=0.1)
    assert early["decode_tps"] == later["decode_tps"]
    assert estimate({**mac, "llama_cpp_build": 1300})["prefill_tps"] == later["prefill_tps"]
    cuda = {"hardware": "rtx-3090", "model": "llama-2-7b", "quant": "Q4_0", "prompt_tokens": 512,
            "engine": "llama.cpp (before mid-2024)"}
    assert estimate({**cuda, "llama_cpp_build": 1026})["prefill_tps"] == estimate({**cuda, "llama_cpp_build": 1619})["prefill_tps"]


def test_metal_builds_before_fp16_activation_tiles_prefill_at_the_fp32_operand_share():
    """llama.cpp's Metal matrix-matrix kernel staged the activations as FP32 tiles (FP16 x FP32
    products) until PR 16225 (2025-09-28, engine/metal_eras.py METAL_HALF_TILE_BUILD), FP16 since.
    Prior: Metal Performance Shaders' 8192^3 GEMM on an M1 7-core GPU, 1.628 TFLOPS with FP32
    operands against 1.917 with FP16 inputs (Metal.jl PR 80). A stated older llama.cpp build
    prefills at that share of today's rate (and the September 2023 rework's share before b1200);
    decode, MLX engines and other backends do not move."""
    from engine.metal_eras import EARLY_METAL_PP_SHARE, FP32_TILE_SHARE, METAL_HALF_TILE_BUILD

    assert FP32_TILE_SHARE == pytest.approx(1.628 / 1.917)
    assert 2797 < METAL_HALF_TILE_BUILD <= 7948  # between the calibration's May 2024 and Feb 2026 builds
    mac = {"hardware": "apple-m2-ultra-76c-192gb", "model": "qwen2.5-coder-7b", "quant": "Q8_0", "prompt_tokens": 2048,
           "engine": "llama.cpp"}
    old, new = estimate({**mac, "llama_cpp_build": 4100}), estimate({**mac, "llama_cpp_build": 7948})
    compute = {name: r["breakdown"]["prefill_compute_s"] for name, r in (("old", old), ("new", new))}
    assert compute["new"] == pytest.approx(FP32_TILE_SHARE * compute["old"], rel=1e-9)
    assert old["prefill_tps"] < new["prefill_tps"] and old["decode_tps"] == new["decode_tps"]
    assert estimate(mac)["prefill_tps"] == new["prefill_tps"]  # no build stated: a current release
    early = estimate({**mac, "llama_cpp_build": 1026})["breakdown"]["prefill_compute_s"]
    assert compute["new"] == pytest.approx(EARLY_METAL_PP_SHARE * FP32_TILE_SHARE * early, rel=1e-9)
    cuda = {**mac, "hardware": "rtx-3090"}
    assert estimate({**cuda, "llama_cpp_build": 4100})["prefill_tps"] == estimate({**cuda, "llama_cpp_build": 7948})["prefill_tps"]


def test_a_fresh_cuda_process_pays_its_first_batch_kernel_loading_once():
    """llama.cpp's ./main (Dec 2023, XiongjieDai's llama1 table) timed a 494-token prompt as the
    process's first large batch. On the A100 PCIe it ran LLaMA-7B Q4_0 at 3957 tok/s and 65B at
    634.7: 6.2x, where the 9.7x weights alone would give ~9x. Per-device least squares over the
    ./main rows give a fixed 33-76 ms per prompt on all six cards (kernel loading, params.py
    t_cold_batch_s); llama-bench's warm runs show none. With the cold start the ratio is the
    measured one; without it (a warmed-up process) the small model gains the most."""
    legacy = {"engine": "llama.cpp (before mid-2024)", "prompt_tokens": 494, "flash_attn": False}
    small, big = ({**legacy, "hardware": "a100-pcie-80gb", "model": m, "quant": "Q4_0"} for m in ("llama-7b", "llama-65b"))
    cold = estimate({**small, "cold_start": True})["prefill_tps"] / estimate({**big, "cold_start": True})["prefill_tps"]
    warm = estimate(small)["prefill_tps"] / estimate(big)["prefill_tps"]
    assert cold == pytest.approx(3957 / 634.7, rel=0.15)
    assert warm > 1.25 * cold
    assert 0.02 <= estimate({**small, "cold_start": True})["breakdown"]["prefill_cold_s"] <= 0.08
    # Metal compiles its kernels when the context is created: nothing to load at the first batch.
    mac = {**legacy, "hardware": "apple-m2-ultra-76c-192gb", "model": "llama-7b", "quant": "Q4_0"}
    assert estimate({**mac, "cold_start": True})["prefill_tps"] == estimate(mac)["prefill_tps"]

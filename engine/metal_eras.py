"""llama.cpp's Metal prefill by build era: the share of today's kernels' matmul rate a stated
older build reaches (prefill.py multiplies the matrix rate by it). Two changes: the September 2023
rework of the graph around the matrix kernels, and the September 2025 switch of the matrix-matrix
kernel's activation tiles from FP32 to FP16."""

from __future__ import annotations

from .system import System

#: llama.cpp's Metal prefill before its September 2023 rework: the matrix-matrix kernels of PR 2615
#: (https://github.com/ggml-org/llama.cpp/pull/2615, Aug 2023) ran at ~88% of the ALUs, but the
#: whole evaluation at ~40% ("the time consumed by non-matrix multiplication processes is
#: considerably extensive"), until PRs 2959 and 3084 (Sept 2023: faster softmax, masking, scale and
#: activation kernels, an f16 x f32 kernel for the non-contiguous K x Q product,
#: https://github.com/ggml-org/llama.cpp/pull/3084). Prior: the M2 Ultra's llama-bench pp512 of
#: LLaMA 7B Q4_0 on master before (629.6 tok/s, https://github.com/ggml-org/llama.cpp/pull/2917,
#: 2023-08-30) over after the rework (1164.0, PR 3084's own table, 2023-09-09) = 0.54. The first
#: build after it is approximate (b1200, mid-September 2023): the calibration's Metal builds are
#: 1026 (Aug 2023) and 1619-1691 (Dec 2023), so any boundary between them scores the same.
METAL_PP_REWORK_BUILD = 1200
EARLY_METAL_PP_SHARE = 629.6 / 1164.0

#: llama.cpp's Metal matrix-matrix kernel (kernel_mul_mm, ggml-metal.metal) multiplied FP16 weight
#: tiles by FP32 activation tiles until PR 16225 ("metal : extend mat-mat multiplication support",
#: https://github.com/ggml-org/llama.cpp/pull/16225, merged 2025-09-28; ggml-org/ggml@70f554a0):
#: `simdgroup_float8x8 mb[2]` loaded from a 4 KB FP32 threadgroup tile, each 8x8 product FP16 x FP32
#: in FP32. Since then every kernel_mul_mm_<type>_f32 converts the activations to FP16 when it stages
#: them (S1 = half, `simdgroup_half8x8`), FP32 accumulators unchanged; the routed experts' kernel
#: (kernel_mul_mm_id) had switched in PR 13388 (May 2025, ggml-org/ggml@878a093f). Apple's GPUs
#: (no matrix units before M5) run a GEMM with FP32 operands at a share of the rate with FP16
#: operands: Metal Performance Shaders' 8192^3 GEMM on an M1 (7-core GPU, 2.28 TFLOPS peak)
#: measured 1.628 TFLOPS in FP32 and 1.917 with FP16 inputs and FP32 results (Metal.jl PR 80,
#: https://github.com/JuliaGPU/Metal.jl/pull/80, comment of 2023-02-03): 0.849. Prior, not fitted: a
#: llama.cpp build before the switch multiplies at that share of today's rate (with the rework's share
#: too before b1200). The build is approximate (b6600: b6451 was tagged 2025-09-13, ~10 builds a day);
#: the calibration's Metal builds are 2796-2797 (May 2024) and 7948 (Feb 2026), so any boundary
#: between them scores the same. MLX's GEMMs take FP16/BF16 operands (mlx steel kernels): no share.
METAL_HALF_TILE_BUILD = 6600
FP32_TILE_SHARE = 1.628 / 1.917


def metal_build_share(system: System) -> float:
    """The share of today's Metal matmul rate a stated llama.cpp build reaches in prefill: 1 from
    METAL_HALF_TILE_BUILD on and for every other engine, backend or unstated build; FP32_TILE_SHARE
    before it, times EARLY_METAL_PP_SHARE before METAL_PP_REWORK_BUILD."""
    build = system.options.llama_cpp_build
    if system.backend != "metal" or build is None or build >= METAL_HALF_TILE_BUILD:
        return 1.0
    if "llama-cpp" not in system.engine.lineage():
        return 1.0
    return FP32_TILE_SHARE * (EARLY_METAL_PP_SHARE if build < METAL_PP_REWORK_BUILD else 1.0)

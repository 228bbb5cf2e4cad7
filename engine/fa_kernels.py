"""Which flash-attention kernel a llama.cpp build runs for prefill, where that is not the matrix
units at the fitted matmul rate: ROCm's HIP tile kernel on Radeon GPUs (its own sourced rate) and
SYCL's vector-engine kernels before oneDNN's fused attention (a slowdown on the matrix rate).
prefill.py applies them."""

from __future__ import annotations

from .kvcache import gqa_ratio, head_dim, unfused_kv_read_factor
from .amdvlk import amd_dual_issue
from .roofline import shader_fp32_flops
from .system import System

#: First llama.cpp build whose flash-attention kernel runs on AMD RDNA4's WMMA matrix cores:
#: PR 18481 ("HIP: add fattn-mma-f16 for RDNA4", https://github.com/ggml-org/llama.cpp/pull/18481)
#: was benchmarked against b7653 as its base on 2026-01-12. Before it, prefill attention on ROCm
#: runs the tile kernel on the shader ALUs (fattn.cu: "If there are no tensor cores available,
#: use the generic tile kernel"): rocm_tile_attention.
AMD_MATRIX_FA_BUILD = 7654
#: The same for RDNA3 and RDNA 3.5: PR 22880 ("HIP: RDNA3 mma FA, faster AMD transpose, tune AMD",
#: https://github.com/ggml-org/llama.cpp/pull/22880, merged 2026-05-14 as commit 3e037f313,
#: version 9158). The Ryzen AI Max+ 395's rows (b9187-9193) have it.
RDNA3_MATRIX_FA_BUILD = 9158
#: Head dimensions llama.cpp's HIP build runs on the WMMA kernel (fattn-mma-f16) at all: "For
#: RDNA3/4 I was not able to get better performance than the tile kernel for head sizes > 128"
#: (PR 22880), and ggml_cuda_get_best_fattn_kernel takes it only "if the full tile width of 16 can
#: be utilized" (amd_wmma_available && gqa_opt_applies && Q->ne[0] <= 128: gqa_opt_applies needs
#: gqa_ratio >= 2, so a model without grouped queries stays on the tile kernel too;
#: ggml/src/ggml-cuda/fattn.cu). Larger heads (Gemma's 256/512, MLA's 576, Qwen3.5/3.6's 256) run
#: the tile kernel on every RDNA build of the calibration (PR 28529 of September 2026 widens RDNA4's
#: to 256).
AMD_MMA_FA_MAX_HEAD_DIM = 128
#: Share of the packed-FP16 ALU rate (2 x shader_fp32_flops, which is the FP32 figure of RDNA 3 and
#: later) llama.cpp's HIP tile flash-attention kernel (fattn-tile.cuh, half2 arithmetic on the
#: ALUs) realises in prefill at depth. Prior from the Radeon 8060S (gfx1151, 29.7 TFLOPS) in PR
#: 26419's comment of 2026-08-29 (https://github.com/ggml-org/llama.cpp/pull/26419, master
#: c841aeeb8, Qwen3.6-35B-A3B UD-Q4_K_XL, head dim 256 on the tile kernel, f16 cache, -ub 2048):
#: llama-bench pp512 1057.15 tok/s at depth 0, 747.84 / 576.22 / 390.27 at 16k / 32k / 64k, i.e.
#: 0.83 s more for 512 x 65,536 more query-key pairs of its 10 attention layers (16 heads x 4 x 256
#: FLOPs a pair): 6.64 TFLOPS, 0.224 of 29.7 (0.231 / 0.229 at 16k / 32k). The same comment thread
#: has the R9700 (b10154, tile, q8_0 cache, two cards in a layer split) at 0.27 of its 47.85: Qwen3.5-
#: 122B-A10B pp512 1074.4 -> 344.9 tok/s from depth 0 to 64k. Not fitted (one kernel, one number
#: for every RDNA GPU); it replaces the eta_pp / attn_cost_fa share of the matrix rate (0.3 / 2.0 of
#: twice the FP32 figure on RDNA4 before b7654: 0.3 of FP32) for these layers.
ROCM_TILE_FA_SHARE = 0.224
#: The same on llama.cpp's SYCL backend: its flash attention (ggml-sycl/fattn.cpp, since PR 20190 of
#: March 2026) runs the vec and generic tile kernels on the Xe vector engines until PR 25222 ("The
#: current SYCL flash attention ... uses shader unit (XVE engine)"; oneDNN's fused SDPA on the XMX
#: engines, measured on the Arc Pro B70 at 4.26x the prefill at 80k tokens,
#: https://github.com/ggml-org/llama.cpp/pull/25222), whose base was b9856: the first build that can
#: hold it is 9857 (approximate; the calibration's SYCL rows are b9039).
SYCL_MATRIX_FA_BUILD = 9857
MATRIX_FA_BUILD = {"sycl": SYCL_MATRIX_FA_BUILD}


def attention_slowdown(system: System, matmul_rate: float) -> float:
    """How many times slower prefill attention runs than the matrix rate: >1 only on SYCL with a
    stated llama.cpp build older than SYCL_MATRIX_FA_BUILD, on a GPU whose matrix units outrun its
    packed FP16 ALUs (Xe2's XMX: 8x FP32, so 4x). ROCm's tile kernel has a rate of its own
    (rocm_tile_attention)."""
    build = system.options.llama_cpp_build
    fp32 = system.device.fp32_tflops
    first = MATRIX_FA_BUILD.get(system.backend)
    if first is None or build is None or build >= first or not fp32 or not system.flash_attn:
        return 1.0
    return max(1.0, matmul_rate / (2 * fp32 * 1e12))


def rocm_tile_layer(system: System):
    """For llama.cpp's ROCm backend on a Radeon (RDNA) GPU with flash attention: a predicate telling
    which attention layers run HIP's tile kernel on the shader ALUs (the rest run the WMMA kernel at
    the matrix rate), else None. RDNA 3 and later count dual issue in their FP32 figure (twice the
    shader rate, roofline.shader_fp32_flops) and have WMMA; RDNA4's matrix rate is 4x that figure.
    The WMMA kernel needs the build (AMD_MATRIX_FA_BUILD, RDNA3_MATRIX_FA_BUILD; unset = a current
    release), a head of at most AMD_MMA_FA_MAX_HEAD_DIM and grouped queries (gqa_ratio >= 2)."""
    device = system.device
    if system.backend != "rocm" or not system.flash_attn or device.family == "Instinct" or not device.fp32_tflops:
        return None
    if not amd_dual_issue(device):
        first = None  # RDNA2 and older: no WMMA, every layer on the tile kernel
    elif device.fp16_tflops >= 3 * device.fp32_tflops:
        first = AMD_MATRIX_FA_BUILD
    else:
        first = RDNA3_MATRIX_FA_BUILD
    build = system.options.llama_cpp_build
    wmma = first is not None and (build is None or build >= first)

    def tile(layer) -> bool:
        return not (wmma and layer.kind in ("full", "sliding") and 0 < head_dim(layer) <= AMD_MMA_FA_MAX_HEAD_DIM
                    and gqa_ratio(layer) >= 2)

    return tile


def rocm_tile_rate(system: System) -> float:
    """FLOP/s of HIP's tile flash-attention kernel on one device (ROCM_TILE_FA_SHARE)."""
    return ROCM_TILE_FA_SHARE * 2 * shader_fp32_flops(system.device)


#: Backends whose decode attention without flash attention streams the cache once per query
#: head: ggml-cuda (CUDA, and ROCm through HIP). Not applied elsewhere: CPU backends decode within
#: 2% with and without flash attention up to 8k context (ik_llama.cpp PR 273, Threadripper PRO
#: 5975WX rows in the calibration set), and Metal's flash-attention-off rows (five Apple devices)
#: were predicted worse with it (leave-one-device-out decode p90 0.59 -> 0.76): Apple's system
#: level cache may serve the repeated reads.
UNFUSED_ATTENTION_BACKENDS = ("cuda", "rocm")


def unfused_attention_factor(system: System, context: float) -> float:
    """Bytes the device's decode attention moves per byte of KV cache: 1 with flash attention;
    without it ggml-cuda's kernels stream a GQA model's cache once per query head and pass the
    scores through memory (kvcache.unfused_kv_read_factor)."""
    if system.flash_attn or system.backend not in UNFUSED_ATTENTION_BACKENDS:
        return 1.0
    return unfused_kv_read_factor(system.arch, context, system.kv_bytes_per_element)

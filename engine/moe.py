"""Mixture-of-experts prompt processing: the routed experts' roofline and routing traffic (GPUs; CPUs
without tile padding, prefill.py).

llama.cpp runs a MoE layer's routed experts as one ``mul_mat_id`` per projection: it sorts the
micro-batch's (token, expert) slots by expert, gathers and quantises each slot's activations,
multiplies every touched expert's weights with the columns routed to it, and sums the chosen
experts' outputs weighted by the router (ggml/src/ggml-cuda/mmq.cu, ``ggml_cuda_mul_mat_q`` with
``ids``: ``ggml_cuda_launch_mm_ids_helper``, ``quantize_scatter_mmq_q8_1_cuda``;
https://github.com/ggml-org/llama.cpp/blob/master/ggml/src/ggml-cuda/mmq.cu). Two consequences
for the physics (prefill.py):

* An expert multiplies only tokens x top-k / experts columns per micro-batch (32 for Qwen3-30B-A3B
  at -ub 512), so its matmul reads its weights for a few columns: bandwidth-bound on any GPU whose
  FLOP/byte ratio exceeds that, while the attention and dense layers of the same micro-batch are
  compute-bound. The kernels run one after the other, so the experts' time adds to the rest:
  ``max(expert FLOPs / rate, expert bytes / bandwidth)`` on top of the dense part's own roofline.
* The tile width of those matmuls is chosen for the whole micro-batch, not per expert:
  ``mul_mat_q_case`` picks the column tile ``mmq_x`` (8..128 in steps of 8) that covers
  ``ncols_max``, and for ``mul_mat_id`` that is the micro-batch's token count, so in prefill every
  touched expert computes whole 128-column tiles (``get_mmq_x_max_host``: 128 on Turing and later
  tensor cores, AMD WMMA and MFMA; 64 with dp4a) however few tokens it got (mmq.cuh,
  https://github.com/ggml-org/llama.cpp/blob/master/ggml/src/ggml-cuda/mmq.cuh). An expert with 16
  tokens in a 128-wide tile does 8x the useful multiply-adds: models with many small experts
  (Qwen3.5/3.6-35B-A3B: 256 experts, top-8) waste most, few big experts (gpt-oss: 32, top-4)
  little. The padded FLOPs are :func:`padded_columns`.
* Every slot's activations go through memory several times: quantised to q8_1 for the gate and
  up projections (1.125 bytes per value, ``block_q8_1_mmq``), their F32 outputs written and read
  by the gated activation, its output quantised for the down projection, the down projection's
  F32 output written and read again by the weighted sum. Per slot that is about
  ``SLOT_BYTES_PER_HIDDEN`` x hidden + ``SLOT_BYTES_PER_FFN`` x the expert's intermediate size,
  a cost that grows with tokens x active experts and runs at the device's bandwidth (so a fast
  card pays it faster), where a fixed cost per MoE layer would not.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

from .arch import Architecture
from .quant import QuantFormat, tensor_types
from .weights import WeightProfile

if TYPE_CHECKING:
    from .system import System

#: Bytes per (token, expert) slot per unit of hidden size: the q8_1 copy of the input (1.125),
#: the down projection's F32 output written (4) and read by the weighted sum (4).
SLOT_BYTES_PER_HIDDEN = 1.125 + 4 + 4
#: ... and per unit of the expert's intermediate size: gate and up F32 outputs written (2 x 4)
#: and read by the activation (2 x 4), its output written (4), read (4) and quantised (1.125).
SLOT_BYTES_PER_FFN = 8 + 8 + 4 + 4 + 1.125


#: Column tile of llama.cpp's quantised matmul kernels on matrix cores (CUDA tensor cores from
#: Turing, AMD WMMA and MFMA): ``get_mmq_x_max_host`` in mmq.cuh.
MMQ_TILE_COLUMNS = 128
#: NVIDIA compute capability from which MMQ runs on int8 tensor cores (``turing_mma_available``);
#: older cards use dp4a and at most 64-column tiles.
TURING = 7.5
#: Tile granularity of ``mul_mat_q_case``'s search (mmq_x += 8).
MMQ_TILE_STEP = 8


#: Column tiles of llama.cpp's Vulkan ``mul_mat_id`` (the routed experts' matmul, every weight
#: type: the scalar, integer-dot and KHR_coopmat shaders alike, mul_mm.comp / mul_mmq.comp). One
#: dispatch covers every expert (grid z = expert) and a workgroup multiplies a BM x BN tile of its
#: expert's output: the rows routed to the expert are gathered into ``row_ids[BN]`` and the tile's
#: whole BN columns go through the FMA / coopMatMulAdd loop however few of them hold a token (loads
#: past ``_ne1`` are zero-filled, not skipped). So, as for CUDA's MMQ (``padded_columns``), an expert
#: that got 16 tokens computes a whole BN-wide tile. The tile comes from
#: ``ggml_vk_guess_matmul_id_pipeline``: the large one (BN 128) when N (the micro-batch's tokens)
#: exceeds 64 and ``mul_mat_id_l`` is set, else the medium one (BN 64; ``m_wg_denoms`` {64, 64}).
#: ``ggml_vk_load_shaders`` clears ``mul_mat_id_l`` on every AMD GPU (``case VK_VENDOR_ID_AMD:
#: ... mul_mat_id_l[i] = false``, RADV and AMDVLK, with or without coopmat), and on Intel unless the
#: GPU is Xe2 with KHR_coopmat (``case VK_VENDOR_ID_INTEL: if (!device->coopmat_support ||
#: device->architecture != INTEL_XE2) ... mul_mat_id_l[i] = false``), read in ggml's syncs of
#: llama.cpp of 2025-12-17 (ac0c8be4, the R9700 rows' b7423) and 2026-05-01 (19eac6f0, the Arc Pro
#: B70's b9039 and the Strix Halo's b9187-9193), https://github.com/ggml-org/ggml. llama.cpp PR
#: 25483 (opened 2026-07-09, after every calibration row's build,
#: https://github.com/ggml-org/llama.cpp/pull/25483: "each workgroup's real row count ... is
#: frequently less than the full BN/WN tile once expert routing is accounted for") later skips the
#: unneeded warps on the coopmat1 path; not modelled. NVIDIA's coopmat2 shader has its own
#: BN/2 and BN/4 paths (PR 15546, https://github.com/ggml-org/llama.cpp/pull/15546): no tile here.
VULKAN_ID_TILE_MEDIUM = 64
VULKAN_ID_TILE_LARGE = 128
#: Intel's Xe2 GPUs (Battlemage: Arc B-series and Arc Pro B-series, launched from December 2024)
#: are the catalog's discrete Intel GPUs of 2024 and later (the Arc A-series, Xe-HPG, launched in
#: 2022-2023); llama.cpp enables KHR_coopmat on Intel only for Xe2 (``ggml_vk_khr_cooperative_matrix_support``).
INTEL_XE2_FIRST_YEAR = 2024


def vulkan_expert_tile(system: System) -> int:
    """Column tile of llama.cpp's Vulkan ``mul_mat_id`` on this GPU (:data:`VULKAN_ID_TILE_MEDIUM`
    or ``_LARGE``), 0 where no tile padding is modelled (not mainline llama.cpp on Vulkan, NVIDIA's
    coopmat2 path, other vendors)."""
    if system.backend not in ("vulkan", "vulkan-amdvlk") or not system.arch.is_moe:
        return 0
    if not system.engine.runs_mainline_ggml(with_legacy=True):
        return 0
    device = system.device
    if device.vendor == "amd":
        return VULKAN_ID_TILE_MEDIUM
    if device.vendor == "intel":
        xe2 = device.kind == "gpu" and (device.launch_year or 0) >= INTEL_XE2_FIRST_YEAR
        return VULKAN_ID_TILE_LARGE if xe2 else VULKAN_ID_TILE_MEDIUM
    return 0


#: NVIDIA compute capability from which llama.cpp's MMQ kernels run "stream-k": ``launch_mul_mat_q``
#: (mmq.cuh, ``use_stream_k = cc >= CC_VOLTA``) launches one CUDA block per SM (``block_nums_mmq(nsm,
#: 1, 1)``), and each block's K loop loads a weight tile into shared memory, waits (``__syncthreads``),
#: multiplies it, waits again (``mul_mat_q_process_tile``; ik_llama.cpp at dcdfad29 and mainline
#: alike). With one block per SM and no asynchronous copies nothing overlaps a tile's load with the
#: multiply of another, so a matmul takes its weights' load time plus its MMA time. That matters
#: where the weights are read for few columns: the routed experts in prefill (moe.py's roofline max
#: would hide the load under the multiply); a dense layer's ~512 columns make the load a few percent.
STREAM_K_CC = 7.0


#: Native MXFP4 on Blackwell's FP4 tensor cores: llama.cpp PR 17906 ("CUDA: experimental native
#: mxfp4 support for blackwell", merged 2025-12-24, https://github.com/ggml-org/llama.cpp/pull/17906;
#: ggml sync f1f97081 of 2025-12-31). Where ``blackwell_mma_available`` (the compiled arch at least
#: ``GGML_CUDA_CC_BLACKWELL`` 1200 and below ``GGML_CUDA_CC_RUBIN`` 1300, common.cuh: sm_120 RTX 50 and
#: RTX PRO Blackwell, the DGX Spark's sm_121; not sm_100 B200 or sm_110 Thor), ``ggml_cuda_mul_mat_q``
#: quantises the activations to MXFP4 (``quantize_mmq_mxfp4_cuda``) and MMQ multiplies MXFP4 weights with
#: the block-scaled ``m16n8k64`` FP4 MMA (``vec_dot_mxfp4_mxfp4_mma``, ``MMQ_ITER_K_MXFP4_FP4`` 512)
#: instead of converting them to int8 (mmq.cu / mmq.cuh at f1f97081). Only MXFP4 tensors take it: a
#: gpt-oss file's routed experts (quants.toml, MXFP4 notes). Earlier builds, other cards and every
#: other type keep the int8 path.
NATIVE_MXFP4_CC = (12.0, 13.0)
#: First build with it: ~b7510, approximate (b7347 on 2025-12-10 and b7423 on 2025-12-17, node-llama-cpp
#: and the R9700 rows' ggml sync ac0c8be4: ~11 builds a day to the 2025-12-24 merge). The DGX Spark's
#: rows at b6989 predate it, those at b7941 have it.
NATIVE_MXFP4_BUILD = 7510
#: How much faster the MXFP4 experts' matmuls run on that path: the PR's own llama-bench table,
#: gpt-oss 20B MXFP4 pp512 10,560.64 -> 13,304.80 t/s (1.26x; pp1024-pp8192 1.27x) on a Blackwell
#: card. That is the whole prompt's speed-up, of which the MXFP4 expert matmuls are only a part
#: (attention and the Q8_0 tensors are unchanged), so as the kernels' own speed-up it is a lower
#: bound; the FP4 MMA itself "advertises 2x throughput compared to int8 tensor cores" (the PR).
NATIVE_MXFP4_SPEEDUP = 13304.80 / 10560.64


#: Lowest NVIDIA compute capability whose cards run llama.cpp's quantised matmuls in MMQ kernels
#: (``ggml_cuda_should_use_mmq``: the dp4a instruction, ``GGML_CUDA_CC_DP4A`` = 610); below it
#: (P100, 6.0) quantised weights are dequantised for cuBLAS and MoE takes the generic path.
MMQ_MIN_CC = 6.1

#: Host time to issue one short GPU kernel, s: NVIDIA measured 3.8 us per kernel for short kernels
#: launched back to back on one stream without a graph ("Getting Started with CUDA Graphs",
#: https://developer.nvidia.com/blog/cuda-graphs/). A prior, not fitted.
KERNEL_LAUNCH_S = 3.8e-6
#: Host time to scan one (expert, token, slot) entry of the router's choices when the host builds
#: the expert-to-rows mapping (a compare and a branch over an int32 array: ~1 ns on a desktop core).
HOST_SCAN_S = 1e-9
#: Kernel launches per touched expert and MoE layer where the host loops over the experts, and the
#: scans of the router's choices per MoE layer, counted in the sources:
#: - ik_llama.cpp (ggml/src/ggml-cuda.cu at dcdfad29, ``ggml_cuda_up_gate_unary`` then
#:   ``ggml_cuda_mul_mat_id``): per expert a memset, a gather of its rows, two matmuls (quantise +
#:   MMQ each), the fused activation and a scatter, then for the down projection a memset, a gather,
#:   a matmul (2) and a scatter: 13; each of the 2 calls scans all experts x tokens x slots.
#: - llama.cpp's generic ``mul_mat_id`` (16-bit weights, cards without MMQ): rows sorted once per
#:   call, then per expert one ``ggml_cuda_mul_mat`` (activation conversion + GEMM + output
#:   conversion: 3) for each of gate, up and down: 9; 3 scans.
#: The third number counts the launches per touched expert that are small kernels on the card's
#: stream rather than the experts' matmuls: ik_llama.cpp's 13 less its 3 MMQ matmuls (the memsets,
#: gathers, activation quantisations, fused activation and scatters: 10); none for the generic path,
#: which gathers every expert's rows in one ``get_rows`` kernel after its host sort and scatters them
#: in one more (ggml-cuda.cu ``ggml_cuda_mul_mat_id``: ``ids_to_sorted_host``), so its per-expert
#: calls are the GEMMs themselves.
#: - llama.cpp's SYCL ``ggml_sycl_mul_mat_id`` for more than one token (every build to date; ggml
#:   sync bec0c849 of 2026-05-01, the calibration rows' b9039, and still at 2026-08's): one
#:   ``stream->wait()`` for the router's choices per call, then per touched expert a memset of a
#:   row counter, a gather kernel, ``ggml_sycl_mul_mat`` (no MMQ on SYCL, ``ggml_sycl_supports_mmq``
#:   returns false: src0 dequantised to FP16, src1 converted to FP16, a oneDNN GEMM: 3) and a
#:   scatter kernel: 6 per call, 18 for gate, up and down; the small kernels are all but the GEMM
#:   and the weights' dequantisation (memset, gather, src1 conversion, scatter: 4 per call, 12).
#:   Before llama.cpp PR 23142 (ggml sync 2026-05-22) the host scans every (token, slot) of the
#:   router's choices once per expert (3 scans of all experts x tokens x slots per layer); since, a
#:   counting sort scans them once per call, which this count overstates (0.05-0.15 s per 512-token
#:   micro-batch at HOST_SCAN_S for the calibration's MoE models, below the launches' 0.3-0.8 s).
#:   https://github.com/ggml-org/ggml/blob/bec0c849/src/ggml-sycl/ggml-sycl.cpp
HOST_LOOP = {"ik": (13, 2, 10), "generic": (9, 3, 0), "sycl": (18, 3, 12)}


#: llama.cpp's ``ggml_cuda_mul_mat_id`` sends a 16-bit (F16/BF16) expert matmul of a prompt to its
#: device-side ``mmf`` kernel, which reads the router's choices on the card, only when the expert
#: matrix is small enough for the micro-batch (mmf.cu ``ggml_cuda_should_use_mmf`` with
#: ``mul_mat_id``: false if ``src0_ne[1] <= 1024 && src1_ncols > 512`` or ``src0_ne[1] > 1024 &&
#: src1_ncols > 128``; PR 16512 "add fp kernel for larger batch size MoE",
#: https://github.com/ggml-org/llama.cpp/pull/16512; the same rule at the R9700 rows' b7423 and the
#: Strix Halo rows' b9187, ggml syncs ac0c8be4 and 1b6112bf). ``src0_ne[1]`` is the projection's
#: output rows (the expert's intermediate size for gate and up, the hidden size for down),
#: ``src1_ncols`` the micro-batch's tokens. Every other projection takes the generic path: the
#: host copies the router's choices, synchronises, and runs each touched expert as its own BLAS
#: GEMM (HOST_LOOP "generic"). So at -ub 512 Qwen3-Coder-30B-A3B (768 rows) runs gate and up in
#: mmf and its down projection (2048 rows) on the host, GLM-4.7-Flash (1536) all three on the host.
MMF_MOE_SMALL_ROWS = 1024
MMF_MOE_MAX_TOKENS_SMALL = 512
MMF_MOE_MAX_TOKENS_LARGE = 128
#: First llama.cpp build whose mmf takes a prompt's 16-bit expert matmuls, by backend: CUDA from
#: PR 16512 (merged 2025-10-14; ~b6760, approximate), needing tensor cores of the type (BF16:
#: Ampere, cc 8.0; F16: Volta, 7.0; mmf.cu's switch on the type); AMD GPUs with matrix units from
#: PR 17879 (RDNA3, merged 2025-12-12, https://github.com/ggml-org/llama.cpp/pull/17879; RDNA4's PR
#: 17437 came two weeks before, CDNA's 18896 in January 2026; ~b7360, approximate: the R9700 rows'
#: b7423 is the ggml sync of 2025-12-17). Older builds loop every projection on the host.
MMF_MOE_BUILD = {"cuda": 6760, "rocm": 7360}
MMF_MOE_MIN_CC = {"bf16": 8.0, "f16": 7.0}
#: Stream time of one expert GEMM of the generic host loop on ROCm beyond reading its weights, s:
#: ggml_cuda_mul_mat per touched expert (op_mul_mat's set-up, hipblasGemmEx, the BF16/F16 output's
#: conversion to F32). PR 16835's RDNA4 timings of that path before mmf existed there
#: (https://github.com/ggml-org/llama.cpp/pull/16835, RX 9070 XT, ROCm 7.1: MUL_MAT_ID f16 128
#: experts, top-8, 768 x 2048, 1376.16 us at 4 tokens, 4024.50 us at 32) give 32.0 us per touched
#: expert (128 x (1 - (120/128)^n) touched: 29.1 and 111.8); less that GEMM's own weight read (3.1 MB
#: at 640 GB/s: 4.9 us), 27 us that the card spends on each call whatever its size: the small GEMM
#: and conversion kernels cannot fill the GPU, and the next call's work arrives only after the host
#: has set it up. It adds to the weights' streaming (prefill.prefill_time_from). On CUDA the loop
#: keeps HOST_LOOP's kernel-launch count (no CUDA row to measure it against).
HIP_LOOP_GEMM_S = 32.0e-6 - 4.9e-6


def amd_matrix_units(device) -> bool:
    """An AMD GPU with matrix instructions (RDNA3 and later WMMA, CDNA's MFMA): 512 or more FP16
    FLOP per compute unit and clock (RDNA2's packed FP16 gives 256)."""
    if device.vendor != "amd" or device.kind == "cpu" or not (device.fp16_tflops and device.gpu_cores and device.gpu_clock_mhz):
        return False
    return device.fp16_tflops * 1e12 / (device.gpu_cores * device.gpu_clock_mhz * 1e6) >= 511


def mmf_moe_available(system: System) -> bool:
    """Whether the build and card run a prompt's 16-bit expert matmuls in llama.cpp's mmf kernel
    (MMF_MOE_BUILD, MMF_MOE_MIN_CC, amd_matrix_units)."""
    weight = system.quant.weight_type
    if system.quant.kind != "dense" or weight not in MMF_MOE_MIN_CC:
        return False
    build = system.options.llama_cpp_build
    first = MMF_MOE_BUILD.get(system.backend)
    if first is None or (build is not None and build < first):
        return False
    if system.backend == "cuda":
        cc = system.device.cuda_compute_capability
        return cc is not None and cc >= MMF_MOE_MIN_CC[weight]
    return amd_matrix_units(system.device)


def mmf_moe_takes(rows: int, tokens: int) -> bool:
    """mmf.cu's size rule for one expert projection of ``rows`` output rows at ``tokens`` tokens."""
    return tokens <= (MMF_MOE_MAX_TOKENS_SMALL if rows <= MMF_MOE_SMALL_ROWS else MMF_MOE_MAX_TOKENS_LARGE)


def looped_share(system: System, tokens: int) -> tuple[float, int]:
    """For a 16-bit MoE on mainline llama.cpp's CUDA/ROCm generic path: the share of the routed
    experts' weights whose projections the host loops over at ``tokens`` tokens a micro-batch, and
    how many of each expert's projections that is (gate and up are the expert's intermediate size
    in rows, down the hidden size). (1, 3) where mmf takes none."""
    arch = system.arch
    if not mmf_moe_available(system):
        return 1.0, 3
    intermediate = expert_intermediate(arch, system.profile)
    looped = [rows for rows in (intermediate, intermediate, arch.hidden_size) if not mmf_moe_takes(rows, tokens)]
    return len(looped) / 3, len(looped)


def generic_loop(system: System, loop: str | None, tokens: int) -> tuple[tuple[float, int], float]:
    """expert_work's ``loop`` and ``loop_gemm_s`` for a prompt's micro-batch of ``tokens``: the
    generic loop takes only the projections mmf does not (:func:`looped_share`), and on ROCm each
    looped expert GEMM costs HIP_LOOP_GEMM_S of stream time."""
    if loop != "generic":
        return (1.0, 3), 0.0
    return looped_share(system, tokens), HIP_LOOP_GEMM_S if system.backend == "rocm" else 0.0


def host_routed(system: System) -> str | None:
    """Which host loop (a :data:`HOST_LOOP` key) runs a GPU prompt's routed experts, or None where
    the routing stays on the device. The host loop copies the router's choices to the host and
    synchronises the stream at every MoE layer (``ggml_cuda_mul_mat_id``: ``cudaMemcpyAsync(ids_host
    ...); cudaStreamSynchronize(stream)``), then launches each touched expert's matmuls one by one.
    ik_llama.cpp does so for every prompt on CUDA (also at 8337e4c, its newest snapshot); llama.cpp
    did before mid-2024, and still does wherever the experts do not run in the MMQ kernels, whose
    MoE helper moved to device code in PR 15525 ("This eliminates the need for synchronization",
    https://github.com/ggml-org/llama.cpp/pull/15525): 16-bit weights whose projections do not all
    fit its mmf kernel at the set-up's micro-batch (:func:`looped_share`), cards below compute
    capability 6.1. llama.cpp's SYCL backend routes on the host for every type (HOST_LOOP "sycl")."""
    if not system.arch.is_moe or system.backend not in ("cuda", "rocm", "sycl"):
        return None
    lineage = system.engine.lineage()
    if system.backend == "sycl":
        return "sycl" if system.engine.runs_mainline_ggml(with_legacy=True) else None
    if "ik-llama-cpp" in lineage:
        return "ik"
    if "llama-cpp" not in lineage:
        return None
    if "llama-cpp-legacy" in lineage:
        return "generic"
    cc = system.device.cuda_compute_capability
    if system.quant.kind != "gguf" or (system.backend == "cuda" and cc is not None and cc < MMQ_MIN_CC):
        # A 16-bit file whose projections all fit mmf at the set-up's micro-batch stays on the card.
        return "generic" if looped_share(system, system.ubatch)[1] else None
    return None


def native_mxfp4_share(system: System) -> float:
    """Share of the routed experts' weights that mainline llama.cpp multiplies on Blackwell's FP4
    tensor cores at the set-up's build (:data:`NATIVE_MXFP4_CC`, :data:`NATIVE_MXFP4_BUILD`): the
    MXFP4 expert tensors on CUDA cards of compute capability 12.x; 0 elsewhere."""
    cc = system.device.cuda_compute_capability
    if system.backend != "cuda" or cc is None or not NATIVE_MXFP4_CC[0] <= cc < NATIVE_MXFP4_CC[1]:
        return 0.0
    if system.quant.kind != "gguf" or not system.arch.is_moe:
        return 0.0
    if not system.engine.runs_mainline_ggml(with_legacy=False):
        return 0.0
    build = system.options.llama_cpp_build
    if build is not None and build < NATIVE_MXFP4_BUILD:
        return 0.0
    return _mxfp4_expert_share(system.arch, system.quant)


def routed_expert_weights(arch: Architecture, quant: QuantFormat) -> list[tuple[int, str]]:
    """(weights, ggml type) of each routed-expert tensor the model runs (MTP layers left out)."""
    return [(tensor.params, type_name) for tensor, type_name in zip(arch.tensors, tensor_types(arch, quant))
            if tensor.is_routed_expert and not tensor.mtp]


@lru_cache(maxsize=256)
def _mxfp4_expert_share(arch: Architecture, quant: QuantFormat) -> float:
    pairs = routed_expert_weights(arch, quant)
    total = sum(params for params, _ in pairs)
    return sum(params for params, type_name in pairs if type_name == "mxfp4") / total if total else 0.0


def column_tile(tokens: int, tile_max: int) -> int:
    """The column tile MMQ picks for a matmul of ``tokens`` columns: the count rounded up to the
    tile step, at most ``tile_max`` (mmq.cuh ``mul_mat_q_case``)."""
    return min(tile_max, math.ceil(tokens / MMQ_TILE_STEP) * MMQ_TILE_STEP)


@lru_cache(maxsize=512)
def padded_columns(tokens: int, share: float, tile_max: int) -> float:
    """Expected columns one expert computes in a micro-batch of ``tokens`` tokens when each token
    picks it with probability ``share``: whole tiles of the width the kernel picks for the
    micro-batch (the token count rounded up to the tile step, at most ``tile_max``). The tokens an
    expert gets are binomial; the expectation of ceil(X / tile) x tile is summed over its
    distribution."""
    if tokens <= 0 or share <= 0:
        return 0.0
    tile = column_tile(tokens, tile_max)
    if share >= 1:
        return math.ceil(tokens / tile) * tile
    expected = 0.0
    probability = (1 - share) ** tokens  # P(X = 0)
    ratio = share / (1 - share)
    for count in range(1, tokens + 1):
        probability *= ratio * (tokens - count + 1) / count
        expected += probability * math.ceil(count / tile)
        if count > tokens * share and probability < 1e-12:
            break
    return expected * tile


@dataclass(frozen=True)
class ExpertWork:
    """The routed experts' share of a prefill, over all micro-batches."""

    flops: float = 0.0  # useful matmul FLOPs of the routed experts (part of the prefill's dense FLOPs)
    padded_flops: float = 0.0  # what the kernels compute: whole column tiles per touched expert
    weight_bytes: float = 0.0  # their weights read, once per micro-batch per touched expert
    dispatch_bytes: float = 0.0  # activations moved per (token, expert) slot
    #: Host time of the per-expert loop where the host routes (host_routed), at the priors: kernel
    #: launches plus scans of the router's choices.
    host_loop_s: float = 0.0
    #: Stream time of the loop's small kernels (:data:`HOST_LOOP`, third number), which adds to the
    #: matmuls' work where the host's launches and scans overlap it.
    stream_s: float = 0.0
    #: Share of the experts' matmul work in the host loop (the rest runs in mmf kernels on the card
    #: before the loop's synchronisation, so its time adds to the loop's rather than overlapping it).
    loop_share: float = 1.0
    #: The experts' matrix-multiply time relative to the int8 MMQ path: below 1 where a share of
    #: them runs on Blackwell's FP4 tensor cores (:func:`native_mxfp4_share`, NATIVE_MXFP4_SPEEDUP).
    mma_time_factor: float = 1.0


def expert_intermediate(arch: Architecture, profile: WeightProfile) -> float:
    """Intermediate size of one routed expert (its gate, up and down matrices are
    hidden x intermediate each)."""
    per_expert = profile.expert_params / max(profile.expert_layers * arch.n_experts, 1)
    return per_expert / (3 * arch.hidden_size)


def expert_work(
    arch: Architecture, profile: WeightProfile, tokens: int, micro_batches: int, touched_bytes: float, tile: int = 0,
    touched_fraction: float = 0.0, host_loop: str | None = None, loop: tuple[float, int] = (1.0, 3),
    loop_gemm_s: float = 0.0, fp4_share: float = 0.0,
) -> ExpertWork:
    """Routed-expert work of prefilling ``tokens`` tokens in ``micro_batches`` micro-batches, where
    each micro-batch reads ``touched_bytes`` of expert weights, ``touched_fraction`` of the experts
    (weights.distinct_expert_fraction); ``tile`` is the kernels' widest column tile (0: no tile
    padding modelled); ``host_loop``: the :data:`HOST_LOOP` the experts run in, if any; ``fp4_share``:
    the share of their weights on the native FP4 path (:func:`native_mxfp4_share`)."""
    if not arch.is_moe or not profile.expert_layers:
        return ExpertWork()
    share = arch.experts_per_token / arch.n_experts
    flops = 2 * profile.expert_params * share * tokens
    padded = flops
    if tile:
        per_batch = math.ceil(tokens / micro_batches)
        padded = max(flops, 2 * profile.expert_params * padded_columns(per_batch, share, tile) * micro_batches)
    slots = tokens * arch.experts_per_token * profile.expert_layers
    per_slot = SLOT_BYTES_PER_HIDDEN * arch.hidden_size + SLOT_BYTES_PER_FFN * expert_intermediate(arch, profile)
    host_loop_s = stream_s = 0.0
    share = 1.0
    if host_loop:
        # The loop's kernels run one after another on the card's one stream, and a short kernel
        # launched back to back occupies it for about KERNEL_LAUNCH_S (NVIDIA's measurement: 2.9 us
        # of execution per 3.8 us launch), so its small kernels are stream time that adds to the
        # matmuls' work rather than hides under it; the host's launches and scans overlap the card.
        launches, scans, small = HOST_LOOP[host_loop]
        share, projections = loop  # (1, 3) but on the generic loop (generic_loop)
        # The generic loop's counts are per expert for all three projections; mmf takes the rest.
        launches, scans = launches * projections / 3, scans * projections / 3
        per_batch = math.ceil(tokens / micro_batches)
        touched = micro_batches * profile.expert_layers * arch.n_experts * touched_fraction
        stream_s = touched * (projections * loop_gemm_s if loop_gemm_s else small * KERNEL_LAUNCH_S)
        host_loop_s = touched * launches * KERNEL_LAUNCH_S + (
            micro_batches * profile.expert_layers * scans * arch.n_experts * per_batch * arch.experts_per_token * HOST_SCAN_S)
    return ExpertWork(
        flops=flops,
        padded_flops=padded,
        weight_bytes=micro_batches * touched_bytes,
        dispatch_bytes=slots * per_slot,
        host_loop_s=host_loop_s,
        stream_s=stream_s,
        loop_share=share if host_loop else 1.0,
        mma_time_factor=1 - fp4_share + fp4_share / NATIVE_MXFP4_SPEEDUP,
    )

"""Prefill (prompt processing) and time to first token.

The prompt is processed in micro-batches of ``ubatch`` tokens (llama.cpp ``-ub``, 512 by
default). Each micro-batch is a set of matrix multiplications over all active weights (compute
bound on big batches) and reads every weight it touches once (the memory bound small prompts hit):

    t = max(compute, memory) + experts + dispatch + micro-batches * t_ubatch
    compute = (2 * params per token * tokens + attn_cost * attention FLOPs) / (matmul FLOPS * eta_pp)
    memory  = micro-batches * (weights touched + KV cache) / (BW * eta_bw)

On GPUs the routed experts of a mixture-of-experts model are a roofline of their own (moe.py):
each expert multiplies only the few tokens routed to it, so its matmul reads the expert's weights
for a handful of columns and is bandwidth-bound where the attention and dense layers are
compute-bound; the two kinds of kernels run one after the other, so their times add. Routing
moves every (token, expert) slot's activations through memory (gather, quantise, scatter, weighted
sum): bytes that grow with tokens x active experts, at the device's bandwidth. On CPUs the
experts are the same roofline without tile padding, and each expert FLOP costs
``expert_pp_cost`` times a dense one (:func:`prefill_time_from`). Attention FLOPs grow with tokens x
(depth + tokens/2) per layer (causal); without flash attention
they cost more (the score matrix goes through memory). Offloaded weights are copied to the GPU
for every micro-batch over PCIe (llama.cpp offloads big batches' matmuls to the GPU), so PCIe,
not the CPU, bounds prefill under offload. TTFT = prefill of the uncached part of the prompt + one
decode step.

As in decode.py, :func:`prefill_features` (set-up only) and :func:`prefill_time_from` (with an
engine's parameters) are separate so the calibration can evaluate the second part cheaply.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

from .kvcache import attention_flops, kv_read_elements
from .fa_kernels import attention_slowdown, rocm_tile_layer, rocm_tile_rate
from .metal_eras import metal_build_share
from .amdvlk import dense_matmul_share
from .mmq_tiles import expert_tile_load_s
from .moe import (
    MMQ_TILE_COLUMNS, STREAM_K_CC, TURING, ExpertWork, expert_work, generic_loop, host_routed, native_mxfp4_share, vulkan_expert_tile,
)
from .offload import PCIE_EFFICIENCY, op_offload
from .parallel import pcie_link, pipeline_overlap, split_sync_parts
from .params import BackendParams
from .arch import Architecture
from .blas import blas_share
from .cublas_prefill import dequant_time, legacy_cublas_pass
from .engines import Engine
from .quant import QuantFormat
from .roofline import (
    bandwidth_bytes_s,
    core_share,
    cpu_attention_kernel,
    cpu_kernel,
    matmul_flops,
    realised_bandwidth,
    shader_fp32_flops,
    soc_memory,
    thread_limited_flops,
    vector_flops,
)
from .system import System
from .weights import distinct_expert_fraction, multiplied_quantised_weights

@dataclass(frozen=True)
class PrefillFeatures:
    dense_flops: float
    attention_flops: float
    matmul_rate: float  # FLOP/s at peak, summed over cards working in parallel
    micro_batches: int
    memory_bytes: float  # weights touched + KV read, over all micro-batches
    bandwidth: float  # bytes/s at peak
    transfer_s: float  # PCIe copies of offloaded weights
    sync_latency_s: float  # split synchronisation at the priors: latency part ...
    sync_data_s: float  # ... and data part (engines scale them by sync_factor, sync_data_factor)
    flash_attn: bool
    quantized: bool  # weights need dequantising on the way into the matmuls
    moe_layers: int  # layers with routed experts (each pays a routing step per micro-batch)
    unified_memory: bool = False  # see decode.StepFeatures
    #: CPU backends: weights each token multiplies, by kernel path (per-token vec_dot or tiled
    #: GEMM on repacked rows) and by whether they are lattice-codebook coded; their unpacking
    #: runs on the vector units at ``vector_rate`` FLOP/s (0 = not a CPU backend).
    cpu_untiled_weights: float = 0.0
    cpu_untiled_codebook_weights: float = 0.0
    cpu_tiled_weights: float = 0.0
    cpu_tiled_codebook_weights: float = 0.0
    tokens: int = 0
    vector_rate: float = 0.0
    #: The routed experts' part of the work, a roofline of its own (moe.py).
    experts: ExpertWork = ExpertWork()
    #: Share of the kernel's earlier rate the dense (non-expert) matmuls keep (amdvlk.py).
    dense_share: float = 1.0
    #: Extra cost per FLOP of the weights' GEMMs where the library runs them off the matrix units
    #: (gemm_slowdown); 1 elsewhere.
    gemm_cost: float = 1.0
    #: Share of a quantised file's dense matmul weights held at 16 bits, which the BLAS library
    #: multiplies at ``gemm_cost`` instead of the quantised kernels (blas.blas_share).
    blas_share: float = 0.0
    #: The experts' MMQ kernels load their weights, then multiply (moe.STREAM_K_CC): the times add.
    experts_serial: bool = False
    #: The prompt is a fresh CUDA process's first large batch (options.cold_start): it pays
    #: ``t_cold_batch_s`` once (params.py).
    cold_batch: bool = False
    #: Attention FLOPs of the layers HIP's tile flash-attention kernel runs (rocm_tile_layer), not in
    #: ``attention_flops``, and that kernel's rate (FLOP/s over the cards working in parallel):
    #: a sourced share of the ALUs, neither eta_pp nor attn_cost_fa.
    tile_attention_flops: float = 0.0
    tile_attention_rate: float = 0.0
    #: Bytes the legacy builds' conversion passes for cuBLAS move over the prompt (cublas_prefill.py).
    dequant_bytes: float = 0.0
    sms_per_latency: float = 0.0
    #: The routed experts' MMQ tile loads (unpacking packed weights to int8 in shared memory) where
    #: ik_llama.cpp runs an MMQ call per expert, at the shader ALUs' rate, s (expert_tile_load_s);
    #: they add to the experts' multiply.
    expert_tile_load_s: float = 0.0


@dataclass(frozen=True)
class PrefillTime:
    compute_s: float
    memory_s: float
    transfer_s: float
    fixed_s: float
    matmul_flops: float
    attention_flops: float
    #: Routed experts' matmuls (their own roofline) and the routing's activation traffic.
    experts_s: float = 0.0
    dispatch_s: float = 0.0
    #: The host's per-expert loop where it routes the experts (moe.host_routed), at the priors;
    #: part of experts_s when it is the longer.
    host_loop_s: float = 0.0
    #: A cold start's one-time kernel loading (options.cold_start), part of fixed_s.
    cold_s: float = 0.0
    micro_batches: int = 0  # of System.ubatch tokens (at most), per prompt of all sequences
    #: Part of compute_s: the attention layers on HIP's tile flash-attention kernel (rocm_tile_layer).
    tile_attention_s: float = 0.0
    #: The legacy builds' dequantisation to 16 bits before cuBLAS, a kernel of its own (cublas_prefill.py).
    dequant_s: float = 0.0

    @property
    def total_s(self) -> float:
        return max(self.compute_s, self.memory_s) + self.experts_s + self.dispatch_s + self.transfer_s + self.fixed_s + self.dequant_s


def pipeline_factor(tokens: int, ubatch: int, nbatch: int, stages: int) -> float:
    """Time of a layer-split prompt relative to one card doing all the work alone.

    llama.cpp pipelines the micro-batches of each logical batch (``-b``, 2048 by default)
    through the cards: a batch of m micro-batches over N stages takes (m + N - 1) stage-times of
    1/N of a micro-batch each. One micro-batch gains nothing; long prompts approach 1/N.
    """
    if stages <= 1:
        return 1.0
    work = pipelined = 0.0
    remaining = tokens
    while remaining > 0:
        batch = min(nbatch, remaining)
        micro = math.ceil(batch / ubatch)
        work += micro
        pipelined += (micro + stages - 1) / stages
        remaining -= batch
    return pipelined / work


#: Activation columns one unpacked block of weights serves in the CPU's tiled kernels:
#: ik_llama.cpp's iqk_mul_mat kernels take up to 8 columns per pass (mul_mat_*_q8_K_T<nrc_y>,
#: nrc_y <= 8), llama.cpp's repacked Q4_0 GEMMs 4 to 8 (ggml-cpu/repack.cpp, block_q8_0x4/x8).
CPU_TILE_COLUMNS = 8


@lru_cache(maxsize=256)
def cpu_unpack_weights(arch: Architecture, quant: QuantFormat, engine: Engine) -> tuple[float, float, float, float]:
    """Quantised weights one token multiplies in prefill, split by the CPU kernel path:
    (per-token vec_dot, of which codebook-coded, tiled GEMM, of which codebook-coded). Routed
    experts count at their top-k share; embedding rows and 1-D tensors are not multiplied."""
    untiled = untiled_cb = tiled = tiled_cb = 0.0
    for type_name, kind, weights in multiplied_quantised_weights(arch, quant):
        if engine.cpu_tiles(type_name):
            tiled += weights
            tiled_cb += weights if kind.codebook else 0.0
        else:
            untiled += weights
            untiled_cb += weights if kind.codebook else 0.0
    return untiled, untiled_cb, tiled, tiled_cb


#: Backends whose prompt processing runs at the shader ALUs' FP32 rate (roofline.shader_fp32_flops),
#: not the matrix units' peak: llama.cpp's Vulkan matmul shaders (mul_mm.comp, with KHR_coopmat
#: or without) stage and convert every tile on the ALUs. Published llama-bench pp512 rates are
#: 0.8-1.4x that FP32 rate with and without matrix cores (2 x params x tokens/s): Radeon Pro VII
#: (GCN, no coopmat) llama 8B Q4_0 661 t/s = 10.6 TFLOPS of 13.1 (PR 13324,
#: https://github.com/ggml-org/llama.cpp/pull/13324); Radeon 780M (RADV, KHR_coopmat) qwen2 7B
#: IQ1_S 248 t/s = 3.8 of 4.1 (PR 11528, https://github.com/ggml-org/llama.cpp/pull/11528);
#: RTX 3090 KHR_coopmat llama 8B Q4_0 3157 t/s = 50.7 of 35.6 (PR 13506,
#: https://github.com/ggml-org/llama.cpp/pull/13506; NV_coopmat2 reaches 1.9x). Against the
#: matrix peak the same runs span 23% (780M) to 36% (RTX 3090, FP16-accumulate tensor peak), and
#: the calibration's three Vulkan devices 15-31%: Arc Pro B70 (XMX 8x its FP32 rate), R9700 (RDNA4 WMMA 8x the
#: single-issue rate), Strix Halo (RDNA 3.5 WMMA 4x). AMD's own AMDVLK driver loads the same
#: shaders (its LLPC compiler, 32 KiB of shared memory where RADV offers 64): the same rate, so that
#: a fold without one AMDVLK device predicts it with RADV's values (tools/borrowing.BASE_BACKEND). On
#: one device, build and file the two stay within 0.2-1.4x: R9700 at b7423, AMDVLK 1.15-1.34x RADV
#: (its logs: AMDVLK "matrix cores: KHR_coopmat", RADV "none", github.com/kyuz0/amd-r9700-ai-toolboxes
#: benchmark/results/*__vulkan_{amdvlk,radv}__fa1__*.log); Strix Halo at b9187-9193 0.23-0.85x (at
#: b6486 both KHR_coopmat and 0.98-1.21x: github.com/kyuz0/amd-strix-halo-toolboxes GLM-4.5-Air logs).
SHADER_RATE_BACKENDS = ("vulkan", "vulkan-amdvlk")


def shader_rate(system: System) -> float:
    """FLOP/s of a matmul on the shader ALUs where the backend runs them there (SHADER_RATE_BACKENDS), else 0."""
    return shader_fp32_flops(system.device) if system.backend in SHADER_RATE_BACKENDS else 0.0

#: Backends whose llama.cpp kernels score a sliding-window layer's whole cache
#: (kvcache.swa_scanned_cells): HIP's flash attention computes "interior KV tiles that are fully
#: masked" (PR 28943, https://github.com/ggml-org/llama.cpp/pull/28943, not merged). CUDA shares the
#: KV_max rule but its rows do not show the cost (DGX Spark gemma-3-4b at 4-32k within 5% with the
#: window alone; scored on CUDA too, held-out CUDA prefill went 0.204 -> 0.215, docs/calibration.md).
SWA_SCAN_BACKENDS = ("rocm",)

#: rocBLAS runs a GEMM on one of two backends: hipBLASLt, its default for problems on gfx12 (RDNA4),
#: or its Tensile library, which ROCBLAS_USE_HIPBLASLT=0 forces
#: (https://rocm.docs.amd.com/projects/rocBLAS/en/docs-7.0.1/conceptual/rocblas-design-notes.html;
#: https://rocm.docs.amd.com/projects/rocBLAS/en/develop/reference/env-variables.html). llama.cpp's
#: ROCm build multiplies 16-bit weights through hipBLAS/rocBLAS ("we convert to fp16 and use rocblas
#: to perform the matrix multiplication", https://github.com/ggml-org/llama.cpp/issues/13565), while
#: quantised weights mostly run its own MMQ kernels. Prior for Tensile on RDNA4, whose WMMA runs FP16
#: at 4x the FP32 figure: no matrix-core solutions, so its GEMMs run on the vector ALUs in FP32, at the
#: FP32 figure. gfx12 GEMMs without matrix instructions do fall that far: hipBLASLt's own non-WMMA
#: FP32 solutions reach 1-10 of the RX 9070 XT's ~49 FP32 TFLOPS where its WMMA FP16 ones reach
#: ~114 (https://github.com/ROCm/rocm-libraries/issues/10861). RDNA3/3.5's WMMA runs at the ALUs'
#: dual-issue rate (matrix <= 2x FP32: factor 1), and Instinct GPUs are Tensile's own MFMA target.
ROCM_GEMM_DEFAULT = "hipblaslt"


def gemm_slowdown(system: System, matmul_rate: float) -> float:
    """How many times slower the 16-bit weights' GEMMs run than the matrix rate: >1 only on ROCm
    with rocBLAS's Tensile backend (``rocm_gemm="tensile"``) on a consumer AMD GPU whose matrix
    units outrun twice its FP32 figure (RDNA4: 4). A quantised file pays it on its 16-bit tensors
    only (blas.blas_share)."""
    fp32 = system.device.fp32_tflops
    if system.backend != "rocm" or system.options.rocm_gemm == ROCM_GEMM_DEFAULT:
        return 1.0
    if system.device.family == "Instinct" or not fp32 or matmul_rate <= 2 * fp32 * 1e12:
        return 1.0
    return matmul_rate / (fp32 * 1e12)


def cpu_attention_slowdown(system: System) -> float:
    """How many times slower a CPU's prefill attention runs than its matrix multiplications.

    The attention products (Q.K and the softmax times V, with or without flash attention) run on
    the cache type's kernel, not the weights': against an f16 cache ggml and ik_llama.cpp convert
    and multiply in FP32 (ggml-cpu ops.cpp flash_attn_ext_f16 vec_dot on the K type; iqk
    fa/iqk_fa_templates.h HelperF16), against q8_0 as int8 dot products (roofline
    cpu_attention_kernel). So on an AVX-512 VNNI core a Q4_K_M model's matmuls run int8 (4x FP32)
    while an f16 cache's attention runs at the converted-FP32 rate (0.5x): 8x slower per FLOP,
    where a q8_0 cache's runs at the matmuls' rate."""
    kv_type = system.options.kv_quant
    return cpu_kernel(system.device, system.quant).factor / cpu_attention_kernel(system.device, kv_type, prefill=True).factor


def prefill_features(system: System, tokens: int, depth: int, sequences: int = 1) -> PrefillFeatures:
    """Features of processing ``tokens`` new tokens per sequence after ``depth`` cached ones."""
    arch = system.arch
    profile = system.profile
    cards = system.gpus
    ubatch = system.ubatch
    total_tokens = tokens * sequences
    micro_batches = max(1, math.ceil(total_tokens / ubatch))
    tokens_per_ubatch = min(ubatch, total_tokens)
    head_params = arch.vocab_size * arch.hidden_size
    # The output head runs only for the last token of each sequence (the one whose logits are
    # needed); every other weight runs for every token.
    dense_flops = 2 * max(arch.params_active - head_params, 0) * total_tokens + 2 * head_params * sequences
    # Mainline llama.cpp's HIP kernels score sliding-window layers against their whole
    # window + micro-batch cache (kvcache.swa_scanned_cells).
    mainline = system.engine.runs_mainline_ggml(with_legacy=True)
    swa_ubatch = ubatch if mainline and system.backend in SWA_SCAN_BACKENDS else 0
    attn_flops = sequences * attention_flops(arch, tokens, depth, swa_ubatch)
    # Layers whose flash attention runs HIP's tile kernel on the ALUs, at a rate of its own.
    tile_layer = rocm_tile_layer(system)
    tile_flops = sequences * attention_flops(arch, tokens, depth, swa_ubatch, tile_layer) if tile_layer else 0.0
    attn_flops -= tile_flops

    # llama.cpp's CUDA kernels (MMQ, its FP16 matrix and flash-attention kernels) are built on
    # mma.sync (ggml/src/ggml-cuda/mma.cuh, https://github.com/ggml-org/llama.cpp), never on
    # Hopper's wgmma, so on an H100 they reach a share of its datasheet rate (roofline.mma_sync_share);
    # it accumulates FP16 GEMMs in FP16, the PyTorch-based engines in FP32 (roofline.fp16_matrix_flops).
    llama_cpp = "llama-cpp" in system.engine.lineage()
    rate = matmul_flops(system.device, system.quant, system.backend, mma_sync=llama_cpp, fp16_accumulate=llama_cpp)
    rate *= metal_build_share(system)
    rate = shader_rate(system) or rate
    # Attention on the shader ALUs where the build's flash attention has no matrix-core kernel.
    attn_flops *= attention_slowdown(system, rate)
    gemm_cost = gemm_slowdown(system, rate)
    cpu_paths = (0.0, 0.0, 0.0, 0.0)
    vector_rate = 0.0
    if system.backend == "cpu":
        rate *= core_share(system.device, system.cpu_threads)
        vector_rate = thread_limited_flops(system.device, system.cpu_threads)
        attn_flops *= cpu_attention_slowdown(system)
        if system.quant.kind != "dense":
            cpu_paths = cpu_unpack_weights(arch, system.quant, system.engine)
    split = system.options.split
    if split == "layer":
        # A layer split pipelines micro-batches through the cards (pipeline_factor) where llama.cpp
        # overlaps them (parallel.pipeline_overlap); otherwise the cards take turns, one card's speed.
        overlap = pipeline_overlap(system)[0]
        speedup = 1 / pipeline_factor(total_tokens, ubatch, max(ubatch, system.options.nbatch), cards) if overlap else 1.0
        bandwidth_cards = speedup
    else:
        # Row/tensor splits divide every matmul and every weight read among the cards.
        speedup = bandwidth_cards = cards

    fraction = distinct_expert_fraction(arch, tokens_per_ubatch)
    weights_touched = profile.dense_read + profile.experts_read(fraction)
    placement = system.placement
    # The share of the matmuls' weights the device reads from its own memory (the embedding tables
    # in system RAM are looked up, not multiplied).
    host_weights = placement.host_bytes - placement.host_lookup_bytes
    resident_share = placement.gpu_bytes / max(placement.gpu_bytes + host_weights, 1.0)
    kv_read = sequences * kv_read_elements(arch, depth + tokens // 2) * system.kv_bytes_per_element
    memory_bytes = micro_batches * (weights_touched * resident_share + kv_read)
    dequant_bytes, gemm_extra, sms_per_latency = legacy_cublas_pass(system, tokens_per_ubatch, bandwidth_cards)
    memory_bytes += micro_batches * gemm_extra  # the legacy cuBLAS GEMM reads the converted copies
    experts = ExpertWork()
    experts_serial = False
    if system.backend == "cpu":
        # CPU kernels compute no padded tiles (ik_llama.cpp's iqk_mul_mat kernels take the
        # expert's columns 1 to 8 at a time; mainline ggml runs vec_dot per column), so only the
        # useful FLOPs count; their cost per FLOP is the fitted expert_pp_cost.
        experts = expert_work(arch, profile, total_tokens, micro_batches, profile.experts_read(fraction) * resident_share)
    else:
        # Mainline llama.cpp's MMQ kernels tile the experts' columns on matrix cores (moe.py);
        # ik_llama.cpp runs MoE kernels of its own.
        tile = 0
        cc = system.device.cuda_compute_capability
        if system.backend in ("cuda", "rocm") and system.quant.kind == "gguf" and mainline:
            tile = MMQ_TILE_COLUMNS if cc is None or cc >= TURING else MMQ_TILE_COLUMNS // 2
        elif system.backend in SHADER_RATE_BACKENDS:  # Vulkan: whole column tiles per expert (moe.py)
            tile = vulkan_expert_tile(system)
        loop = host_routed(system)
        experts = expert_work(arch, profile, total_tokens, micro_batches, profile.experts_read(fraction) * resident_share, tile,
                              fraction, loop, *generic_loop(system, loop, tokens_per_ubatch), fp4_share=native_mxfp4_share(system))
        experts_serial = loop == "ik" and system.backend == "cuda" and (cc is None or cc >= STREAM_K_CC)
    bandwidth = bandwidth_bytes_s(system.device, system.backend) * bandwidth_cards
    tile_load_s = expert_tile_load_s(system, tokens_per_ubatch, micro_batches, speedup)

    # Row/tensor splits exchange every micro-batch's activations after each split matmul.
    sync_latency_s, sync_data_s = split_sync_parts(system, tokens_per_ubatch) if split != "layer" else (0.0, 0.0)
    transfer_s = 0.0
    if op_offload(placement, tokens_per_ubatch):
        # Only the experts the micro-batch routes to are copied (offload.Placement.copy_bytes).
        pcie = pcie_link(system)[2]
        transfer_s = micro_batches * placement.copy_bytes(fraction) / (pcie * PCIE_EFFICIENCY)
    elif placement.offloaded and system.host is not None:
        # A micro-batch below the op-offload batch multiplies the weights in system RAM on the
        # host's cores, reading the ones it touches once (a roofline at the host's peak).
        host_touched = placement.host_dense_bytes + placement.host_expert_bytes * fraction
        host_flops = dense_flops * min(1.0, host_touched / max(weights_touched, 1.0))
        transfer_s = micro_batches * host_touched / bandwidth_bytes_s(system.host, "cpu") + host_flops / vector_flops(system.host, "cpu")
    return PrefillFeatures(
        dense_flops=dense_flops,
        attention_flops=attn_flops,
        matmul_rate=rate * speedup,
        micro_batches=micro_batches,
        memory_bytes=memory_bytes,
        bandwidth=bandwidth,
        transfer_s=transfer_s,
        sync_latency_s=micro_batches * sync_latency_s,
        sync_data_s=micro_batches * sync_data_s,
        flash_attn=system.flash_attn,
        quantized=system.quant.kind != "dense",
        moe_layers=profile.expert_layers,
        unified_memory=soc_memory(system.device),
        cpu_untiled_weights=cpu_paths[0],
        cpu_untiled_codebook_weights=cpu_paths[1],
        cpu_tiled_weights=cpu_paths[2],
        cpu_tiled_codebook_weights=cpu_paths[3],
        tokens=total_tokens,
        vector_rate=vector_rate,
        experts=experts,
        gemm_cost=gemm_cost,
        blas_share=1.0 if dequant_bytes else blas_share(system),
        cold_batch=system.options.cold_start and system.backend == "cuda",
        dense_share=dense_matmul_share(system),
        experts_serial=experts_serial,
        tile_attention_flops=tile_flops,
        tile_attention_rate=rocm_tile_rate(system) * speedup if tile_flops else 0.0,
        dequant_bytes=micro_batches * dequant_bytes,
        sms_per_latency=sms_per_latency,
        expert_tile_load_s=tile_load_s,
    )


def prefill_time_from(f: PrefillFeatures, p: BackendParams) -> PrefillTime:
    attn_cost = p.attn_cost_fa if f.flash_attn else p.attn_cost_nofa
    # A quantised file's 16-bit tensors (blas_share) run through the BLAS library at its cost;
    # the rest, and the routed experts, through the quantised kernels.
    matmul_cost = p.pp_quant_cost * (1 - f.blas_share) + f.blas_share * f.gemm_cost if f.quantized else f.gemm_cost
    expert_matmul_cost = p.pp_quant_cost if f.quantized else f.gemm_cost
    rate = f.matmul_rate * p.eta_pp
    work = f.experts
    compute_s = ((f.dense_flops - work.flops) * matmul_cost / f.dense_share + attn_cost * f.attention_flops) / rate
    tile_attention_s = f.tile_attention_flops / f.tile_attention_rate if f.tile_attention_flops else 0.0
    compute_s += tile_attention_s
    if f.vector_rate:
        # CPU kernels unpack quantised weights on the vector units between the multiply-adds:
        # per token in a row-by-row vec_dot, once per tile of columns in a tiled GEMM (the same
        # per-weight costs as in decode, decode.py).
        ops = (
            f.cpu_untiled_weights * p.dequant_ops + f.cpu_untiled_codebook_weights * p.codebook_ops
            + (f.cpu_tiled_weights * p.dequant_ops + f.cpu_tiled_codebook_weights * p.codebook_ops) / CPU_TILE_COLUMNS
        )
        compute_s += f.tokens * ops / f.vector_rate
    bandwidth = realised_bandwidth(f.bandwidth, p, f.unified_memory)
    memory_s = (f.memory_bytes - work.weight_bytes) / bandwidth
    # On CPUs an expert's matmul costs expert_pp_cost times a dense one per FLOP (params.py).
    expert_cost = p.expert_pp_cost if f.vector_rate else 1.0
    # The small kernels of ik_llama.cpp's per-expert loop are stream time (moe.expert_work): they add
    # to the matmuls' work; the host's launches and scans overlap it.
    # MXFP4 experts on Blackwell's FP4 tensor cores multiply faster (moe.native_mxfp4_share).
    expert_mma_s = work.padded_flops * expert_matmul_cost * expert_cost * work.mma_time_factor / rate + f.expert_tile_load_s
    expert_load_s = work.weight_bytes / bandwidth
    expert_kernels_s = expert_mma_s + expert_load_s if f.experts_serial else max(expert_mma_s, expert_load_s)
    # mmf's share of a 16-bit MoE (moe.looped_share) ends before the loop's sync: it adds, not overlaps.
    looped_s = expert_kernels_s * work.loop_share
    experts_s = expert_kernels_s - looped_s + max(looped_s + work.stream_s, work.host_loop_s)
    dispatch_s = work.dispatch_bytes / bandwidth
    cold_s = p.t_cold_batch_s if f.cold_batch else 0.0
    dequant_s = dequant_time(f.dequant_bytes, bandwidth, f.sms_per_latency, p)
    fixed_s = f.micro_batches * p.t_ubatch_s + cold_s
    transfer_s = f.transfer_s + f.sync_latency_s * p.sync_factor + f.sync_data_s * p.sync_data_factor
    return PrefillTime(compute_s, memory_s, transfer_s, fixed_s, f.dense_flops, f.attention_flops + f.tile_attention_flops, experts_s, dispatch_s,
                       work.host_loop_s, cold_s, f.micro_batches, tile_attention_s, dequant_s)


def prefill_time(system: System, tokens: int, depth: int, sequences: int = 1) -> PrefillTime:
    """Time to process ``tokens`` new tokens per sequence after ``depth`` cached ones."""
    if tokens <= 0:
        return PrefillTime(0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    return prefill_time_from(prefill_features(system, tokens, depth, sequences), system.params.params)

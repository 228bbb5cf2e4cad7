"""Peak rates of a device as a given backend and weight format can use them.

Which catalog figure bounds a computation depends on the kernels: llama.cpp multiplies quantised
GGUF weights with int8 dot products on CUDA (MMQ) and CPUs, F16 weights through FP16 GEMMs;
Metal and Vulkan kernels run on the shader ALUs at the FP16 rate; FP8 and FP4 formats use those
tensor-core rates where the device has them. A missing figure falls back to the FP16 one (the
device has no faster path for that format).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .catalog import GB, GIGA
from .hardware import Device
from .quant import QuantFormat

TERA = 1e12


#: A measured memory bandwidth (STREAM triad, Intel MLC) as a share of the channels' peak: STREAM
#: results on DDR4/DDR5 platforms typically reach 75-85% of it (https://www.cs.virginia.edu/stream/).
#: The fitted efficiencies are relative to the peak, so a measured figure is divided by this.
MEASURED_BANDWIDTH_SHARE = 0.8


def bandwidth_bytes_s(device: Device, backend: str) -> float:
    """Peak memory bandwidth the backend's compute units can pull, bytes/s.

    A CPU backend on a system-on-chip uses the CPU clusters' bandwidth, which on Apple Silicon is
    well below the GPU's (AnandTech measured ~200-240 of the M1 Max's 400 GB/s). A measured
    bandwidth stands for the peak it is a share of (MEASURED_BANDWIDTH_SHARE).
    """
    if backend == "cpu" and device.kind == "soc" and device.cpu_bandwidth_gbs:
        return device.cpu_bandwidth_gbs * GB
    if device.bandwidth_measured:
        return device.bandwidth_gbs / MEASURED_BANDWIDTH_SHARE * GB
    return device.bandwidth_gbs * GB


def soc_memory(device: Device) -> bool:
    """The device is a system on a chip streaming from LPDDR it shares with its CPU cores (not a
    card's GDDR/HBM, not a CPU-only system): its decode and prefill pay ``soc_bw_factor``."""
    return device.kind == "soc"


def realised_bandwidth(bandwidth: float, p, soc: bool) -> float:
    """Bytes/s a backend with parameters ``p`` streams at from ``bandwidth`` peak bytes/s: the
    fitted share ``eta_bw``, times ``soc_bw_factor`` on a system on a chip (:func:`soc_memory`)."""
    return bandwidth * p.eta_bw * (p.soc_bw_factor if soc else 1.0)


def latency_bound_sms(device: Device, backend: str) -> float:
    """SMs per second of memory latency, for the Little's-law bound on streaming: a GPU whose
    kernels keep B bytes in flight per SM streams at most ``SMs x B / latency``. 0 where the
    catalog has no measured latency (no bound) and on CPU backends.

    Why it matters: HBM cards pair many bytes/s per SM with a slower memory path than GDDR
    cards (pointer chase beyond L2, https://github.com/te42kyfo/gpu-benches: A100 571-575 cycles
    at 1410 MHz = 405 ns, H100 PCIe 650-658 at 1755 MHz = 373 ns, L40 631 at 2490 MHz = 254 ns,
    V100 437 at 1380 MHz = 317 ns). An A100 must keep 2.04 TB/s x 405 ns = 826 KB in flight,
    7.6 KB per SM, to reach its peak, an RTX 4090-class AD102 card 1 TB/s x 254 ns / 128 SMs =
    2 KB. Decode kernels that keep ~4 KB per SM in flight stream at half an A100's peak and at
    the peak of the GDDR cards: llama.cpp's legacy builds decode an 8B F16 model at 0.81-0.93 of
    the peak on RTX 3090/4090/A6000/4000 Ada and at 0.42-0.56 on A100 and H100 PCIe
    (XiongjieDai's GPU-Benchmarks-on-LLM-Inference rows)."""
    if backend == "cpu" or not device.memory_latency_ns or not device.gpu_cores:
        return 0.0
    return device.gpu_cores / (device.memory_latency_ns * 1e-9)


#: CUDA compute capability whose FP16 runs at 1/64 of FP32 (Pascal GP102/GP104/GP106: Tesla P40,
#: GTX 10 series). llama.cpp never computes in FP16 there: ggml-cuda's fast_fp16_available()
#: returns false for it ("ggml_cuda_highest_compiled_arch(cc) != 610",
#: https://github.com/ggml-org/llama.cpp/blob/master/ggml/src/ggml-cuda/common.cuh), so F16 weights
#: multiply through FP32 cuBLAS and quantised ones through the dp4a int8 kernels.
SLOW_FP16_CC = 6.1
#: Lowest compute capability ggml-cuda computes FP16 on (common.cuh ``fp16_available``: arch >=
#: GGML_CUDA_CC_PASCAL, 600): below it (Maxwell, Jetson Nano 5.3) FP32 cuBLAS, as on 6.1.
FP16_MIN_CC = 6.0


def fp16_matrix_flops(device: Device, backend: str, fp16_accumulate: bool = True) -> float:
    """Dense FP16 GEMM rate; on a card without fast FP16 (:data:`SLOW_FP16_CC`) the FP32 rate its
    kernels run at.

    ``fp16_accumulate``: the kernels accumulate in FP16, which GeForce cards run at twice their
    FP32-accumulate tensor rate (``fp16_acc16_tflops``; NVIDIA's Ada whitepaper, RTX 4090: 330.3
    against 165.2 TFLOPS). llama.cpp asks cuBLAS for FP16 compute (CUBLAS_COMPUTE_16F in
    ggml-cuda's cuBLAS matmul). PyTorch-based engines accumulate in FP32: ExLlamaV3's prefill
    rebuilds FP16 weights and multiplies them with cublasGemmEx(..., CUBLAS_COMPUTE_32F)
    (exllamav3/exllamav3_ext/hgemm.cu, https://github.com/turboderp-org/exllamav3, v1.4.1), vLLM's
    Marlin kernels for GPTQ/AWQ issue mma.sync ...f32.f16.f16.f32 (FP32 accumulators,
    https://github.com/IST-DASLab/marlin) and its unquantised layers go through torch.matmul,
    whose FP16 GEMMs use FP32 compute (https://pytorch.org/docs/stable/notes/cuda.html,
    "Reduced Precision Reduction in FP16 GEMMs")."""
    if backend == "cuda" and device.cuda_compute_capability == SLOW_FP16_CC and device.fp32_tflops:
        return max(device.fp32_tflops, device.fp16_tflops) * TERA
    cc = device.cuda_compute_capability
    if backend == "cuda" and cc is not None and cc < FP16_MIN_CC and device.fp32_tflops:
        return device.fp32_tflops * TERA
    if backend == "cuda" and device.fp16_acc16_tflops and fp16_accumulate:
        return device.fp16_acc16_tflops * TERA
    return device.fp16_tflops * TERA


#: On a compute capability 6.1 card llama.cpp multiplies quantised GGUF weights in its MMQ kernels
#: with the __dp4a int8 dot product (ggml_cuda_should_use_mmq: no Turing MMA, arch >= DP4A (610) and
#: no FP16 MMA hardware, so MMQ at every batch size; ggml-org/llama.cpp@027ef8769913
#: ggml/src/ggml-cuda/mmq.cu). One dp4a does 4 int8 multiply-adds where an FFMA does 1, issued at
#: the same rate: NVIDIA rates the P40 at 47 INT8 TOPS against 12 FP32 TFLOPS
#: (https://omegaco.ae/shop/gpu-cards-edge-ai/nvidia-p40).
DP4A_INT8_PER_FP32 = 4
#: ``pp_quant_cost`` is fitted on cards whose MMQ runs int8 instructions at twice their FP16 matrix
#: rate (INT8 tensor cores, the pp_quant_cost bound reason in params.py), so a dp4a card's matrix
#: peak for quantised weights is its int8 rate over the same 2: the fitted cost then means the same
#: share of the int8 rate on both kinds of card.
INT8_PER_MATRIX_PEAK = 2


def dp4a_mmq_flops(device: Device, quant: QuantFormat, backend: str) -> float:
    """Matrix peak of llama.cpp's dp4a MMQ kernels for quantised GGUF weights on a compute
    capability 6.1 card (its FP16 is 1/64 rate, :data:`SLOW_FP16_CC`), FLOP/s; 0 elsewhere."""
    if backend != "cuda" or quant.kind != "gguf" or device.cuda_compute_capability != SLOW_FP16_CC:
        return 0.0
    return (device.fp32_tflops or 0.0) * TERA * DP4A_INT8_PER_FP32 / INT8_PER_MATRIX_PEAK


#: CUDA compute capability of Hopper (H100, H200, H20, GH200; https://developer.nvidia.com/cuda-gpus).
HOPPER_CC = 9.0
#: Share of Hopper's datasheet tensor peak that kernels built on the warp-level ``mma.sync``
#: instructions reach. NVIDIA's Hopper figures count the warp-group ``wgmma`` instructions new in
#: Hopper; the FlashAttention-3 paper reports that mma.sync "can only reach about 2/3 of the peak
#: throughput of the Hopper Tensor Cores" (Shah et al. 2024, section 3.1,
#: https://arxiv.org/abs/2407.08608, citing Luo et al.'s microbenchmarks,
#: https://arxiv.org/abs/2402.13499). Earlier tensor-core generations have no faster instruction.
HOPPER_MMA_SYNC_SHARE = 2 / 3


def mma_sync_share(device: Device, backend: str) -> float:
    """Share of the catalog's tensor rates that ``mma.sync`` kernels reach on ``device``: the
    Hopper share on compute capability 9.0, else 1."""
    if backend == "cuda" and device.cuda_compute_capability == HOPPER_CC:
        return HOPPER_MMA_SYNC_SHARE
    return 1.0


def matmul_flops(device: Device, quant: QuantFormat, backend: str, mma_sync: bool = False,
                 fp16_accumulate: bool = True) -> float:
    """Peak rate of the big matrix multiplications of prompt processing, FLOP/s.

    llama.cpp's CUDA prefill runs at the FP16 tensor-core rate: cuBLAS for 16-bit weights, and
    its MMQ int8 kernels for quantised ones do not beat that in practice (calibration: F16 prefill
    was as fast or faster than Q4_K_M on every card measured), so their extra cost is the
    per-engine ``pp_quant_cost``, not a different peak. Native FP8/FP4 formats use those rates
    where the device has them (vLLM, TensorRT-class kernels). On compute capability 6.1 cards,
    quantised GGUF weights run through dp4a (:func:`dp4a_mmq_flops`). ``mma_sync``: the engine's
    kernels issue ``mma.sync``, not Hopper's ``wgmma`` (:func:`mma_sync_share`);
    ``fp16_accumulate``: they accumulate FP16 products in FP16 (:func:`fp16_matrix_flops`).
    """
    if backend == "cpu":
        return cpu_vector_flops(device) * cpu_kernel(device, quant).factor
    fp16 = max(fp16_matrix_flops(device, backend, fp16_accumulate), dp4a_mmq_flops(device, quant, backend))
    if mma_sync:
        fp16 *= mma_sync_share(device, backend)
    fmt = quant.compute_format
    if fmt == "fp8" and device.fp8_tflops and backend in ("cuda", "rocm") and quant.kind != "gguf":
        return max(device.fp8_tflops * TERA, fp16)
    if fmt == "fp4" and device.fp4_tflops and backend in ("cuda", "rocm") and quant.kind != "gguf":
        return max(device.fp4_tflops * TERA, fp16)
    return fp16


#: FP32 FLOP/s per core of a system-on-chip's CPU, for the cpu backend on SoCs (the catalog's
#: TFLOPS figures are the GPU's). Apple's performance cores have four 128-bit FMA pipes at
#: ~3.2 GHz (32 FLOP/cycle), its efficiency cores two at ~2 GHz (AnandTech's Apple M1 analysis:
#: Firestorm and Icestorm); where the entry does not split its cores, a blend of the two.
SOC_P_CORE_FLOPS = 3.2e9 * 32
SOC_E_CORE_FLOPS = 2.0e9 * 16
SOC_CPU_FLOPS_PER_CORE = 3.2e9 * 24


def cpu_vector_flops(device: Device) -> float:
    """Vector FP32 rate of all CPU cores at base clock: a CPU entry's own figure, or the SoC
    estimate."""
    if device.kind == "soc":
        cores = device.cpu_cores or 8
        if device.cpu_p_cores:
            return device.cpu_p_cores * SOC_P_CORE_FLOPS + (cores - device.cpu_p_cores) * SOC_E_CORE_FLOPS
        return cores * SOC_CPU_FLOPS_PER_CORE
    return device.fp32_tflops * TERA if device.fp32_tflops else device.fp16_tflops * TERA


def vector_flops(device: Device, backend: str = "") -> float:
    """Rate of matrix-vector work (decode): the shader/vector FP32 rate, else the FP16 figure;
    the CPU cores' rate for the cpu backend."""
    if backend == "cpu" or device.kind == "cpu":
        return cpu_vector_flops(device)
    if device.fp32_tflops:
        return device.fp32_tflops * TERA
    return device.fp16_tflops * TERA


#: FP32 lanes of one AMD compute unit (two SIMD32 since RDNA, four SIMD16 on GCN): one FMA per lane
#: and clock. AMD's RDNA 3/3.5/4 figures, the catalog's among them, count dual issue (two FP32
#: instructions per lane and clock), which the shader compiler pairs only for independent
#: instructions of a few kinds (https://chipsandcheese.com/p/microbenchmarking-amds-rdna-3-graphics-architecture:
#: "dual issue ... rarely" reached outside hand-picked instruction pairs).
AMD_LANES_PER_CU = 64


def shader_fp32_flops(device: Device) -> float:
    """FP32 rate of the shader ALUs at one instruction per lane and clock: an AMD GPU's compute
    units x 64 lanes x 2 (FMA) x clock where the catalog gives them (half the dual-issue figure on
    RDNA 3 and later, the same figure before), else the catalog's vector rate."""
    if device.vendor == "amd" and device.kind != "cpu" and device.gpu_cores and device.gpu_clock_mhz:
        return device.gpu_cores * AMD_LANES_PER_CU * 2 * device.gpu_clock_mhz * 1e6
    return vector_flops(device)


# --------------------------------------------------------------------------------------------
# CPUs: which cores a thread count uses, at which clock, through which kernel
# --------------------------------------------------------------------------------------------


def default_threads(device: Device) -> int:
    """llama.cpp's default ``-t``: the physical cores, only the performance cores of a hybrid
    part (common/common.cpp ``cpu_get_num_math``: on x86 Linux it counts the cores whose CPUID
    reports the "Core" type and drops hyper-thread siblings)."""
    return device.cpu_p_cores or device.cpu_cores or 8


def _performance_core_flops(device: Device) -> float:
    """FP32 FLOP/s of one performance core at base clock."""
    if device.cpu_fp32_flops_per_cycle and device.cpu_base_clock_ghz:
        return device.cpu_fp32_flops_per_cycle * device.cpu_base_clock_ghz * GIGA
    if device.kind == "soc" and device.cpu_p_cores:
        return SOC_P_CORE_FLOPS
    return cpu_vector_flops(device) / (device.cpu_cores or 8)


def efficiency_core_ratio(device: Device) -> float:
    """An efficiency core's FP32 rate relative to a performance core's (hybrid parts; 1 otherwise),
    from the catalog's split of the vector peak (Gracemont: two 128-bit FMA pipes at a lower
    clock against Raptor Cove's two 256-bit, ~0.37)."""
    cores, p_cores = device.cpu_cores or 0, device.cpu_p_cores
    if not p_cores or cores <= p_cores:
        return 1.0
    p_part = p_cores * _performance_core_flops(device)
    e_part = cpu_vector_flops(device) - p_part
    return max(0.1, min(1.0, e_part / (cores - p_cores) / _performance_core_flops(device)))


def effective_cores(device: Device, threads: int) -> float:
    """Performance cores' worth of arithmetic ``threads`` threads deliver.

    ggml and ik_llama.cpp split each matrix multiplication into equal shares, one per thread,
    and every thread waits for the last one at the end of each operation. So a step runs at the
    pace of its slowest thread: two threads sharing a core (SMT) each run at half speed, and
    once the threads spill onto a hybrid part's efficiency cores every share runs at an
    efficiency core's pace. Threads = physical cores is the optimum; 172 threads on a 128-core
    Xeon 6980P are 128 / 2 = 86 cores' worth (ik_llama.cpp PR 259: prefill 147 -> 113 tok/s), 13
    threads on a 6P+8E Core i5-13600K fewer than its 6 P-cores (ik_llama.cpp issue 255).
    """
    cores = device.cpu_cores or threads
    per_core = math.ceil(threads / cores)  # threads sharing the busiest core
    pace = 1.0 / per_core
    if device.cpu_p_cores and threads > device.cpu_p_cores:
        pace *= efficiency_core_ratio(device)
    return threads * pace


def clock_ratio(device: Device, threads: int) -> float:
    """Clock of the cores in use relative to base. Desktop and server parts are power limited:
    one busy core boosts to the single-core maximum, all of them together hold about the base
    clock (the vendors' definition of base: the guaranteed all-core frequency at TDP). In between
    the clock falls linearly with the busy cores of a socket, the simplest curve through the two
    published points. Parts without both clocks run at the catalog's rate."""
    base, boost = device.cpu_base_clock_ghz, device.cpu_boost_clock_ghz
    if not base or not boost:
        return 1.0
    per_socket = max(1, (device.cpu_p_cores or device.cpu_cores or 1) // max(device.cpu_sockets, 1))
    busy = min(math.ceil(threads / max(device.cpu_sockets, 1)), per_socket)
    if per_socket == 1:
        return boost / base
    return (boost - (boost - base) * (busy - 1) / (per_socket - 1)) / base


def thread_limited_flops(device: Device, threads: int) -> float:
    """Vector FP32 FLOP/s of a CPU running ``threads`` threads (cores in use, their pace, clock)."""
    return effective_cores(device, threads) * _performance_core_flops(device) * clock_ratio(device, threads)


def core_share(device: Device, threads: int) -> float:
    """Share of the CPU's all-core base-clock arithmetic that ``threads`` threads deliver."""
    return thread_limited_flops(device, threads) / cpu_vector_flops(device)


def cpu_isa(device: Device) -> tuple[str, ...]:
    """The CPU's vector ISA: the catalog's, else what every chip of the vendor has (Apple M1:
    NEON with dot product; M2 and later add int8 matrix multiply; SoCs with Arm cores from NVIDIA
    have SVE2 and i8mm), else AVX2, the x86 baseline llama.cpp's release builds target."""
    if device.cpu_isa:
        return device.cpu_isa
    if device.vendor == "apple":
        return ("neon", "dotprod") + (() if device.family == "Apple M1" else ("i8mm", "bf16"))
    if device.vendor in ("nvidia", "qualcomm", "ampere", "raspberry-pi"):
        return ("neon", "dotprod", "i8mm") if device.vendor in ("nvidia", "qualcomm") else ("neon", "dotprod")
    return ("avx2",)


@dataclass(frozen=True)
class CpuKernel:
    """The arithmetic a CPU's matrix multiplications run on for one weight format."""

    #: What the explain panel names, e.g. "int8 dot products (AVX-512 VNNI vpdpbusd)".
    name: str
    #: Multiply-accumulate throughput relative to the core's FP32 FMA rate.
    factor: float


def cpu_kernel(device: Device, quant: QuantFormat, columns: int = 2) -> CpuKernel:
    """The kernel llama.cpp's CPU backend runs for ``quant`` on ``device``, and its peak relative to
    FP32 FMA (instruction throughputs: Intel's intrinsics guide and optimisation manual, Arm's
    Neoverse software optimisation guides; ggml/src/ggml-cpu/arch/*/quants.c choose them).

    Quantised weights multiply as int8 against int8-quantised activations (Q8_K / Q8_0):
    - AVX-512 VNNI / AVX-VNNI ``vpdpbusd``: 4 int8 multiply-adds per 32-bit lane per instruction,
      4x the FP32 FMA rate of the same vector width;
    - AVX2 ``vpmaddubsw`` + ``vpmaddwd``: two instructions for the same work, 2x; AVX-512 cores
      without VNNI (Skylake-SP) run these AVX2 kernels at half their FP32 vector width, 1x;
    - Arm ``smmla`` (i8mm): a 2x8 by 8x2 int8 block per instruction, 8x a 128-bit FP32 FMA;
      ``sdot`` (dot product): 4x; plain NEON widening multiplies 2x;
    - AMX tiles are used by mainline llama.cpp for a few types, but the measured Xeon 8480 rows
      (ik_llama.cpp issue 437: llama.cpp with the AMX buffer 228 tok/s, ik_llama.cpp's VNNI
      kernels 348-445 tok/s on Llama 3.1 8B Q4_K_M prefill) show no gain over VNNI, so AMX is
      counted at the VNNI rate.
    16-bit weights: BF16 ``vdpbf16ps`` (AVX-512 BF16) or Arm ``bfmmla`` 2x; F16 on Arm (native
    half-precision FMA) 2x; F16 on x86 is converted to FP32 (F16C), 1x.
    ``columns``: activation columns (tokens) the product has; with one, ``smmla``'s 8x2 block
    has no second column to fill, so ggml takes its i8mm path only where ``nrc == 2``
    (ggml-cpu/arch/arm/quants.c) and its repacked matrix-vector kernels use ``sdot``
    (arch/arm/repack.cpp ``ggml_gemv_q4_0_4x8_q8_0``: ``vdotq_s32``; ik_llama.cpp's iqk kernels
    issue no ``smmla`` at all): a single-token decode step runs at the dot-product rate.
    """
    isa = set(cpu_isa(device)) - ({"i8mm"} if columns < 2 else set())
    if quant.compute_format == "int8" or quant.kind != "dense":
        return _int8_kernel(isa)
    return _float_kernel(isa, quant.weight_type)


def cpu_attention_kernel(device: Device, kv_type: str, prefill: bool = False) -> CpuKernel:
    """The kernel a CPU's attention scores (Q.K) run on: against a cache quantised to 8 or 4 bits
    (q8_0, q4_0 ...) the queries are quantised to int8 and multiplied as int8 dot products, like
    quantised weights (ik_llama.cpp ggml/src/iqk/fa/iqk_fa_templates.h compute_helper_q; ggml's
    vec_dot of the cache type); an f16/bf16 cache goes through the 16-bit path, f32 FP32 FMA.

    ``prefill``: a micro-batch's queries meet the same cached rows again and again from the core's
    caches, so the loop runs at its arithmetic rate, and a 16-bit cache on an x86 core without a
    16-bit dot product (F16 everywhere; BF16 without AVX-512 BF16) costs a conversion per vector
    of FMAs: ggml's F16 vector loads are ``_mm256_cvtph_ps`` / ``_mm512_cvtph_ps``
    (ggml/src/ggml-cpu/simd-mappings.h, GGML_F32Cx8_LOAD / GGML_F32Cx16_LOAD), ik_llama.cpp's FA
    kernels the same (ggml/src/iqk/fa/iqk_fa_templates.h, HelperF16), and a cached element is
    converted at each use (a tiled weight GEMM converts a tile once for many columns).
    ``vcvtph2ps`` issues on the FMA ports (Intel Intrinsics Guide: ``_mm256_cvtph_ps`` CPI 1 on
    Skylake against ``_mm256_fmadd_ps`` CPI 0.5; uops.info VCVTPH2PS: p01 + p5), so the FMA
    rate halves: 0.5. In decode each cached element is streamed from memory once per query head
    and the conversion hides under the load; it keeps the plain FP32 rate. Arm cores multiply F16
    natively (2x)."""
    isa = set(cpu_isa(device))
    if kv_type in ("f16", "bf16"):
        kernel = _float_kernel(isa, kv_type)
        if prefill and kernel.factor == 1.0 and "neon" not in isa:
            return CpuKernel(f"FP32 FMA on a {kv_type.upper()} cache widened element by element (F16C)", 0.5)
        return kernel
    if kv_type == "f32":
        return CpuKernel("FP32 FMA", 1.0)
    return _int8_kernel(isa)


def cpu_attention_rate(device: Device, kv_type: str) -> float:
    """Decode attention's rate relative to the FP32 FMA rate: the scores (half the FLOPs) on the
    cache type's kernel, the weighted sum of V (the other half) in FP32 after unpacking V."""
    return 2.0 / (1.0 + 1.0 / cpu_attention_kernel(device, kv_type).factor)


def _int8_kernel(isa: set) -> CpuKernel:
    if "avx512-vnni" in isa or "amx" in isa:
        return CpuKernel("int8 dot products (AVX-512 VNNI vpdpbusd)", 4.0)
    if "avx-vnni" in isa:
        return CpuKernel("int8 dot products (AVX-VNNI vpdpbusd)", 4.0)
    if "avx512" in isa:
        # Without VNNI the int8 kernels are the AVX2 ones (ik_llama.cpp's 512-bit path needs
        # VNNI, HAVE_FANCY_SIMD), on half the vector width the FP32 figure counts.
        return CpuKernel("int8 dot products (AVX2 vpmaddubsw on an AVX-512 core)", 1.0)
    if "avx2" in isa:
        return CpuKernel("int8 dot products (AVX2 vpmaddubsw)", 2.0)
    if "i8mm" in isa:
        return CpuKernel("int8 matrix multiply (Arm i8mm smmla)", 8.0)
    if "dotprod" in isa:
        return CpuKernel("int8 dot products (Arm sdot)", 4.0)
    if "scalar" in isa:
        # No vector unit (RISC-V RV64GC, e.g. the SiFive U74 of the StarFive JH7110): ggml builds
        # its generic C kernels, one integer multiply-add per instruction, the rate of the one
        # scalar FP32 FMA per cycle the core's FLOP figure counts.
        return CpuKernel("scalar int8 multiply-adds (no SIMD: ggml's generic C kernels)", 1.0)
    return CpuKernel("int8 widening multiplies (NEON / RVV)", 2.0)


def _float_kernel(isa: set, weight: str) -> CpuKernel:
    if weight == "bf16" and ("avx512-bf16" in isa or "amx" in isa):
        return CpuKernel("BF16 dot products (AVX-512 BF16 vdpbf16ps)", 2.0)
    if weight == "bf16" and "bf16" in isa:
        return CpuKernel("BF16 matrix multiply (Arm bfmmla)", 2.0)
    if weight == "f16" and "neon" in isa:
        return CpuKernel("F16 FMA (Arm half precision)", 2.0)
    return CpuKernel("FP32 FMA (16-bit weights converted)", 1.0)


def cpu_bandwidth(bandwidth: float, threads: int, cores: int, ccds: int, core_bw_gbs: float, ccd_bw_gbs: float) -> float:
    """Memory bandwidth the threads in use can draw, bytes/s.

    A core streams only as fast as its outstanding cache-line misses allow (``core_bw_gbs``), so a
    few threads cannot saturate DDR5; a second thread on a core adds none (SMT shares the core's
    miss buffers). On chiplet CPUs each CCD reaches the I/O die over one link (``ccd_bw_gbs``;
    Zen 4's GMI link reads 32 bytes per fabric clock, ~64 GB/s at 2 GHz), and threads spread over
    the CCDs: a 24-core Threadripper PRO 7965WX with four CCDs draws ~225 of its 333 GB/s (Intel
    MLC, ik_llama.cpp PR 534). A slice of a CPU (a VM's cores) is limited the same way.
    """
    busy = min(threads, cores or threads)
    limit = min(bandwidth, busy * core_bw_gbs * GB)
    if ccds:
        limit = min(limit, min(ccds, busy) * ccd_bw_gbs * GB)
    return limit


def thread_limited_bandwidth(bandwidth: float, threads: int, core_bw_gbs: float) -> float:
    """Memory bandwidth ``threads`` cores can pull (no chiplet limit; see :func:`cpu_bandwidth`)."""
    return min(bandwidth, threads * core_bw_gbs * GB)


#: Clock at which the per-layer overhead ``t_layer_s`` is stated, MHz.
REFERENCE_CLOCK_MHZ = 1500.0


def clock_factor(device: Device) -> float:
    """How much longer than at 1.5 GHz the device's latency-bound kernels take (1 if unknown)."""
    clock = getattr(device, "gpu_clock_mhz", None)
    return REFERENCE_CLOCK_MHZ / clock if clock else 1.0

"""Peak rates of a device as a given backend and weight format can use them.

Which catalog figure bounds a computation depends on the kernels: llama.cpp multiplies quantised
GGUF weights with int8 dot products on CUDA (MMQ) and CPUs, F16 weights through FP16 GEMMs;
Metal and Vulkan kernels run on the shader ALUs at the FP16 rate; FP8 and FP4 formats use those
tensor-core rates where the device has them. A missing figure falls back to the FP16 one (the
device has no faster path for that format).
"""

from __future__ import annotations

from .hardware import Device
from .quant import QuantFormat

TERA = 1e12
GIGA = 1e9


def bandwidth_bytes_s(device: Device, backend: str) -> float:
    """Peak memory bandwidth the backend's compute units can pull, bytes/s.

    A CPU backend on a system-on-chip uses the CPU clusters' bandwidth, which on Apple Silicon is
    well below the GPU's (AnandTech measured ~200-240 of the M1 Max's 400 GB/s).
    """
    if backend == "cpu" and device.kind == "soc" and device.cpu_bandwidth_gbs:
        return device.cpu_bandwidth_gbs * GIGA
    return device.bandwidth_gbs * GIGA


def fp16_matrix_flops(device: Device, backend: str) -> float:
    """Dense FP16 GEMM rate; CUDA's cuBLAS path in llama.cpp accumulates in FP16 where faster."""
    if backend == "cuda" and device.fp16_acc16_tflops:
        return device.fp16_acc16_tflops * TERA
    return device.fp16_tflops * TERA


def matmul_flops(device: Device, quant: QuantFormat, backend: str) -> float:
    """Peak rate of the big matrix multiplications of prompt processing, FLOP/s.

    llama.cpp's CUDA prefill runs at the FP16 tensor-core rate: cuBLAS for 16-bit weights, and
    its MMQ int8 kernels for quantised ones do not beat that in practice (calibration: F16 prefill
    was as fast or faster than Q4_K_M on every card measured), so their extra cost is the
    per-engine ``pp_quant_cost``, not a different peak. Native FP8/FP4 formats use those rates
    where the device has them (vLLM, TensorRT-class kernels).
    """
    if backend == "cpu":
        return cpu_vector_flops(device)
    fp16 = fp16_matrix_flops(device, backend)
    fmt = quant.compute_format
    if fmt == "fp8" and device.fp8_tflops and backend in ("cuda", "rocm") and quant.kind != "gguf":
        return max(device.fp8_tflops * TERA, fp16)
    if fmt == "fp4" and device.fp4_tflops and backend in ("cuda", "rocm") and quant.kind != "gguf":
        return max(device.fp4_tflops * TERA, fp16)
    return fp16


#: FP32 FLOP/s per core of a system-on-chip's CPU, for the cpu backend on SoCs (the catalog's
#: TFLOPS figures are the GPU's): ~3.2 GHz x 24 FLOP/cycle, a blend of performance cores' four
#: 128-bit FMA pipes (32 FLOP/cycle; AnandTech's Apple M1 / Firestorm analysis) and efficiency
#: cores' narrower ones. An approximation, stated as one.
SOC_CPU_FLOPS_PER_CORE = 3.2e9 * 24


def cpu_vector_flops(device: Device) -> float:
    """Vector FP32 rate of the CPU cores: a CPU entry's own figure, or the SoC approximation."""
    if device.kind == "soc":
        return (device.cpu_cores or 8) * SOC_CPU_FLOPS_PER_CORE
    return device.fp32_tflops * TERA if device.fp32_tflops else device.fp16_tflops * TERA


def vector_flops(device: Device, backend: str = "") -> float:
    """Rate of matrix-vector work (decode): the shader/vector FP32 rate, else the FP16 figure;
    the CPU cores' rate for the cpu backend."""
    if backend == "cpu" or device.kind == "cpu":
        return cpu_vector_flops(device)
    if device.fp32_tflops:
        return device.fp32_tflops * TERA
    return device.fp16_tflops * TERA


def core_share(device: Device, threads: int) -> float:
    """Share of a CPU's arithmetic ``threads`` threads use: each physical core adds its share (a
    second thread on a core adds no FMA units)."""
    cores = device.cpu_cores or threads
    return min(threads, cores) / cores


def thread_limited_flops(device: Device, threads: int) -> float:
    """Vector FLOP/s of a CPU running ``threads`` threads."""
    return cpu_vector_flops(device) * core_share(device, threads)


def thread_limited_bandwidth(bandwidth: float, threads: int, core_bw_gbs: float) -> float:
    """Memory bandwidth ``threads`` cores can pull: each core's outstanding cache-line misses cap
    it well below the socket's peak, so a few threads cannot saturate DDR5."""
    return min(bandwidth, threads * core_bw_gbs * GIGA)


#: Clock at which the per-layer overhead ``t_layer_s`` is stated, MHz.
REFERENCE_CLOCK_MHZ = 1500.0


def clock_factor(device: Device) -> float:
    """How much longer than at 1.5 GHz the device's latency-bound kernels take (1 if unknown)."""
    clock = getattr(device, "gpu_clock_mhz", None)
    return REFERENCE_CLOCK_MHZ / clock if clock else 1.0

"""llama.cpp's CUDA prefill of quantised weights before its int8 tensor-core MMQ kernels: each
prompt micro-batch dequantises every weight matrix to 16 bits, then multiplies it with cuBLAS.

From PR 3412 (Sep 2023, "perform cublas mat mul of quantized types as f16",
https://github.com/ggml-org/llama.cpp/pull/3412) and PR 3776 (Oct 2023: "when tensor cores are
available, use them for large batch size", https://github.com/ggml-org/llama.cpp/pull/3776) until
the MMQ kernels got int8 tensor cores (PRs 7676 and 7860, June 2024, after the builds the
``llama-cpp-legacy`` engine stands for), ggml-cuda's ``ggml_cuda_mul_mat`` sent a quantised matrix
to its MMQ kernels only for batches of up to ``MMQ_MAX_BATCH_SIZE`` (32) columns on cards with fast
FP16; a larger batch went to ``ggml_cuda_op_mul_mat_cublas``, which on compute capability 7.0 and
later runs ``to_fp16_cuda`` over the whole matrix into a pool buffer and then ``cublasGemmEx(...,
CUDA_R_16F, ..., CUBLAS_COMPUTE_16F)`` (ggml-cuda.cu at ggerganov/llama.cpp@005de593ad4a, early
2024; the Dec 2023 builds take the same branch: PR 3776, and PR 3814's review, Oct 2023, "for
multiple GPUs FP32 is still being used", https://github.com/ggml-org/llama.cpp/pull/3814). So the quantised matmuls are the F16
GEMM an F16 file runs (no separate quantised-kernel cost), plus a pass over memory per micro-batch
that reads the packed weights and writes 2 bytes per weight, a kernel of its own before the GEMM.
Published check: on an RTX A6000 at b1431 (PR 3816's own table, https://github.com/ggml-org/llama.cpp/pull/3816)
LLaMA 7B prefills 512 tokens at 4098 tok/s in F16 and 3451 in Q4_K_M: 23.4 ms more per micro-batch,
where 6.5 billion layer weights x (0.6 + 2) bytes at 768 GB/s take 22 ms.

Until PR 4809 (2024-01-07, https://github.com/ggml-org/llama.cpp/pull/4809) the conversion kernel of
the 32-weight block types (q4_0, q4_1, q5_0, q5_1, q8_0) launched a thread per value while each
thread converts two, so it "reads and writes each value twice"; the PR's NSight measurement makes
the fixed kernel 1.5-1.7x faster: :data:`REDUNDANT_PASS_FACTOR` on builds before it.

The FP16 branch needs the whole matrix on the card (``row_diff == src0->ne[1]``): a row split's
slices take the FP32 branch, ``to_fp32_cuda`` (4 bytes written per weight, F16 weights included)
and ``cublasSgemm``. Cards below compute capability 7.0 take other paths (MMQ on 6.1, FP32 cuBLAS
on 6.0 and earlier) and are left to the roofline as it is.
"""

from __future__ import annotations

from functools import lru_cache

from .arch import Architecture
from .quant import QuantFormat, storage, tensor_bytes, tensor_types
from .roofline import latency_bound_sms
from .weights import prompt_matmul

#: ggml-cuda's ``MMQ_MAX_BATCH_SIZE`` of those builds: larger batches of quantised weights went to cuBLAS.
MMQ_MAX_BATCH_SIZE = 32
#: ``CC_VOLTA``: the FP16 cuBLAS branch of ``ggml_cuda_op_mul_mat_cublas`` needs compute capability 7.0.
FP16_CUBLAS_CC = 7.0
#: The conversion kernel's time before PR 4809 relative to after: 1.6, the middle of the PR's
#: NSight figure (1.5-1.7x) for the types it fixed.
REDUNDANT_PASS_FACTOR = 1.6
REDUNDANT_PASS_TYPES = frozenset({"q4_0", "q4_1", "q5_0", "q5_1", "q8_0"})
#: First build with PR 4809, approximate (merged 2024-01-07, two weeks after b1691): the calibration's
#: CUDA builds are 1671-1691 (Dec 2023) and 2795-2843 (May 2024), so any boundary between scores the same.
REDUNDANT_PASS_FIXED_BUILD = 1790
#: Bytes per weight the conversion writes: ``half`` in the FP16 branch, ``float`` in the FP32 one.
F16_BYTES, F32_BYTES = 2.0, 4.0


@lru_cache(maxsize=256)
def _layer_matrices(arch: Architecture, quant: QuantFormat, include_16bit: bool) -> tuple[float, float, float]:
    """(weights, stored bytes, of those the weights of :data:`REDUNDANT_PASS_TYPES`) of the matrices
    a prompt's tokens multiply in full that the conversion reads: quantised ones (and 16-bit ones
    with ``include_16bit``); not the routed experts, embedding look-ups, 1-D tensors or the output
    head (one token per sequence)."""
    weights = stored = redundant = 0.0
    for tensor, type_name, size in zip(arch.tensors, tensor_types(arch, quant), tensor_bytes(arch, quant)):
        if not prompt_matmul(tensor):
            continue
        kind = storage(type_name)
        if kind.quantized or (include_16bit and type_name in ("f16", "bf16")):
            weights += tensor.params
            stored += size
            redundant += tensor.params if type_name in REDUNDANT_PASS_TYPES else 0.0
    return weights, stored, redundant


def legacy_cublas_pass(system, tokens_per_ubatch: int, cards: float) -> tuple[float, float, float]:
    """(bytes the conversion pass moves per micro-batch, bytes the GEMM then reads beyond the stored
    ones, SMs per second of memory latency of the ``cards`` working in parallel) on the legacy
    builds' cuBLAS prefill path; zeros where the path does not apply (another engine or backend,
    a micro-batch MMQ takes, a card below compute capability 7.0)."""
    none = (0.0, 0.0, 0.0)
    if system.backend != "cuda" or system.engine.lineage()[0] != "llama-cpp-legacy" or tokens_per_ubatch <= MMQ_MAX_BATCH_SIZE:
        return none
    cc = system.device.cuda_compute_capability
    if cc is not None and cc < FP16_CUBLAS_CC:
        return none
    row_split = system.gpus > 1 and system.options.split == "row"
    if system.quant.kind != "gguf" and not row_split:
        return none
    written = F32_BYTES if row_split else F16_BYTES
    weights, stored, redundant = _layer_matrices(system.arch, system.quant, row_split)
    pass_bytes = stored + weights * written
    build = system.options.llama_cpp_build
    if build is not None and build < REDUNDANT_PASS_FIXED_BUILD and weights:
        # The redundant kernel's extra time, on the share of the pass its types move (by weights).
        pass_bytes *= 1 + (REDUNDANT_PASS_FACTOR - 1) * redundant / weights
    return pass_bytes, weights * written - stored, latency_bound_sms(system.device, system.backend) * cards


def dequant_time(pass_bytes: float, bandwidth: float, sms_per_latency: float, p) -> float:
    """Seconds of the conversion passes: a streaming kernel at the realised bandwidth, no faster
    than the bytes the SMs keep in flight per memory latency (decode.py's Little's-law bound, with
    its fitted ``inflight_kib_per_sm``) on the cards with a measured latency (HBM: A100, H100)."""
    if not pass_bytes:
        return 0.0
    if sms_per_latency:
        bandwidth = min(bandwidth, sms_per_latency * p.inflight_kib_per_sm * 1024)
    return pass_bytes / bandwidth

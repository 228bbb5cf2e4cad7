"""Batched decode through ggml-cuda's matrix-vector kernels: the ALU work adds to the weight stream.

For a step of 2-8 tokens (batched sequences, speculative verification) llama.cpp's CUDA backend
(and ROCm through HIP) multiplies quantised weights in its MMVQ kernels, one column per token
(ggml/src/ggml-cuda/mmvq.cuh ``MMVQ_MAX_BATCH_SIZE`` 8; mmvq.cu ``ggml_cuda_should_use_mmvq``;
ggml-org/ggml@d99724f). Such a kernel decodes each packed weight block once per column: mmvq.cu
says so where it hands k-quants to MMQ sooner ("k-quants cost more to decode and mvq redoes that
per column, so MMQ wins sooner"), with per-card limits tuned on an RTX 4090, an RTX 5090 and the
DGX Spark. That MMQ, which reads the same weights once, overtakes MMVQ below 8 tokens on those
cards means MMVQ's arithmetic is not hidden behind its weight stream there: the warps that load a
block then decode and dot it for every column. So a step's multiply-adds (``matmul_s``) add to
the weight stream instead of overlapping it. From 9 tokens MMQ decodes a tile's weights once into
shared memory and runs the tensor cores over its columns: the roofline's max again. A single
token (B = 1) is memory bound either way.

The DGX Spark's llama-batched-bench rows show it (gemma-3-4b Q4_0 at 512 tokens: a step takes
12.3 ms at B = 1, 15.6 at B = 2, 16.9 at B = 4, 21.2 at B = 8, where the weights alone stream in
~11 ms: the extra grows with B below the point where the multiply-adds outlast the stream).
"""

from __future__ import annotations

from .roofline import DP4A_INT8_PER_FP32
from .unpacking import unpacking_hidden

#: ggml/src/ggml-cuda/mmvq.cuh: the largest token count the matrix-vector kernels take.
MMVQ_MAX_BATCH_SIZE = 8


def matvec_alu_adds(system, tokens: int) -> bool:
    """Whether a step's multiply-adds add to its weight stream: llama.cpp's CUDA MMVQ kernels
    (quantised GGUF weights on a dp4a card) with 2-8 tokens."""
    return (
        unpacking_hidden(system.device, system.backend)
        and "llama-cpp" in system.engine.lineage()
        and system.quant.kind == "gguf"
        and 1 < tokens <= MMVQ_MAX_BATCH_SIZE
    )


def matvec_rate_factor(system, tokens: int) -> float:
    """Rate of those multiply-adds over the FP32 vector rate: MMVQ's dot products are dp4a
    instructions (four int8 multiply-adds each, issued at the FMA rate: roofline.DP4A_INT8_PER_FP32)."""
    return mmvq_rate_factor(matvec_alu_adds(system, tokens))


def mmvq_rate_factor(alu_adds: bool) -> float:
    """The same, given whether the step's multiply-adds add to its stream (decode.py asks once)."""
    return float(DP4A_INT8_PER_FP32) if alu_adds else 1.0

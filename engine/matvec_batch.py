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

import math
from functools import lru_cache

from .quant import tensor_bytes, tensor_types
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


#: https://github.com/ggml-org/llama.cpp/blob/master/ggml/src/ggml-metal/ggml-metal-ops.cpp,
#: ggml_metal_op_mul_mat_id (the same in every version of the file read, 2025-2026, the M2 Ultra
#: rows' b7948 = 3795cc1e among them): ``const int ne21_mm_id_min = 32`` ("ne21 = n_rows (batch size)"). From 32 tokens a MoE matmul
#: runs mul_mm_id, which groups each expert's tokens and reads a touched expert once; below it
#: mul_mv_id dispatches ``ne123 = ne20*ne21`` threadgroup planes, one mat-vec per (token, expert
#: slot) pair, so every pair streams its expert's rows on its own, however many tokens share it.
METAL_MM_ID_MIN_TOKENS = 32


def metal_expert_slot_reads(system, tokens: int) -> bool:
    """Whether a step's routed experts are read once per (token, slot) pair, not once per touched
    expert: llama.cpp's Metal mul_mv_id, 2-31 tokens (:data:`METAL_MM_ID_MIN_TOKENS`). A step of
    B tokens then reads B x top-k experts' bytes, where grouped kernels read the distinct ones
    (weights.distinct_expert_fraction)."""
    return (
        system.backend == "metal"
        and system.arch.is_moe
        and "llama-cpp" in system.engine.lineage()
        and system.quant.kind == "gguf"
        and 1 < tokens < METAL_MM_ID_MIN_TOKENS
    )


#: The same file, ggml_metal_op_mul_mat: for 2-8 tokens ("small-batch mat-mv kernels ... efficient
#: for BS [2, ~8]") these types run kernel_mul_mv_ext (K-quants from 4 tokens) ...
METAL_MV_EXT_TYPES = frozenset({"f32", "f16", "q4_0", "q4_1", "q5_0", "q5_1", "q8_0", "mxfp4", "iq4_nl"})
METAL_MV_EXT_KQ_TYPES = frozenset({"q4_K", "q5_K", "q6_K"})
#: ... whose threadgroups take ``r1ptg`` token columns each (its switch on ne11), dispatched as
#: ``(ne11 + r1ptg - 1)/r1ptg`` column groups that each stream the whole matrix: 6-8 tokens read
#: the weights twice. From 9 tokens mul_mm reads them once (``ne11 > ne11_mm_min = 8``).
METAL_MV_EXT_COLUMNS_PER_THREADGROUP = {2: 2, 3: 3, 4: 4, 5: 5, 6: 3, 7: 4, 8: 4}


def metal_dense_passes(system, tokens: int) -> float:
    """Times a step of ``tokens`` tokens streams the non-expert weights through llama.cpp's
    Metal matrix kernels, byte-weighted over the tensors (1 outside mul_mv_ext's 6-8 tokens)."""
    if not (system.backend == "metal" and "llama-cpp" in system.engine.lineage() and system.quant.kind == "gguf"):
        return 1.0
    columns = METAL_MV_EXT_COLUMNS_PER_THREADGROUP.get(tokens)
    if not columns or math.ceil(tokens / columns) == 1:
        return 1.0
    return _mv_ext_passes(system.arch, system.quant, tokens, math.ceil(tokens / columns))


@lru_cache(maxsize=256)
def _mv_ext_passes(arch, quant, tokens: int, passes: int) -> float:
    total = repeated = 0.0
    for tensor, type_name, size in zip(arch.tensors, tensor_types(arch, quant), tensor_bytes(arch, quant)):
        if tensor.mtp or tensor.is_routed_expert or tensor.rows == 1 or tensor.name in ("token_embd", "per_layer_token_embd"):
            continue
        total += size
        if type_name in METAL_MV_EXT_TYPES or (type_name in METAL_MV_EXT_KQ_TYPES and tokens >= 4):
            repeated += size
    return 1.0 + (passes - 1) * repeated / total if total else 1.0


def mmvq_rate_factor(alu_adds: bool) -> float:
    """The same, given whether the step's multiply-adds add to its stream (decode.py asks once)."""
    return float(DP4A_INT8_PER_FP32) if alu_adds else 1.0

"""Storage types: the exact bytes of a matrix stored in one type (ggml's block structs, MLX's
group layout, the other checkpoints' packings)."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from functools import cache

from ..arch import Tensor


@dataclass(frozen=True)
class Storage:
    """How one storage type lays out a ``rows x cols`` matrix.

    Blocks of ``block`` consecutive elements of a row (along ``cols``, the input dimension) take
    ``block_bytes`` each; ``row_bytes`` are per-output-channel extras (a scale per row),
    ``col_bytes`` per-input-channel extras (GPTQ's act-order index), ``matrix_bytes`` per-matrix
    extras (a global scale). Each expert of a merged expert tensor is one matrix. ``pads``: a row
    that is not a whole number of blocks is padded (block-scaled FP8) rather than refused.
    """

    name: str
    block: int
    block_bytes: float
    row_bytes: float = 0.0
    col_bytes: float = 0.0
    matrix_bytes: float = 0.0
    quantized: bool = True
    pads: bool = False
    #: Codes are indices into a lattice codebook (ggml's iq1s/iq2xxs/iq2xs/iq2s/iq3xxs/iq3s_grid
    #: tables in ggml-common.h) plus sign bits: unpacking gathers table entries, which SIMD CPU
    #: kernels cannot do as cheaply as shifting nibbles (decode.py, ``codebook_ops``).
    codebook: bool = False
    #: Vector operations per weight a GPU kernel spends decoding the code into a value, where no
    #: integer dot product hides it (decode.py adds them to the unpacking time): EXL3's trellis.
    decode_ops: float = 0.0

    @property
    def bits_per_weight(self) -> float:
        """Bits per element of the blocks (row/col/matrix extras excluded)."""
        return self.block_bytes * 8 / self.block

    def matrix_size(self, rows: int, cols: int) -> float:
        # A padding type stores partial blocks at their share of a block (the scale rounding up is
        # a few bytes per row); the others need whole blocks.
        blocks_per_row = cols / self.block if self.pads else math.ceil(cols / self.block)
        row = blocks_per_row * self.block_bytes
        return rows * (row + self.row_bytes) + cols * self.col_bytes + self.matrix_bytes


def _ggml(name: str, block: int, block_bytes: int, quantized: bool = True, codebook: bool = False) -> Storage:
    return Storage(name, block, block_bytes, quantized=quantized, codebook=codebook)


#: ggml's tensor types: elements per block and bytes per block, from the block structs and their
#: static_asserts in ggml/src/ggml-common.h (llama.cpp commit 01243c58) and ggml.c type_traits.
#: Names are ggml_type_name()'s. QK_K = 256.
GGML_TYPES: dict[str, Storage] = {
    s.name: s
    for s in (
        _ggml("f32", 1, 4, quantized=False),
        _ggml("f16", 1, 2, quantized=False),
        _ggml("bf16", 1, 2, quantized=False),
        _ggml("q4_0", 32, 2 + 16),  # half d; 16 bytes of nibbles
        _ggml("q4_1", 32, 2 + 2 + 16),  # half d, half m; nibbles
        _ggml("q5_0", 32, 2 + 4 + 16),  # half d; 4 bytes high bits; nibbles
        _ggml("q5_1", 32, 2 + 2 + 4 + 16),
        _ggml("q8_0", 32, 2 + 32),  # half d; 32 int8
        _ggml("q8_1", 32, 2 + 2 + 32),  # half d, half s; 32 int8 (activations only)
        _ggml("q2_K", 256, 256 // 16 + 256 // 4 + 2 + 2),  # scales, quants, d, dmin = 84
        _ggml("q3_K", 256, 256 // 8 + 256 // 4 + 12 + 2),  # hmask, quants, scales, d = 110
        _ggml("q4_K", 256, 2 + 2 + 12 + 256 // 2),  # d, dmin, scales, quants = 144
        _ggml("q5_K", 256, 2 + 2 + 12 + 256 // 8 + 256 // 2),  # = 176
        _ggml("q6_K", 256, 256 // 2 + 256 // 4 + 256 // 16 + 2),  # ql, qh, scales, d = 210
        _ggml("q8_K", 256, 4 + 256 + 256 // 16 * 2),  # float d, quants, int16 bsums = 292
        _ggml("iq2_xxs", 256, 2 + 256 // 8 * 2, codebook=True),  # = 66
        _ggml("iq2_xs", 256, 2 + 256 // 8 * 2 + 256 // 32, codebook=True),  # = 74
        _ggml("iq2_s", 256, 2 + 256 // 4 + 256 // 16, codebook=True),  # = 82
        _ggml("iq3_xxs", 256, 2 + 3 * (256 // 8), codebook=True),  # = 98
        _ggml("iq3_s", 256, 2 + 13 * (256 // 32) + 256 // 64, codebook=True),  # = 110
        _ggml("iq1_s", 256, 2 + 256 // 8 + 256 // 16, codebook=True),  # = 50
        _ggml("iq1_m", 256, 256 // 8 + 256 // 16 + 256 // 32, codebook=True),  # = 56
        _ggml("iq4_nl", 32, 2 + 16),  # = 18
        _ggml("iq4_xs", 256, 2 + 2 + 256 // 64 + 256 // 2),  # = 136
        _ggml("tq1_0", 256, (256 - 4 * 256 // 64) // 5 + 256 // 64 + 2),  # = 54
        _ggml("tq2_0", 256, 256 // 4 + 2),  # = 66
        _ggml("mxfp4", 32, 1 + 16),  # E8M0 exponent + 16 bytes of E2M1 pairs = 17
        _ggml("nvfp4", 64, 64 // 16 + 64 // 2),  # 4 UE4M3 sub-block scales + 32 bytes = 36
        _ggml("q1_0", 128, 2 + 128 // 8),  # = 18
        _ggml("q2_0", 64, 2 + 64 // 4),  # = 18
    )
}

#: PrismML's llama.cpp fork: the original 2-bit group-128 pack of its ternary Bonsai models
#: (one fp16 scale + 32 bytes of 2-bit codes per 128), now called PQ2_0 there.
FORK_TYPES: dict[str, Storage] = {
    "pq2_0": Storage("pq2_0", 128, 2 + 128 // 4),
    # ik_llama.cpp's own types, from the block structs and static_asserts of its
    # ggml/src/ggml-common.h (commit 00b4bff2): IQ*_K are non-linear (a 16- or 32-entry value
    # table per block, like IQ4_NL); IQ*_KS carry a per-row scale; IQ*_KT are trellis codes whose
    # values are generated by integer arithmetic per weight (an unpacking cost like a codebook's,
    # ik_llama.cpp PR 534: IQ3_KT decodes at 0.6x IQ3_K on the same CPU), with a float per row;
    # IQ2_BN is ternary (BitNet b1.58), 2 bits per weight and a float per row. Row-interleaved
    # variants (_R4, _R8, _R16) keep their base type's bytes.
    **{
        s.name: s
        for s in (
            Storage("iq2_k", 256, 2 + 2 + 256 // 32 + 256 // 4),  # = 76
            Storage("iq3_k", 256, 2 + 2 * 2 + 256 // 32 + 256 // 4 + 256 // 8),  # = 110
            Storage("iq4_k", 256, 2 + 2 + 256 // 2 + 3 * 256 // 64),  # = 144
            Storage("iq5_k", 256, 2 + 2 + 256 // 2 + 256 // 8 + 3 * 256 // 64),  # = 176
            Storage("iq6_k", 256, 2 + 2 + 256 // 2 + 256 // 4 + 256 // 16),  # = 212
            Storage("iq2_ks", 256, 2 + 256 // 64 + 256 // 4, row_bytes=2),  # = 70
            Storage("iq4_ks", 256, 256 // 32 + 256 // 2, row_bytes=4),  # = 136
            Storage("iq2_kt", 256, 256 // 4 + 256 // 64, row_bytes=4, codebook=True),  # = 68
            Storage("iq3_kt", 256, 256 // 4 + 256 // 8 + 256 // 64, row_bytes=4, codebook=True),  # = 100
            Storage("iq4_kt", 256, 256 // 2 + 256 // 64, row_bytes=4, codebook=True),  # = 132
            Storage("iq2_bn", 64, 64 // 4, row_bytes=4),  # = 16
            Storage("q6_0", 32, 2 + 32 // 4 + 32 // 2),  # = 26
            # block_q8_k_r8: 8 rows interleaved, a half scale per row and 256 int8 each.
            Storage("q8_k_r8", 256, 256 + 2),  # = 258 per row-block
        )
    },
}

#: Storage types of the non-GGUF formats (sources in data/quants.toml, per format).
OTHER_TYPES: dict[str, Storage] = {
    s.name: s
    for s in (
        # MLX affine: packed uint32 codes, a scale and a bias per group of 64 in the model's
        # dtype (bf16): 4, 6 or 8 bits + 32/64 (ml-explore mlx.core.quantize docs: affine
        # takes bits 2, 3, 4, 5, 6, 8 and group 32, 64 (default), 128).
        Storage("mlx4-g64", 64, 64 * 4 / 8 + 2 + 2),
        Storage("mlx6-g64", 64, 64 * 6 / 8 + 2 + 2),
        Storage("mlx8-g64", 64, 64 * 8 / 8 + 2 + 2),
        # MLX mxfp4: E2M1 values, one E8M0 (uint8) scale per 32, no bias; nvfp4: one E4M3 scale
        # per 16, no bias, no per-tensor scale.
        Storage("mlx-mxfp4-g32", 32, 16 + 1),
        Storage("mlx-nvfp4-g16", 16, 8 + 1),
        # NVIDIA NVFP4 checkpoints (ModelOpt / compressed-tensors): E2M1 values, an E4M3 scale
        # per 16, plus an FP32 global weight scale and an FP32 input scale per matrix.
        Storage("nvfp4-g16", 16, 8 + 1, matrix_bytes=4 + 4),
        # FP8 E4M3 weights with one FP32 scale per 128x128 tile (DeepSeek/Qwen "block" FP8): the
        # tile's 4 bytes are shared by 128 rows, so a 128-element row block carries 4/128 bytes.
        # Edge tiles are partial (the scale grid is ceil(rows/128) x ceil(cols/128)).
        Storage("fp8-block128", 128, 128 + 4 / 128, pads=True),
        # AutoAWQ GEMM: 4-bit codes, an fp16 scale and a packed 4-bit zero point per 128 inputs.
        Storage("awq4-g128", 128, 64 + 2 + 0.5),
        # GPTQ: the same per group, plus an int32 act-order index (g_idx) per input column.
        Storage("gptq4-g128", 128, 64 + 2 + 0.5, col_bytes=4),
        # AutoRound's auto_round export: GPTQ-style packing (qweight, qzeros, fp16 scales), no g_idx.
        Storage("autoround4-g128", 128, 64 + 2 + 0.5),
        # compressed-tensors pack-quantized int4, symmetric: a bf16 scale per 128, no zero point.
        Storage("int4-g128", 128, 64 + 2),
        # Channel-wise integer weights (compressed-tensors "channel" strategy, QAT exports): a
        # bf16 scale per output row.
        Storage("int8-channel", 1, 1, row_bytes=2),
        Storage("int4-channel", 2, 1, row_bytes=2),
        Storage("int2-channel", 4, 1, row_bytes=2),
    )
}

#: exllamav3 EXL3 tensors: ``exl3-<bits>``, a trellis code of exactly ``bits`` per weight in 16x16
#: tiles plus fp16 sign vectors over the input and output channels (suh, svh).
EXL3_TYPE = re.compile(r"^exl3-(\d+(?:\.\d+)?)$")
#: Decoding one EXL3 weight in exllamav3's matrix-vector kernels: a funnel shift and mask take its
#: 16-bit window from the bitstream, then the procedural codebook runs a multiply, a byte sum and
#: half of an HFMA2 per weight (mul1, the default codebook since v1.0.0; decode_3inst_2 in
#: https://github.com/turboderp-org/exllamav3/blob/v1.0.0/exllamav3/exllamav3_ext/quant/codebook.cuh).
#: How the window is cut depends on the bitrate (exl3_dq.cuh ``dq_dispatch``, the same in v0.0.43
#: and v1.0.0): 1, 2 and 4 bits take eight weights from one 32-bit word with immediate bit-field
#: extracts, 3 bits shift two 64-bit windows per eight, 5, 6 and 8 bits one per four
#: (``dq4``), 7 bits one per two (``dq2x2``). SASS instructions per 8 weights of ``dq_dispatch<K, 2>``
#: called as exl3_gemm_inner.cuh calls it (idx = lane_id << 3, so the index arithmetic is hoisted
#: out of the loop), compiled with nvcc 13.0 for sm_86 (-O3; a loop over shared memory, counted
#: from the cubin's .text size, one call's increment less the 7 HADD2 of the loop's sum; the
#: microkernel and counter are docs/measure/exl3_dq_count.cu and .py): 41.5, 40.5, 43.5, 38, 43.5, 43.5, 48.5 and
#: 41.5 for K = 1..8. GeForce SMs (Ampere, Ada) issue integer work on 64 of their 128 FP32 lanes,
#: so each instruction costs 2 lane slots of 2 FLOPs at the catalog's FP32 rate: 4 FLOPs.
#: Nothing hides it the way dp4a hides GGUF unpacking, which is why exllamav3 decodes slower than
#: llama.cpp on Ampere (https://github.com/turboderp-org/exllamav3/issues/144). Priors, not fitted.
EXL3_DQ_INSTRUCTIONS_PER_8 = {1: 41.5, 2: 40.5, 3: 43.5, 4: 38.0, 5: 43.5, 6: 43.5, 7: 48.5, 8: 41.5}
#: FLOPs at the FP32 rate per integer instruction on a GeForce SM (see above).
INT_INSTRUCTION_FLOPS = 4.0


def exl3_decode_ops(bits: float) -> float:
    """FLOPs at the FP32 rate to decode one EXL3 weight of ``bits`` per weight. A fractional
    bitrate is a mix of tensors at whole bitrates (exllamav3/conversion/allocation.py
    ``create_q_strategy``, v1.0.0: an integer bitrate per module, raised one bit at a time to
    reach the average), taken here as the two neighbouring ones, interpolated linearly."""
    low = min(max(math.floor(bits), 1), 8)
    high = min(low + 1, 8)
    share = min(max(bits - low, 0.0), 1.0)
    per_8 = EXL3_DQ_INSTRUCTIONS_PER_8[low] * (1 - share) + EXL3_DQ_INSTRUCTIONS_PER_8[high] * share
    return per_8 / 8 * INT_INSTRUCTION_FLOPS


#: The 4-bit cost: 38 instructions per 8 weights, 19 FLOPs a weight at the FP32 rate.
EXL3_DECODE_OPS = exl3_decode_ops(4)


@cache
def storage(type_name: str) -> Storage:
    """The storage type called ``type_name`` (a ggml type, an other-format type or ``exl3-<bits>``)."""
    known = GGML_TYPES.get(type_name) or FORK_TYPES.get(type_name) or OTHER_TYPES.get(type_name)
    if known:
        return known
    match = EXL3_TYPE.match(type_name)
    if match:
        bits = float(match.group(1))
        return Storage(type_name, 16, 16 * bits / 8, row_bytes=2, col_bytes=2, decode_ops=exl3_decode_ops(bits))
    raise KeyError(f"unknown storage type {type_name!r}")


def tensor_size(tensor: Tensor, type_name: str) -> float:
    """Bytes of ``tensor`` stored as ``type_name``."""
    return tensor.experts * storage(type_name).matrix_size(tensor.rows, tensor.cols)


def type_bits(type_name: str) -> float:
    return storage(type_name).bits_per_weight


def fits(tensor: Tensor, type_name: str) -> bool:
    """Whether the tensor's rows split into whole blocks of the type, which the quantisers require
    (except for padding types)."""
    kind = storage(type_name)
    return kind.pads or tensor.cols % kind.block == 0

"""The tile loads of llama.cpp's and ik_llama.cpp's quantised matmul kernels (MMQ), per GGUF type.

An MMQ kernel multiplies int8 tiles on the tensor cores (or WMMA/MFMA), but the weights arrive
packed: each K step a block loads an ``mmq_y`` x 256 tile of the weight matrix from memory, unpacks
it to int8 values plus per-32 scales in shared memory (``load_tiles_<type>``), waits, multiplies it
against the activations' ``mmq_x`` columns (``vec_dot_*_mma``), waits again
(``mul_mat_q_process_tile``, ggml/src/ggml-cuda/mmq.cuh). The unpacking is integer work on the
shader ALUs whose size depends on the type: Q8_0 copies its bytes, Q4_0 masks nibbles and
subtracts 8 with an emulated byte-saturating ``__vsubss4``, the IQ types look each group of 4 or 8
weights up in a grid table (``iq3s_grid``) and apply sign bits, IQ4_NL/IQ4_XS map nibbles through
a 16-entry table. A tile is loaded once per (row tile, column tile) pair, so its cost per weight is
``ceil(columns / mmq_x)`` loads: for a dense layer's 512-token micro-batch 4 loads, for a routed
expert that got a handful of tokens one, where the multiply-adds are as few as its tokens. With
one block per SM and no asynchronous copy (stream-K, moe.STREAM_K_CC) nothing overlaps a tile's
load with another's multiply, so the load time adds to the matmul's.

The instruction counts are counted from the compiled kernels (docs/measure/mmq_tile_count.cu and
.py): each ``load_tiles_<type><128, ...>`` wrapped in a kernel of its own, compiled for sm_86 by
nvcc 13.0 (-O3), its SASS instructions counted (NOPs and a trivial kernel's overhead left out) and
divided by the 128 weights each of a block's 256 threads loads per call (128 rows x 256 weights).
ik_llama.cpp at dcdfad29 (2025-03-18, ik_llama.cpp discussion 266's build,
https://github.com/ikawrakow/ik_llama.cpp/blob/dcdfad29f7d2b831f1c84751f00bda14cc359a84/ggml/src/ggml-cuda/mmq.cuh)
and llama.cpp's mmq.cuh of the ggml sync ac0c8be4 (2025-12-17, the R9700 rows' b7423,
https://github.com/ggml-org/ggml/blob/ac0c8be4/src/ggml-cuda/mmq.cuh). The two differ only where
llama.cpp rewrote a loader after ik_llama.cpp forked (IQ4_NL / IQ4_XS: a table lookup by byte
permutes). Every instruction counts as one lane's issue slot, 2 FP32-FLOP units (the convention of
unpacking.DP4A_FALLBACK_OPS), at the shader ALUs' rate (roofline.shader_fp32_flops).
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING

from .arch import Architecture
from .moe import MMQ_MIN_CC, MMQ_TILE_COLUMNS, column_tile, host_routed, padded_columns, routed_expert_weights
from .quant import QuantFormat, storage
from .roofline import shader_fp32_flops
from .weights import weight_profile

if TYPE_CHECKING:
    from .system import System

#: SASS instructions per weight of one ``load_tiles_<type>`` call (per thread; see the module
#: docstring), llama.cpp's mmq.cuh at ggml ac0c8be4 (b7423). Not used by the engine: mainline's
#: experts and dense matmuls carry their loads in the fitted pp_quant_cost (expert_tile_load_s);
#: kept as the measured counts docs/calibration.md compares against ("measured, not kept").
LOAD_INSTRUCTIONS_MAINLINE = {
    "q4_0": 3.750, "q4_1": 1.211, "q5_0": 6.125, "q5_1": 3.586, "q8_0": 1.492, "mxfp4": 4.195,
    "q2_K": 1.859, "q3_K": 4.570, "q4_K": 1.508, "q5_K": 2.547, "q6_K": 4.656,
    "iq1_s": 1.828, "iq2_xxs": 4.531, "iq2_xs": 2.914, "iq2_s": 4.320, "iq3_xxs": 3.461, "iq3_s": 4.961,
    "iq4_nl": 3.328, "iq4_xs": 3.555,
}
#: ... and ik_llama.cpp's at dcdfad29 (q6_0 is its own type).
LOAD_INSTRUCTIONS_IK = {
    "q4_0": 3.734, "q4_1": 1.203, "q5_0": 6.117, "q5_1": 3.586, "q6_0": 4.625, "q8_0": 1.453,
    "q2_K": 1.859, "q3_K": 4.570, "q4_K": 1.492, "q5_K": 2.547, "q6_K": 4.625,
    "iq1_s": 1.828, "iq2_xxs": 4.531, "iq2_xs": 2.914, "iq2_s": 4.320, "iq3_xxs": 3.461, "iq3_s": 4.961,
    "iq4_nl": 6.609, "iq4_xs": 6.727,
}
#: FP32-FLOP units per instruction (a lane's FMA counts 2 FLOPs; an integer instruction takes the
#: lane's slot: unpacking.DP4A_FALLBACK_OPS).
OPS_PER_INSTRUCTION = 2

#: Types a custom mix's routed experts can take when a stated file size leaves them fewer bits
#: than the label's recipe (weights.scaled_profile): the MMQ types of 1.5-8.5 bits a weight. A file
#: size gives the experts' mean bits per weight, not their types, so the kernel is approximated by
#: the type nearest in bits (ties: the first listed, the IQ type the mixes of ik_llama.cpp
#: discussions 258 and 266 use).
EXPERT_MIX_TYPES = ("iq1_s", "iq2_xxs", "iq2_xs", "iq2_s", "q2_K", "iq3_xxs", "iq3_s", "q3_K", "iq4_xs", "q4_K",
                    "q5_K", "q6_K", "q8_0")


def nearest_mix_type(bits: float) -> str:
    """The MMQ type nearest ``bits`` per weight (EXPERT_MIX_TYPES)."""
    return min(EXPERT_MIX_TYPES, key=lambda t: abs(storage(t).bits_per_weight - bits))


@lru_cache(maxsize=512)
def expert_load_instructions(arch: Architecture, quant: QuantFormat, expert_keep: float) -> float:
    """ik_llama.cpp's load instructions of one pass over all routed experts' weights (weights x their type's
    count; 0 for types MMQ does not run: 16-bit tensors go to cuBLAS). ``expert_keep`` < 1: the
    file's experts hold that share of their recipe's bytes (weights.scaled_profile) and count at
    the type nearest the bits a weight they keep (:func:`nearest_mix_type`)."""
    pairs = routed_expert_weights(arch, quant)
    weights = sum(params for params, _ in pairs)
    if not weights:
        return 0.0
    if expert_keep < 1:
        bits = sum(params * storage(type_name).bits_per_weight for params, type_name in pairs) * expert_keep / weights
        return weights * LOAD_INSTRUCTIONS_IK.get(nearest_mix_type(bits), 0.0)
    return sum(params * LOAD_INSTRUCTIONS_IK.get(type_name, 0.0) for params, type_name in pairs)


def expert_tile_load_s(system: System, tokens_per_ubatch: int, micro_batches: int, speedup: float) -> float:
    """Time of the routed experts' MMQ tile loads over a prompt where ik_llama.cpp multiplies each
    touched expert in an MMQ call of its own (moe.host_routed "ik", CUDA cards with MMQ): each
    touched expert's weights are unpacked once per column tile of up to 128 of its tokens, at its
    type's instructions a weight (above), however few tokens it got. Where llama.cpp runs
    all experts in one call, every expert computes whole 128-column tiles (moe.padded_columns) and
    a tile's load goes with that tile's multiply-adds, as a dense matmul's loads (one per 128 of
    the micro-batch's tokens) go with its: a cost per FLOP that the fitted ``pp_quant_cost`` carries."""
    if system.backend != "cuda" or system.quant.kind != "gguf" or host_routed(system) != "ik":
        return 0.0
    cc = system.device.cuda_compute_capability
    if cc is not None and cc < MMQ_MIN_CC:
        return 0.0
    arch = system.arch
    base = weight_profile(arch, system.quant)
    profile = system.profile
    # A stated file smaller than the label's recipe took the bytes out of its experts (weights.scaled_profile).
    keep = profile.experts / base.experts if base.experts and profile.dense_read == base.dense_read else 1.0
    instructions = expert_load_instructions(arch, system.quant, round(min(keep, 1.0), 4))
    share = arch.experts_per_token / arch.n_experts
    tiles_per_expert = padded_columns(tokens_per_ubatch, share, MMQ_TILE_COLUMNS) / column_tile(tokens_per_ubatch, MMQ_TILE_COLUMNS)
    return instructions * micro_batches * tiles_per_expert * OPS_PER_INSTRUCTION / (shader_fp32_flops(system.device) * speedup)

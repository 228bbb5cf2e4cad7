"""BF16 routed experts at decode on llama.cpp's Vulkan backend: the matrix-matrix shader.

llama.cpp's Vulkan backend multiplies a decode step's routed experts (``mul_mat_id``) in its
matrix-vector shader only for some weight types: ``ggml_vk_use_mul_mat_vec_id`` in
ggml-vulkan.cpp returns ``src2->ne[1] <= 8 && (src0->type == GGML_TYPE_F32 || src0->type ==
GGML_TYPE_F16 || ggml_is_quantized(src0->type))``, and ``ggml_is_quantized(GGML_TYPE_BF16)`` is
false. So BF16 experts go to ``ggml_vk_mul_mat_id_q_f16``, the matrix-matrix shader (mul_mm.comp),
even for one token, although a ``mul_mat_vec_id_bf16_f32`` pipeline is built. Read in ggml's
history (https://github.com/ggml-org/ggml, src/ggml-vulkan/ggml-vulkan.cpp): the type list is the
same from ggml 813a12ce (2024-11-15, then with ``src2->ne[1] == 1``) through 87fcc0d4 (llama.cpp
PR 16868, the rule moved into ``ggml_vk_use_mul_mat_vec_id``), the R9700 rows' b7423 (ggml sync
ac0c8be4, 2025-12-17: ``== 1``), 960ee54f (PR 18918, 2026-01-30: ``<= 8``), the Strix Halo rows'
b9187-9193 (19eac6f0, 2026-05-01) and ggml's HEAD of 2026-08-21 (d99724f2). "vulkan: Add bfloat16
support" (PR 12554, ggml 1f8595d7, https://github.com/ggml-org/llama.cpp/pull/12554) put BF16 on
the dense ``ggml_vk_mul_mat`` matrix-vector path and built the BF16 id pipeline, not on the id
rule. PR 18918 (https://github.com/ggml-org/llama.cpp/pull/18918) measures why it matters: "Mat-vec
is faster than mat-mat for small values of n" (RTX 5090, MXFP4 experts, n = 4: 190.94 us mat-mat,
48.15 us mat-vec).

What the matrix-matrix shader costs a step: ``ggml_vk_guess_matmul_id_pipeline`` takes the small
tile when ``mul_mat_id_s && (m <= 32 || n <= 32)``, n being the step's tokens (``s_wg_denoms``
{32, 32}; AMD and Intel keep ``mul_mat_id_s``; the same rule at ac0c8be4, 19eac6f0 and HEAD), the
prefill's tile above 32 tokens (moe.vulkan_expert_tile). Every touched expert multiplies whole
BN-wide tiles, zero-filled past its tokens (moe.py), for each of its three projections: padded
FLOPs, at the rate the prefill path gives the same shader (prefill.shader_rate x ``eta_pp``).
mul_mm.comp's K loop loads a tile into shared memory, waits (``barrier()``), multiplies it and
waits again, with no prefetch of the next tile, and a step's expert dispatch is a few workgroups
per compute unit (8 experts x 768 / 32 rows = 192 workgroups for Qwen3-Coder-30B-A3B's gate on
the R9700's 64), too few to hide one workgroup's loads under another's multiply-adds: the padded
multiply time adds to the step's weight stream (decode.StepTime.expert_tile_s) instead of
overlapping it.
"""

from __future__ import annotations

import math

from .moe import routed_expert_weights, vulkan_expert_tile
from .parallel import parallel_cards
from .prefill import shader_rate
from .quant import storage
from .system import System
from .weights import distinct_expert_fraction

#: ``s_wg_denoms`` {32, 32}: the small mul_mm tile's columns (ggml-vulkan.cpp ``ggml_vk_load_shaders``,
#: the scalar and the "use scalar tile sizes" BF16 paths alike), taken when the step has <= 32 tokens.
VULKAN_ID_TILE_SMALL = 32
#: Unquantised types ``ggml_vk_use_mul_mat_vec_id`` still sends to the matrix-vector shader; every
#: other type that is not ``ggml_is_quantized`` (quant/storage.py ``Storage.quantized``: BF16) goes
#: to the matrix-matrix shader.
MATVEC_FLOAT_TYPES = ("f32", "f16")


def _matmat(type_name: str) -> bool:
    return type_name not in MATVEC_FLOAT_TYPES and not storage(type_name).quantized


def matmat_expert_share(system: System) -> float:
    """Share of the routed-expert weights llama.cpp's Vulkan backend multiplies in the
    matrix-matrix shader at decode (BF16 ones, on mainline builds: moe.vulkan_expert_tile > 0)."""
    if not vulkan_expert_tile(system):
        return 0.0
    pairs = routed_expert_weights(system.arch, system.quant)
    total = sum(params for params, _ in pairs)
    return sum(params for params, kind in pairs if _matmat(kind)) / total if total else 0.0


def decode_tile(system: System, tokens: int) -> int:
    """Column tile of the Vulkan ``mul_mat_id`` for a step of ``tokens`` tokens (0: not modelled)."""
    tile = vulkan_expert_tile(system)
    return VULKAN_ID_TILE_SMALL if tile and tokens <= VULKAN_ID_TILE_SMALL else tile


def expert_tiles(system: System, tokens: int, expert_params: float) -> tuple[float, float]:
    """(padded FLOPs, peak rate in FLOP/s) of a decode step's matrix-matrix experts, where
    ``expert_params`` are the routed-expert weights on the device; (0, 0) where none run there.
    The step touches a share ``distinct_expert_fraction`` of the experts (weights.py), each with
    the step's ``tokens`` x k / n routed slots over that share, rounded up to whole tiles."""
    share = matmat_expert_share(system)
    if not share or not expert_params:
        return 0.0, 0.0
    arch = system.arch
    touched = distinct_expert_fraction(arch, tokens)
    tile = decode_tile(system, tokens)
    columns = math.ceil(tokens * arch.experts_per_token / arch.n_experts / touched / tile) * tile
    return 2 * expert_params * share * touched * columns, shader_rate(system) * parallel_cards(system)

"""Mainline llama.cpp's online weight repacking on the CPU backend (a decode mechanism).

At load time ggml's CPU backend rewrites some weight types into blocks that interleave 4 or 8
rows (ggml/src/ggml-cpu/repack.cpp, ``ggml_repack_get_optimal_repack_type``; PR 9921 "add
online flow for aarch64 Q4_0 GEMV/GEMM kernels", PR 10541 "support IQ4_NL_4_4 by runtime
repack", PR 10446 "Refactor/online repacking"). What it repacks depends on the CPU:
- Arm NEON with the dot product: Q4_0 -> Q4_0_4x4 (4x8 with i8mm, 8x8 with 256-bit SVE) and
  IQ4_NL -> IQ4_NL_4x4;
- x86 AVX2: Q4_0 -> Q4_0_8x8 from PR 10446 on (before it: "TODO: enable for AVX2 - currently
  disabled due to bad gemv performance"), for prompt processing; its GEMV does not decode faster
  (PR 9921's Ryzen 5 7600X table: llama 7B Q4_0 -> Q4_0_8_8 tg128 13.88 -> 14.88 tok/s at 4
  threads, 14.90 -> 14.88 at 6), so x86 decode counts no gain. IQ4_NL, Q5_0, IQ3_S and the
  k-quants of that era stay in their own layout everywhere.
The repacked GEMV (``ggml_gemv_q4_0_4x4_q8_0``) multiplies 4 interleaved rows against one
activation block per pass: the activation load, the block scale and the reduction that a
row-by-row ``vec_dot`` pays per row and block are paid once per 4 rows, so the per-weight
unpacking cost (``dequant_ops``) shrinks by the interleave. PR 10541's M2 Ultra table shows the
gain where unpacking, not memory, bounds decode: Qwen2.5 1.5B IQ4_NL tg64 at 8 threads 103 ->
146 tok/s (1.42x). ik_llama.cpp (its own _R4/_R8 types and ``-rtr``) and the legacy builds do
not take this path.
"""

from __future__ import annotations

from functools import lru_cache

from .engines import mainline_ggml
from .weights import multiplied_quantised_weights

#: Rows one repacked block interleaves in the decode GEMV (block_q4_0x4 / block_iq4_nlx4:
#: 4; repack.cpp). The 8-row x86 / SVE variants are counted at 4 too (conservative).
REPACK_ROWS = 4

#: The first llama.cpp build known to repack at load time: issue 10757 (build 4295) reports
#: "TYPE_Q4_0_4_4 REMOVED, use Q4_0 with runtime repacking". Older builds: no repacking.
FIRST_REPACK_BUILD = 4295

#: Types repacked on Arm NEON with the dot product (``ggml_repack_get_optimal_repack_type`` at
#: PR 10446/10541), whose repacked GEMV decodes faster.
NEON_REPACKED = ("q4_0", "iq4_nl")


def repacked_types(isa: tuple[str, ...], lineage: tuple[str, ...], build: int | None) -> tuple[str, ...]:
    """ggml storage types mainline llama.cpp decodes from repacked interleaved rows on a CPU with
    ``isa`` (an engine of ``lineage``, run at llama.cpp ``build``; None = a current release)."""
    if not mainline_ggml(lineage, with_legacy=False):
        return ()
    if build is not None and build < FIRST_REPACK_BUILD:
        return ()
    return NEON_REPACKED if "dotprod" in isa else ()


@lru_cache(maxsize=256)
def repacked_share(arch, quant, types: tuple[str, ...]) -> float:
    """Share of the quantised weights one token multiplies that are stored in ``types``."""
    if not types:
        return 0.0
    total = repacked = 0.0
    for type_name, _kind, weights in multiplied_quantised_weights(arch, quant):
        total += weights
        repacked += weights if type_name in types else 0.0
    return repacked / total if total else 0.0

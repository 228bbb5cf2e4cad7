"""Native MXFP4 on Blackwell's FP4 tensor cores (issue 12; moe.py ``native_mxfp4_share``,
``NATIVE_MXFP4_SPEEDUP``), pinned to llama.cpp PR 17906's own table.

From that PR (merged 2025-12-24, ~b7510) ``ggml_cuda_mul_mat_q`` quantises the activations to MXFP4
and multiplies MXFP4 weights with the block-scaled FP4 MMA on compute capability 12.x (sm_120 RTX 50
and RTX PRO Blackwell, the DGX Spark's sm_121); its llama-bench table gives gpt-oss 20B MXFP4 pp512
10,560.64 -> 13,304.80 t/s. The DGX Spark's gpt-oss rows at b7941 are 1.20-1.28x those at b6989
(the Q8_0 Qwen3-Coder-30B-A3B rows of the same runs 1.00-1.02x).
"""

from __future__ import annotations

import pytest

from engine.moe import NATIVE_MXFP4_BUILD, NATIVE_MXFP4_SPEEDUP, native_mxfp4_share
from engine.prefill import prefill_time
from engine.system import build_system


def _system(hardware: str, model: str, quant: str, build: int | None, engine: str = "llama.cpp"):
    return build_system({"hardware": hardware, "model": model, "quant": quant, "engine": engine, "llama_cpp_build": build,
                         "ubatch": 2048})


def test_speedup_is_the_prs_published_figure():
    assert NATIVE_MXFP4_SPEEDUP == pytest.approx(13304.80 / 10560.64)
    assert round(NATIVE_MXFP4_SPEEDUP, 2) == 1.26
    assert 6989 < NATIVE_MXFP4_BUILD < 7941  # between the DGX Spark's two builds


def test_which_setups_take_the_fp4_path():
    assert native_mxfp4_share(_system("dgx-spark", "gpt-oss-120b", "MXFP4", 7941)) == pytest.approx(1.0)
    assert native_mxfp4_share(_system("dgx-spark", "gpt-oss-120b", "MXFP4", 6989)) == 0.0  # before the PR
    assert native_mxfp4_share(_system("dgx-spark", "gpt-oss-120b", "MXFP4", None)) == pytest.approx(1.0)  # today's build
    assert native_mxfp4_share(_system("dgx-spark", "Qwen3-Coder-30B-A3B", "Q8_0", 7941)) == 0.0  # no MXFP4 tensor
    assert native_mxfp4_share(_system("rtx-4090", "gpt-oss-20b", "MXFP4", 7941)) == 0.0  # Ada: int8 path
    assert native_mxfp4_share(_system("dgx-spark", "gpt-oss-20b", "MXFP4", 7941, "ik_llama.cpp")) == 0.0


def test_whole_prompt_speedup_stays_below_the_prs():
    # The PR's 1.26x is the whole prompt's; only the experts' matmuls take the FP4 path here, so
    # the engine's gain on a gpt-oss prompt is positive and no larger than the published figure.
    new = prefill_time(_system("dgx-spark", "gpt-oss-20b", "MXFP4", 7941), 2048, 0).total_s
    old = prefill_time(_system("dgx-spark", "gpt-oss-20b", "MXFP4", 6989), 2048, 0).total_s
    assert 1.05 < old / new <= NATIVE_MXFP4_SPEEDUP
    dense = [prefill_time(_system("dgx-spark", "Qwen3-Coder-30B-A3B", "Q8_0", b), 2048, 0).total_s for b in (6989, 7941)]
    assert dense[0] == pytest.approx(dense[1])

"""The ROCm prefill priors (engine/params.py PRIORS["rocm"]) against published llama-bench figures.

What a ROCm fold predicts with when the held-out device leaves the other one alone (issue 12).
attn_cost_fa is pinned to llama.cpp PR 28102 (https://github.com/ggml-org/llama.cpp/pull/28102),
JohannesGaessler's table, RX 9060 XT (gfx1200, RDNA4; not a calibration device), llama 8B Q4_0,
-ub 512, flash attention on the WMMA kernel, "t/s master": pp1024 @ d4096 2009.40, @ d32768 674.64.
The slope of time per prompt token over the cached tokens is what attention costs; the intercept
(the quantised matmuls, pp_quant_cost) is measured in docs/calibration.md and not kept.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from engine.params import PRIORS, ResolvedParams, unidentified_prior
from engine.prefill import prefill_features, prefill_time
from engine.system import build_system

PR_28102_MASTER = {4096: 2009.40, 32768: 674.64}  # tok/s, pp1024 at these depths
PROMPT = 1024


def _prior_system(depth_tokens: int):
    request = {"hardware": "rx-9060-xt", "model": "llama-3.1-8b", "quant": "Q4_0", "backend": "rocm",
               "engine": "llama.cpp", "prompt_tokens": PROMPT, "depth": depth_tokens, "ubatch": 512, "flash_attn": True}
    system = build_system(request)
    return replace(system, params=ResolvedParams(unidentified_prior("rocm"), "prior/rocm", False, 0.5, 2.0))


def _s_per_token(depth_tokens: int) -> float:
    return prefill_time(_prior_system(depth_tokens), PROMPT, depth_tokens).total_s / PROMPT


def test_the_attention_runs_on_the_matrix_units_at_the_prior():
    """Llama 8B (head 128, 4 queries a KV head) on a current RDNA4 build: the WMMA kernel, so
    attn_cost_fa / eta_pp sets its rate (no tile-kernel layers, fa_kernels.rocm_tile_layer)."""
    features = prefill_features(_prior_system(4096), PROMPT, 4096)
    assert features.tile_attention_flops == 0 and features.attention_flops > 0


def test_rocm_attn_cost_fa_reproduces_pr_28102s_depth_slope():
    """34.3 ns more per prompt token per cached token between d4096 and d32768, within 3%."""
    published = (1 / PR_28102_MASTER[32768] - 1 / PR_28102_MASTER[4096]) / (32768 - 4096)
    engine = (_s_per_token(32768) - _s_per_token(4096)) / (32768 - 4096)
    assert PRIORS["rocm"].attn_cost_fa == 2.0
    assert engine == pytest.approx(published, rel=0.03)

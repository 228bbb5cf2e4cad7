"""llama.cpp's HIP flash attention on Radeon GPUs: which layers run the tile kernel on the shader ALUs
and at what rate (fa_kernels.rocm_tile_layer, ROCM_TILE_FA_SHARE), pinned to the published figure the
prior comes from and to the kernel choice of ggml/src/ggml-cuda/fattn.cu.

PR 26419 (https://github.com/ggml-org/llama.cpp/pull/26419), comment of 2026-08-29: Radeon 8060S
(gfx1151, Ryzen AI Max+ 395), master c841aeeb8, Qwen3.6-35B-A3B UD-Q4_K_XL (head dim 256: the tile
kernel), -fa 1 -ctk f16 -ctv f16 -ub 2048, llama-bench pp512 at depth 0 / 65,536: 1057.15 / 390.27 tok/s.
"""

from __future__ import annotations

import pytest

from engine.kvcache import gqa_ratio, head_dim
from engine.fa_kernels import AMD_MATRIX_FA_BUILD, RDNA3_MATRIX_FA_BUILD, ROCM_TILE_FA_SHARE, rocm_tile_layer
from engine.prefill import prefill_features, prefill_time
from engine.system import build_system

STRIX = {"hardware": "ryzen-ai-max-plus-395-128gb", "backend": "rocm", "model": "Qwen3.6-35B-A3B",
         "quant": "UD-Q4_K_XL", "ubatch": 2048, "llama_cpp_build": 10600}


def test_tile_kernel_rate_is_the_published_8060s_depth_slope():
    system = build_system(STRIX)
    shallow, deep = prefill_features(system, 512, 0), prefill_features(system, 512, 65536)
    # Head dim 256: every attention layer on the tile kernel, whatever the build.
    assert deep.attention_flops == 0 and deep.tile_attention_flops > 0
    extra_s = deep.tile_attention_flops / deep.tile_attention_rate - shallow.tile_attention_flops / shallow.tile_attention_rate
    published_s = 512 / 390.27 - 512 / 1057.15  # 0.83 s more at 64k of cache
    assert extra_s == pytest.approx(published_s, rel=0.02)
    assert deep.tile_attention_rate == pytest.approx(ROCM_TILE_FA_SHARE * 29.7e12, rel=0.01)
    # The whole prediction slows with depth as the published run does (2.71x), within 20%.
    params_slowdown = prefill_time(system, 512, 65536).total_s / prefill_time(system, 512, 0).total_s
    assert params_slowdown == pytest.approx((1057.15 / 390.27), rel=0.2)


def test_wmma_kernel_takes_grouped_heads_up_to_128_from_its_build():
    ministral = {**STRIX, "model": "Ministral-3-14B", "quant": "BF16"}  # head 128, 4 query heads per KV head
    layer = build_system(ministral).arch.attention[0]
    assert head_dim(layer) == 128 and gqa_ratio(layer) == 4
    assert not rocm_tile_layer(build_system({**ministral, "llama_cpp_build": RDNA3_MATRIX_FA_BUILD}))(layer)
    assert rocm_tile_layer(build_system({**ministral, "llama_cpp_build": RDNA3_MATRIX_FA_BUILD - 1}))(layer)
    # Llama 2 has no grouped queries: gqa_opt_applies is false, the tile kernel it is.
    llama2 = build_system({**STRIX, "model": "Llama-2-7B", "quant": "Q4_0"})
    assert gqa_ratio(llama2.arch.attention[0]) == 1 and rocm_tile_layer(llama2)(llama2.arch.attention[0])
    # RDNA4 got the WMMA kernel with PR 18481 (b7654).
    r9700 = {**ministral, "hardware": "radeon-ai-pro-r9700"}
    assert rocm_tile_layer(build_system({**r9700, "llama_cpp_build": AMD_MATRIX_FA_BUILD - 1}))(layer)
    assert not rocm_tile_layer(build_system({**r9700, "llama_cpp_build": AMD_MATRIX_FA_BUILD}))(layer)
    # Without flash attention, or on CUDA, no tile rule.
    assert rocm_tile_layer(build_system({**ministral, "flash_attn": False})) is None
    assert rocm_tile_layer(build_system({**ministral, "hardware": "RTX 4090", "backend": "cuda"})) is None

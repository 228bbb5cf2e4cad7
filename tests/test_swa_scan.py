"""Sliding-window layers in llama.cpp's HIP prefill score the whole window + micro-batch cache
(kvcache.swa_scanned_cells, prefill.SWA_SCAN_BACKENDS), pinned to the sources' cache size and to the
Radeon AI PRO R9700's gemma-3-4b rows (kyuz0 r9700 toolboxes, b7423, -fa 1).

llama.cpp keeps n_swa + n_ubatch cells for a sliding-window layer, padded to 256 (PR 13833, PR 17046),
and its flash-attention kernels trim only the masked tail of the cells, so at 16k of cache a 2,048-token
micro-batch of gemma-3-4b (window 1,024) scores 3,072 cells per query in its 29 sliding layers.
"""

from __future__ import annotations

import csv

from engine.arch import gqa_attention
from engine.catalog import DATA_DIR
from engine.kvcache import attention_flops, attention_pairs, swa_scanned_cells
from engine.prefill import SWA_SCAN_BACKENDS, prefill_features, prefill_time
from engine.system import build_system
from engine.tools.score import row_request


def test_cache_cells_follow_llama_cpp_padding():
    assert swa_scanned_cells(1024, 2048) == 3072  # gemma-3 at -ub 2048
    assert swa_scanned_cells(1024, 512) == 1536  # gemma-3 at the default -ub 512
    assert swa_scanned_cells(128, 2048) == 2304  # gpt-oss: 128 + 2048, padded to 256


def test_scanned_cells_only_matter_past_the_window():
    layer = gqa_attention(8, 4, 256, window=1024)
    # An empty cache and a prompt within the window: the causal triangle either way.
    assert attention_pairs(layer, 512, 0, 1536) == attention_pairs(layer, 512, 0)
    # Deep in the context every query is scored against the whole cache, not the window.
    assert attention_pairs(layer, 2048, 16384) == 2048 * 1024
    assert attention_pairs(layer, 2048, 16384, 3072) == 2048 * 3072
    full = gqa_attention(8, 4, 256)
    assert attention_pairs(full, 2048, 16384, 3072) == attention_pairs(full, 2048, 16384)


def _row(flags: str) -> dict:
    with open(DATA_DIR / "calibration" / "measurements.csv", newline="", encoding="utf-8") as handle:
        return next(
            r for r in csv.DictReader(handle)
            if r["source_id"] == "kyuz0_r9700_toolboxes" and r["test"] == "pp" and r["model"] == "gemma-3-4b"
            and f"flags={flags};" in r["notes"]
        )


def test_r9700_gemma3_prefill_at_depth_scores_the_swa_cache():
    deep, shallow = _row("rocm7.1.1__fa1__longctx16384__single"), _row("rocm7.1.1__fa1__single")
    assert deep["depth"] == "16384" and shallow["depth"] == "0"
    system = build_system(row_request(deep))
    assert system.backend in SWA_SCAN_BACKENDS and system.options.ubatch == 2048
    scored, windowed = attention_flops(system.arch, 2048, 16384, 2048), attention_flops(system.arch, 2048, 16384)
    assert 1.3 < scored / windowed < 1.7  # 29 sliding layers at 3,072 cells instead of 1,024
    # (b7423 runs RDNA4's attention on HIP's tile kernel: fa_kernels.rocm_tile_layer, every layer)
    features = prefill_features(system, 2048, 16384)
    assert features.tile_attention_flops == scored and features.attention_flops == 0
    # Measured: pp2048 @ d16384 runs at 0.55 of pp512's rate (3,453 vs 6,304 tok/s). Counting the
    # window alone predicted 1.41x the deep rate in sample; the whole cache brings it within 1.3x.
    predicted = 2048 / prefill_time(system, 2048, 16384).total_s
    assert 0.85 < predicted / float(deep["tokens_per_s"]) < 1.3
    # CUDA keeps the window alone (its rows do not show the cost).
    cuda = build_system({**row_request(deep), "hardware": "RTX 4090", "backend": "cuda"})
    assert prefill_features(cuda, 2048, 16384).attention_flops == windowed
    assert shallow["tokens_per_s"] and float(shallow["tokens_per_s"]) > 1.5 * float(deep["tokens_per_s"])

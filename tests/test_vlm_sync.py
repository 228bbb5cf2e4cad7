"""oMLX before PR 688 synchronised the GPU with the CPU once per layer on a vision-language model's
single-request decode (engines.toml ``omlx-legacy``, engine/layerchain.py ``vlm_sync_s``).

Source: https://github.com/jundot/omlx/issues/687 and https://github.com/jundot/omlx/pull/688
(oMLX v0.3.4, M3 Ultra: "48 layers x 0.185ms = 8.88ms per token"). Calibration rows: the Apple
harness's M3 Max (AlexHiesch/apple-silicon-llm-bench, oMLX 0.3.4 against mlx-lm 0.31.2, same
session): Qwen3.5-35B-A3B 4-bit short prompt 66.7 against 93.6 tok/s (0.71x), Qwen3-Coder-Next
(text only) 60.5 against 61.2 (0.99x).
"""

from __future__ import annotations

import pytest

from engine import estimate
from engine.engines import load_engines
from engine.models import load_models
from engine.tools.score import row_request

M3_MAX = {"hardware": "Apple M3 Max 64GB", "quant": "MLX-4bit"}


def _tps(model: str, engine: str, **extra) -> float:
    return estimate({**M3_MAX, "model": model, "engine": engine, **extra})["decode_tps"]


def test_the_prior_is_the_issues_per_layer_sync():
    engine = load_engines()["omlx-legacy"]
    assert engine.vlm_layer_sync_s == pytest.approx(8.88e-3 / 48, rel=0.01)
    assert engine.base == "omlx" and load_engines()["omlx"].vlm_layer_sync_s == 0  # fixed in the current release


def test_a_vision_language_model_pays_it_per_layer_and_token():
    """Qwen3.5-35B-A3B (40 layers, a vision tower): 40 x 0.185 ms = 7.4 ms a token more; the
    harness measured 0.71x mlx-lm's rate, the engine gives 0.55-0.8x its own current-oMLX rate."""
    assert load_models()["qwen3.5-35b-a3b"].vision_language
    old, new = _tps("Qwen3.5-35B-A3B", "oMLX 0.3.4 and earlier"), _tps("Qwen3.5-35B-A3B", "omlx")
    assert 1 / old - 1 / new == pytest.approx(40 * 0.185e-3, rel=0.01)
    assert 0.55 < old / new < 0.8


def test_text_only_models_and_batches_do_not_pay_it():
    """Qwen3-Coder-Next has no vision tower: oMLX ran it through mlx-lm's path (0.99x mlx-lm in the
    harness); several sequences went through mlx-lm's batched model even for a VLM (PR 688)."""
    assert not load_models()["qwen3-coder-next"].vision_language
    assert _tps("Qwen3-Coder-Next", "oMLX 0.3.4 and earlier") == pytest.approx(_tps("Qwen3-Coder-Next", "omlx"))
    old = estimate({**M3_MAX, "model": "Qwen3.5-35B-A3B", "engine": "oMLX 0.3.4 and earlier", "batch": 2})
    assert old["breakdown"]["vlm_sync_s"] == 0


def test_the_harness_rows_of_oMLX_0_3_4_run_the_old_engine():
    row = {"hardware": "Apple M3 Max 64GB", "model": "Qwen3.5-35B-A3B", "quant": "MLX-4bit", "engine": "omlx",
           "backend": "metal", "notes": "test_id=B_OX; backend_version=0.3.4; kv_cache=ssd-paged;"}
    assert row_request(row)["engine"] == "oMLX 0.3.4 and earlier"
    assert row_request({**row, "notes": "backend_version=; kv_cache=ssd-paged;"})["engine"] == "omlx"

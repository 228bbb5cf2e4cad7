"""Decode with flash attention off (issue 12), pinned to published FA-off numbers.

Without flash attention llama.cpp's GPU decode runs attention as matrix-vector products whose
kernels take one block per query head (ggml-cuda mmvf.cu: ``channel_x = channel_dst /
channel_ratio``), so a GQA model's KV cache streams once per query head, and the F32 scores go
through memory (engine/kvcache.py unfused_kv_read_factor). An MHA model pays only the scores.
"""

from __future__ import annotations

import csv

import pytest

from engine import estimate
from engine.catalog import DATA_DIR
from engine.decode import run_features, step_time_from
from engine.kvcache import UNFUSED_SCORE_BYTES
from engine.page.commands import check_commands, cli_command
from engine.page.fields import DEFAULT_VIEW
from engine.page.view import request_for_view
from engine.system import build_system

CARD = {"hardware": "RTX 4090", "model": "Llama-3.1-8B", "quant": "Q4_K_M", "prompt_tokens": 1}


def _rows(source: str) -> list[dict]:
    with open(DATA_DIR / "calibration" / "measurements.csv", newline="", encoding="utf-8") as handle:
        return [row for row in csv.DictReader(handle) if row["source_id"] == source]


def _decode(request: dict, flash_attn: bool) -> float:
    return estimate({**request, "flash_attn": flash_attn})["decode_tps"]


def test_flash_attention_off_slows_decode_at_depth_not_at_an_empty_context():
    empty = _decode({**CARD, "depth": 0}, True) / _decode({**CARD, "depth": 0}, False)
    deep = _decode({**CARD, "depth": 16000}, True) / _decode({**CARD, "depth": 16000}, False)
    assert empty < 1.05
    assert deep > 1.5


def test_the_unfused_path_reads_a_gqa_cache_once_per_query_head():
    """Llama 3.1 8B: 32 query heads on 8 KV heads of 128 dims, f16 cache: 4 reads of the cache
    plus 16 bytes of scores per query head and token (4,096 cache bytes per layer and token)."""
    result = estimate({**CARD, "depth": 8000, "flash_attn": False})
    expected = 32 / 8 + UNFUSED_SCORE_BYTES * 32 / (2 * 8 * 128 * 2)
    assert result["breakdown"]["kv_unfused_factor"] == pytest.approx(expected)
    assert estimate({**CARD, "depth": 8000})["breakdown"]["kv_unfused_factor"] == 1.0


def test_an_mha_model_pays_only_the_scores():
    """Llama 2 7B has a KV head per query head: without flash attention it reads its cache once,
    as the fused kernel does, plus the scores (16 of every 512 bytes per head and token). A GQA
    model of the same size, whose fused cache read is 4x smaller, loses more: the effect follows
    the query heads, not the cache. (Issue 12 expected the opposite; neither llama.cpp's kernels
    nor the published pairs below support it.)"""
    mha = {"hardware": "RTX 4090", "model": "Llama-2-7B", "quant": "Q4_K_M", "prompt_tokens": 1, "depth": 3000}
    gqa = {**CARD, "depth": 3000}
    mha_loss = _decode(mha, True) / _decode(mha, False)
    gqa_loss = _decode(gqa, True) / _decode(gqa, False)
    assert mha_loss < 1.06
    assert gqa_loss > mha_loss + 0.1


def test_the_context_slope_without_flash_attention_matches_the_rtx_3090_rows():
    """xiongjiedai_llama3 rows (data/calibration/measurements.csv; github.com/XiongjieDai/
    GPU-Benchmarks-on-LLM-Inference, llama.cpp build 2824, flash attention off): RTX 3090, Llama 3
    8B Q4_K_M, tg512 115.42 and tg4096 97.31 tok/s from an empty context: 1.61 ms more per token
    for 1,792 more tokens of mean context. The fused read of the cache alone would give a quarter
    of that; the per-query-head read comes within 20%."""
    rows = {int(r["n_tokens"]): float(r["tokens_per_s"]) for r in _rows("xiongjiedai_llama3")
            if r["hardware"] == "NVIDIA RTX 3090 24GB" and r["n_devices"] == "1" and r["model"] == "Meta-Llama-3-8B"
            and r["quant"] == "Q4_K_M" and r["test"] == "tg" and r["flash_attn"] == "0"}
    assert (rows[512], rows[4096]) == (115.42, 97.31)
    measured = 1 / rows[4096] - 1 / rows[512]
    slopes = {}
    for flash in (True, False):
        system = build_system({"hardware": "RTX 3090", "model": "Llama-3-8B", "quant": "Q4_K_M", "engine": "llama.cpp", "flash_attn": flash})
        params = system.params.params
        step = {n: step_time_from(run_features(system, 0, n, 1), params).total_s for n in (512, 4096)}
        slopes[flash] = step[4096] - step[512]
    assert abs(slopes[False] / measured - 1) < 0.2
    assert slopes[True] < 0.4 * measured


@pytest.mark.parametrize("hardware", ["RTX 3090", "RTX 4090"])
def test_mixtral_without_flash_attention_matches_llama_cpp_pr_5021(hardware):
    """https://github.com/ggml-org/llama.cpp/pull/5021 (comment of 2024-04-30, a 24 GB card on
    Windows, Mixtral-8x7B IQ2_XS, 7,840-token prompt then ~325 tokens): 44.69 tok/s with flash
    attention, 22.87 without, 1.95x. Mixtral has 32 query heads on 8 KV heads. The card is not
    named, so both 24 GB cards of the time; the engine's ratio within 30%."""
    request = {"hardware": hardware, "model": "Mixtral-8x7B", "quant": "IQ2_XS", "prompt_tokens": 1, "depth": 7840, "gen_tokens": 325}
    ratio = _decode(request, True) / _decode(request, False)
    assert abs(ratio / (44.69 / 22.87) - 1) < 0.3


def test_cpu_decode_does_not_depend_on_flash_attention():
    """ik_llama.cpp PR 273 (https://github.com/ikawrakow/ik_llama.cpp/pull/273), Threadripper PRO
    5975WX, DeepSeek-V2-Lite IQ4_NL_R4, -mla 1, tg64 at 8192 tokens of context: 26.02 tok/s with
    flash attention, 25.58 without (calibration rows): within 2%, and the engine's CPU path has no
    unfused-attention cost. (Its -mla 2/3 modes differ more: ik_llama.cpp's own MLA kernels.)"""
    pair = {r["flash_attn"]: float(r["tokens_per_s"]) for r in _rows("ik_llama_ikawrakow_pr273")
            if r["depth"] == "8192" and r["test"] == "tg" and r["quant"] == "IQ4_NL_R4" and "mla=1;" in r["notes"]}
    assert pair == {"0": 25.58, "1": 26.02}
    assert abs(pair["1"] / pair["0"] - 1) < 0.02
    request = {"hardware": "AMD Ryzen Threadripper PRO 5975WX", "model": "DeepSeek-V2-Lite", "quant": "Q4_K_M",
               "engine": "ik_llama.cpp", "prompt_tokens": 1, "depth": 8192}
    assert _decode(request, True) == pytest.approx(_decode(request, False))


def test_the_page_offers_flash_attention_and_its_commands_follow():
    """Advanced 'Flash attention' (view key fa, from engine/options.py): auto leaves the engine's
    default, off reaches the request, the CLI line and llama.cpp's own commands."""
    assert "flash_attn" not in request_for_view(dict(DEFAULT_VIEW))
    request = request_for_view({**DEFAULT_VIEW, "fa": "off", "depth": 8000})
    assert request["flash_attn"] is False
    assert "--no-flash-attn" in cli_command(request)
    commands = [c["command"] for c in check_commands(request, estimate(request))]
    assert any(c.startswith("llama-bench") and c.endswith("-fa 0") for c in commands)
    assert any(c.startswith("llama-server") and c.endswith("-fa off") for c in commands)
    assert request_for_view({**DEFAULT_VIEW, "fa": "on"})["flash_attn"] is True

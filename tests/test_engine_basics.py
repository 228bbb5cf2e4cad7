"""The engine's entry point and CLI: the public interface's shape (docs/sources.md), the founding articles' sanity case, bad input."""

from __future__ import annotations

import json
import math

import pytest

from conftest import run_cli
from engine import EngineInputError, estimate
from engine.page.fields import DEFAULT_VIEW
from engine.page.view import estimate_view

BASE = {"hardware": "RTX 4090", "model": "Llama-3.1-8B", "quant": "Q4_K_M"}

CONTRACT_KEYS = {
    "decode_tps", "decode_tps_low", "decode_tps_high", "decode_ceiling_tps", "prefill_tps", "ttft_s",
    "fit", "memory", "tier", "hardware", "model", "quant", "engine",
}


def test_result_has_the_contract_keys():
    result = estimate(BASE)
    assert CONTRACT_KEYS <= set(result)
    assert {"weights_gb", "kv_gb", "overhead_gb", "total_gb", "usable_gb"} <= set(result["memory"])
    assert {"id", "name", "bandwidth_gbs", "memory_gb"} <= set(result["hardware"])
    assert {"id", "name", "params_b", "active_params_b"} <= set(result["model"])
    assert result["fit"] in ("fits", "offload", "no")
    assert result["tier"] in ("measured", "calibrated", "projected")


def test_q4_k_m_weights_and_the_range_around_the_prediction():
    """Q4_K_M is ~4.9 bits per weight on Llama 3 8B, so ~4.9 GB of weights, not 4.0 or 4.5
    (the founding articles' sanity speeds are in test_physics_sanity.py)."""
    result = estimate(BASE)
    assert result["decode_tps_low"] <= result["decode_tps"] <= result["decode_tps_high"]
    assert result["fit"] == "fits"
    assert 4.7 <= result["memory"]["weights_gb"] <= 5.1


def test_names_resolve_through_aliases():
    for hardware in ("RTX 4090", "NVIDIA RTX 4090 24GB", "rtx-4090", "GeForce RTX 4090"):
        assert estimate({**BASE, "hardware": hardware})["hardware"]["id"] == "rtx-4090"
    for model in ("Llama-3.1-8B", "llama 3.1 8b", "Meta-Llama-3.1-8B-Instruct"):
        assert estimate({**BASE, "model": model})["model"]["id"] == "llama-3.1-8b"


def test_unknown_name_lists_closest_matches():
    with pytest.raises(EngineInputError) as info:
        estimate({**BASE, "hardware": "RTX 4099"})
    assert info.value.field == "hardware"
    assert any("4090" in name for name in info.value.suggestions)


@pytest.mark.parametrize(
    "change, field",
    [
        ({"prompt_tokens": 0}, "prompt_tokens"),
        ({"prompt_tokens": -5}, "prompt_tokens"),
        ({"prompt_tokens": float("nan")}, "prompt_tokens"),
        ({"prompt_tokens": 1.5}, "prompt_tokens"),
        ({"prompt_tokens": "512"}, "prompt_tokens"),
        ({"gen_tokens": 10**12}, "gen_tokens"),
        ({"batch": True}, "batch"),
        ({"gpu_layers": 1.5}, "gpu_layers"),
        ({"kv_quant": "q3_x"}, "kv_quant"),
        ({"split": "diagonal"}, "split"),
        ({"nvlink": True, "gpus": 2}, "nvlink"),
        ({"nvlink": "yes"}, "nvlink"),
        ({"slot_pcie_gen": 7}, "slot_pcie_gen"),
        ({"slot_pcie_lanes": 3}, "slot_pcie_lanes"),
        ({"bogus": 1}, "bogus"),
        ({"quant": "Q9_Z"}, "quant"),
        ({"model": {"config": {"model_type": "nonsense"}}}, "config"),
    ],
)
def test_bad_input_raises_one_clear_error(change, field):
    with pytest.raises(EngineInputError) as info:
        estimate({**BASE, **change})
    assert info.value.field == field
    assert info.value.message


def test_every_number_is_finite_and_positive():
    result = estimate({**BASE, "prompt_tokens": 100_000, "depth": 50_000, "gen_tokens": 4000})
    for key in ("decode_tps", "decode_tps_low", "decode_tps_high", "prefill_tps", "ttft_s"):
        assert math.isfinite(result[key]) and result[key] > 0, key


def test_longer_context_is_slower():
    short = estimate(BASE)["decode_tps"]
    long = estimate({**BASE, "depth": 60_000})["decode_tps"]
    assert long < short


def test_too_big_for_the_card_offloads_and_too_big_for_everything_does_not_run():
    big = estimate({**BASE, "model": "Llama-3.1-70B", "quant": "Q8_0"})
    assert big["fit"] == "offload"
    assert big["decode_tps"] < 10  # the offload cliff: system RAM sets the pace
    mac = estimate({"hardware": "Apple M1 7-core GPU 8GB", "model": "Llama-3.1-70B", "quant": "Q4_K_M"})
    assert mac["fit"] == "no"


def test_schedule_arrivals_are_increasing_and_match_the_rate():
    result = estimate({**BASE, "gen_tokens": 300, "schedule": True})
    arrivals = result["schedule"]["arrival_s"]
    assert len(arrivals) == 300
    assert arrivals[0] == pytest.approx(result["ttft_s"], abs=1e-6)  # arrivals are rounded to microseconds
    steps = [b - a for a, b in zip(arrivals, arrivals[1:])]
    assert all(s > 0 for s in steps)
    assert steps[-1] >= steps[0]  # the cache grows, so steps never get shorter
    assert (len(arrivals) - 1) / (arrivals[-1] - arrivals[0]) == pytest.approx(result["decode_tps"], rel=0.01)


def test_view_maps_to_a_request_and_cli_line():
    result = estimate_view(DEFAULT_VIEW)
    assert result["request"]["hardware"] == DEFAULT_VIEW["hw"]
    assert result["cli"].startswith("python -m engine estimate --hardware")
    assert "schedule" in result["estimate"]


def test_cli_estimate_json_and_exit_codes():
    ok = run_cli("estimate", "--hardware", "RTX 4090", "--model", "llama 3.1 8b", "--quant", "Q4_K_M", "--json")
    assert ok.returncode == 0, ok.stderr
    assert CONTRACT_KEYS <= set(json.loads(ok.stdout))
    bad = run_cli("estimate", "--hardware", "RTX 4099", "--model", "llama 3.1 8b", "--quant", "Q4_K_M", "--json")
    assert bad.returncode == 2
    assert "closest" in bad.stderr and "Traceback" not in bad.stderr
    assert len(bad.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("kind, key", [("hardware", "bandwidth_gbs"), ("models", "layers"), ("quants", "bits_per_weight")])
def test_cli_list_json(kind, key):
    result = run_cli("list", kind, "--json")
    assert result.returncode == 0, result.stderr
    items = json.loads(result.stdout)
    assert items and all({"id", "name", "aliases", key} <= set(item) for item in items)


def test_cli_takes_custom_hardware_and_a_config_file(tmp_path):
    from engine.models import load_models

    config = tmp_path / "config.json"
    config.write_text(json.dumps(load_models()["llama-3.1-8b"].config))
    custom = json.dumps({"name": "My card", "kind": "gpu", "memory_gib": 24, "bandwidth_gbs": 1008, "fp16_tflops": 165.2})
    result = run_cli("estimate", "--hardware-json", custom, "--model-config", str(config), "--quant", "Q4_K_M", "--json")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["hardware"]["name"] == "My card" and data["model"]["id"] == "custom"
    # Same numbers as the catalog's model and a device with the same specs.
    same = estimate({"hardware": json.loads(custom), "model": "llama-3.1-8b", "quant": "Q4_K_M"})
    assert data["decode_tps"] == pytest.approx(same["decode_tps"], rel=1e-12)
    bad = run_cli("estimate", "--hardware-json", "{not json", "--model", "llama-3.1-8b", "--quant", "Q4_K_M")
    assert bad.returncode == 2 and "not valid JSON" in bad.stderr and "Traceback" not in bad.stderr


def test_ollama_hands_mlx_weights_to_its_mlx_engine_on_macs_only():
    """engines.toml serves_for: Ollama 0.19+ runs its int4/nvfp4 tags through MLX on Apple
    Silicon (its own calibration key, borrowing from mlx-lm), GGUF tags through GGML."""
    mac = {"hardware": "Apple M3 Max 64GB", "model": "qwen3.6-27b", "engine": "ollama"}
    assert estimate({**mac, "quant": "NVFP4"})["engine"] == "Ollama (MLX engine)"
    assert estimate({**mac, "quant": "INT4"})["engine"] == "Ollama (MLX engine)"
    assert estimate({**mac, "quant": "Q4_K_M"})["engine"] == "Ollama"
    # Since 0.30 its GGUFs run in llama-server (PR 16031): llama.cpp's calibration; its rows (0.19-0.23) are ollama-legacy's.
    assert estimate({**mac, "quant": "Q4_K_M"})["calibration"].startswith("llama-cpp/")
    assert estimate({**mac, "quant": "Q4_K_M", "engine": "ollama-legacy"})["calibration"].startswith("ollama-legacy/")
    assert estimate({**mac, "quant": "NVFP4"})["calibration"].startswith("ollama-mlx/")
    assert estimate({**mac, "hardware": "RTX 4090", "quant": "Q4_K_M"})["engine"] == "Ollama"


@pytest.mark.parametrize(
    "request_",
    [
        {"hardware": "rtx-4090", "model": "llama-3.1-8b", "quant": "Q4_K_M", "depth": 16000, "flash_attn": False},
        {"hardware": "rtx-4090", "model": "gemma-3-27b", "quant": "Q4_K_M", "gen_tokens": 2000},  # crosses its 1,024 window
        {"hardware": "rtx-4090", "model": "qwen3-30b-a3b", "quant": "Q4_K_M", "depth": 100_000},
        {"hardware": "rtx-3060", "model": "llama-3.3-70b", "quant": "Q4_K_M"},  # most layers in system RAM
        {"hardware": "amd-ryzen-9-7950x-128gb", "model": "llama-3.1-8b", "quant": "Q4_K_M", "depth": 8000},
        {"hardware": "apple-m4-max-40c-128gb", "model": "gpt-oss-20b", "quant": "MXFP4", "batch": 4},
    ],
)
def test_the_schedule_is_every_step_computed(request_, monkeypatch):
    """The schedule computes a few steps (ends, windows, midpoints until each piece is straight)
    and interpolates the rest: its arrivals equal those of every step computed, and a straight run
    costs three steps."""
    from engine import stream
    from engine.decode import step_at

    request_ = {"gen_tokens": 1500, **request_, "schedule": True}
    computed = []
    real = stream.step_at
    monkeypatch.setattr(stream, "step_at", lambda *a, **k: computed.append(a[1]) or real(*a, **k))
    sampled = estimate(request_)["schedule"]["arrival_s"]
    assert len(computed) <= 12
    monkeypatch.setattr(stream, "_step_times", lambda system, start, count: [step_at(system, start + i, system.options.batch).total_s for i in range(count)])
    every = estimate(request_)["schedule"]["arrival_s"]
    assert sampled == pytest.approx(every, rel=1e-9, abs=2e-6)


def test_ollama_rows_before_0_30_run_its_go_engine_and_its_mlx_tags_still_run_mlx():
    """Ollama 0.30 replaced its Go engine and vendored ggml with upstream llama-server for every
    GGUF (https://github.com/ollama/ollama/pull/16031, merged 2026-05-29; v0.30.0 has no
    runner/ollamarunner): a row that names an earlier release (the Apple harness's
    backend_version=0.19.0 ... 0.23.1) ran the engine ollama-legacy, a later one today's Ollama.
    Both hand their MLX tags (INT4/NVFP4, since 0.19) to the MLX engine."""
    from engine.tools.score import row_request

    row = {"hardware": "Apple M3 Max 64GB", "model": "Qwen3.6-27B", "quant": "Q4_K_M", "engine": "ollama",
           "backend": "metal", "n_devices": "1", "split_mode": "none"}
    for version, engine in (("0.19.0", "Ollama before 0.30"), ("0.23.1", "Ollama before 0.30"), ("0.30.0", "ollama"), ("0.32.15", "ollama")):
        assert row_request({**row, "notes": f"backend_version={version}; kv_cache=default"})["engine"] == engine
    assert row_request({**row, "notes": ""})["engine"] == "ollama"
    mac = {"hardware": "Apple M3 Max 64GB", "model": "qwen3.6-27b", "engine": "ollama-legacy"}
    assert estimate({**mac, "quant": "Q4_K_M"})["engine"] == "Ollama before 0.30"
    assert estimate({**mac, "quant": "NVFP4"})["engine"] == "Ollama (MLX engine)"
    assert estimate({**mac, "quant": "INT4"})["engine"] == "Ollama (MLX engine)"
    with pytest.raises(EngineInputError):
        estimate({**mac, "hardware": "RTX 4090", "quant": "INT4"})

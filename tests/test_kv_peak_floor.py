"""A GPU's cache streams no faster than the memory's peak bandwidth (engine/decode.py ``kv_s``;
issue 12: the DGX Spark's batched decode at depth held out, docs/calibration.md)."""

from __future__ import annotations

import pytest

from engine.decode import run_features, step_time_from
from engine.params import with_overrides
from engine.system import build_system


def test_a_gpus_cache_streams_no_faster_than_its_peak_bandwidth():
    """A fit's kv_read_factor below its eta_bw would read the cache faster than the memory's peak
    (with the DGX Spark held out, the RTX 3090 and P100 rows took llama.cpp's CUDA value to its
    bound, 0.5, and the Spark's batched rows at 8k context came out up to 2x too fast). The Spark's
    rows read no faster than the peak: llama.cpp benches/dgx-spark.md (b7941, llama-batched-bench,
    Qwen3-Coder-30B-A3B Q8_0, B = 32) take 209.2 ms a step at 8192 tokens of context and 92.3 ms at
    512, 3.66 ms a sequence for 7680 more cached tokens, where their f16 cache at the 273 GB/s
    peak takes 2.76 ms. CPU backends keep the fitted factor (their caches hold short contexts)."""
    system = build_system({"hardware": "DGX Spark", "model": "Qwen3-Coder-30B-A3B", "quant": "Q8_0", "engine": "llama.cpp"})
    features = run_features(system, 8192, 32, 32)
    low = with_overrides(system.params.params, kv_read_factor=0.5)
    peak = system.device.bandwidth_gbs * 1e9
    assert step_time_from(features, low).kv_s == pytest.approx(features.device_kv_bytes / peak, rel=1e-9)
    kv_per_token = features.device_kv_bytes / 32 / (8192 + 15.5)  # the mean step's cache
    assert kv_per_token == pytest.approx(48 * 4 * 128 * 2 * 2, rel=0.01)  # 48 layers, 4 KV heads of 128, K and V in f16
    assert (209.2 - 92.3) / 1000 / 32 > 7680 * kv_per_token / peak
    cpu = build_system({"hardware": "Ryzen 9 7950X", "model": "Llama-3.1-8B", "quant": "Q4_K_M", "engine": "llama.cpp"})
    f = run_features(cpu, 4096, 32, 1)
    assert step_time_from(f, low).kv_s < step_time_from(f, with_overrides(low, kv_read_factor=1.0)).kv_s

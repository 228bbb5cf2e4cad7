"""Apple GPUs unpack quantised weights alongside the weight stream (engine/unpacking.py).

Pinned to the Apple harness's M3 Max rows of the calibration set (hiesch_apple_silicon_bench,
llama.cpp b8920 llama-server): dense 27-32B models decode at one rate from files 1.6x apart,
where the MoE models (a tenth of the weights per token) still gain from the smaller file.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from engine import estimate
from engine.decode import run_features, step_time_from
from engine.system import build_system
from engine.unpacking import unpacking_overlaps

M3_MAX = {"hardware": "Apple M3 Max 64GB", "engine": "llama.cpp"}


def _tps(model: str, quant: str) -> float:
    return estimate({**M3_MAX, "model": model, "quant": quant})["decode_tps"]


def test_a_dense_32b_decodes_at_one_rate_from_a_q2_and_a_q4_file():
    """Qwen3-32B UD-Q2_K_XL 17.6-17.9 tok/s against Q4_K_M 17.4-17.5 (ratio ~1.02; 12.1 against
    19.3 GB a token): the ALU work per weight binds both. Adding the unpacking to the memory
    stream made the Q2 file 1.35x faster."""
    ratio = _tps("Qwen3-32B", "UD-Q2_K_XL") / _tps("Qwen3-32B", "Q4_K_M")
    assert 0.95 < ratio < 1.12


def test_a_3b_active_moe_still_gains_from_the_smaller_file():
    """Qwen3.6-35B-A3B UD-Q2_K_XL 65.4 tok/s against UD-Q4_K_M 58.4 (1.12x): few weights per
    token, so the memory stream stays the longer one."""
    ratio = _tps("Qwen3.6-35B-A3B", "UD-Q2_K_XL") / _tps("Qwen3.6-35B-A3B", "UD-Q4_K_M")
    assert ratio > 1.03


def test_overlapped_unpacking_takes_the_longer_stream_and_other_backends_the_sum():
    assert unpacking_overlaps("metal")
    assert not any(unpacking_overlaps(b) for b in ("cuda", "rocm", "vulkan", "sycl", "cpu"))
    system = build_system({**M3_MAX, "model": "Qwen3-32B", "quant": "Q4_K_M"})
    features = run_features(system, 0, 128)
    assert features.unpack_overlaps
    step = step_time_from(features, system.params.params)
    memory, alu = step.weights_s - step.unpack_s, step.matmul_s + step.unpack_s
    assert step.unpack_s > 0
    rest = step.total_s - max(memory, alu)
    added = step_time_from(replace(features, unpack_overlaps=False), system.params.params)
    # The same terms summed in another order: equal up to the last bit of a float.
    assert added.total_s - max(step.weights_s, step.matmul_s) == pytest.approx(rest, rel=1e-9)
    assert added.total_s >= step.total_s


def test_the_explain_panel_says_where_unpacking_overlaps():
    metal = estimate({**M3_MAX, "model": "Qwen3-32B", "quant": "Q4_K_M"})["breakdown"]
    card = estimate({"hardware": "RX 7900 XTX", "model": "Qwen3-32B", "quant": "Q4_K_M"})["breakdown"]
    assert metal["unpack_overlaps"] and metal["unpack_s"] > 0
    assert not card["unpack_overlaps"]

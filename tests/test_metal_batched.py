"""Batched decode through llama.cpp's Metal matrix kernels (engine/matvec_batch.py): below 32
tokens a MoE step reads an expert per (token, slot) pair (mul_mv_id; mul_mm_id from
``ne21_mm_id_min`` = 32), and 6-8 tokens stream the dense weights twice (mul_mv_ext's column
groups), pinned to the M2 Ultra's llama-batched-bench rows (ggml-org/llama.cpp 3795cc1e
benches/mac-m2-ultra) and to ggml-metal-ops.cpp's thresholds."""

from __future__ import annotations

import csv

import pytest

import engine.decode as decode
from engine import estimate
from engine.catalog import DATA_DIR
from engine.decode import run_features
from engine.matvec_batch import METAL_MM_ID_MIN_TOKENS, metal_dense_passes, metal_expert_slot_reads
from engine.system import build_system

M2_ULTRA = {"hardware": "apple-m2-ultra-76c-192gb", "engine": "llama.cpp", "prompt_tokens": 1, "depth": 512}
MOE = {**M2_ULTRA, "model": "Qwen3-Coder-30B-A3B", "quant": "Q8_0"}
DENSE = {**M2_ULTRA, "model": "Qwen2.5-Coder-7B", "quant": "Q8_0"}


def _rows(model: str) -> dict[int, float]:
    """Total tok/s by batch: llamacpp_benches_m2_ultra_b7948, tg32 at 512 tokens."""
    with open(DATA_DIR / "calibration" / "measurements.csv", newline="", encoding="utf-8") as handle:
        return {int(r["batch"]): float(r["tokens_per_s"]) for r in csv.DictReader(handle)
                if r["source_id"] == "llamacpp_benches_m2_ultra_b7948" and r["model"] == model
                and r["test"] == "tg" and r["depth"] == "512"}


def _step_ratio(request: dict, longer: int, shorter: int) -> float:
    """A ``longer``-sequence step's time over a ``shorter``-sequence step's (decode_tps is per sequence)."""
    return estimate({**request, "batch": shorter})["decode_tps"] / estimate({**request, "batch": longer})["decode_tps"]


def test_the_rules_follow_ggml_metal_ops_thresholds():
    moe = build_system({k: v for k, v in MOE.items() if k not in ("prompt_tokens", "depth")})
    assert METAL_MM_ID_MIN_TOKENS == 32
    assert [metal_expert_slot_reads(moe, t) for t in (1, 2, 31, 32)] == [False, True, True, False]
    dense = build_system({k: v for k, v in DENSE.items() if k not in ("prompt_tokens", "depth")})
    assert not metal_expert_slot_reads(dense, 8)
    # r1ptg 2/3/4/5/3/4/4 for 2-8 tokens: column groups ceil(ne11 / r1ptg); Q8_0 throughout.
    assert [metal_dense_passes(dense, t) for t in range(1, 10)] == [1, 1, 1, 1, 1, 2, 2, 2, 1]
    cuda = build_system({"hardware": "DGX Spark", "model": "Qwen3-Coder-30B-A3B", "quant": "Q8_0", "engine": "llama.cpp"})
    assert not metal_expert_slot_reads(cuda, 8) and metal_dense_passes(cuda, 8) == 1.0


def test_a_moe_step_below_32_tokens_reads_every_slot():
    """16 tokens x 8 of 128 experts: the whole expert set once over (independent routing would
    touch 1 - (15/16)^16 = 64% of it); 32 tokens through mul_mm_id read the distinct ones."""
    system = build_system({k: v for k, v in MOE.items() if k not in ("prompt_tokens", "depth")})
    sixteen = run_features(system, 512, 32, 16)
    thirty_two = run_features(system, 512, 32, 32)
    assert sixteen.weight_bytes(1.0)[0] - sixteen.device_dense_bytes == pytest.approx(sixteen.device_expert_bytes)
    assert thirty_two.weight_bytes(1.0)[0] < sixteen.weight_bytes(1.0)[0]


def test_the_m2_ultras_moe_steps_at_16_and_32_sequences(monkeypatch):
    """Measured (ggml-org benches, M2 Ultra, b7948): Qwen3-Coder-30B-A3B Q8_0 decodes 199.1 tok/s
    in total at 16 sequences and 393.3 at 32, so a 32-sequence step takes 1.01x a 16-sequence
    one: past the mul_mm_id threshold the step reads each touched expert once. Reading the
    distinct experts at 16 too gave a 16-sequence step far shorter than the 32-sequence one."""
    rows = _rows("Qwen3-Coder-30B-A3B")
    measured = (32 / rows[32]) / (16 / rows[16])
    assert measured == pytest.approx(1.013, abs=0.005)
    slot_reads = _step_ratio(MOE, 32, 16)
    monkeypatch.setattr(decode, "metal_expert_slot_reads", lambda system, tokens: False)
    distinct = _step_ratio(MOE, 32, 16)
    assert abs(slot_reads - measured) < abs(distinct - measured)


def test_the_m2_ultras_dense_step_at_8_sequences(monkeypatch):
    """Measured: Qwen2.5-Coder-7B Q8_0 218.7 tok/s in total at 4 sequences, 254.8 at 8, an
    8-sequence step 1.72x a 4-sequence one (mul_mv_ext's two column groups of 4)."""
    rows = _rows("Qwen2.5-Coder-7B")
    measured = (8 / rows[8]) / (4 / rows[4])
    assert measured == pytest.approx(1.717, abs=0.005)
    two_passes = _step_ratio(DENSE, 8, 4)
    monkeypatch.setattr(decode, "metal_dense_passes", lambda system, tokens: 1.0)
    one_pass = _step_ratio(DENSE, 8, 4)
    assert abs(two_passes - measured) <= abs(one_pass - measured)

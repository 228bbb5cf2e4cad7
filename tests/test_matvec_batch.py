"""Batched decode through llama.cpp's CUDA matrix-vector kernels (engine/matvec_batch.py): for
2-8 tokens a step's multiply-adds add to its weight stream, pinned to the DGX Spark's
llama-batched-bench rows and to the kernels' batch limit (ggml-cuda mmvq.cuh MMVQ_MAX_BATCH_SIZE)."""

from __future__ import annotations

import csv

import pytest

import engine.decode as decode
from engine import estimate
from engine.catalog import DATA_DIR
from engine.matvec_batch import MMVQ_MAX_BATCH_SIZE, matvec_alu_adds, matvec_rate_factor
from engine.system import build_system

SPARK = {"hardware": "DGX Spark", "model": "gemma-3-4b", "quant": "Q4_0", "engine": "llama.cpp", "prompt_tokens": 1, "depth": 512,
         "llama_cpp_build": 6989}  # the rows' build (b6989) predates PR 19645: batched steps launch every kernel


def _spark_rows() -> dict[int, float]:
    """Total tok/s by batch: llamacpp_benches_dgx_spark_b6989, gemma-3-4b Q4_0, tg32 at 512 tokens."""
    with open(DATA_DIR / "calibration" / "measurements.csv", newline="", encoding="utf-8") as handle:
        return {int(r["batch"]): float(r["tokens_per_s"]) for r in csv.DictReader(handle)
                if r["source_id"] == "llamacpp_benches_dgx_spark_b6989" and r["model"] == "gemma-3-4b"
                and r["quant"] == "Q4_0" and r["test"] == "tg" and r["depth"] == "512"}


def _step_ratio() -> float:
    """A two-sequence step's time over a one-sequence step's (decode_tps is per sequence)."""
    return estimate({**SPARK, "batch": 1})["decode_tps"] / estimate({**SPARK, "batch": 2})["decode_tps"]


def test_the_mechanism_covers_two_to_eight_tokens_of_quantised_weights_on_dp4a_cards():
    system = build_system({"hardware": "RTX 4090", "model": "Llama-3.1-8B", "quant": "Q4_K_M", "engine": "llama.cpp"})
    assert [matvec_alu_adds(system, t) for t in (1, 2, MMVQ_MAX_BATCH_SIZE, MMVQ_MAX_BATCH_SIZE + 1)] == [False, True, True, False]
    assert matvec_rate_factor(system, 2) == 4.0 and matvec_rate_factor(system, 1) == 1.0
    for other in ({"quant": "F16"}, {"engine": "vLLM", "quant": "AWQ"}, {"hardware": "Tesla P100 PCIe 16GB"}):
        system = build_system({"hardware": "RTX 4090", "model": "Llama-3.1-8B", "quant": "Q4_K_M", "engine": "llama.cpp", **other})
        assert not matvec_alu_adds(system, 2), other


def test_a_two_sequence_step_on_the_dgx_spark_costs_what_its_rows_show(monkeypatch):
    """Measured: 81.21 tok/s at one sequence and 128.52 in total at two, a step 1.26x longer.
    With the multiply-adds overlapping the stream the model gave 1.10x; adding them, nearer."""
    rows = _spark_rows()
    measured = (2 / rows[2]) / (1 / rows[1])
    assert measured == pytest.approx(1.264, abs=0.005)
    added = _step_ratio()
    monkeypatch.setattr(decode, "matvec_alu_adds", lambda system, tokens: False)
    overlapped = _step_ratio()
    assert abs(added - measured) < abs(overlapped - measured)
    assert 1.08 < added < 1.35

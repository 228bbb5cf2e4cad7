"""AMDVLK's dense prefill under llama.cpp's AMD cooperative-matrix tiles (engine/amdvlk.py), pinned
to its sources and to the Strix Halo's calibration rows (kyuz0/amd-strix-halo-toolboxes, b9187-9193)."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from engine.amdvlk import AMD_COOPMAT_TILE_BUILD, AMDVLK_DENSE_SHARE, dense_matmul_share
from engine.prefill import prefill_time
from engine.system import build_system

ROWS = Path(__file__).resolve().parents[1] / "data" / "calibration" / "measurements.csv"
STRIX = "AMD Ryzen AI Max+ 395 128GB"


def test_the_share_and_the_build_come_from_their_sources():
    # R9700 AMDVLK, Devstral-2 123B Q3_K_S pp512: 133.8 tok/s at b7423, 43.1 at b8990.
    assert AMDVLK_DENSE_SHARE == pytest.approx(43.1 / 133.8)
    # PR 18749 merged 2026-01-11: after b7540 (2025-12-26), before b7789 (2026-01-21); the
    # calibration's AMDVLK rows are b7423 and b9187-9193.
    assert 7540 < AMD_COOPMAT_TILE_BUILD < 7789


@pytest.mark.parametrize(
    "hardware, backend, build, share",
    [
        ("Radeon AI PRO R9700", "vulkan-amdvlk", 7423, 1.0),  # before PR 18749
        ("Radeon AI PRO R9700", "vulkan-amdvlk", 8990, AMDVLK_DENSE_SHARE),
        (STRIX, "vulkan-amdvlk", None, AMDVLK_DENSE_SHARE),  # unset: a current release
        (STRIX, "vulkan", 9193, 1.0),  # RADV runs the tuned tiles
        ("AMD Radeon RX 6900 XT", "vulkan-amdvlk", 9193, 1.0),  # RDNA2: no cooperative matrices
    ],
)
def test_only_amdvlk_on_coopmat_gpus_after_the_tuning_pays(hardware, backend, build, share):
    request = {"hardware": hardware, "model": "Llama-3.1-8B", "quant": "Q4_K_M", "backend": backend}
    if build is not None:
        request["llama_cpp_build"] = build
    assert dense_matmul_share(build_system(request)) == pytest.approx(share)


def _measured(model: str, quant: str, driver: str) -> float:
    for row in csv.DictReader(ROWS.open(encoding="utf-8")):
        if (row["hardware"] == STRIX and row["backend"] == "vulkan" and row["model"] == model and row["quant"] == quant
                and row["test"] == "pp" and row["depth"] == "0" and (f"toolbox=vulkan_{driver};" in row["notes"])):
            return float(row["tokens_per_s"])
    raise AssertionError(f"no row {model} {quant} {driver}")


def _predicted(model: str, quant: str, backend: str) -> float:
    system = build_system({"hardware": STRIX, "model": model, "quant": quant, "backend": backend, "llama_cpp_build": 9193})
    return 512 / prefill_time(system, 512, 0).total_s


@pytest.mark.parametrize(
    "model, quant, dense",
    [
        ("Qwen3.6-27B", "UD-Q8_K_XL", True),
        ("gemma-4-31B", "UD-Q8_K_XL", True),
        ("Qwen3.6-35B-A3B", "UD-Q4_K_XL", False),
        ("MiniMax-M2.7", "UD-Q3_K_S", False),
    ],
)
def test_dense_models_lose_most_moe_models_less(model, quant, dense):
    """The rows: AMDVLK / RADV pp512 is 0.23-0.29 on dense models, 0.58-0.92 on MoE ones (their
    routed experts run mul_mat_id, which kept its tiles). The engine, with one set of values for
    both drivers (pools.POOLS), shows the same split."""
    measured = _measured(model, quant, "amdvlk") / _measured(model, quant, "radv")
    predicted = _predicted(model, quant, "vulkan-amdvlk") / _predicted(model, quant, "vulkan")
    if dense:
        assert measured < 0.35 and predicted < 0.4
    else:
        assert measured > 0.55 and predicted > 0.5

"""BF16 routed experts at decode on llama.cpp's Vulkan backend run in the matrix-matrix shader
(engine/vulkan_experts.py: ``ggml_vk_use_mul_mat_vec_id`` lists F32, F16 and quantised types, not
BF16), pinned to the calibration rows' own published figures (kyuz0 toolboxes' llama-bench logs)."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from engine.decode import step_at
from engine.system import build_system
from engine.vulkan_experts import VULKAN_ID_TILE_SMALL, decode_tile, expert_tiles, matmat_expert_share

ROWS = Path(__file__).resolve().parents[1] / "data" / "calibration" / "measurements.csv"
STRIX = "ryzen-ai-max-plus-395-128gb"
R9700 = "radeon-ai-pro-r9700"


def _system(hardware: str, model: str, quant: str, backend: str = "vulkan", **extra):
    return build_system({"hardware": hardware, "model": model, "quant": quant, "backend": backend, "engine": "llama.cpp", **extra})


def _tg128(hardware: str, model: str, quant: str, backend: str, toolbox: str) -> float:
    name = {STRIX: "Max+ 395", R9700: "R9700"}[hardware]
    for row in csv.DictReader(ROWS.open(encoding="utf-8")):
        if (name in row["hardware"] and row["backend"] == backend and row["model"] == model and row["quant"] == quant
                and row["test"] == "tg" and row["depth"] == "0" and toolbox in row["notes"]):
            return float(row["tokens_per_s"])
    raise AssertionError(f"no row {hardware} {model} {quant} {backend} {toolbox}")


def test_only_bf16_experts_on_mainline_vulkan_take_the_matrix_matrix_shader():
    assert matmat_expert_share(_system(STRIX, "Qwen3.6-35B-A3B", "BF16")) == 1.0
    assert matmat_expert_share(_system(STRIX, "Qwen3.6-35B-A3B", "BF16", "vulkan-amdvlk")) == 1.0
    assert matmat_expert_share(_system(STRIX, "Qwen3.6-35B-A3B", "UD-Q8_K_XL")) == 0.0  # quantised: mat-vec
    assert matmat_expert_share(_system(STRIX, "Qwen3.6-35B-A3B", "BF16", "rocm")) == 0.0
    assert matmat_expert_share(_system(STRIX, "Ministral-3-14B", "BF16")) == 0.0  # dense: BF16 mat-vec since PR 12554
    dense = step_at(_system(STRIX, "Ministral-3-14B", "BF16"), 0)
    assert dense.expert_tile_s == 0.0


def test_a_step_pads_each_touched_expert_to_the_small_tile():
    """<= 32 tokens take the small tile (s_wg_denoms {32, 32}); one token touches k of n experts,
    so its padded FLOPs are 32 columns of the k experts' weights."""
    system = _system(STRIX, "Qwen3.6-35B-A3B", "BF16")
    assert decode_tile(system, 1) == decode_tile(system, 32) == VULKAN_ID_TILE_SMALL
    assert decode_tile(system, 33) == 64  # AMD: the medium tile (mul_mat_id_l cleared)
    arch, params = system.arch, float(system.profile.expert_params)
    flops, rate = expert_tiles(system, 1, params)
    assert flops == pytest.approx(2 * params * arch.experts_per_token / arch.n_experts * VULKAN_ID_TILE_SMALL)
    assert rate == pytest.approx(40 * 64 * 2 * 2.9e9, rel=0.01)  # the prefill's shader rate
    # More tokens touch more experts (weights.distinct_expert_fraction), each still one tile.
    assert expert_tiles(system, 8, params)[0] > 6 * flops


@pytest.mark.parametrize(
    "hardware, model, quant_ref, backend_ref, toolbox_ref, toolbox",
    [
        # Strix Halo, RADV, b9193: BF16 10.68 tok/s against UD-Q8_K_XL 46.3 (0.23).
        (STRIX, "Qwen3.6-35B-A3B", "UD-Q8_K_XL", "vulkan", "vulkan_radv", "vulkan_radv"),
        # R9700 x2, RADV, b7423: BF16 30.49 tok/s against the same BF16 file on ROCm 7.9 (0.52-0.54).
        (R9700, "Qwen3-Coder-30B-A3B", "BF16", "rocm", "rocm-7.9__fa1", "vulkan_radv"),
    ],
)
def test_bf16_moe_decode_on_vulkan_moves_toward_the_published_ratio(hardware, model, quant_ref, backend_ref, toolbox_ref, toolbox):
    """The published ratio of the BF16 file's Vulkan tg128 to a reference run of the same model is
    0.23-0.54; without the matrix-matrix experts the engine put it at 0.8-1.0 (the BF16 bytes alone)."""
    measured = _tg128(hardware, model, "BF16", "vulkan", toolbox) / _tg128(hardware, model, quant_ref, backend_ref, toolbox_ref)
    gpus = 2 if hardware == R9700 else 1
    vulkan = _system(hardware, model, "BF16", gpus=gpus)
    reference = _system(hardware, model, quant_ref, backend_ref, gpus=gpus)
    step = step_at(vulkan, 0)
    predicted = step_at(reference, 0).total_s / step.total_s
    without = step_at(reference, 0).total_s / (step.total_s - step.expert_tile_s)
    assert measured < predicted < without
    assert step.expert_tile_s > 0.2 * step.total_s

"""llama.cpp's Vulkan ``mul_mat_id`` computes whole column tiles per expert (issue 12; moe.py
``vulkan_expert_tile``), pinned to ggml-vulkan's tile choice and to kyuz0's published rows.

Every expert's workgroup multiplies a BN-wide tile of columns however few tokens the router sent
it: BN 64 on AMD (``mul_mat_id_l`` cleared for every AMD GPU), 128 on Intel's Xe2 with KHR_coopmat.
The Arc Pro B70 (b9039) prefills Qwen3.6-35B-A3B (256 experts, top-8: 16 tokens an expert at
-ub 512) at only 2.5x the dense Qwen3.6-27B's rate for a ninth of its active weights: its experts
compute 8x their useful columns. On the Strix Halo (RADV, b9187) the 256-expert MiniMax-M2.7
prefills at 0.22x the 256-expert Qwen3.6-35B-A3B, the 128-expert gemma-4-26B-A4B (32 tokens an
expert, 2x) faster than either per active weight.
"""

from __future__ import annotations

import csv

import pytest

from engine.catalog import DATA_DIR
from engine.moe import VULKAN_ID_TILE_LARGE, VULKAN_ID_TILE_MEDIUM, vulkan_expert_tile
from engine.prefill import prefill_features, prefill_time
from engine.system import build_system
from engine.tools.score import row_request


def _row(source: str, backend: str, model: str, quant: str, depth: int = 0) -> dict:
    with open(DATA_DIR / "calibration" / "measurements.csv", newline="", encoding="utf-8") as handle:
        return next(
            r for r in csv.DictReader(handle)
            if r["source_id"] == source and r["backend"] == backend and r["test"] == "pp"
            and r["model"] == model and r["quant"] == quant and r["depth"] == str(depth)
            and "amdvlk" not in r["notes"]
        )


def _rate(row: dict) -> float:
    tokens, depth = int(row["n_tokens"]), int(row["depth"])
    return tokens / prefill_time(build_system(row_request(row)), tokens, depth).total_s


def test_tile_by_vendor_and_architecture():
    b70 = build_system({"hardware": "Arc Pro B70", "model": "Qwen3.6-35B-A3B", "quant": "UD-Q4_K_XL", "backend": "vulkan"})
    a770 = build_system({"hardware": "Arc A770", "model": "Qwen3.6-35B-A3B", "quant": "UD-Q4_K_XL", "backend": "vulkan"})
    r9700 = build_system({"hardware": "Radeon AI PRO R9700", "model": "Qwen3.6-35B-A3B", "quant": "BF16", "backend": "vulkan"})
    assert vulkan_expert_tile(b70) == VULKAN_ID_TILE_LARGE == 128
    assert vulkan_expert_tile(a770) == VULKAN_ID_TILE_MEDIUM == 64
    assert vulkan_expert_tile(r9700) == 64
    # Other backends keep their own rules (CUDA/ROCm MMQ tiles), dense models have no experts.
    rocm = build_system({"hardware": "Radeon AI PRO R9700", "model": "Qwen3.6-35B-A3B", "quant": "UD-Q4_K_XL"})
    dense = build_system({"hardware": "Radeon AI PRO R9700", "model": "Qwen3.6-27B", "quant": "UD-Q4_K_XL", "backend": "vulkan"})
    assert vulkan_expert_tile(rocm) == 0 and vulkan_expert_tile(dense) == 0


def test_b70_experts_compute_whole_128_column_tiles():
    moe = _row("kyuz0_intel_b70_toolboxes", "vulkan", "Qwen3.6-35B-A3B", "UD-Q4_K_XL")
    dense = _row("kyuz0_intel_b70_toolboxes", "vulkan", "Qwen3.6-27B", "UD-Q4_K_XL")
    measured = float(moe["tokens_per_s"]) / float(dense["tokens_per_s"])
    assert measured == pytest.approx(1275.2 / 507.8, rel=0.01)
    experts = prefill_features(build_system(row_request(moe)), 512, 0).experts
    # 512 tokens x 8 / 256 experts = 16 columns an expert, computed as one 128-wide tile.
    assert experts.padded_flops / experts.flops == pytest.approx(8.0, rel=0.02)
    # Without the tiles the MoE came out 1.45x too fast held out, 3.4x the dense rate.
    assert 0.8 < (_rate(moe) / _rate(dense)) / measured < 1.25


def test_strix_halo_many_small_experts_pay_the_tile():
    big = _row("kyuz0_strix_halo_toolboxes", "vulkan", "MiniMax-M2.7", "UD-Q3_K_S")
    small = _row("kyuz0_strix_halo_toolboxes", "vulkan", "Qwen3.6-35B-A3B", "UD-Q4_K_XL")
    assert float(big["tokens_per_s"]) == pytest.approx(242.4, rel=0.01)
    system = build_system(row_request(big))
    assert vulkan_expert_tile(system) == 64
    experts = prefill_features(system, 512, 0).experts
    assert experts.padded_flops / experts.flops == pytest.approx(4.0, rel=0.02)  # 16 of 64 columns
    measured = float(big["tokens_per_s"]) / float(small["tokens_per_s"])
    # Before the tiles MiniMax-M2.7 came out 2.45x too fast held out (Qwen3.6-35B-A3B 1.29x).
    assert 0.75 < (_rate(big) / _rate(small)) / measured < 1.35
    assert 0.7 < _rate(big) / float(big["tokens_per_s"]) < 1.45

"""Vulkan prompt processing at the shader ALUs' FP32 rate (engine/prefill.py SHADER_RATE_BACKENDS,
engine/roofline.py shader_fp32_flops), pinned to published llama-bench runs and calibration rows."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from engine.hardware import load_hardware
from engine.prefill import SHADER_RATE_BACKENDS, prefill_features
from engine.roofline import matmul_flops, shader_fp32_flops
from engine.system import build_system

ROWS = Path(__file__).resolve().parents[1] / "data" / "calibration" / "measurements.csv"
TERA = 1e12


@pytest.mark.parametrize(
    "device_id, tflops",
    [
        ("radeon-ai-pro-r9700", 64 * 64 * 2 * 2.92e9 / TERA),  # RDNA4: half the dual-issue 47.85
        ("ryzen-ai-max-plus-395-128gb", 40 * 64 * 2 * 2.9e9 / TERA),  # RDNA 3.5: half of 29.7
        ("radeon-pro-vii", 13.1),  # GCN has no dual issue: the catalog's figure
        ("arc-pro-b70", 22.94),  # Intel: the catalog's figure (32 Xe2-cores x 128 lanes x 2 x 2.8 GHz)
        ("rtx-3090", 35.6),
    ],
)
def test_shader_rate_is_one_instruction_per_lane_and_clock(device_id, tflops):
    assert shader_fp32_flops(load_hardware()[device_id]) / TERA == pytest.approx(tflops, rel=0.01)


@pytest.mark.parametrize(
    "device_id, params, tokens_per_s, source",
    [
        ("radeon-pro-vii", 8.03e9, 661.44, "PR 13324, llama 8B Q4_0, no matrix cores"),
        ("ryzen-7-7840u-radeon-780m-32gb", 7.62e9, 248.08, "PR 11528, qwen2 7B IQ1_S, RADV KHR_coopmat"),
        ("rtx-3090", 8.03e9, 3156.83, "PR 13506, llama 8B Q4_0, KHR_coopmat"),
    ],
)
def test_published_vulkan_prefill_runs_near_the_shader_rate(device_id, params, tokens_per_s, source):
    """pp512 FLOP rate (2 x params x tokens/s) over the shader FP32 rate: 0.8-1.45 whether or not
    the device has matrix cores (the RTX 3090's tensor peak would put it at 36%, the 780M's WMMA at 23%)."""
    device = load_hardware()[device_id]
    share = 2 * params * tokens_per_s / shader_fp32_flops(device)
    assert 0.75 <= share <= 1.45, source


def _pp512(hardware: str, model: str, quant: str) -> float:
    for row in csv.DictReader(ROWS.open(encoding="utf-8")):
        if (hardware in row["hardware"] and row["backend"] == "vulkan" and row["model"] == model and row["quant"] == quant
                and row["test"] == "pp" and row["depth"] == "0" and "amdvlk" not in row["notes"]):
            return float(row["tokens_per_s"])
    raise AssertionError(f"no row {hardware} {model} {quant}")


def test_the_calibration_devices_agree_at_the_shader_rate_not_the_matrix_peak():
    """Dense prefill at depth 0 on the three Vulkan devices (kyuz0 toolboxes, Mesa drivers): as a
    share of the matrix peak 15-31% (a factor 2 apart), of the shader rate 1.0-1.45."""
    runs = [
        ("arc-pro-b70", "Arc Pro B70", "Llama-2-7B", "Q4_0", 6.74e9),
        ("radeon-ai-pro-r9700", "R9700", "Ministral-3-8B", "BF16", 8.49e9),
        ("ryzen-ai-max-plus-395-128gb", "Max+ 395", "gemma-4-31B", "UD-Q4_K_XL", 30.7e9),
    ]
    devices = load_hardware()
    shader, peak = [], []
    for device_id, name, model, quant, params in runs:
        flops = 2 * params * _pp512(name, model, quant)
        shader.append(flops / shader_fp32_flops(devices[device_id]))
        peak.append(flops / (devices[device_id].fp16_tflops * TERA))
    assert max(shader) / min(shader) < 1.5 < max(peak) / min(peak)
    assert all(0.9 <= s <= 1.5 for s in shader)


def test_both_vulkan_drivers_take_the_shader_rate():
    """RADV and AMDVLK load the same ggml-vulkan shaders: both at the shader rate, ROCm at the matrix peak."""
    assert SHADER_RATE_BACKENDS == ("vulkan", "vulkan-amdvlk")
    for backend, expect_shader in (("vulkan", True), ("vulkan-amdvlk", True), ("rocm", False)):
        system = build_system({"hardware": "Radeon AI PRO R9700", "model": "Llama-3.1-8B", "quant": "Q4_K_M", "backend": backend})
        rate = prefill_features(system, 512, 0).matmul_rate
        peak = matmul_flops(system.device, system.quant, backend, mma_sync=True, fp16_accumulate=True)
        assert rate == pytest.approx(shader_fp32_flops(system.device) if expect_shader else peak)


def _driver_ratios(hardware: str) -> list[float]:
    """AMDVLK / RADV pp512 of the same file at an empty cache, quantised files only."""
    by = {}
    for row in csv.DictReader(ROWS.open(encoding="utf-8")):
        if (hardware in row["hardware"] and row["backend"] == "vulkan" and row["test"] == "pp" and row["depth"] == "0"
                and row["n_tokens"] == "512" and "F16" not in row["quant"]):
            driver = "amdvlk" if "amdvlk" in row["notes"] else "radv"
            by.setdefault((row["model"], row["quant"], row["n_devices"]), {})[driver] = float(row["tokens_per_s"])
    return sorted(v["amdvlk"] / v["radv"] for v in by.values() if len(v) == 2)


@pytest.mark.parametrize("hardware, low, high", [("R9700", 1.1, 1.4), ("Max+ 395", 0.2, 0.9)])
def test_the_two_drivers_prefill_within_a_small_factor_of_each_other(hardware, low, high):
    """Why AMDVLK borrows RADV's values when it has no fit of its own (borrowing.BASE_BACKEND): on
    the same device, build and file the two drivers' pp512 stay within 0.2-1.4x of each other
    (R9700 at b7423: AMDVLK 1.15-1.34x; Strix Halo at b9187: 0.23-0.85x), where the matrix roofline
    the AMDVLK key used to keep puts the R9700 8x above its shader rate."""
    ratios = _driver_ratios(hardware)
    assert len(ratios) >= 8
    assert low <= ratios[len(ratios) // 2] <= high
    assert 0.2 <= ratios[0] and ratios[-1] <= 1.4

"""Little's law on GPU decode: the SMs' bytes in flight over the memory latency bound the rate
the weights stream at (engine/roofline.py latency_bound_sms, engine/decode.py). Pinned to the
latency measurements the catalog cites and to the calibration rows that show the effect."""

from __future__ import annotations

import pytest

from engine import estimate
from engine.devices import resolve_device
from engine.roofline import latency_bound_sms

LEGACY = {"model": "Llama-3-8B", "engine": "llama-cpp-legacy"}


@pytest.mark.parametrize(
    ("hardware", "cycles", "mhz", "ns"),
    [
        # https://github.com/te42kyfo/gpu-benches: pointer chase beyond L2, cycles at the clock the run read.
        ("A100 SXM 80GB", 571, 1410, 405),  # cuda-latency/a100_80.txt
        ("A100 40GB", 575, 1410, 408),  # cuda-latency/a100_40.txt
        ("H100 PCIe", 655, 1755, 373),  # gpu-latency/h100_pcie.txt (650-658)
        ("L40", 631, 2490, 254),  # gpu-latency/l40.txt
        ("V100 PCIe", 437, 1380, 317),  # cuda-latency/v100.txt
    ],
)
def test_catalog_latency_is_the_measured_cycles_at_the_measured_clock(hardware, cycles, mhz, ns):
    device = resolve_device(hardware)
    assert device.memory_latency_ns == ns
    assert abs(cycles / mhz * 1000 / ns - 1) < 0.01
    assert "gpu-benches" in device.sources["memory_latency_ns"]


def test_no_bound_without_a_measured_latency_or_on_a_cpu():
    assert latency_bound_sms(resolve_device("RTX 4090"), "cuda") == 0.0
    assert latency_bound_sms(resolve_device("A100 SXM 80GB"), "cpu") == 0.0


def test_hbm_cards_decode_f16_at_half_their_bandwidth_like_the_legacy_rows():
    """XiongjieDai's GPU-Benchmarks-on-LLM-Inference (llama.cpp b2837, Llama 3 8B F16 tg512):
    A100 SXM 80GB 53.49, H100 PCIe 68.03, RTX 4090 54.84 tok/s: the A100 streams twice the
    4090's bandwidth on paper and decodes no faster. The engine's A100/4090 and H100/A100 ratios
    within 15% of the measured ones (without the bound: A100/4090 1.39, H100/A100 1.10)."""
    tps = {hw: estimate({**LEGACY, "hardware": hw, "quant": "F16"})["decode_tps"] for hw in ("A100 SXM 80GB", "H100 PCIe", "RTX 4090")}
    assert abs((tps["A100 SXM 80GB"] / tps["RTX 4090"]) / (53.49 / 54.84) - 1) < 0.15
    assert abs((tps["H100 PCIe"] / tps["A100 SXM 80GB"]) / (68.03 / 53.49) - 1) < 0.15


def test_the_bound_does_not_bind_on_gddr_cards():
    """An AD102 card keeps its whole bandwidth in flight with a few KiB per SM (L40S: 142 SMs,
    254 ns), so its decode is the bandwidth model's; the explain panel names no bound."""
    assert estimate({**LEGACY, "hardware": "L40S", "quant": "F16"})["breakdown"]["latency_bound_gbs"] is None


def test_the_explain_panel_gets_the_bound_where_it_binds():
    breakdown = estimate({**LEGACY, "hardware": "A100 SXM 80GB", "quant": "F16"})["breakdown"]
    assert breakdown["memory_latency_ns"] == 405
    device = resolve_device("A100 SXM 80GB")
    expected = device.gpu_cores * breakdown["inflight_kib_per_sm"] * 1024 / 405e-9 / 1e9
    assert breakdown["latency_bound_gbs"] == pytest.approx(expected)
    assert breakdown["latency_bound_gbs"] < device.bandwidth_gbs

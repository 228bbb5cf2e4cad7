"""A memory bandwidth measured on a CPU machine (request key measured_bandwidth_gbs, CLI
--measured-bandwidth): it replaces the catalog's channels x data rate, like a custom device's
bandwidth_measured, and the calibration rows that quote one are read with it (the Threadripper PRO
7965WX of ik_llama.cpp PR 534: 8 DDR5 DIMMs run at 4800 MT/s, '~225GB/s mlc memory read bandwidth')."""

import pytest

from engine.decode import step_features
from engine.roofline import MEASURED_BANDWIDTH_SHARE
from engine.system import build_system
from engine.tools.score import row_request

TR = "AMD Ryzen Threadripper PRO 7965WX"
REQUEST = {"hardware": TR, "model": "Llama-3.1-8B", "quant": "Q4_0", "backend": "cpu", "threads": 24}


def test_a_measured_bandwidth_replaces_the_catalog_peak():
    catalog = build_system(REQUEST)
    measured = build_system({**REQUEST, "measured_bandwidth_gbs": 225})
    assert catalog.device.bandwidth_gbs == pytest.approx(332.8)
    assert measured.device.bandwidth_measured and measured.device.bandwidth_gbs == 225
    # The fitted efficiencies are shares of a peak: the measured figure stands for the peak it is a
    # share of, and the cores' chiplet links are already in it (no per-core limit on top).
    features = step_features(measured, 0, 1, 0)
    assert features.bandwidth == pytest.approx(225e9 / MEASURED_BANDWIDTH_SHARE)
    assert features.cpu_threads == 0


def test_it_applies_to_cpus_only():
    # Like the other CPU-only options (threads, memory_dimms), a card ignores it: its bandwidth is
    # the card's memory, not what a CPU tool measures.
    card = {"hardware": "RTX 4090", "model": "Llama-3.1-8B", "quant": "Q4_0"}
    assert build_system({**card, "measured_bandwidth_gbs": 900}).device == build_system(card).device


def test_the_pr534_threadripper_rows_quote_their_mlc_bandwidth():
    row = {
        "hardware": TR, "n_devices": "1", "model": "Qwen2.5-72B", "quant": "Q4_0", "backend": "cpu",
        "engine": "ik_llama.cpp", "test": "tg", "n_tokens": "512", "depth": "0", "batch": "1", "flash_attn": "1",
        "tokens_per_s": "4.74", "source_id": "x",
        "notes": "8x 32GB KF560R32-32 DDR5-6000 'running at JEDEC 4800MHz psure', '~225GB/s mlc memory read "
                 "bandwidth', ik_llama.cpp discussion #258; threads=24",
    }
    assert row_request(row)["measured_bandwidth_gbs"] == 225.0

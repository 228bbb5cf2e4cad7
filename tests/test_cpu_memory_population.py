"""A CPU server's DIMM population (engine/devices.py dimm_population, request key memory_dimms):
identical DIMMs that do not fill every channel alike form several interleave sets, and weights
spread over all of memory stream at D / ceil(D / C) channels' worth (Dell, "Balanced Memory with
2nd Generation Intel Xeon Scalable Processors": "up to 33%" less bandwidth)."""

import math

import pytest

from engine.devices import dimm_population, resolve_device
from engine.system import build_system
from engine.tools.score import row_request

GOLD = "Intel Xeon Gold 6138"


def test_eight_dimms_on_six_channels_stream_at_four_channels_worth():
    gold = resolve_device(GOLD)
    assert gold.memory_channels == 6
    assert dimm_population(gold, 8).bandwidth_gbs == pytest.approx(gold.bandwidth_gbs * 4 / 6)
    # The dual-socket server of the calibration rows: 16 DIMMs on 2 x 6 channels, 8 per socket.
    assert dimm_population(gold, 16, sockets=2).bandwidth_gbs == pytest.approx(gold.bandwidth_gbs * 2 / 3)


@pytest.mark.parametrize("dimms", [1, 3, 6, 12])
def test_balanced_or_partial_populations_keep_the_catalog_bandwidth(dimms):
    gold = resolve_device(GOLD)
    assert dimm_population(gold, dimms).bandwidth_gbs == pytest.approx(gold.bandwidth_gbs)


def test_fifteen_dimms_on_six_channels_form_three_sets():
    gold = resolve_device(GOLD)
    assert dimm_population(gold, 15).bandwidth_gbs == pytest.approx(gold.bandwidth_gbs * 15 / math.ceil(15 / 6) / 6)


def test_a_desktop_with_two_dimms_per_channel_is_balanced():
    ryzen = resolve_device("AMD Ryzen 9 7950X")
    assert dimm_population(ryzen, 4).bandwidth_gbs == ryzen.bandwidth_gbs


def test_the_gold_6138_rows_state_their_population_and_the_system_reads_it():
    row = {
        "hardware": GOLD, "n_devices": "2", "model": "Qwen3-30B-A3B", "quant": "Q8_0", "backend": "cpu",
        "engine": "ik_llama.cpp", "test": "tg", "n_tokens": "128", "depth": "0", "batch": "1", "flash_attn": "",
        "tokens_per_s": "12.9", "source_id": "x",
        "notes": "16x 32GB DDR4-2666 RDIMM, 12 channels total; Windows 10 Pro; threads=20",
    }
    request = row_request(row)
    assert request["memory_dimms"] == 16
    system = build_system(request)
    assert system.device.bandwidth_gbs == pytest.approx(resolve_device(GOLD).bandwidth_gbs * 2 / 3)
    balanced = build_system({**request, "memory_dimms": 12})
    assert balanced.device.bandwidth_gbs == pytest.approx(resolve_device(GOLD).bandwidth_gbs)

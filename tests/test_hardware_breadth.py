"""The devices added for breadth (issue 14): each entry's bandwidth, memory, FP16 rate and launch
price as its source states them (TechPowerUp's database, the vendor's datasheet, Wikipedia's price
lists; see each entry), the loader's arithmetic checks (bus x data rate = bandwidth) having passed,
and the catalog's device count: at least 300 distinct devices, memory variants counted once.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from engine.catalog import normalise_name
from engine.hardware import hardware_index, load_hardware
from engine.listing import count_line, list_catalog

#: base id -> (bandwidth GB/s, memory GiB of the largest variant, FP16 TFLOPS, launch price USD or None).
PINNED = {
    # BEGIN PINNED
    "gtx-1650": (128, 4, 5.96, 149),
    "gtx-1650-super": (192, 4, 8.84, 159),
    "gtx-1660": (192, 6, 10.06, 219),
    "gtx-1660-super": (336, 6, 10.06, 229),
    "gtx-1660-ti": (288, 6, 10.88, 279),
    "rtx-5050": (320, 8, 26.3, 249),
    "rtx-4050-laptop": (192, 6, 24.3, None),
    "rtx-5050-laptop": (384, 8, 26.8, None),
    "rtx-5060-laptop": (384, 8, 33.2, None),
    "rtx-5070-laptop": (384, 8, 43.3, None),
    "titan-v": (652.8, 12, 110.0, 2999),
    "quadro-rtx-8000": (672, 48, 130.5, 5500),
    "quadro-rtx-6000": (672, 24, 130.5, 6299),
    "quadro-rtx-5000": (448, 16, 89.2, 2300),
    "quadro-rtx-4000": (416, 8, 57.0, 899),
    "rtx-a5500": (768, 24, 136.0, 2500),
    "rtx-4000-sff-ada": (280, 20, 76.9, 1250),
    "a40": (696, 48, 149.7, None),
    "a30": (933.1, 24, 165.0, None),
    "a2": (200, 16, 18.0, None),
    "h20": (4032, 96, 148.0, None),
    "gh200": (4000, 96, 989.5, None),
    "v100-pcie": (897.0, 32, 112.0, None),
    "v100-sxm2": (897.0, 32, 125.0, None),
    "v100s-pcie": (1133.6, 32, 130.0, None),
    "p100-pcie-16gb": (732.2, 16, 18.7, None),
    "p100-pcie-12gb": (549.1, 12, 18.7, None),
    "rtx-2060-12gb": (336, 12, 28.7, None),
    "rtx-3050-6gb": (168, 6, 13.5, 179),
    "rtx-3060-8gb": (240, 8, 25.5, None),
    "rtx-2050-laptop": (112, 4, 12.1, None),
    "jetson-orin-nx-16gb": (102.4, 16, 15.0, 699),
    "jetson-orin-nx-8gb": (102.4, 8, 9.4, 399),
    "jetson-orin-nano-8gb": (68.3, 8, 10.2, 499),
    "jetson-orin-nano-4gb": (34.1, 4, 5.1, 199),
    "jetson-agx-xavier": (136.5, 32, 11.3, 699),
    "jetson-xavier-nx": (59.7, 8, 6.8, 399),
    "jetson-nano": (25.6, 4, 0.47, 99),
    "rx-480": (256, 8, 5.83, 239),
    "rx-570": (224, 8, 5.1, None),
    "rx-580": (256, 8, 6.17, 229),
    "rx-590": (256, 8, 7.12, 279),
    "rx-vega-56": (409.6, 8, 21.09, 399),
    "rx-vega-64": (483.8, 8, 25.33, 499),
    "radeon-vii": (1024, 16, 26.88, 699),
    "rx-5500-xt": (224, 8, 10.39, 199),
    "rx-5600-xt": (288, 6, 14.38, 279),
    "rx-5700": (448, 8, 15.9, 349),
    "rx-5700-xt": (448, 8, 19.51, 399),
    "rx-6400": (128, 4, 7.13, 159),
    "rx-6500-xt": (144, 4, 11.53, 199),
    "rx-6700": (320, 10, 22.58, None),
    "rx-7900m": (576, 16, 77.0, None),
    "rx-7600m-xt": (288, 8, 40.45, None),
    "rx-6800m": (384, 12, 24.5, None),
    "radeon-pro-w7700": (576, 16, 63.9, 999),
    "radeon-pro-w7600": (288, 8, 40.0, 599),
    "radeon-pro-w6800": (512, 32, 35.6, 2249),
    "radeon-pro-vii": (1024, 16, 26.1, 1899),
    "mi50": (1024, 32, 26.5, None),
    "mi60": (1024, 32, 29.5, None),
    "ryzen-5-7640u-radeon-760m": (120, 32, 10.65, None),
    "ryzen-ai-5-340-radeon-840m": (128, 32, 5.94, None),
    "ryzen-ai-7-350-radeon-860m": (128, 64, 12.29, None),
    "ryzen-7-6800u-radeon-680m": (102.4, 32, 6.76, None),
    "ryzen-5-8600g-radeon-760m": (83.2, 96, 11.47, None),
    "ryzen-z1-extreme": (102.4, 24, 16.59, None),
    "steam-deck": (88, 16, 3.28, None),
    "steam-deck-oled": (102.4, 16, 3.28, None),
    "ryzen-ai-9-365-radeon-880m": (120, 64, 17.82, None),
    "arc-a310": (124, 4, 24.6, None),
    "arc-a770m": (512, 16, 108.1, None),
    "arc-a730m": (336, 12, 54.1, None),
    "core-ultra-7-155h": (119.5, 96, 9.22, None),
    "core-ultra-5-125h": (119.5, 96, 7.88, None),
    "core-ultra-9-185h": (119.5, 96, 9.62, None),
    "core-ultra-5-226v": (136.5, 16, 26.52, None),
    "core-ultra-9-288v": (136.5, 32, 33.6, None),
    "arc-pro-a60": (384, 12, 67.2, None),
    "arc-pro-a40": (192, 6, 27.9, None),
    "tesla-p40": (347.1, 24, 0.18, 5699),  # gpuark.com / sysrqmts.com (TechPowerUp copies): FP16 1:64
    # END PINNED
}


def largest_variant(base_id):
    variants = [d for d in load_hardware().values() if d.base_id == base_id]
    assert variants, base_id
    return max(variants, key=lambda d: d.memory_gib)


def test_at_least_300_distinct_devices_and_the_count_prints():
    items = list_catalog("hardware")
    distinct = {item["base_id"] for item in items}
    assert len(distinct) >= 300
    assert count_line("hardware", items) == f"{len(distinct)} devices ({len(items)} with memory variants)"
    out = subprocess.run([sys.executable, "-m", "engine", "list", "hardware", "--count"], capture_output=True, text=True, check=True).stdout
    assert out.strip() == count_line("hardware", items)


@pytest.mark.parametrize("base_id", sorted(PINNED))
def test_entry_matches_its_pin(base_id):
    device = largest_variant(base_id)
    bandwidth, memory, fp16, price = PINNED[base_id]
    assert (device.bandwidth_gbs, device.memory_gib, device.fp16_tflops, device.launch_price_usd) == (bandwidth, memory, fp16, price)
    assert device.source and (price is None or "launch_price_usd" in device.sources)
    names = hardware_index().names
    assert all(names[normalise_name(alias)] in {d.id for d in load_hardware().values() if d.base_id == base_id} for alias in device.aliases)


@pytest.mark.parametrize(
    "name, bandwidth_gbs, fp16_tflops",
    [
        # Datasheet figures (NVIDIA A40: 696 GB/s, 149.7 dense FP16 tensor TFLOPS; V100S: 1,134 GB/s, 130;
        # A30: 933 GB/s, 165; Jetson Nano: 25.6 GB/s, 472 GFLOPS), AMD's (Radeon VII and MI50: 1 TB/s;
        # RX 580: 256 GB/s), Intel's (Arc A310: 124 GB/s), Valve's (Steam Deck LPDDR5-5500: 88 GB/s).
        ("NVIDIA A40", 696, 149.7),
        ("Tesla V100S", 1133.6, 130.0),
        ("A30", 933.1, 165.0),
        ("Jetson Nano", 25.6, 0.47),
        ("Radeon VII", 1024, 26.88),
        ("MI50 32GB", 1024, 26.5),
        ("RX 580", 256, 6.17),
        ("Arc A310", 124, 24.6),
        ("Steam Deck", 88, 3.28),
    ],
)
def test_published_figures(name, bandwidth_gbs, fp16_tflops):
    device = load_hardware()[hardware_index().names[normalise_name(name)]]
    assert device.bandwidth_gbs == pytest.approx(bandwidth_gbs, rel=0.002)
    assert device.fp16_tflops == pytest.approx(fp16_tflops, rel=0.01)


@pytest.mark.parametrize(
    "name, entry_id",
    [
        ("RX 570 4GB", "rx-570-4gb"),
        ("RX 570", "rx-570-8gb"),
        ("MI50 16GB", "mi50-16gb"),
        ("V100 PCIe 32GB", "v100-pcie-32gb"),
        ("Ryzen 5 7640HS 16GB", "ryzen-5-7640u-radeon-760m-16gb"),
        ("Core Ultra 7 155H", "core-ultra-7-155h-96gb"),
    ],
)
def test_memory_variants_resolve(name, entry_id):
    assert hardware_index().names[normalise_name(name)] == entry_id


@pytest.mark.parametrize(
    "device_id, price",
    [
        # Apple's launch configurator (sources.launch_prices_usd): each memory size its own price.
        ("apple-m3-ultra-80c-96gb", 5499),
        ("apple-m3-ultra-80c-256gb", 7099),
        ("apple-m3-ultra-80c-512gb", 9499),
        ("apple-m4-max-40c-48gb", 2499),
        ("apple-m4-max-40c-128gb", 3699),
        # No per-size price published in the catalog: the cheapest size keeps the base price, the
        # others have none (they no longer inherit the cheapest one's).
        ("apple-m2-ultra-60c-64gb", 3999),
        ("apple-m2-ultra-60c-192gb", None),
        ("rx-570-4gb", 169),
        ("rx-570-8gb", None),
    ],
)
def test_memory_variants_carry_their_own_price(device_id, price):
    assert load_hardware()[device_id].launch_price_usd == price


def test_reverse_search_prices_the_512gb_m3_ultra_at_its_own_price():
    from engine.page import explore

    ids = sorted(load_hardware())
    offset = ids.index("apple-m3-ultra-80c-512gb")
    rows = explore.reverse({"view": {"model": "llama-3.3-70b"}, "min_tps": 1, "offset": offset, "limit": 1})["rows"]
    assert [(r["id"], r["price_usd"]) for r in rows] == [("apple-m3-ultra-80c-512gb", 9499)]
    assert rows[0]["tps_per_kusd"] == pytest.approx(rows[0]["decode_tps"] / 9499 * 1000)

"""NVIDIA entries of the hardware catalog (data/hardware/nvidia-*.toml).

The checks guard the numbers the physics leans on: bandwidth (decode) and the dense tensor rates (prefill),
where the two classic slips are a 2:4-sparsity figure taken for a dense one and GeForce's half-rate FP32
accumulate taken for the full rate.
"""

import pytest

from engine.catalog import normalise_name
from engine.hardware import hardware_index, load_hardware

#: Names in shared/measured/calibration.csv and the device each must mean.
CALIBRATION_NAMES = {
    "NVIDIA DGX Spark": "dgx-spark",
    "NVIDIA RTX 3090 24GB": "rtx-3090",
    "NVIDIA RTX 4090 24GB": "rtx-4090",
    "NVIDIA RTX A6000 48GB": "rtx-a6000",
    "NVIDIA RTX 4000 Ada 20GB": "rtx-4000-ada",
    "NVIDIA H100 PCIe 80GB": "h100-pcie",
    "NVIDIA L40S 48GB": "l40s",
    "NVIDIA A100 SXM 80GB": "a100-sxm-80gb",
    "NVIDIA A100 80GB": "a100-pcie-80gb",
}

#: (device id, GB/s) as NVIDIA prints them: whitepapers (4090, 3090) and datasheets.
BANDWIDTH_ANCHORS = [
    ("rtx-4090", 1008),
    ("rtx-3090", 936),
    ("rtx-5090", 1792),
    ("h100-sxm", 3350),
    ("a100-sxm-80gb", 2039),
    ("a100-pcie-80gb", 1935),
    ("dgx-spark", 273),
]

#: (device id, dense FP16 TFLOPS with FP32 accumulate): the figures prefill estimates rest on.
FP16_ANCHORS = [
    ("rtx-4090", 165.2),  # Ada whitepaper: 330.3 with FP16 accumulate, half with FP32 accumulate
    ("rtx-3090", 71.0),  # GA102 whitepaper
    ("rtx-5090", 209.5),  # RTX Blackwell whitepaper
    ("rtx-a6000", 154.8),  # full rate on the professional card with the same GA102
    ("h100-sxm", 989.5),  # datasheet 1979 is with sparsity
    ("a100-sxm-80gb", 312.0),
]

#: Parts the catalog promises to cover (base ids; memory variants expand from some of them).
REQUIRED_BASE_IDS = {
    "rtx-2060", "rtx-2060-super", "rtx-2070", "rtx-2070-super", "rtx-2080", "rtx-2080-super", "rtx-2080-ti",
    "titan-rtx", "rtx-3050", "rtx-3060", "rtx-3060-ti", "rtx-3070", "rtx-3070-ti", "rtx-3080", "rtx-3080-12gb",
    "rtx-3080-ti", "rtx-3090", "rtx-3090-ti", "rtx-4060", "rtx-4060-ti", "rtx-4070", "rtx-4070-super",
    "rtx-4070-ti", "rtx-4070-ti-super", "rtx-4080", "rtx-4080-super", "rtx-4090", "rtx-5060", "rtx-5060-ti",
    "rtx-5070", "rtx-5070-ti", "rtx-5080", "rtx-5090", "rtx-4060-laptop", "rtx-4070-laptop", "rtx-4080-laptop",
    "rtx-4090-laptop", "rtx-5070-ti-laptop", "rtx-5080-laptop", "rtx-5090-laptop", "rtx-a2000", "rtx-a4000",
    "rtx-a4500", "rtx-a5000", "rtx-a6000", "rtx-2000-ada", "rtx-4000-ada", "rtx-4500-ada", "rtx-5000-ada",
    "rtx-6000-ada", "rtx-pro-4000-blackwell", "rtx-pro-4500-blackwell", "rtx-pro-5000-blackwell",
    "rtx-pro-6000-blackwell", "rtx-pro-6000-blackwell-max-q", "rtx-pro-6000-blackwell-server", "tesla-t4", "a10",
    "l4", "l40", "l40s", "a100-pcie-40gb", "a100-pcie-80gb", "a100-sxm-40gb", "a100-sxm-80gb", "h100-pcie",
    "h100-sxm", "h100-nvl", "h200-sxm", "h200-nvl", "b200", "gb200", "dgx-spark", "jetson-agx-orin-64gb",
    "jetson-agx-orin-32gb", "jetson-orin-nano-super", "jetson-agx-thor",
}

#: Blackwell Ultra raised FP4 alone (13.1 dense PFLOPS against 2.25 FP16), breaking the 4:1 ratio.
FP4_RATIO_EXCEPTIONS = {"b300"}


def nvidia_devices():
    return [d for d in load_hardware().values() if d.vendor == "nvidia"]


def resolve(name: str) -> str:
    return hardware_index().names[normalise_name(name)]


def relative_gap(a: float, b: float) -> float:
    return abs(a - b) / b


@pytest.mark.parametrize("name,device_id", sorted(CALIBRATION_NAMES.items()))
def test_calibration_names_resolve(name, device_id):
    assert resolve(name) == device_id


@pytest.mark.parametrize("device_id,gbs", BANDWIDTH_ANCHORS)
def test_bandwidth_anchors(device_id, gbs):
    assert load_hardware()[device_id].bandwidth_gbs == pytest.approx(gbs, rel=0.005)


@pytest.mark.parametrize("device_id,tflops", FP16_ANCHORS)
def test_dense_fp16_anchors(device_id, tflops):
    assert load_hardware()[device_id].fp16_tflops == pytest.approx(tflops, rel=0.005)


def test_required_parts_present():
    base_ids = {d.base_id for d in nvidia_devices()}
    assert REQUIRED_BASE_IDS - base_ids == set()
    assert len(base_ids) >= 60


def test_fp32_accumulate_never_faster_than_fp16_accumulate():
    for device in nvidia_devices():
        if device.fp16_acc16_tflops is not None:
            assert device.fp16_tflops < device.fp16_acc16_tflops, device.id


def test_geforce_halves_fp32_accumulate():
    """Every GeForce card (desktop and laptop, Turing to Blackwell) runs FP32 accumulate at half rate."""
    geforce = [d for d in nvidia_devices() if d.family.startswith("GeForce RTX") and d.base_id != "titan-rtx"]
    assert len(geforce) >= 40
    for device in geforce:
        assert device.fp16_acc16_tflops is not None, device.id
        assert relative_gap(device.fp16_acc16_tflops, 2 * device.fp16_tflops) < 0.01, device.id


def test_int8_is_twice_the_fp16_accumulate_rate():
    """Turing through Blackwell tensor cores do INT8 at 2x the FP16-accumulate rate: a sparse figure shows
    up here as 4x (or as 1x when the FP16 figure was the sparse one)."""
    for device in nvidia_devices():
        if device.int8_tops is None:
            continue
        fp16_full = device.fp16_acc16_tflops or device.fp16_tflops
        assert relative_gap(device.int8_tops, 2 * fp16_full) < 0.02, device.id


def test_fp4_is_four_times_the_fp16_accumulate_rate():
    for device in nvidia_devices():
        if device.fp4_tflops is None or device.base_id in FP4_RATIO_EXCEPTIONS:
            continue
        fp16_full = device.fp16_acc16_tflops or device.fp16_tflops
        assert relative_gap(device.fp4_tflops, 4 * fp16_full) < 0.02, device.id


def test_fp8_between_fp16_and_twice_fp16_accumulate():
    """FP8 is 2x FP16 with FP16 accumulate, halved on GeForce with FP32 accumulate: never outside [1x, 2x].
    (3% slack: NVIDIA's L40S datasheet prints FP16 362.05 but FP8 733, i.e. 2.02x.)"""
    for device in nvidia_devices():
        if device.fp8_tflops is None:
            continue
        fp16_full = device.fp16_acc16_tflops or device.fp16_tflops
        assert fp16_full * 0.99 <= device.fp8_tflops <= 2 * fp16_full * 1.03, device.id


def test_bandwidth_follows_bus_and_data_rate():
    checked = 0
    for device in nvidia_devices():
        if device.memory_bus_bits and device.memory_data_rate_mts:
            derived = device.memory_bus_bits / 8 * device.memory_data_rate_mts / 1000
            assert relative_gap(device.bandwidth_gbs, derived) < 0.03, device.id
            checked += 1
    assert checked >= 60


def test_memory_variants_and_bare_names():
    """A bare name of a card sold in two sizes means the larger one; the size suffix picks the smaller."""
    assert resolve("RTX 4060 Ti") == "rtx-4060-ti-16gb"
    assert resolve("RTX 4060 Ti 8GB") == "rtx-4060-ti-8gb"
    assert resolve("RTX 5060 Ti") == "rtx-5060-ti-16gb"
    assert resolve("RTX 3080") == "rtx-3080"
    assert load_hardware()["rtx-3080"].memory_gib == 10


def test_laptop_and_unified_memory_kinds():
    devices = load_hardware()
    assert all(d.form_factor == "laptop" for d in nvidia_devices() if "Laptop" in d.family)
    for device_id in ("dgx-spark", "jetson-agx-orin-64gb", "jetson-agx-thor"):
        assert devices[device_id].unified_memory, device_id
    assert devices["dgx-spark"].memory_gib == 128
    assert not devices["rtx-4090"].unified_memory

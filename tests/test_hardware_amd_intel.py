"""Checks on the AMD and Intel GPU/APU catalog (data/hardware/amd-*.toml, data/hardware/intel-*.toml)."""

from __future__ import annotations

import tomllib

import pytest

from engine.catalog import DATA_DIR, normalise_name
from engine.hardware import Device, hardware_index, load_hardware

CATALOG_FILES = sorted(DATA_DIR.glob("hardware/amd-*.toml")) + sorted(DATA_DIR.glob("hardware/intel-*.toml"))

#: Relative slack for vendor figures that are rounded ("5 PFLOPS", "233 TOPS").
ROUNDING = 1.01


def entry_ids() -> set[str]:
    ids: set[str] = set()
    for path in CATALOG_FILES:
        ids |= set(tomllib.loads(path.read_text(encoding="utf-8")))
    return ids


def devices() -> list[Device]:
    ids = entry_ids()
    return [device for device in load_hardware().values() if device.base_id in ids]


def resolve(name: str) -> Device:
    return load_hardware()[hardware_index().names[normalise_name(name)]]


def any_variant(entry_id: str) -> Device:
    return next(device for device in load_hardware().values() if device.base_id == entry_id)


def test_catalog_covers_at_least_forty_entries() -> None:
    assert len(entry_ids()) >= 40


def test_calibration_name_resolves_to_the_128gb_strix_halo() -> None:
    device = resolve("AMD Ryzen AI Max+ 395 128GB")
    assert device.id == "ryzen-ai-max-plus-395-128gb"
    assert device.memory_gib == 128
    assert device.kind == "soc"


@pytest.mark.parametrize(
    "name, bandwidth_gbs, memory_gib",
    [
        ("RX 7900 XTX", 960, 24),
        ("Radeon RX 7900 XTX", 960, 24),
        ("MI300X", 5300, 192),
        ("Ryzen AI Max+ 395", 256, 128),
        ("Strix Halo", 256, 128),
        ("Arc B580", 456, 12),
    ],
)
def test_anchor_devices(name: str, bandwidth_gbs: float, memory_gib: float) -> None:
    device = resolve(name)
    assert device.bandwidth_gbs == bandwidth_gbs
    assert device.memory_gib == memory_gib


@pytest.mark.parametrize(
    "name, memory_gib",
    [("RX 9060 XT", 16), ("RX 9060 XT 8GB", 8), ("Arc A770", 16), ("Arc A770 8GB", 8), ("Ryzen AI Max+ 395 32GB", 32)],
)
def test_memory_variants_resolve_to_the_intended_card(name: str, memory_gib: float) -> None:
    assert resolve(name).memory_gib == memory_gib


# (entry id, field, figure the vendor or a datasheet calls peak, quoted with 2:4 sparsity?)
PUBLISHED_PEAKS = [
    ("rx-7900-xtx", "fp16_tflops", 122.8, False),  # AMD peak half precision (fpsbench / TechPowerUp)
    ("rx-7900-xtx", "int8_tops", 245.76 / 2, False),  # hmc-tech: 245.76 INT4 TOPS, INT8 at half
    ("rx-9070-xt", "int8_tops", 779, True),  # AMD launch: 779 INT8 TOPS with sparsity
    ("rx-9070", "int8_tops", 1160 / 2, True),  # hmc-tech: 1.16 POPS INT4 with sparsity
    ("rx-9060-xt", "int8_tops", 820.51 / 2, True),  # hmc-tech: 820.51 INT4 TOPS with sparsity
    ("mi100", "fp16_tflops", 184.6, False),  # ROCm MI100 peak table
    ("mi250", "fp16_tflops", 362.1, False),  # ROCm MI250 peak table
    ("mi250x", "fp16_tflops", 383.0, False),  # AMD MI200 launch table
    ("mi250x", "int8_tops", 383.0, False),
    ("mi300x", "fp16_tflops", 1307.4, False),  # ROCm MI300X peak table
    ("mi300x", "fp8_tflops", 2614.9, False),
    ("mi300x", "int8_tops", 2614.9, False),
    ("mi355x", "fp8_tflops", 5000, False),  # ISSCC 2026: "five petaflops" FP8
    ("mi355x", "fp4_tflops", 20100, True),  # Tom's Hardware: 20.1 PFLOPS maximum FP4 (sparse)
    ("arc-b580", "int8_tops", 233, False),  # Intel launch figure
    ("arc-b570", "int8_tops", 203, False),
    ("arc-pro-b50", "int8_tops", 170, False),  # Intel ark
    ("arc-pro-b60", "int8_tops", 197, False),
    ("arc-pro-b70", "int8_tops", 367, False),  # Intel datasheet
    ("ryzen-ai-max-plus-395", "fp16_tflops", 59.4, False),
]


@pytest.mark.parametrize("entry_id, field, peak, sparse", PUBLISHED_PEAKS)
def test_matrix_figures_are_dense(entry_id: str, field: str, peak: float, sparse: bool) -> None:
    dense_peak = peak / 2 if sparse else peak
    value = getattr(any_variant(entry_id), field)
    assert value is not None, f"{entry_id} has no {field}"
    assert value <= dense_peak * ROUNDING, f"{entry_id} {field} = {value} exceeds the dense peak {dense_peak}"


def test_precision_ladder_is_monotonic() -> None:
    """Narrower formats never run slower than FP16 on these matrix units; FP32 vector never faster."""
    for device in devices():
        if device.int8_tops is not None:
            assert device.int8_tops >= device.fp16_tflops / ROUNDING, device.id
        if device.fp8_tflops is not None:
            assert device.fp8_tflops >= device.fp16_tflops, device.id
        if device.fp4_tflops is not None:
            assert device.fp4_tflops >= (device.fp8_tflops or device.fp16_tflops), device.id
        if device.fp32_tflops is not None:
            assert device.fp32_tflops <= device.fp16_tflops, device.id


#: Radeon families ROCm no longer builds for (gfx803, gfx900, gfx101x): llama.cpp users run Vulkan.
PRE_ROCM_FAMILIES = ("Radeon RX 400/500", "Radeon RX Vega", "Radeon RX 5000")


def expected_backend(device: Device) -> str:
    if device.vendor == "intel":
        return "sycl"
    if device.kind == "gpu" and device.family in PRE_ROCM_FAMILIES:
        return "vulkan"  # Polaris, Vega 10 and RDNA 1 left ROCm's support
    if device.kind == "gpu":
        return "rocm"  # discrete Radeon RDNA 2+, Radeon VII / Pro VII and Instinct
    if device.family in ("Ryzen APU", "Handheld"):
        return "vulkan"  # Radeon 780M / 890M iGPUs
    return device.backend  # Strix Halo: a documented choice, see its notes


def test_backends_follow_the_catalog_rules() -> None:
    for device in devices():
        assert device.backend == expected_backend(device), device.id
        assert device.vendor in ("amd", "intel"), device.id


def test_unified_memory_systems_list_their_memory_sizes() -> None:
    socs = [device for device in devices() if device.kind == "soc"]
    assert socs
    for device in socs:
        assert device.id.endswith(f"-{device.memory_gib:g}gb"), device.id


def test_arc_pro_b70_rates_agree_at_its_max_dynamic_clock():
    """Intel's Arc Pro B70 figures (367 INT8 TOPS, 22.94 FP32 TFLOPS) both follow from 32 Xe2-cores
    at 2.8 GHz: 4,096 INT8 operations per Xe2-core per clock, 8 vector engines x 16 lanes x 2 per
    Xe2-core per clock. Without its FP32 rate the engine took the XMX figure as the vector rate."""
    b70 = load_hardware()["arc-pro-b70"]
    clock_ghz = b70.gpu_clock_mhz / 1000
    assert b70.int8_tops == pytest.approx(b70.gpu_cores * 4096 * clock_ghz / 1000, rel=0.01)
    assert b70.fp32_tflops == pytest.approx(b70.gpu_cores * 8 * 16 * 2 * clock_ghz / 1000, rel=0.01)

"""Apple Silicon and CPU-only entries of the hardware catalog (data/hardware/apple-*.toml, cpu-*.toml)."""

from collections import defaultdict

import pytest

from engine.catalog import normalise_name
from engine.hardware import hardware_index, load_hardware

#: Names in shared/measured/calibration.csv and the memory variant each must mean.
CALIBRATION_NAMES = {
    "Apple M3 Max 64GB": "apple-m3-max-40c-64gb",
    "Apple M2 Ultra": "apple-m2-ultra-76c-192gb",
    "Apple M2 Max": "apple-m2-max-38c-96gb",
    "Apple M2 Ultra 76-core GPU 192GB": "apple-m2-ultra-76c-192gb",
    "Apple M1 Max 32-core GPU 64GB": "apple-m1-max-32c-64gb",
    "Apple M1 Max 24-core GPU 32GB": "apple-m1-max-24c-32gb",
    "Apple M3 10-core GPU 16GB": "apple-m3-10c-16gb",
    "Apple M1 7-core GPU 8GB": "apple-m1-7c-8gb",
    "AMD Ryzen 9 7950X": "amd-ryzen-9-7950x-128gb",
}

#: (device id, bandwidth GB/s): Apple's published figures and one DDR5 platform.
BANDWIDTH_ANCHORS = [
    ("apple-m2-ultra-76c-192gb", 800),
    ("apple-m1-max-32c-64gb", 400),
    ("apple-m3-max-40c-128gb", 400),
    ("apple-m3-max-30c-96gb", 300),
    ("apple-m4-max-40c-128gb", 546),
    ("apple-m4-max-32c-36gb", 410),
    ("apple-m3-pro-18c-36gb", 150),
    ("amd-ryzen-9-7950x-128gb", 83.2),  # DDR5-5200 x 2 channels x 8 bytes
]


def apple_devices():
    return [d for d in load_hardware().values() if d.vendor == "apple"]


def cpu_devices():
    return [d for d in load_hardware().values() if d.kind == "cpu"]


def variants_by_base(devices):
    groups = defaultdict(list)
    for device in devices:
        groups[device.base_id].append(device)
    return groups


def resolve(name):
    return hardware_index().names.get(normalise_name(name))


@pytest.mark.parametrize("name,device_id", sorted(CALIBRATION_NAMES.items()))
def test_calibration_names_resolve(name, device_id):
    assert resolve(name) == device_id


@pytest.mark.parametrize("device_id,bandwidth_gbs", BANDWIDTH_ANCHORS)
def test_bandwidth_anchors(device_id, bandwidth_gbs):
    assert load_hardware()[device_id].bandwidth_gbs == pytest.approx(bandwidth_gbs)


def test_catalog_sizes():
    assert len(variants_by_base(apple_devices())) >= 39
    assert len(variants_by_base(cpu_devices())) >= 25


def test_apple_names_without_size_mean_the_largest_variant():
    for base_id, variants in variants_by_base(apple_devices()).items():
        largest = max(variants, key=lambda d: d.memory_gib)
        for device in variants:
            suffix = f" {device.memory_gib:g}GB"
            assert device.name.endswith(suffix), device.id
            assert resolve(device.name) == device.id
            assert resolve(device.name[: -len(suffix)]) == largest.id, base_id
            for alias in device.aliases:
                if alias.endswith(suffix):
                    assert resolve(alias[: -len(suffix)]) == largest.id, alias


def test_bare_chip_name_means_the_top_gpu_bin():
    for chip in ("M1 Max", "M2 Ultra", "M3 Max", "M4 Max", "M4 Pro", "M5 Max"):
        device_id = resolve(f"Apple {chip}")
        bins = [d for d in apple_devices() if d.name.startswith(f"Apple {chip} ")]
        assert load_hardware()[device_id].gpu_cores == max(d.gpu_cores for d in bins), chip


def test_apple_entries_are_metal_socs():
    for device in apple_devices():
        assert (device.kind, device.backend) == ("soc", "metal"), device.id
        assert device.gpu_cores and device.cpu_cores, device.id


def test_apple_fp16_is_shader_rate_before_neural_accelerators():
    """Before M5 FP16 runs at the FP32 shader rate; M5-generation GPU Neural Accelerators give 4x per core."""
    for device in apple_devices():
        neural = device.family in ("Apple M5", "Apple M6")
        if device.fp32_tflops is None:
            assert neural, device.id
            continue
        ratio = device.fp16_tflops / device.fp32_tflops
        assert ratio == pytest.approx(4.0 if neural else 1.0, rel=0.01), device.id


def test_apple_shader_rate_is_128_alus_x_fma_per_core_at_a_plausible_clock():
    for device in apple_devices():
        if device.fp32_tflops is None:
            continue
        clock_ghz = device.fp32_tflops * 1e3 / (device.gpu_cores * 128 * 2)
        assert 1.2 <= clock_ghz <= 1.8, device.id


def test_cpu_bandwidth_is_channels_x_8_bytes_x_data_rate():
    checked = 0
    for device in cpu_devices():
        if device.memory_channels is None:
            continue
        derived = device.memory_channels * 8 * device.memory_data_rate_mts / 1000
        assert device.bandwidth_gbs == pytest.approx(derived, rel=1e-3), device.id
        checked += 1
    assert checked >= 25


def test_ddr_platforms_state_their_channels():
    for device in cpu_devices():
        if device.memory_type.startswith("DDR"):
            assert device.memory_channels and device.memory_data_rate_mts, device.id


def test_cpu_entries_run_the_cpu_backend():
    for device in cpu_devices():
        assert device.backend == "cpu", device.id
        assert device.cpu_cores and device.fp16_tflops == device.fp32_tflops, device.id

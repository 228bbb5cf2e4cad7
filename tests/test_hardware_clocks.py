"""GPU clocks of the hardware catalog (``gpu_clock_mhz``).

The clock sets the latency-bound per-layer overhead of a decode step, so every GPU and SoC needs one, and
it must be the same clock the entry's TFLOPS were derived from, or the two halves of the model disagree.
"""

import pytest

from engine.hardware import load_hardware

#: GPU/SoC entries whose clock no retrieved source states; they stay without the field (base ids).
UNSOURCED_CLOCKS = {
    "rtx-5070-ti-laptop",  # NVIDIA's laptop boost range not retrieved; listings disagree (1.5-2.2 GHz)
    "rtx-5080-laptop",
    "rtx-5090-laptop",
    "b300",  # Blackwell Ultra clock unpublished
    "apple-m6-12c",  # Apple publishes no GPU clock; no measurement yet
}

#: (device id, MHz) as the vendor states it (Apple: measured), the figures prefill and overhead rest on.
CLOCK_ANCHORS = [
    ("rtx-4090", 2520),  # Ada whitepaper
    ("rtx-3090", 1695),  # GA102 whitepaper
    ("a100-sxm-80gb", 1410),  # Ampere whitepaper
    ("h100-sxm", 1980),  # boost for FP32/FP64; NVIDIA's tensor figures assume 1830
    ("h100-pcie", 1755),
    ("rx-7900-xtx", 2500),  # AMD boost frequency (game clock 2300)
    ("apple-m2-ultra-76c-192gb", 1398),  # philipturner/metal-benchmarks
]

#: Ampere, Ada and Blackwell GeForce SMs do 128 FP32 FMA per clock = 256 FLOP/clk.
FP32_FLOP_PER_CLOCK_PER_SM = 256
AMPERE_ADA_BLACKWELL_GEFORCE = ("GeForce RTX 30", "GeForce RTX 40", "GeForce RTX 50")


def base_devices():
    """One device per catalog entry (memory variants share their entry's clock)."""
    devices = {}
    for device in load_hardware().values():
        devices.setdefault(device.base_id, device)
    return devices


def test_every_gpu_and_soc_has_a_clock():
    missing = {base_id for base_id, d in base_devices().items() if d.kind in ("gpu", "soc") and d.gpu_clock_mhz is None}
    assert missing == UNSOURCED_CLOCKS


def test_cpus_have_no_gpu_clock():
    assert [d.id for d in load_hardware().values() if d.kind == "cpu" and d.gpu_clock_mhz is not None] == []


@pytest.mark.parametrize("device_id,mhz", CLOCK_ANCHORS)
def test_clock_anchors(device_id, mhz):
    assert load_hardware()[device_id].gpu_clock_mhz == pytest.approx(mhz, rel=0.002)


def test_geforce_fp32_follows_sms_times_clock():
    """fp32_tflops = SMs x 256 FLOP/clk x boost clock, the convention every GeForce entry was derived with."""
    checked = 0
    for base_id, device in base_devices().items():
        if not device.family.startswith(AMPERE_ADA_BLACKWELL_GEFORCE):
            continue
        if device.fp32_tflops is None or device.gpu_cores is None:
            continue
        derived = device.gpu_cores * FP32_FLOP_PER_CLOCK_PER_SM * device.gpu_clock_mhz / 1e6
        assert device.fp32_tflops == pytest.approx(derived, rel=0.03), base_id
        checked += 1
    assert checked >= 25

"""The CPUs people run llama.cpp on beyond the calibration's (issue 20, data/hardware/cpu-more.toml): each
entry's bandwidth and FP32 peak pinned to the figures its source gives (channels x 8 bytes x MT/s, or bus
width x MT/s; cores x base clock x FLOP/cycle, E-cores added on hybrid parts), its provenance stated, and
the names benchmarks and operating systems use for it resolving to it."""

import pytest

from engine.hardware import load_hardware
from engine.system import resolve_device

#: (entry, bandwidth GB/s, FP32 TFLOPS, cores, threads) from the vendor figures the entry cites.
PINNED = [
    ("amd-epyc-7302", 204.8, 1.536, 16, 32),  # 8ch DDR4-3200; 16 x 3 GHz x 32
    ("amd-epyc-7402", 204.8, 2.1504, 24, 48),  # 8ch DDR4-3200; 24 x 2.8 GHz x 32
    ("amd-epyc-7502", 204.8, 2.56, 32, 64),  # 8ch DDR4-3200; 32 x 2.5 GHz x 32
    ("amd-epyc-7313", 204.8, 1.536, 16, 32),  # 8ch DDR4-3200; 16 x 3 GHz x 32
    ("amd-epyc-7443", 204.8, 2.1888, 24, 48),  # 8ch DDR4-3200; 24 x 2.85 GHz x 32
    ("amd-epyc-7b13", 204.8, 4.608, 64, 128),  # 8ch DDR4-3200; 64 x 2.25 GHz x 32
    ("amd-epyc-9124", 460.8, 1.536, 16, 32),  # 12ch DDR5-4800; 16 x 3 GHz x 32
    ("amd-epyc-9534", 460.8, 5.0176, 64, 128),  # 12ch DDR5-4800; 64 x 2.45 GHz x 32
    ("amd-epyc-9474f", 460.8, 5.5296, 48, 96),  # 12ch DDR5-4800; 48 x 3.6 GHz x 32
    ("amd-epyc-9684x", 460.8, 7.8336, 96, 192),  # 12ch DDR5-4800; 96 x 2.55 GHz x 32
    ("intel-xeon-gold-6130", 127.968, 2.1504, 16, 32),  # 6ch DDR4-2666; 16 x 2.1 GHz x 64
    ("intel-xeon-gold-6148", 127.968, 3.072, 20, 40),  # 6ch DDR4-2666; 20 x 2.4 GHz x 64
    ("intel-xeon-gold-6154", 127.968, 3.456, 18, 36),  # 6ch DDR4-2666; 18 x 3 GHz x 64
    ("intel-xeon-platinum-8168", 127.968, 4.1472, 24, 48),  # 6ch DDR4-2666; 24 x 2.7 GHz x 64
    ("intel-xeon-gold-6230", 140.784, 2.688, 20, 40),  # 6ch DDR4-2933; 20 x 2.1 GHz x 64
    ("intel-xeon-gold-6252", 140.784, 3.2256, 24, 48),  # 6ch DDR4-2933; 24 x 2.1 GHz x 64
    ("intel-xeon-platinum-8260", 140.784, 3.6864, 24, 48),  # 6ch DDR4-2933; 24 x 2.4 GHz x 64
    ("intel-xeon-gold-6330", 187.712, 3.584, 28, 56),  # 8ch DDR4-2933; 28 x 2 GHz x 64
    ("intel-xeon-gold-6348", 204.8, 4.6592, 28, 56),  # 8ch DDR4-3200; 28 x 2.6 GHz x 64
    ("intel-xeon-platinum-8358", 204.8, 5.3248, 32, 64),  # 8ch DDR4-3200; 32 x 2.6 GHz x 64
    ("intel-xeon-platinum-8468", 307.2, 6.4512, 48, 96),  # 8ch DDR5-4800; 48 x 2.1 GHz x 64
    ("intel-xeon-gold-6448y", 307.2, 4.3008, 32, 64),  # 8ch DDR5-4800; 32 x 2.1 GHz x 64
    ("intel-xeon-platinum-8462yplus", 307.2, 5.7344, 32, 64),  # 8ch DDR5-4800; 32 x 2.8 GHz x 64
    ("intel-xeon-platinum-8580", 358.4, 7.68, 60, 120),  # 8ch DDR5-5600; 60 x 2 GHz x 64
    ("intel-xeon-gold-6526y", 332.8, 2.8672, 16, 32),  # 8ch DDR5-5200; 16 x 2.8 GHz x 64
    ("intel-xeon-e5-2680-v3", 68.256, 0.96, 12, 24),  # 4ch DDR4-2133; 12 x 2.5 GHz x 32
    ("intel-xeon-e5-2670-v3", 68.256, 0.8832, 12, 24),  # 4ch DDR4-2133; 12 x 2.3 GHz x 32
    ("intel-xeon-e5-2650-v4", 76.8, 0.8448, 12, 24),  # 4ch DDR4-2400; 12 x 2.2 GHz x 32
    ("intel-xeon-e5-2683-v4", 76.8, 1.0752, 16, 32),  # 4ch DDR4-2400; 16 x 2.1 GHz x 32
    ("intel-xeon-e5-2697-v4", 76.8, 1.3248, 18, 36),  # 4ch DDR4-2400; 18 x 2.3 GHz x 32
    ("intel-xeon-w7-3465x", 307.2, 4.48, 28, 56),  # 8ch DDR5-4800; 28 x 2.5 GHz x 64
    ("intel-xeon-w-2295", 93.856, 3.456, 18, 36),  # 4ch DDR4-2933; 18 x 3 GHz x 64
    ("amd-ryzen-threadripper-2990wx", 93.856, 1.536, 32, 64),  # 4ch DDR4-2933; 32 x 3 GHz x 16
    ("amd-ryzen-threadripper-pro-3975wx", 204.8, 3.584, 32, 64),  # 8ch DDR4-3200; 32 x 3.5 GHz x 32
    ("amd-ryzen-threadripper-pro-5965wx", 204.8, 2.9184, 24, 48),  # 8ch DDR4-3200; 24 x 3.8 GHz x 32
    ("intel-core-i5-4590", 25.6, 0.4224, 4, 4),  # 2ch DDR3-1600; 4 x 3.3 GHz x 32
    ("intel-core-i7-4770", 25.6, 0.4352, 4, 8),  # 2ch DDR3-1600; 4 x 3.4 GHz x 32
    ("intel-core-i5-6500", 34.128, 0.4096, 4, 4),  # 2ch DDR4-2133; 4 x 3.2 GHz x 32
    ("intel-core-i5-8400", 42.656, 0.5376, 6, 6),  # 2ch DDR4-2666; 6 x 2.8 GHz x 32
    ("intel-core-i7-8700", 42.656, 0.6144, 6, 12),  # 2ch DDR4-2666; 6 x 3.2 GHz x 32
    ("intel-core-i5-9600k", 42.656, 0.7104, 6, 6),  # 2ch DDR4-2666; 6 x 3.7 GHz x 32
    ("intel-core-i7-9700k", 42.656, 0.9216, 8, 8),  # 2ch DDR4-2666; 8 x 3.6 GHz x 32
    ("intel-core-i5-10400", 42.656, 0.5568, 6, 12),  # 2ch DDR4-2666; 6 x 2.9 GHz x 32
    ("intel-core-i7-10700k", 46.928, 0.9728, 8, 16),  # 2ch DDR4-2933; 8 x 3.8 GHz x 32
    ("intel-core-i5-11400", 51.2, 0.4992, 6, 12),  # 2ch DDR4-3200; 6 x 2.6 GHz x 32
    ("intel-core-i5-14400", 76.8, 0.5952, 10, 16),  # 2ch DDR5-4800; 6P x 2.5 x 32 + E-cores
    ("intel-core-i7-12700h", 76.8, 0.6592, 14, 20),  # 2ch DDR5-4800; 6P x 2.3 x 32 + E-cores
    ("intel-core-i9-12900h", 76.8, 0.7104, 14, 20),  # 2ch DDR5-4800; 6P x 2.5 x 32 + E-cores
    ("intel-core-i5-1235u", 76.8, 0.1984, 10, 12),  # 2ch DDR5-4800; 2P x 1.3 x 32 + E-cores
    ("intel-core-i7-1255u", 76.8, 0.2624, 10, 12),  # 2ch DDR5-4800; 2P x 1.7 x 32 + E-cores
    ("intel-core-i5-1335u", 83.2, 0.1984, 10, 12),  # 2ch DDR5-5200; 2P x 1.3 x 32 + E-cores
    ("intel-core-i7-1355u", 83.2, 0.2624, 10, 12),  # 2ch DDR5-5200; 2P x 1.7 x 32 + E-cores
    ("intel-core-i9-13900h", 83.2, 0.7424, 14, 20),  # 2ch DDR5-5200; 6P x 2.6 x 32 + E-cores
    ("intel-core-i7-8550u", 38.4, 0.2304, 4, 8),  # 2ch DDR4-2400; 4 x 1.8 GHz x 32
    ("intel-core-i5-8250u", 38.4, 0.2048, 4, 8),  # 2ch DDR4-2400; 4 x 1.6 GHz x 32
    ("intel-core-i7-10510u", 42.656, 0.2304, 4, 8),  # 2ch DDR4-2666; 4 x 1.8 GHz x 32
    ("amd-ryzen-5-3600x", 51.2, 0.7296, 6, 12),  # 2ch DDR4-3200; 6 x 3.8 GHz x 32
    ("amd-ryzen-7-3800x", 51.2, 0.9984, 8, 16),  # 2ch DDR4-3200; 8 x 3.9 GHz x 32
    ("amd-ryzen-5-5500", 51.2, 0.6912, 6, 12),  # 2ch DDR4-3200; 6 x 3.6 GHz x 32
    ("amd-ryzen-5-7500f", 83.2, 0.7104, 6, 12),  # 2ch DDR5-5200; 6 x 3.7 GHz x 32
    ("amd-ryzen-9-7900x3d", 83.2, 1.6896, 12, 24),  # 2ch DDR5-5200; 12 x 4.4 GHz x 32
    ("amd-ryzen-5-9600", 89.6, 1.4592, 6, 12),  # 2ch DDR5-5600; 6 x 3.8 GHz x 64
    ("amd-ryzen-5-5600h", 51.2, 0.6336, 6, 12),  # 2ch DDR4-3200; 6 x 3.3 GHz x 32
    ("amd-ryzen-7-5800h", 51.2, 0.8192, 8, 16),  # 2ch DDR4-3200; 8 x 3.2 GHz x 32
    ("amd-ryzen-5-7530u", 51.2, 0.384, 6, 12),  # 2ch DDR4-3200; 6 x 2 GHz x 32
    ("amd-ryzen-9-7945hx", 83.2, 1.28, 16, 32),  # 2ch DDR5-5200; 16 x 2.5 GHz x 32
    ("intel-processor-n150", 38.4, 0.1856, 4, 4),  # 1ch DDR5-4800; 4 x 2.9 GHz x 16
    ("intel-core-i3-n355", 38.4, 0.384, 8, 8),  # 1ch DDR5-4800; 8 x 3 GHz x 16
    ("ampere-altra-q80-28", 204.8, 3.584, 80, 80),  # 8ch DDR4-3200; 80 x 2.8 GHz x 16
    ("microsoft-azure-cobalt-100", 460.8, 6.9632, 128, 128),  # 12ch DDR5-4800; 128 x 3.4 GHz x 16
    ("raspberry-pi-3-b-plus", 3.6, 0.0448, 4, 4),  # 32-bit LPDDR2-900; 4 x 1.4 GHz x 8
    ("spacemit-k1", 10.664, 0.2048, 8, 8),  # 32-bit LPDDR4X-2666; 8 x 1.6 GHz x 16
    # Added from the pages their verified_from names (N97: base clock unverified).
    ("intel-processor-n200", 38.4, 0.064, 4, 4),  # 1ch DDR5-4800; 4 x 1.0 GHz x 16
    ("intel-processor-n97", 38.4, 0.128, 4, 4),  # 1ch DDR5-4800; 4 x 2.0 GHz x 16
    ("intel-xeon-6972p", 614.4, 14.7456, 96, 192),  # 12ch DDR5-6400; 96 x 2.4 GHz x 64
    ("intel-xeon-6710e", 409.6, 2.4576, 64, 64),  # 8ch DDR5-6400; 64 x 2.4 GHz x 16
    ("qualcomm-snapdragon-x-plus-x1p-42-100", 135.168, 0.8192, 8, 8),  # 128-bit LPDDR5X-8448; 8 x 3.2 GHz x 32
    ("starfive-jh7110", 8.532, 0.012, 4, 4),  # 32-bit LPDDR4-2133; 4 x 1.5 GHz x 2 (scalar FMA)
    # Issue 20's list: Naples, cloud-only Xeons, Arrow Lake-HX, boards and phones.
    ("amd-epyc-7551", 170.624, 1.024, 32, 64),  # 8ch DDR4-2666; 32 x 2.0 GHz x 16
    ("intel-xeon-platinum-8259cl", 140.784, 3.84, 24, 48),  # 6ch DDR4-2933; 24 x 2.5 GHz x 64
    ("intel-xeon-platinum-8272cl", 140.784, 4.3264, 26, 52),  # 6ch DDR4-2933; 26 x 2.6 GHz x 64
    ("intel-xeon-platinum-8375c", 204.8, 5.9392, 32, 64),  # 8ch DDR4-3200; 32 x 2.9 GHz x 64
    ("intel-core-ultra-9-275hx", 102.4, 1.7664, 24, 24),  # 2ch DDR5-6400; 8P x 2.7 x 32 + 16E x 2.1 x 32
    ("raspberry-pi-zero-2-w", 3.6, 0.032, 4, 4),  # 32-bit LPDDR2-900; 4 x 1.0 GHz x 8
    ("rockchip-rk3576", 16.896, 0.1984, 8, 8),  # 32-bit LPDDR4X-4224; 4 x 2.2 x 16 + 4 x 1.8 x 8
    ("qualcomm-snapdragon-8-gen-3", 76.8, 0.392, 8, 8),  # 64-bit LPDDR5X-9600; X4 + 5 x A720 + 2 x A520
    ("qualcomm-snapdragon-8-elite", 84.8, 0.90368, 8, 8),  # 64-bit LPDDR5X-10600; 8 Oryon x 3.53 GHz x 32
    ("mediatek-dimensity-9300", 76.8, 0.5056, 8, 8),  # 64-bit LPDDR5T-9600; 4 x X4 + 4 x A720
    ("intel-xeon-platinum-8488c", 307.2, 7.3728, 48, 96),  # 8ch DDR5-4800; 48 x 2.4 GHz x 64
    ("intel-xeon-6767p", 409.6, 9.8304, 64, 128),  # 8ch DDR5-6400; 64 x 2.4 GHz x 64
]


def _entry(base_id):
    return next(d for d in load_hardware().values() if d.base_id == base_id)


@pytest.mark.parametrize("entry,bandwidth,fp32,cores,threads", PINNED)
def test_new_cpu_figures_match_their_sources(entry, bandwidth, fp32, cores, threads):
    device = resolve_device(_entry(entry).name)
    assert device.bandwidth_gbs == pytest.approx(bandwidth, rel=1e-4)
    assert device.fp32_tflops == pytest.approx(fp32, rel=1e-4) and device.fp16_tflops == pytest.approx(fp32, rel=1e-4)
    assert (device.cpu_cores, device.cpu_threads) == (cores, threads)
    # Bandwidth is the memory's peak: channels (or bus width) x data rate, as data/README.md defines it.
    width_bytes = device.memory_channels * 8 if device.memory_channels else device.memory_bus_bits / 8
    assert width_bytes * device.memory_data_rate_mts / 1000 == pytest.approx(bandwidth, rel=1e-4)


@pytest.mark.parametrize("entry", [p[0] for p in PINNED])
def test_new_cpu_states_its_provenance(entry):
    """Each entry says what was read (verified_from) or that its numbers were not read (unverified)."""
    device = _entry(entry)
    assert bool(device.verified_from) != bool(device.unverified), entry


def test_spacemit_k1_is_the_datasheet_read():
    k1 = resolve_device("Milk-V Jupiter")
    assert k1.base_id == "spacemit-k1" and "docs.banana-pi.org" in k1.verified_from
    assert (k1.memory_bus_bits, k1.memory_data_rate_mts, k1.cpu_isa) == (32, 2666, ("rvv",))


@pytest.mark.parametrize(
    "name,entry",
    [
        ("AMD EPYC 7502 32-Core Processor", "amd-epyc-7502"),
        ("AMD EPYC 7B13 64-Core Processor", "amd-epyc-7b13"),
        ("Intel(R) Xeon(R) Gold 6148 CPU @ 2.40GHz", "intel-xeon-gold-6148"),
        ("Intel(R) Xeon(R) CPU E5-2680 v3 @ 2.50GHz", "intel-xeon-e5-2680-v3"),
        ("Intel(R) Xeon(R) Platinum 8358 CPU @ 2.60GHz", "intel-xeon-platinum-8358"),
        ("12th Gen Intel(R) Core(TM) i7-12700H", "intel-core-i7-12700h"),
        ("Intel(R) Core(TM) i7-8550U CPU @ 1.80GHz", "intel-core-i7-8550u"),
        ("AMD Ryzen 7 5800H with Radeon Graphics", "amd-ryzen-7-5800h"),
        ("Intel N150", "intel-processor-n150"),
        ("Intel N355", "intel-core-i3-n355"),
        ("Azure Cobalt 100", "microsoft-azure-cobalt-100"),
        ("Banana Pi BPI-F3", "spacemit-k1"),
        ("Raspberry Pi 3", "raspberry-pi-3-b-plus"),
        ("AWS Graviton 3", "aws-graviton3"),
        ("Intel(R) N200", "intel-processor-n200"),
        ("Intel N97", "intel-processor-n97"),
        ("Intel(R) Xeon(R) 6972P", "intel-xeon-6972p"),
        ("Intel Xeon 6710E", "intel-xeon-6710e"),
        ("Snapdragon X Plus X1P-42-100", "qualcomm-snapdragon-x-plus-x1p-42-100"),
        ("StarFive VisionFive 2", "starfive-jh7110"),
        ("AMD EPYC 7551 32-Core Processor", "amd-epyc-7551"),
        ("Intel(R) Xeon(R) Platinum 8272CL CPU @ 2.60GHz", "intel-xeon-platinum-8272cl"),
        ("Intel(R) Xeon(R) Platinum 8259CL CPU @ 2.50GHz", "intel-xeon-platinum-8259cl"),
        ("Intel(R) Xeon(R) Platinum 8375C CPU @ 2.90GHz", "intel-xeon-platinum-8375c"),
        ("Intel(R) Core(TM) Ultra 9 275HX", "intel-core-ultra-9-275hx"),
        ("Raspberry Pi Zero 2 W", "raspberry-pi-zero-2-w"),
        ("RK3576", "rockchip-rk3576"),
        ("Snapdragon 8 Gen 3", "qualcomm-snapdragon-8-gen-3"),
        ("Snapdragon 8 Elite", "qualcomm-snapdragon-8-elite"),
        ("MediaTek Dimensity 9300", "mediatek-dimensity-9300"),
        ("Intel(R) Xeon(R) Platinum 8488C", "intel-xeon-platinum-8488c"),
        ("Intel Xeon 6767P (cloud VM, 16 vCPUs)", "intel-xeon-6767p"),
        # Lunar Lake's CPU name resolves to its SoC entry (one silicon, one entry).
        ("Intel(R) Core(TM) Ultra 7 258V", "core-ultra-7-258v"),
        ("NVIDIA Grace", "nvidia-grace-cpu-superchip"),
        ("Star64 (JH7110)", "starfive-jh7110"),
        # The same silicon as an APU entry: the CPU's name resolves to it (no duplicate entry).
        ("AMD Ryzen 7 8700G w/ Radeon 780M Graphics", "ryzen-7-8700g-radeon-780m"),
        ("AMD Ryzen AI 9 HX 370 w/ Radeon 890M", "ryzen-ai-9-hx-370-radeon-890m"),
        ("AMD Ryzen 7 6800H with Radeon Graphics", "ryzen-7-6800u-radeon-680m"),
    ],
)
def test_names_benchmarks_use_resolve(name, entry):
    assert resolve_device(name).base_id == entry


def test_a_cloud_slice_of_a_new_xeon_resolves_to_its_cores():
    """ "Part (cloud VM, N cores)": the part resolves and the slice keeps N of its cores."""
    device = resolve_device("Intel Xeon 6972P (cloud VM, 8 cores)")
    assert device.base_id == "intel-xeon-6972p" and device.cpu_cores == 8
    assert device.fp32_tflops == pytest.approx(14.7456 * 8 / 96, rel=1e-6)


def test_rv64gc_without_vectors_runs_the_scalar_kernels():
    """The JH7110's U74 cores have no RVV: its ISA level is 'scalar', and quantised weights multiply
    at the scalar FMA rate, not at the NEON/RVV widening-multiply rate (2x)."""
    from engine.devices import ISA_LEVELS
    from engine.quant import parse_quant
    from engine.roofline import cpu_kernel

    device = resolve_device("VisionFive 2")
    assert device.cpu_isa == ISA_LEVELS["scalar"] == ("scalar",)
    kernel = cpu_kernel(device, parse_quant("Q4_K_M"))
    assert kernel.factor == 1.0 and "scalar" in kernel.name
    assert cpu_kernel(resolve_device("SpacemiT K1"), parse_quant("Q4_K_M")).factor == 2.0


def test_a_custom_scalar_cpu_is_described_as_the_catalog_describes_one():
    """Custom hardware takes what the catalog's JH7110 entry holds: 2 FLOP per core per cycle (one
    scalar FMA) and the 'scalar' ISA level, and predicts it as the catalog entry."""
    from engine.api import estimate

    custom = {"name": "my RISC-V board", "kind": "cpu", "backend": "cpu", "memory_gib": 8, "bandwidth_gbs": 8.532,
              "fp16_tflops": 0.012, "cpu_cores": 4, "cpu_fp32_flops_per_cycle": 2, "cpu_base_clock_ghz": 1.5, "cpu_isa": "scalar"}
    request = {"model": "llama-3.2-1b", "quant": "Q4_0"}
    mine = estimate({**request, "hardware": custom})
    catalog = estimate({**request, "hardware": "starfive-jh7110"})
    assert mine["decode_tps"] == pytest.approx(catalog["decode_tps"], rel=0.02)
    assert mine["prefill_tps"] == pytest.approx(catalog["prefill_tps"], rel=0.02)


def test_the_smallest_board_has_what_pi_os_lite_leaves():
    """A 512 MB Raspberry Pi Zero 2 W keeps 291.6 MiB available under Raspberry Pi OS Lite
    (engine/memory.py's OS reserve), not less than nothing as a fixed 2.5 GB reserve left it."""
    from engine.api import estimate

    memory = estimate({"hardware": "Raspberry Pi Zero 2 W", "model": "SmolLM2-135M", "quant": "Q4_K_M"})["memory"]
    assert memory["usable_gb"] * 1e9 == pytest.approx(291.6 * 2**20)

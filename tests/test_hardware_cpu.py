"""CPU entries of the hardware catalog: the CPUs calibration rows name, each pinned to its source;
names with a qualifier (a board and its chip, a cloud slice of a part); multi-socket servers."""

import pytest

from engine.errors import EngineInputError
from engine.hardware import CPU_ISAS, load_hardware
from engine.system import build_system, resolve_device

#: Hardware names of CPU rows in shared/measured/calibration.csv -> the catalog entry they mean.
CALIBRATION_CPUS = {
    "Intel Xeon Gold 6138": "intel-xeon-gold-6138",
    "Intel Xeon 6980P": "intel-xeon-6980p",
    "AMD Ryzen Threadripper PRO 5975WX": "amd-ryzen-threadripper-pro-5975wx",
    "Intel Xeon E5-2690 v3": "intel-xeon-e5-2690-v3",
    "AMD EPYC 7702": "amd-epyc-7702",
    "AMD Ryzen Threadripper PRO 7965WX": "amd-ryzen-threadripper-pro-7965wx",
    "Intel Xeon Platinum 8480 ES": "intel-xeon-platinum-8480plus",
    "Intel Core i7-1185G7": "intel-core-i7-1185g7",
    "Intel Core i5-13600K": "intel-core-i5-13600k",
    "AMD Ryzen 9 7950X": "amd-ryzen-9-7950x",
}

#: (entry, bandwidth GB/s, FP32 TFLOPS, cores, threads) as their sources give them: channels x 8
#: bytes x MT/s, and cores x base clock x FLOP/cycle (vendor pages, WikiChip).
SOURCED = [
    ("intel-xeon-gold-6138", 127.968, 2.56, 20, 40),  # 6ch DDR4-2666; 20 x 2.0 GHz x 64
    ("amd-ryzen-threadripper-pro-5975wx", 204.8, 3.6864, 32, 64),  # 8ch DDR4-3200; 32 x 3.6 x 32
    ("intel-xeon-e5-2690-v3", 68.256, 0.9984, 12, 24),  # 4ch DDR4-2133; 12 x 2.6 x 32
    ("amd-epyc-7702", 204.8, 4.096, 64, 128),  # 8ch DDR4-3200; 64 x 2.0 x 32
    ("amd-ryzen-threadripper-pro-7965wx", 332.8, 3.2256, 24, 48),  # 8ch DDR5-5200; 24 x 4.2 x 32
    ("intel-core-i7-1185g7", 68.27, 0.384, 4, 8),  # 128-bit LPDDR4x-4267; 4 x 3.0 x 32
    ("intel-core-i5-13600k", 89.6, 1.0048, 14, 20),  # 2ch DDR5-5600; 6P x 3.5 x 32 + 8E x 2.6 x 16
    ("amd-epyc-9654", 460.8, 7.3728, 96, 192),  # 12ch DDR5-4800; 96 x 2.4 GHz base x 32
    ("amd-epyc-9355", 614.4, 7.2704, 32, 64),  # 12ch DDR5-6400; 32 x 3.55 x 64 (Zen 5)
    ("aws-graviton3", 307.2, 5.3248, 64, 64),  # 8ch DDR5-4800; 64 x 2.6 x 32 (two 256-bit SVE)
    ("raspberry-pi-4", 12.8, 0.1152, 4, 4),  # 32-bit LPDDR4-3200; 4 x 1.8 x 16
    ("intel-core-i7-13700k", 89.6, 1.1904, 16, 24),  # 2ch DDR5-5600; 8P x 3.4 x 32 + 8E x 2.5 x 16
    ("intel-xeon-e5-2699-v4", 76.8, 1.5488, 22, 44),  # 4ch DDR4-2400; 22 x 2.2 x 32
    ("amd-ryzen-threadripper-pro-7985wx", 332.8, 6.5536, 64, 128),  # 8ch DDR5-5200; 64 x 3.2 x 32
    ("intel-core-i3-n305", 38.4, 0.2304, 8, 8),  # 1ch DDR5-4800 (notebookcheck); 8 x 1.8 GHz x 16
    ("intel-processor-n100", 38.4, 0.1152, 4, 4),  # 1ch DDR5-4800 (notebookcheck); 4 x 1.8 GHz x 16
    ("qualcomm-snapdragon-x-elite-x1e-78-100", 135.17, 1.3056, 12, 12),  # 128-bit LPDDR5X-8448; 12 x 3.4 x 32
]


def base(device_id):
    return next(d for d in load_hardware().values() if d.base_id == device_id and d.aliases and device_id in d.id)


@pytest.mark.parametrize("name,entry", sorted(CALIBRATION_CPUS.items()))
def test_calibration_cpu_names_resolve(name, entry):
    assert resolve_device(name).base_id == entry


@pytest.mark.parametrize("entry,bandwidth,fp32,cores,threads", SOURCED)
def test_cpu_figures_match_their_sources(entry, bandwidth, fp32, cores, threads):
    device = resolve_device(load_hardware()[next(k for k, d in load_hardware().items() if d.base_id == entry)].name)
    assert device.bandwidth_gbs == pytest.approx(bandwidth, rel=1e-3)
    assert device.fp32_tflops == pytest.approx(fp32, rel=1e-3)
    assert (device.cpu_cores, device.cpu_threads) == (cores, threads)


def test_every_cpu_entry_states_clocks_and_isa():
    for device in load_hardware().values():
        if device.kind != "cpu":
            continue
        assert device.cpu_base_clock_ghz and device.cpu_boost_clock_ghz >= device.cpu_base_clock_ghz, device.id
        assert device.cpu_fp32_flops_per_cycle and device.cpu_isa, device.id
        assert set(device.cpu_isa) <= set(CPU_ISAS), device.id
        x86 = device.vendor in ("intel", "amd")
        assert ("avx2" in device.cpu_isa) == x86, device.id
        if "avx512-vnni" in device.cpu_isa or "amx" in device.cpu_isa:
            assert "avx512" in device.cpu_isa, device.id


def test_hybrid_parts_name_their_performance_cores():
    i5 = resolve_device("Core i5-13600K")
    assert (i5.cpu_p_cores, i5.cpu_cores) == (6, 14)
    assert resolve_device("Ryzen 9 7950X").cpu_p_cores is None


def test_board_qualifier_falls_back_to_the_chip():
    assert resolve_device("Some Board v2 (Raspberry Pi 5)").base_id == "raspberry-pi-5"
    # A known name with a qualifier keeps the name's entry.
    assert resolve_device("Raspberry Pi 5 (BCM2712)").base_id == "raspberry-pi-5"


def test_cloud_slice_reads_its_size():
    full = resolve_device("AMD EPYC 9654")
    vm = resolve_device("AMD EPYC 9654 (cloud VM, 2 cores)")
    assert vm.base_id == full.base_id and vm.cpu_cores == 2 and vm.cpu_threads == 2
    assert vm.fp32_tflops == pytest.approx(full.fp32_tflops * 2 / 96)
    assert vm.bandwidth_gbs == full.bandwidth_gbs  # the socket's; the cores in use limit the draw
    assert "cloud VM, 2 cores" in vm.name
    vcpus = resolve_device("AMD EPYC 9654 (8 vCPUs)")
    assert (vcpus.cpu_cores, vcpus.cpu_threads) == (4, 8)  # SMT: two hardware threads per core


def test_unknown_name_with_qualifier_still_fails_clearly():
    from engine.errors import EngineInputError

    with pytest.raises(EngineInputError, match="unknown hardware"):
        resolve_device("Nonexistent Board (Nonexistent SoC)")


def test_sockets_add_cores_and_memory_not_bandwidth():
    one = build_system({"hardware": "Intel Xeon Gold 6138", "model": "Llama-3.1-8B", "quant": "Q8_0"})
    two = build_system({"hardware": "Intel Xeon Gold 6138", "model": "Llama-3.1-8B", "quant": "Q8_0", "gpus": 2})
    assert two.gpus == 1 and two.device.cpu_sockets == 2
    assert two.device.cpu_cores == 2 * one.device.cpu_cores
    assert two.cpu_threads == 40  # llama.cpp's default: every physical core of both sockets
    assert two.device.memory_gib == 2 * one.device.memory_gib
    assert two.device.bandwidth_gbs == one.device.bandwidth_gbs


@pytest.mark.parametrize(
    "name,entry,bandwidth,fp32",
    [
        # Keyboard computers and the bare SoC name share their board's silicon (sources in the
        # entries' notes): Pi 400 = Pi 4 (BCM2711, 32-bit LPDDR4-3200, 4 x A72 at 1.8 GHz);
        # Pi 500 / 500+ = Pi 5 (BCM2712, 32-bit LPDDR4X-4267, 4 x A76 at 2.4 GHz).
        ("Raspberry Pi 400", "raspberry-pi-4", 12.8, 0.1152),
        ("Raspberry Pi 500", "raspberry-pi-5", 17.07, 0.1536),
        ("Raspberry Pi 500+", "raspberry-pi-5", 17.07, 0.1536),
        ("BCM2712", "raspberry-pi-5", 17.07, 0.1536),
        # Compute Module 5 = BCM2712 too (Raspberry Pi's processor page, in the entry's notes).
        ("Raspberry Pi CM5", "raspberry-pi-5", 17.07, 0.1536),
        ("Raspberry Pi Compute Module 5", "raspberry-pi-5", 17.07, 0.1536),
    ],
)
def test_board_aliases_resolve_to_the_same_silicon(name, entry, bandwidth, fp32):
    device = resolve_device(name)
    assert device.base_id == entry
    assert device.bandwidth_gbs == pytest.approx(bandwidth, rel=1e-3)
    assert device.fp32_tflops == pytest.approx(fp32, rel=1e-3)


@pytest.mark.parametrize(
    "printed,entry",
    [
        ("Intel(R) Xeon(R) Gold 6338 CPU @ 2.00GHz", "intel-xeon-gold-6338"),
        ("AMD EPYC 7763 64-Core Processor", "amd-epyc-7763"),
        ("13th Gen Intel(R) Core(TM) i5-13600K", "intel-core-i5-13600k"),
        ("Intel(R) Xeon(R) CPU E5-2690 v3 @ 2.60GHz", "intel-xeon-e5-2690-v3"),
        ("AMD Ryzen 9 7950X 16-Core Processor", "amd-ryzen-9-7950x"),
        ("Intel(R) Core(TM) i7-1185G7 @ 3.00GHz", "intel-core-i7-1185g7"),
    ],
)
def test_cpu_names_as_the_os_prints_them_resolve(printed, entry):
    """/proc/cpuinfo, lscpu and llama-bench's cpu_info name a CPU with trademark marks, a generation,
    a clock or a core count around the product name."""
    assert resolve_device(printed).base_id == entry


def test_cpuinfo_noise_alone_is_not_a_device():
    with pytest.raises(EngineInputError):
        resolve_device("Intel(R) Core(TM) CPU @ 2.00GHz")


def test_bitnet_3b_is_the_config_read_and_resolves_as_calibration_names_it():
    """BitNet b1.58 3B (the model of the IQ2_BN calibration rows): its config as 0xBitNet's transcription
    of the 3B config.json states it, and the parameter count llama-bench prints (3.43 B) follows from it."""
    from engine.models import load_models
    from engine.system import resolve_model

    model = load_models()["bitnet-b1.58-3b"]
    assert "m96-chan/0xBitNet/blob/5665a125" in model.verified_from
    c = model.config
    assert (c["num_hidden_layers"], c["hidden_size"], c["num_attention_heads"], c["num_key_value_heads"], c["intermediate_size"], c["vocab_size"]) == (26, 3200, 32, 32, 8640, 32002)
    counted = c["num_hidden_layers"] * (4 * 3200**2 + 3 * 3200 * 8640) + 2 * 32002 * 3200
    assert counted / 1e9 == pytest.approx(model.params_b, abs=0.005)
    assert resolve_model("bitnet_b1_58-3B").id == "bitnet-b1.58-3b"

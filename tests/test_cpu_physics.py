"""CPU mechanisms (engine/roofline.py CPU section, decode.py, prefill.py), each pinned to published
measurements in shared/measured/calibration.csv (source ids in the comments; the values are the
rows' tokens_per_s)."""

import pytest

from engine import estimate
from engine.decode import step_features
from engine.quant import parse_quant
from engine.roofline import clock_ratio, cpu_kernel, default_threads, effective_cores
from engine.system import build_system, resolve_device


def rates(**request):
    result = estimate(request)
    return result["decode_tps"], result["prefill_tps"]


def test_threads_default_to_physical_cores_and_p_cores_on_hybrids():
    assert default_threads(resolve_device("Ryzen 9 9950X")) == 16
    assert default_threads(resolve_device("Core i5-13600K")) == 6  # 6 P + 8 E cores
    system = build_system({"hardware": "Core i9-13900K", "model": "Llama-3.1-8B", "quant": "Q4_K_M"})
    assert system.cpu_threads == 8


def test_issue_check_9950x_threads_8_vs_16():
    """Issue 20: decode is bandwidth bound (the 7950X sweeps of ik_llama.cpp discussion 63 flatten
    from 4 threads: Llama-3.2-3B Q8_0 18.66 / 18.03 / 17.20 tok/s at 2 / 4 / 8 threads), prefill
    scales below linear (1.4-1.95x for twice the threads)."""
    base = {"hardware": "Ryzen 9 9950X", "model": "Llama-3.1-8B", "quant": "Q4_K_M"}
    d8, p8 = rates(**base, threads=8)
    d16, p16 = rates(**base, threads=16)
    assert abs(d16 / d8 - 1) <= 0.10
    assert 1.4 <= p16 / p8 < 1.95


def test_thread_sweep_xeon_6980p_prefill_gains_less_than_linear():
    """ik_llama.cpp PR 259 / PR 287 (ubergarm, one Xeon 6980P socket, DeepSeek-R1): pp512 from 64
    to 128 threads gains 1.21-1.54x (Q4_K_R4 105 -> 127 and 96 -> 140; Q8_0 107 -> 153); 172
    threads (past the 128 physical cores) fall back (UD-Q2_K_XL 147 -> 113)."""
    base = {"hardware": "Intel Xeon 6980P", "model": "DeepSeek-R1", "quant": "Q4_K_R4", "engine": "ik_llama.cpp"}
    p64, p128, p172 = (rates(**base, threads=t)[1] for t in (64, 128, 172))
    assert 1.2 <= p128 / p64 <= 1.6
    assert p172 < 0.9 * p128


def test_hybrid_threads_past_p_cores_run_at_e_core_pace():
    """ik_llama.cpp issue 255 (Core i5-13600K, Qwen2.5-32B Q5_K_M pp2048): 13 threads 10.0-11.8
    tok/s, 6 threads (the P-cores) 11.5-17.0."""
    base = {"hardware": "Core i5-13600K", "model": "Qwen2.5-32B", "quant": "Q5_K_M", "engine": "ik_llama.cpp", "prompt_tokens": 2048}
    assert rates(**base, threads=13)[1] <= 1.05 * rates(**base, threads=6)[1]
    device = resolve_device("Core i5-13600K")
    assert effective_cores(device, 6) == 6
    assert effective_cores(device, 13) < 6


def test_smt_threads_share_a_core():
    device = resolve_device("Intel Xeon 6980P")
    assert effective_cores(device, 128) == 128
    assert effective_cores(device, 172) == pytest.approx(86)
    assert effective_cores(device, 256) == pytest.approx(128)


def test_clock_falls_from_boost_to_base_as_cores_get_busy():
    device = resolve_device("Ryzen 9 9950X")  # 4.3 GHz base, 5.7 GHz boost
    assert clock_ratio(device, 1) == pytest.approx(5.7 / 4.3)
    assert clock_ratio(device, 16) == pytest.approx(1.0)
    assert clock_ratio(device, 64) == pytest.approx(1.0)
    assert clock_ratio(device, 1) > clock_ratio(device, 8) > clock_ratio(device, 16)


@pytest.mark.parametrize(
    "hardware,quant,name,factor",
    [
        ("Ryzen 9 7950X", "Q4_K_M", "AVX-512 VNNI", 4.0),
        ("Threadripper PRO 5975WX", "Q4_K_M", "AVX2 vpmaddubsw", 2.0),
        ("Intel Xeon Gold 6138", "Q8_0", "AVX2 vpmaddubsw on an AVX-512 core", 1.0),
        ("Core i5-13600K", "Q4_K_M", "AVX-VNNI", 4.0),
        ("Snapdragon X Elite", "Q4_0", "i8mm", 8.0),
        ("Raspberry Pi 5", "Q4_0", "sdot", 4.0),
        ("Ryzen 9 7950X", "BF16", "AVX-512 BF16", 2.0),
        ("Threadripper PRO 5975WX", "BF16", "converted", 1.0),
    ],
)
def test_kernel_path_per_isa_and_format(hardware, quant, name, factor):
    kernel = cpu_kernel(resolve_device(hardware), parse_quant(quant))
    assert name in kernel.name and kernel.factor == factor


def test_a_single_token_step_cannot_use_i8mm():
    """Arm's smmla multiplies an 8x2 block of activations, two token columns: ggml takes its i8mm
    path only where nrc == 2 (ggml-cpu/arch/arm/quants.c) and its repacked matrix-vector kernels
    (ggml_gemv_*) use sdot, so a one-token decode step on an i8mm core runs at the sdot rate and
    a two-token step (two requests) may use i8mm."""
    device = resolve_device("Snapdragon X Elite")
    assert cpu_kernel(device, parse_quant("Q4_0"), columns=1).factor == 4.0
    assert cpu_kernel(device, parse_quant("Q4_0"), columns=2).factor == 8.0
    system = build_system({"hardware": "Snapdragon X Elite", "model": "Llama-3.1-8B", "quant": "Q4_0", "backend": "cpu"})
    assert step_features(system, 0, 1, 0).matmul_rate_factor == 4.0
    assert step_features(system, 0, 2, 0).matmul_rate_factor == 8.0
    # x86 kernels are unaffected by the column count.
    assert cpu_kernel(resolve_device("Ryzen 9 7950X"), parse_quant("Q4_K_M"), columns=1).factor == 4.0


def test_isa_comparison_zen4_vnni_against_zen3_avx2():
    """ik_llama.cpp PR 185 (Llama-3.1-8B Q8_0 pp512): a 16-core Ryzen 9 7950X (AVX-512 VNNI)
    268-305 tok/s, a 32-core Threadripper PRO 5975WX (AVX2) 193-254: twice the cores, half the
    int8 rate per cycle."""
    base = {"model": "Llama-3.1-8B", "quant": "Q8_0", "engine": "ik_llama.cpp"}
    zen4 = rates(hardware="Ryzen 9 7950X", **base)[1]
    zen3 = rates(hardware="Threadripper PRO 5975WX", **base)[1]
    assert 1.0 <= zen4 / zen3 <= 1.8


def test_row_by_row_kernels_unpack_per_token():
    """ik_llama.cpp discussion 164 (Ryzen 9 7950X, Llama-3.1-8B pp512): mainline llama.cpp runs
    IQ3_S row by row at 30 tok/s against 154 for Q4_0 (repacked, tiled); ik_llama.cpp tiles both
    (156 and 274)."""
    base = {"hardware": "Ryzen 9 7950X", "model": "Llama-3.1-8B"}
    mainline_iq3, mainline_q4 = (rates(**base, quant=q, engine="llama.cpp")[1] for q in ("IQ3_S", "Q4_0"))
    ik_iq3, ik_q4 = (rates(**base, quant=q, engine="ik_llama.cpp")[1] for q in ("IQ3_S", "Q4_0"))
    assert mainline_q4 / mainline_iq3 > 2.5
    assert ik_q4 / ik_iq3 < mainline_q4 / mainline_iq3


def test_few_cores_cannot_draw_the_socket_bandwidth():
    """A 2-core slice of a 96-core EPYC decodes far below the socket's bandwidth; all cores reach it."""
    base = {"model": "Llama-3.1-8B", "quant": "Q4_K_M"}
    slice_, full = (rates(hardware=h, **base)[0] for h in ("AMD EPYC 9654 (cloud VM, 2 cores)", "AMD EPYC 9654"))
    assert full > 3 * slice_


def test_chiplet_links_cap_a_few_ccds():
    """ik_llama.cpp PR 534: a 24-core Threadripper PRO 7965WX (4 CCDs) draws ~225 of its 333 GB/s
    (Intel MLC at DDR5-4800): four GMI links cap it below the channels' peak."""
    from engine.params import BackendParams
    from engine.roofline import cpu_bandwidth

    device = resolve_device("Threadripper PRO 7965WX")
    drawn = cpu_bandwidth(device.bandwidth_gbs * 1e9, 24, device.cpu_cores, device.cpu_ccds, 60.0, BackendParams().ccd_bw_gbs)
    assert drawn < 0.8 * device.bandwidth_gbs * 1e9


def test_depth_slowdown_on_a_cpu_slice_is_gentle():
    """Issue 20: on a 2-core Zen 4 server slice llama-bench measured tg128 at 4,096 tokens of
    context at 0.61x the empty-context rate (Llama 3.1 8B Q4_K_M)."""
    base = {"hardware": "AMD EPYC 9654 (cloud VM, 2 cores)", "model": "Llama-3.1-8B", "quant": "Q4_K_M"}
    ratio = rates(**base, depth=4096)[0] / rates(**base, depth=0)[0]
    assert 0.5 <= ratio <= 0.75


CUSTOM_CPU = {"name": "Zen 4 VM", "kind": "cpu", "memory_gib": 16, "fp16_tflops": 0.35, "cpu_cores": 2}


def test_custom_cpu_from_channels_and_speed():
    from engine.system import custom_device

    device = custom_device({**CUSTOM_CPU, "memory_channels": 2, "memory_data_rate_mts": 5600, "cpu_isa": "avx512-vnni"})
    assert device.bandwidth_gbs == pytest.approx(89.6)
    assert device.cpu_isa == ("avx2", "avx512", "avx512-vnni")
    assert cpu_kernel(device, parse_quant("Q4_K_M")).factor == 4.0


@pytest.mark.parametrize(
    "extra,field",
    [
        ({"cpu_isa": "sse2", "bandwidth_gbs": 40}, "hardware.cpu_isa"),
        ({"cpu_p_cores": 4, "bandwidth_gbs": 40}, "hardware.cpu_p_cores"),
        ({"bandwidth_measured": "yes", "bandwidth_gbs": 40}, "hardware.bandwidth_measured"),
        ({}, "hardware.bandwidth_gbs"),
    ],
)
def test_custom_cpu_fields_are_checked(extra, field):
    from engine.errors import EngineInputError
    from engine.system import custom_device

    with pytest.raises(EngineInputError) as caught:
        custom_device({**CUSTOM_CPU, **extra})
    assert caught.value.field == field


def test_a_measured_bandwidth_is_not_cut_again_by_the_cores():
    """Issue 20: a small server slice with its bandwidth measured and entered as custom hardware
    was predicted at 0.42-0.53 of its measured decode rate. A measured figure already is what the
    machine's cores draw (no per-core limit on top) and stands for the peak it is a share of."""
    one_core = {**CUSTOM_CPU, "cpu_cores": 1, "bandwidth_gbs": 100}
    request = {"model": "Llama-3.2-1B", "quant": "Q8_0", "threads": 1}
    paper = estimate({**request, "hardware": one_core})
    measured = estimate({**request, "hardware": {**one_core, "bandwidth_measured": True}})
    assert paper["breakdown"]["cpu_bandwidth_gbs"] < 100  # one core cannot draw the spec sheet's peak
    assert measured["breakdown"]["bandwidth_measured"] is True
    assert measured["breakdown"]["cpu_bandwidth_gbs"] == pytest.approx(100 / 0.8)
    assert measured["decode_tps"] > 1.3 * paper["decode_tps"]


def test_explain_names_the_kernel_and_the_bandwidth_threads_draw():
    cpu = estimate({"hardware": "Threadripper PRO 7965WX", "model": "Llama-3.1-8B", "quant": "Q4_K_M", "threads": 8})["breakdown"]
    assert "AVX-512 VNNI" in cpu["cpu_kernel"]
    assert 0 < cpu["cpu_bandwidth_gbs"] < 332.8
    gpu = estimate({"hardware": "RTX 4090", "model": "Llama-3.1-8B", "quant": "Q4_K_M"})["breakdown"]
    assert gpu["cpu_kernel"] is None and gpu["cpu_bandwidth_gbs"] is None


def test_page_custom_cpu_fields_reach_the_request():
    from engine.page.fields import DEFAULT_VIEW
    from engine.page.view import custom_hardware

    view = {**DEFAULT_VIEW, "hw": "custom", "hw_kind": "cpu", "hw_cores": 8, "hw_isa": "i8mm", "hw_bwm": "measured"}
    spec = custom_hardware(view)
    assert spec["cpu_cores"] == 8 and spec["cpu_isa"] == "i8mm" and spec["bandwidth_measured"] is True
    gpu = custom_hardware({**DEFAULT_VIEW, "hw": "custom", "hw_kind": "gpu"})
    assert "cpu_isa" not in gpu and "cpu_cores" not in gpu


def test_a_stated_file_size_sets_the_bytes_read():
    """ik_llama.cpp PR 282 (2x Xeon E5-2690 v3): DeepSeek-R1 'IQ4_K_R4' is a custom mix that
    llama-bench prints as 353.53 GiB; the rows are scored with that size (score.py reads size=)."""
    from engine.system import build_system
    from engine.tools.score import row_request

    row = {"hardware": "Intel Xeon E5-2690 v3", "model": "DeepSeek-R1", "quant": "IQ4_K_R4", "engine": "ik_llama.cpp",
           "backend": "cpu", "n_devices": "2", "split_mode": "unknown", "flash_attn": "1",
           "notes": "llama-bench tg128; lb_model='deepseek2 671B IQ4_K_R4 - 4.5 bpw' size=353.53 GiB params=672.05 B; threads=48"}
    request = row_request(row)
    assert request["file_gb"] == pytest.approx(353.53 * 2**30 / 1e9)
    assert request["threads"] == 48 and request["gpus"] == 2
    system = build_system(request)
    assert system.weight_bytes == pytest.approx(353.53 * 2**30, rel=1e-9)
    plain = build_system({**request, "file_gb": None})
    assert system.profile.dense_read / plain.profile.dense_read == pytest.approx(system.weight_bytes / plain.weight_bytes)


@pytest.mark.parametrize(
    "request_,depth,measured",
    [
        # ik_llama.cpp discussion 385 (2x Xeon Gold 6138 under Windows 10: one processor group, the
        # threads on one socket; 20 threads, llama-sweep-bench): Qwen3-30B-A3B Q8_0 tg128 12.90
        # tok/s at an empty cache, 7.58 at 15,872 tokens.
        ({"hardware": "Intel Xeon Gold 6138", "gpus": 2, "one_socket": True, "model": "Qwen3-30B-A3B", "quant": "Q8_0", "threads": 20},
         15872, 7.58 / 12.90),
        # ik_llama.cpp PR 273 (Threadripper PRO 5975WX, 32 threads, fa=1, -ctk q8_0): DeepSeek-V2-Lite
        # IQ4_NL_R4 tg64 34.04 tok/s after 128 tokens, 26.12 after 8,192.
        ({"hardware": "Threadripper PRO 5975WX", "model": "DeepSeek-V2-Lite", "quant": "IQ4_NL_R4", "threads": 32, "gen_tokens": 64,
          "kv_quant": "q8_0"}, 8192, 26.12 / 34.04),
    ],
)
def test_depth_sweeps_on_cpus_slow_gently(request_, depth, measured):
    """Decode at depth on a CPU: measured slowdowns are gentle (0.59x at 15,872 tokens, 0.77x at
    8,192); the engine's must be within 0.15 of them."""
    base = {**request_, "engine": "ik_llama.cpp", "flash_attn": True}
    start = 128 if "gen_tokens" in request_ else 0
    ratio = rates(**base, depth=depth)[0] / rates(**base, depth=start)[0]
    assert abs(ratio - measured) <= 0.15


@pytest.mark.parametrize(
    "hardware,kv,prefill,name,factor",
    [
        # x86 without a 16-bit dot product: an f16 cache is widened per element in prefill.
        ("Intel Xeon Gold 6138", "f16", True, "F16C", 0.5),
        ("Ryzen 9 7950X", "f16", True, "F16C", 0.5),
        # ... and in decode the conversion hides under the stream from memory.
        ("Intel Xeon Gold 6138", "f16", False, "FP32 FMA", 1.0),
        # AVX-512 BF16 multiplies a bf16 cache natively; Arm multiplies F16 natively.
        ("Ryzen 9 7950X", "bf16", True, "AVX-512 BF16", 2.0),
        ("Apple M2 Max", "f16", True, "Arm half precision", 2.0),
        # A q8_0 cache runs the int8 dot products of quantised weights.
        ("Intel Xeon 6980P", "q8_0", True, "AVX-512 VNNI", 4.0),
    ],
)
def test_attention_kernel_per_isa_and_cache_type(hardware, kv, prefill, name, factor):
    from engine.roofline import cpu_attention_kernel

    kernel = cpu_attention_kernel(resolve_device(hardware), kv, prefill=prefill)
    assert name in kernel.name and kernel.factor == factor


def test_prefill_attention_runs_on_the_cache_types_kernel():
    """A q8_0 cache's prefill attention runs the int8 dot products of the Q4_0 matmuls, an f16
    cache's the widened FP32 FMA: on an AVX-512 VNNI core (Xeon 6980P) 4 / 0.5 = 8x slower per
    FLOP, so the f16 cache loses more prefill speed with depth than the q8_0 one."""
    from engine.prefill import cpu_attention_slowdown

    base = {"hardware": "Intel Xeon 6980P", "model": "Qwen2.5-72B", "quant": "Q4_0", "engine": "ik_llama.cpp", "threads": 128}
    assert cpu_attention_slowdown(build_system({**base, "kv_quant": "q8_0"})) == 1.0
    assert cpu_attention_slowdown(build_system({**base, "kv_quant": "f16"})) == 8.0
    slow = {kv: rates(**base, kv_quant=kv, depth=4096, prompt_tokens=2048)[1] / rates(**base, kv_quant=kv, prompt_tokens=2048)[1] for kv in ("q8_0", "f16")}
    assert slow["f16"] < slow["q8_0"]


@pytest.mark.parametrize(
    "request_,depth,measured",
    [
        # ik_llama.cpp PR 534 (ubergarm, llama-sweep-bench -ctk q8_0 -ctv q8_0 -fa -ub 2048):
        # Qwen2.5-72B (Kimi-Dev-72B) Q4_0 pp2048 on one Xeon 6980P socket, 128 threads: 118.79
        # tok/s at an empty cache, 107.41 at 4,096 tokens; on a Threadripper PRO 7965WX, 24
        # threads: 45.60 and 40.80.
        ({"hardware": "Intel Xeon 6980P", "threads": 128}, 4096, 107.41 / 118.79),
        ({"hardware": "Threadripper PRO 7965WX", "threads": 24}, 4096, 40.80 / 45.60),
    ],
)
def test_prefill_depth_sweeps_with_a_q8_0_cache(request_, depth, measured):
    base = {**request_, "model": "Qwen2.5-72B", "quant": "Q4_0", "engine": "ik_llama.cpp", "flash_attn": True,
            "kv_quant": "q8_0", "prompt_tokens": 2048, "ubatch": 2048}
    ratio = rates(**base, depth=depth)[1] / rates(**base)[1]
    assert abs(ratio - measured) <= 0.05


@pytest.mark.parametrize(
    "request_,measured",
    [
        # ik_llama.cpp issue 437 (kirnat, Xeon Platinum 8480 ES, 8-channel DDR5-4800, 32 threads,
        # -ngl 0 -fmoe): Qwen3-30B-A3B UD-Q4_K_XL (llama-bench size 16.49 GiB) pp512 510.65 tok/s.
        ({"hardware": "Intel Xeon Platinum 8480 ES", "model": "Qwen3-30B-A3B", "quant": "UD-Q4_K_XL", "threads": 32,
          "file_gb": 16.49 * 2**30 / 1e9}, 510.65),
        # ik_llama.cpp discussion 385 (Gaolingx, 2x Xeon Gold 6138 under Windows 10, 20 threads on
        # one socket, llama-sweep-bench): Qwen3-30B-A3B Q8_0 pp512 60.10 tok/s at an empty cache.
        ({"hardware": "Intel Xeon Gold 6138", "gpus": 2, "one_socket": True, "model": "Qwen3-30B-A3B", "quant": "Q8_0",
          "threads": 20}, 60.10),
    ],
)
def test_moe_prefill_on_cpus_scales_with_the_cpu(request_, measured):
    """The routed experts' matmuls cost expert_pp_cost per FLOP on the CPU's own kernel path
    (prefill.py), so the same MoE model's prefill follows the CPU's speed: an 8.5x gap between a
    Sapphire Rapids and a Skylake-SP server. A fixed cost per MoE layer and micro-batch (25 ms, the
    term this replaced) capped the Xeon 8480 at about half its measured rate."""
    predicted = rates(**request_, engine="ik_llama.cpp", flash_attn=True, prompt_tokens=512)[1]
    assert 0.75 <= predicted / measured <= 1.33
    breakdown = estimate({**request_, "engine": "ik_llama.cpp", "flash_attn": True, "prompt_tokens": 512})["breakdown"]
    assert breakdown["prefill_experts_s"] > 0 and breakdown["prefill_dispatch_s"] > 0

"""The catalogs cover what the project brief names: at least 120 hardware entries (before the
memory variants) and 60 models, and every hardware family and model line the brief lists.

A family is present when some catalog id matches its pattern; one entry of each is then looked up
the way a user would (by its display name) and must carry the numbers its source states: memory and
bandwidth for hardware, the architecture of the published config.json and the parameter count for
models. A new family or line needs its row in both tables.
"""

from __future__ import annotations

import re

import pytest

from engine.hardware import load_hardware
from engine.models import load_models
from engine.system import resolve_device, resolve_model

MIN_HARDWARE_ENTRIES = 120
MIN_MODELS = 60

#: The brief's hardware families: label -> pattern over base ids (data/hardware/*.toml keys).
HARDWARE_FAMILIES = {
    "GeForce RTX 20": r"rtx-20[6-8]0",
    "GeForce RTX 30": r"rtx-30[5-9]0",
    "GeForce RTX 40": r"rtx-40[6-9]0",
    "GeForce RTX 50": r"rtx-50[6-9]0",
    "GeForce RTX 20 laptop": r"rtx-20\d0.*-laptop",
    "GeForce RTX 30 laptop": r"rtx-30\d0.*-laptop",
    "GeForce RTX 40 laptop": r"rtx-40\d0.*-laptop",
    "GeForce RTX 50 laptop": r"rtx-50\d0.*-laptop",
    "RTX A-series (Ampere workstation)": r"rtx-a\d000",
    "RTX Ada workstation": r"rtx-\d000-ada",
    "RTX PRO Blackwell workstation": r"rtx-pro-\d000-blackwell",
    "RTX PRO 6000 Max-Q": r"rtx-pro-6000-blackwell-max-q",
    "T4": r"tesla-t4",
    "L4": r"l4",
    "L40S": r"l40s",
    "A100 40GB PCIe": r"a100-pcie-40gb",
    "A100 80GB PCIe": r"a100-pcie-80gb",
    "A100 40GB SXM": r"a100-sxm-40gb",
    "A100 80GB SXM": r"a100-sxm-80gb",
    "H100 PCIe": r"h100-pcie",
    "H100 SXM": r"h100-sxm",
    "H100 NVL": r"h100-nvl",
    "H200": r"h200-.*",
    "B200": r"b200",
    "GB200": r"gb200",
    "DGX Spark": r"dgx-spark",
    "Jetson AGX Orin": r"jetson-agx-orin-.*",
    "Jetson AGX Thor": r"jetson-agx-thor",
    "Radeon RX 6000": r"rx-6\d00.*",
    "Radeon RX 7000": r"rx-7\d00.*",
    "Radeon RX 9000": r"rx-9\d{3}.*",
    "Radeon PRO W7800": r"radeon-pro-w7800",
    "Radeon PRO W7900": r"radeon-pro-w7900",
    "Radeon AI PRO R9700": r"radeon-ai-pro-r9700",
    "Instinct MI210": r"mi210",
    "Instinct MI250": r"mi250x?",
    "Instinct MI300X": r"mi300x",
    "Instinct MI325X": r"mi325x",
    "Instinct MI355X": r"mi355x",
    "Strix Halo (Ryzen AI Max)": r"ryzen-ai-max-.*",
    "Radeon 780M": r".*radeon-780m",
    "Radeon 890M": r".*radeon-890m",
    "Arc A": r"arc-a\d{3}.*",
    "Arc B": r"arc-b\d{3}",
    "Arc Pro B50": r"arc-pro-b50",
    "Arc Pro B60": r"arc-pro-b60",
    "Arc 140V (Lunar Lake)": r"core-ultra-\d-2\d\dv",
    "Threadripper": r"amd-ryzen-threadripper-.*",
    "EPYC": r"amd-epyc-.*",
    "Xeon": r"intel-xeon-.*",
    "Ampere Altra / AmpereOne": r"ampere-.*",
    "Raspberry Pi 5": r"raspberry-pi-5",
    "Snapdragon X": r"qualcomm-snapdragon-x-.*",
    # Issue 20's CPUs people run.
    "Core 4th-14th gen desktop": r"intel-core-i[579]-(4|6|7|8|9|10|11|12|13|14)\d{2,3}k?",
    "Core Ultra desktop": r"intel-core-ultra-\d-2\d\dk",
    "Ryzen 3000-9000 desktop": r"amd-ryzen-\d-[3579]\d00x?(3d)?",
    "Ryzen APU / laptop": r"(amd-ryzen-\d-5[67]00g|amd-ryzen-7-5800u|ryzen-.*-radeon-.*)",
    "Threadripper PRO": r"amd-ryzen-threadripper-pro-.*",
    "EPYC Rome/Milan/Genoa/Turin": r"amd-epyc-(7[57]\d2|7[57]\d3|9\d5[45]|9\d55)",
    "Xeon E5 v3/v4": r"intel-xeon-e5-\d{4}-v[34]",
    "Xeon Scalable": r"intel-xeon-(gold|platinum)-\d{4}.*",
    "Xeon 6": r"intel-xeon-6\d{3}[pe]",
    "Graviton": r"aws-graviton\d",
    "Grace": r"nvidia-grace-.*",
    "Raspberry Pi 4": r"raspberry-pi-4",
    "Rockchip RK3588": r"rockchip-rk3588",
}
#: Every tier of every Apple M generation (Apple made no M4 Ultra).
APPLE_TIERS = {
    f"Apple M{generation} {tier or 'base'}": rf"apple-m{generation}-{tier + '-' if tier else ''}\d+c"
    for generation in range(1, 6)
    for tier in ("", "pro", "max", "ultra")
    if (generation, tier) != (4, "ultra")
}

#: The brief's model lines: label -> pattern over model ids (data/models/*.toml keys).
MODEL_LINES = {
    "Llama 3.x": r"llama-3\.\d-.*",
    "Llama 4": r"llama-4-.*",
    "Qwen2.5": r"qwen2\.5-\d.*",
    "Qwen2.5-Coder": r"qwen2\.5-coder-.*",
    "Qwen3": r"qwen3-\d.*",
    "Qwen3 30B-A3B": r"qwen3-30b-a3b",
    "Qwen3 235B-A22B": r"qwen3-235b-a22b",
    "Qwen3-Coder": r"qwen3-coder-\d.*",
    "Qwen3-Next": r"qwen3-next-.*",
    "Qwen3.5": r"qwen3\.5-.*",
    "Qwen3.5 35B-A3B": r"qwen3\.5-35b-a3b",
    "Qwen3.6": r"qwen3\.6-.*",
    "Qwen3.6 35B-A3B": r"qwen3\.6-35b-a3b",
    "gpt-oss-20b": r"gpt-oss-20b",
    "gpt-oss-120b": r"gpt-oss-120b",
    "Gemma 3": r"gemma-3-\d+b",
    "Gemma 4 E2B": r"gemma-4-e2b",
    "Gemma 4 E4B": r"gemma-4-e4b",
    "Gemma 4 26B-A4B": r"gemma-4-26b-a4b",
    "Gemma 4 31B": r"gemma-4-31b",
    "Mistral Small": r"mistral-small-.*",
    "Mistral Nemo": r"mistral-nemo-.*",
    "Ministral": r"ministral-.*",
    "Phi-4": r"phi-4.*",
    "DeepSeek-R1 distills": r"deepseek-r1-distill-.*",
    "DeepSeek V3": r"deepseek-v3.*",
    "DeepSeek R1": r"deepseek-r1",
    "DeepSeek V4 Flash": r"deepseek-v4-flash",
    "GLM-4.5": r"glm-4\.5",
    "GLM-4.5-Air": r"glm-4\.5-air",
    "GLM-4.6": r"glm-4\.6",
    "GLM-4.7": r"glm-4\.7",
    "GLM-4.7-Flash": r"glm-4\.7-flash",
    "Kimi K2": r"kimi-k2-.*",
    "MiniMax-M2.x": r"minimax-m2.*",
    "Nemotron": r"nemotron-.*",
    "LFM2": r"lfm2-.*",
    "SmolLM": r"smollm.*",
    "TinyLlama": r"tinyllama-.*",
}


#: One entry of each hardware family or Apple tier: (id, memory_gib, bandwidth_gbs), as its
#: source (the entry's ``source``) states them.
HARDWARE_NUMBERS = {
    "GeForce RTX 20": ("rtx-2060", 6, 336),
    "GeForce RTX 30": ("rtx-3050", 8, 224),
    "GeForce RTX 40": ("rtx-4060", 8, 272),
    "GeForce RTX 50": ("rtx-5060", 8, 448),
    "GeForce RTX 20 laptop": ("rtx-2060-laptop", 6, 336),
    "GeForce RTX 30 laptop": ("rtx-3050-laptop", 4, 192),
    "GeForce RTX 40 laptop": ("rtx-4060-laptop", 8, 256),
    "GeForce RTX 50 laptop": ("rtx-5070-ti-laptop", 12, 672),
    "RTX A-series (Ampere workstation)": ("rtx-a2000-12gb", 12, 288),
    "RTX Ada workstation": ("rtx-2000-ada", 16, 224),
    "RTX PRO Blackwell workstation": ("rtx-pro-4000-blackwell", 24, 672),
    "RTX PRO 6000 Max-Q": ("rtx-pro-6000-blackwell-max-q", 96, 1792),
    "T4": ("tesla-t4", 16, 320),
    "L4": ("l4", 24, 300),
    "L40S": ("l40s", 48, 864),
    "A100 40GB PCIe": ("a100-pcie-40gb", 40, 1555),
    "A100 80GB PCIe": ("a100-pcie-80gb", 80, 1935),
    "A100 40GB SXM": ("a100-sxm-40gb", 40, 1555),
    "A100 80GB SXM": ("a100-sxm-80gb", 80, 2039),
    "H100 PCIe": ("h100-pcie", 80, 2000),
    "H100 SXM": ("h100-sxm", 80, 3350),
    "H100 NVL": ("h100-nvl", 94, 3900),
    "H200": ("h200-nvl", 141, 4800),
    "B200": ("b200", 180, 8000),
    "GB200": ("gb200", 186, 8000),
    "DGX Spark": ("dgx-spark", 128, 273),
    "Jetson AGX Orin": ("jetson-agx-orin-32gb", 32, 204.8),
    "Jetson AGX Thor": ("jetson-agx-thor", 128, 273),
    "Radeon RX 6000": ("rx-6600", 8, 224),
    "Radeon RX 7000": ("rx-7600", 8, 288),
    "Radeon RX 9000": ("rx-9060-xt", 16, 320),
    "Radeon PRO W7800": ("radeon-pro-w7800", 32, 576),
    "Radeon PRO W7900": ("radeon-pro-w7900", 48, 864),
    "Radeon AI PRO R9700": ("radeon-ai-pro-r9700", 32, 640),
    "Instinct MI210": ("mi210", 64, 1600),
    "Instinct MI250": ("mi250", 128, 3200),
    "Instinct MI300X": ("mi300x", 192, 5300),
    "Instinct MI325X": ("mi325x", 256, 6000),
    "Instinct MI355X": ("mi355x", 288, 8000),
    "Strix Halo (Ryzen AI Max)": ("ryzen-ai-max-385-128gb", 128, 256),
    "Radeon 780M": ("ryzen-7-7840u-radeon-780m-16gb", 16, 120),
    "Radeon 890M": ("ryzen-ai-9-hx-370-radeon-890m-16gb", 16, 120),
    "Arc A": ("arc-a380", 6, 186),
    "Arc B": ("arc-b570", 10, 380),
    "Arc Pro B50": ("arc-pro-b50", 16, 224),
    "Arc Pro B60": ("arc-pro-b60", 24, 456),
    "Arc 140V (Lunar Lake)": ("core-ultra-7-258v-16gb", 16, 136.5),
    "Threadripper": ("amd-ryzen-threadripper-7970x-128gb", 128, 166.4),
    "EPYC": ("amd-epyc-7742-1024gb", 1024, 204.8),
    "Xeon": ("intel-xeon-6980p-1536gb", 1536, 614.4),
    "Ampere Altra / AmpereOne": ("ampere-altra-max-m128-30-1024gb", 1024, 204.8),
    "Raspberry Pi 5": ("raspberry-pi-5-16gb", 16, 17.07),
    "Snapdragon X": ("qualcomm-snapdragon-x-elite-x1e-80-100-16gb", 16, 135.17),
    "Core 4th-14th gen desktop": ("intel-core-i7-4790k-8gb", 8, 25.6),
    "Core Ultra desktop": ("intel-core-ultra-7-265k-32gb", 32, 102.4),
    "Ryzen 3000-9000 desktop": ("amd-ryzen-5-3600-16gb", 16, 51.2),
    "Ryzen APU / laptop": ("amd-ryzen-7-5800u-8gb", 8, 68.256),
    "Threadripper PRO": ("amd-ryzen-threadripper-pro-5975wx-128gb", 128, 204.8),
    "EPYC Rome/Milan/Genoa/Turin": ("amd-epyc-7702-256gb", 256, 204.8),
    "Xeon E5 v3/v4": ("intel-xeon-e5-2690-v3-64gb", 64, 68.256),
    "Xeon Scalable": ("intel-xeon-gold-6138-96gb", 96, 127.968),
    "Xeon 6": ("intel-xeon-6980p-384gb", 384, 614.4),
    "Graviton": ("aws-graviton3-64gb", 64, 307.2),
    "Grace": ("nvidia-grace-cpu-superchip-240gb", 240, 1000),
    "Raspberry Pi 4": ("raspberry-pi-4-2gb", 2, 12.8),
    "Rockchip RK3588": ("rockchip-rk3588-4gb", 4, 33.792),
    "Apple M1 base": ("apple-m1-7c-16gb", 16, 68.25),
    "Apple M1 pro": ("apple-m1-pro-14c-16gb", 16, 200),
    "Apple M1 max": ("apple-m1-max-24c-32gb", 32, 400),
    "Apple M1 ultra": ("apple-m1-ultra-48c-128gb", 128, 800),
    "Apple M2 base": ("apple-m2-10c-16gb", 16, 100),
    "Apple M2 pro": ("apple-m2-pro-16c-16gb", 16, 200),
    "Apple M2 max": ("apple-m2-max-30c-32gb", 32, 400),
    "Apple M2 ultra": ("apple-m2-ultra-60c-128gb", 128, 800),
    "Apple M3 base": ("apple-m3-10c-16gb", 16, 100),
    "Apple M3 pro": ("apple-m3-pro-14c-18gb", 18, 150),
    "Apple M3 max": ("apple-m3-max-30c-36gb", 36, 300),
    "Apple M3 ultra": ("apple-m3-ultra-60c-256gb", 256, 819),
    "Apple M4 base": ("apple-m4-10c-16gb", 16, 120),
    "Apple M4 pro": ("apple-m4-pro-16c-24gb", 24, 273),
    "Apple M4 max": ("apple-m4-max-32c-36gb", 36, 410),
    "Apple M5 base": ("apple-m5-10c-16gb", 16, 153),
    "Apple M5 pro": ("apple-m5-pro-16c-24gb", 24, 307),
    "Apple M5 max": ("apple-m5-max-32c-36gb", 36, 460),
    "Apple M5 ultra": ("apple-m5-ultra-64c-96gb", 96, 1200),
}
#: One model of each line: (id, layers, hidden_size, experts, experts per token, params_b), as
#: its published config.json and model card state them.
MODEL_NUMBERS = {
    "Llama 3.x": ("llama-3.1-405b", 126, 16384, 0, 0, 406),
    "Llama 4": ("llama-4-maverick", 48, 5120, 128, 1, 400),
    "Qwen2.5": ("qwen2.5-14b", 48, 5120, 0, 0, 14.7),
    "Qwen2.5-Coder": ("qwen2.5-coder-32b", 64, 5120, 0, 0, 32.5),
    "Qwen3": ("qwen3-0.6b", 28, 1024, 0, 0, 0.6),
    "Qwen3 30B-A3B": ("qwen3-30b-a3b", 48, 2048, 128, 8, 30.5),
    "Qwen3 235B-A22B": ("qwen3-235b-a22b", 94, 4096, 128, 8, 235),
    "Qwen3-Coder": ("qwen3-coder-30b-a3b", 48, 2048, 128, 8, 30.5),
    "Qwen3-Next": ("qwen3-next-80b-a3b", 48, 2048, 512, 10, 80),
    "Qwen3.5": ("qwen3.5-0.8b", 24, 1024, 0, 0, 0.8),
    "Qwen3.5 35B-A3B": ("qwen3.5-35b-a3b", 40, 2048, 256, 8, 35),
    "Qwen3.6": ("qwen3.6-27b", 64, 5120, 0, 0, 27),
    "Qwen3.6 35B-A3B": ("qwen3.6-35b-a3b", 40, 2048, 256, 8, 35),
    "gpt-oss-20b": ("gpt-oss-20b", 24, 2880, 32, 4, 20.91),
    "gpt-oss-120b": ("gpt-oss-120b", 36, 2880, 128, 4, 116.83),
    "Gemma 3": ("gemma-3-12b", 48, 3840, 0, 0, 12.188),
    "Gemma 4 E2B": ("gemma-4-e2b", 35, 1536, 0, 0, 5.1),
    "Gemma 4 E4B": ("gemma-4-e4b", 42, 2560, 0, 0, 8.0),
    "Gemma 4 26B-A4B": ("gemma-4-26b-a4b", 30, 2816, 128, 8, 25.2),
    "Gemma 4 31B": ("gemma-4-31b", 60, 5376, 0, 0, 30.7),
    "Mistral Small": ("mistral-small-3-24b", 40, 5120, 0, 0, 23.6),
    "Mistral Nemo": ("mistral-nemo-12b", 40, 5120, 0, 0, 12.2),
    "Ministral": ("ministral-3-14b", 40, 5120, 0, 0, 13.9),
    "Phi-4": ("phi-4", 40, 5120, 0, 0, 14.7),
    "DeepSeek-R1 distills": ("deepseek-r1-distill-llama-70b", 80, 8192, 0, 0, 70.6),
    "DeepSeek V3": ("deepseek-v3", 61, 7168, 256, 8, 671.0),
    "DeepSeek R1": ("deepseek-r1", 61, 7168, 256, 8, 671.0),
    "DeepSeek V4 Flash": ("deepseek-v4-flash", 43, 4096, 256, 6, 284.0),
    "GLM-4.5": ("glm-4.5", 92, 5120, 160, 8, 355.0),
    "GLM-4.5-Air": ("glm-4.5-air", 46, 4096, 128, 8, 106.0),
    "GLM-4.6": ("glm-4.6", 92, 5120, 160, 8, 355.0),
    "GLM-4.7": ("glm-4.7", 92, 5120, 160, 8, 355.0),
    "GLM-4.7-Flash": ("glm-4.7-flash", 47, 2048, 64, 4, 30.0),
    "Kimi K2": ("kimi-k2-instruct", 61, 7168, 384, 8, 1000.0),
    "MiniMax-M2.x": ("minimax-m2", 62, 3072, 256, 8, 230.0),
    "Nemotron": ("nemotron-3-nano-30b-a3b", 52, 2688, 128, 6, 31.6),
    "LFM2": ("lfm2-1.2b", 16, 2048, 0, 0, 1.17),
    "SmolLM": ("smollm2-1.7b", 24, 2048, 0, 0, 1.71),
    "TinyLlama": ("tinyllama-1.1b", 22, 2048, 0, 0, 1.1),
}


def test_enough_hardware_and_models():
    base_entries = {device.base_id for device in load_hardware().values()}
    assert len(base_entries) >= MIN_HARDWARE_ENTRIES
    assert len(load_models()) >= MIN_MODELS


def test_every_family_and_line_has_its_numbers():
    assert set(HARDWARE_NUMBERS) == {*HARDWARE_FAMILIES, *APPLE_TIERS}
    assert set(MODEL_NUMBERS) == set(MODEL_LINES)


@pytest.mark.parametrize("label, pattern", [pytest.param(k, v, id=k) for k, v in {**HARDWARE_FAMILIES, **APPLE_TIERS}.items()])
def test_hardware_family_is_in_the_catalog(label, pattern):
    base_ids = {device.base_id for device in load_hardware().values()}
    assert any(re.fullmatch(pattern, entry_id) for entry_id in base_ids), f"no {label} ({pattern})"
    entry_id, memory_gib, bandwidth_gbs = HARDWARE_NUMBERS[label]
    device = load_hardware()[entry_id]
    assert re.fullmatch(pattern, device.base_id), f"{entry_id} is not a {label}"
    assert resolve_device(device.name).id == entry_id
    assert (device.memory_gib, device.bandwidth_gbs) == (memory_gib, bandwidth_gbs)


@pytest.mark.parametrize("label, pattern", [pytest.param(k, v, id=k) for k, v in MODEL_LINES.items()])
def test_model_line_is_in_the_catalog(label, pattern):
    assert any(re.fullmatch(pattern, model_id) for model_id in load_models()), f"no {label} ({pattern})"
    model_id, layers, hidden_size, experts, experts_per_token, params_b = MODEL_NUMBERS[label]
    model = load_models()[model_id]
    assert re.fullmatch(pattern, model_id)
    assert resolve_model(model.name).id == model_id
    arch = model.arch
    assert (arch.layers, arch.hidden_size, arch.n_experts, arch.experts_per_token) == (layers, hidden_size, experts, experts_per_token)
    assert model.params_b == params_b

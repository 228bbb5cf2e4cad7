"""Names people type (issue 14): a memory size after a device name picks that variant (or says which
sizes exist), chips sold under several names resolve to the one silicon entry, and a fine-tune whose
config.json has a catalog model's architecture resolves to that model under its own name, marked
"architecture of <base>"."""

from __future__ import annotations

import pytest

from engine import estimate
from engine.errors import EngineInputError
from engine.system import resolve_device, resolve_model


@pytest.mark.parametrize(
    "name, device_id",
    [
        ("RX 9070 16GB", "rx-9070"),
        ("AMD Radeon RX 9070 16GB", "rx-9070"),
        ("Radeon RX 9070 XT 16GB", "rx-9070-xt"),
        ("RTX PRO 6000 Blackwell 96GB", "rtx-pro-6000-blackwell"),
        ("NVIDIA RTX PRO 6000 Blackwell Workstation Edition 96GB", "rtx-pro-6000-blackwell"),
        ("NVIDIA GeForce RTX 3090 24 GB", "rtx-3090"),
        ("Apple M3 Ultra 256 GB", "apple-m3-ultra-80c-256gb"),
        ("RX 570 4 GB", "rx-570-4gb"),
    ],
)
def test_memory_suffixed_names(name, device_id):
    assert resolve_device(name).id == device_id


def test_a_size_the_device_never_had_is_an_error_naming_its_sizes():
    with pytest.raises(EngineInputError, match="comes with 24 GB, not 48 GB"):
        resolve_device("RTX 4090 48GB")
    with pytest.raises(EngineInputError, match="unknown hardware 'no such card 16GB'"):
        resolve_device("no such card 16GB")


@pytest.mark.parametrize("name", ["Ryzen 7 7840HS", "AMD Ryzen 7 7840HS", "Ryzen 9 7940HS", "Ryzen 7 8845HS", "Radeon 780M"])
def test_same_silicon_names_resolve_to_the_780m_entry(name):
    assert resolve_device(name).base_id == "ryzen-7-7840u-radeon-780m"


@pytest.mark.parametrize(
    "name, base_id, label",
    [
        ("Hermes-3-Llama-3.1-70B", "llama-3.1-70b", "Hermes-3-Llama-3.1-70B (architecture of Llama 3.1 70B)"),
        ("nvidia/Llama-3.1-Nemotron-70B-Instruct-HF", "llama-3.1-70b", "Llama-3.1-Nemotron-70B-Instruct (architecture of Llama 3.1 70B)"),
        ("Kimi-Dev-72B", "qwen2.5-72b", "Kimi-Dev-72B (architecture of Qwen2.5 72B)"),
        ("DeepScaleR-1.5B-Preview", "deepseek-r1-distill-qwen-1.5b", "DeepScaleR-1.5B-Preview (architecture of DeepSeek-R1-Distill-Qwen 1.5B)"),
    ],
)
def test_finetunes_resolve_to_their_base_architecture(name, base_id, label):
    model = resolve_model(name)
    assert (model.id, model.name) == (base_id, label)
    result = estimate({"hardware": "RTX 4090", "model": name, "quant": "Q4_K_M"})
    assert result["model"]["id"] == base_id and result["model"]["name"] == label


def test_the_base_name_stays_the_base():
    assert resolve_model("Llama-3.1-70B").name == "Llama 3.1 70B"
    assert resolve_model("llama 3.1 70b instruct").name == "Llama 3.1 70B"


def test_which_formats_run_where_is_one_rule():
    from engine.engines import format_backends

    assert format_backends("mlx") == ("metal",)
    assert "metal" not in format_backends("awq") and "cuda" in format_backends("awq")
    assert {"cuda", "metal", "rocm", "vulkan", "cpu"} <= set(format_backends("gguf"))
    with pytest.raises(EngineInputError, match="run only on metal"):
        estimate({"hardware": "RTX 3060", "model": "Qwen3-8B", "quant": "MLX-4bit"})
    with pytest.raises(EngineInputError, match="Ollama does not run NVFP4"):
        estimate({"hardware": "RTX 3090", "model": "Qwen3-8B", "quant": "NVFP4", "engine": "ollama"})
    # Ollama's INT4 tag is MLX: on a Mac it runs in Ollama's MLX engine.
    assert estimate({"hardware": "M4 Max 128GB", "model": "Qwen3-8B", "quant": "INT4", "engine": "ollama"})["engine"] == "Ollama (MLX engine)"

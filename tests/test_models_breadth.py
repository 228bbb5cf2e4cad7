"""The models added for breadth (issue 14): each entry's published numbers are pinned here as its
source states them, and the architecture reader, fed the entry's verbatim config.json subset, must
reproduce them. A changed config (a typo in hidden_size, a dropped expert count) fails the
parameter check; a changed published figure fails the pin.
"""

from __future__ import annotations

import pytest

from engine.models import load_models, model_index
from engine.catalog import normalise_name

#: id -> (published total params B, published active params B, num_hidden_layers, hidden_size,
#: Hugging Face repository whose config.json the entry copies).
PINNED = {
    # BEGIN PINNED
    "codellama-7b": (6.74, 6.74, 32, 4096, "codellama/CodeLlama-7b-Instruct-hf"),
    "codellama-13b": (13.0, 13.0, 40, 5120, "codellama/CodeLlama-13b-Instruct-hf"),
    "codellama-34b": (33.7, 33.7, 48, 8192, "codellama/CodeLlama-34b-Instruct-hf"),
    "command-r-v01": (35, 35, 40, 8192, "CohereForAI/c4ai-command-r-v01"),
    "command-r-08-2024": (32, 32, 40, 8192, "CohereForAI/c4ai-command-r-08-2024"),
    "command-r-plus": (104, 104, 64, 12288, "CohereForAI/c4ai-command-r-plus"),
    "aya-expanse-8b": (8, 8, 32, 4096, "CohereForAI/aya-expanse-8b"),
    "aya-expanse-32b": (32, 32, 40, 8192, "CohereForAI/aya-expanse-32b"),
    "command-r7b": (8.03, 8.03, 32, 4096, "CohereForAI/c4ai-command-r7b-12-2024"),
    "command-a": (111, 111, 64, 12288, "CohereForAI/c4ai-command-a-03-2025"),
    "deepseek-coder-v2-lite": (15.7, 2.4, 27, 2048, "deepseek-ai/DeepSeek-Coder-V2-Lite-Instruct"),
    "deepseek-v2-lite": (15.7, 2.4, 27, 2048, "deepseek-ai/DeepSeek-V2-Lite-Chat"),
    "deepseek-v2.5": (236, 21, 60, 5120, "deepseek-ai/DeepSeek-V2.5"),
    "deepseek-coder-1.3b": (1.35, 1.35, 24, 2048, "deepseek-ai/deepseek-coder-1.3b-instruct"),
    "deepseek-coder-6.7b": (6.74, 6.74, 32, 4096, "deepseek-ai/deepseek-coder-6.7b-instruct"),
    "deepseek-coder-33b": (33.3, 33.3, 62, 7168, "deepseek-ai/deepseek-coder-33b-instruct"),
    "deepseek-r1-0528-qwen3-8b": (8.19, 8.19, 36, 4096, "deepseek-ai/DeepSeek-R1-0528-Qwen3-8B"),
    "falcon3-1b": (1.67, 1.67, 18, 2048, "tiiuae/Falcon3-1B-Instruct"),
    "falcon3-3b": (3.23, 3.23, 22, 3072, "tiiuae/Falcon3-3B-Instruct"),
    "falcon3-7b": (7.46, 7.46, 28, 3072, "tiiuae/Falcon3-7B-Instruct"),
    "falcon3-10b": (10.3, 10.3, 40, 3072, "tiiuae/Falcon3-10B-Instruct"),
    "gemma-2-2b": (2.61, 2.61, 26, 2304, "google/gemma-2-2b-it"),
    "gemma-3-270m": (0.268, 0.268, 18, 640, "google/gemma-3-270m-it"),
    "glm-4-9b-0414": (9.4, 9.4, 40, 4096, "THUDM/GLM-4-9B-0414"),
    "glm-4-32b-0414": (32.6, 32.6, 61, 6144, "THUDM/GLM-4-32B-0414"),
    "glm-z1-9b-0414": (9.4, 9.4, 40, 4096, "THUDM/GLM-Z1-9B-0414"),
    "glm-z1-32b-0414": (32.6, 32.6, 61, 6144, "THUDM/GLM-Z1-32B-0414"),
    "internlm2.5-1.8b": (1.89, 1.89, 24, 2048, "internlm/internlm2_5-1_8b-chat"),
    "internlm2.5-7b": (7.74, 7.74, 32, 4096, "internlm/internlm2_5-7b-chat"),
    "internlm2.5-20b": (19.9, 19.9, 48, 6144, "internlm/internlm2_5-20b-chat"),
    "internlm3-8b": (8.8, 8.8, 48, 4096, "internlm/internlm3-8b-instruct"),
    "lfm2-350m": (0.354, 0.354, 16, 1024, "LiquidAI/LFM2-350M"),
    "lfm2-700m": (0.742, 0.742, 16, 1536, "LiquidAI/LFM2-700M"),
    "lfm2.5-1.2b": (1.17, 1.17, 16, 2048, "LiquidAI/LFM2.5-1.2B-Instruct"),
    "lfm2.5-1.2b-thinking": (1.17, 1.17, 16, 2048, "LiquidAI/LFM2.5-1.2B-Thinking"),
    "mistral-7b-v0.1": (7.24, 7.24, 32, 4096, "mistralai/Mistral-7B-Instruct-v0.1"),
    "mistral-7b-v0.2": (7.24, 7.24, 32, 4096, "mistralai/Mistral-7B-Instruct-v0.2"),
    "mixtral-8x22b": (141, 39, 56, 6144, "mistralai/Mixtral-8x22B-Instruct-v0.1"),
    "codestral-22b": (22.2, 22.2, 56, 6144, "mistralai/Codestral-22B-v0.1"),
    "mistral-small-22b": (22.2, 22.2, 56, 6144, "mistralai/Mistral-Small-Instruct-2409"),
    "mistral-large-2407": (123, 123, 88, 12288, "mistralai/Mistral-Large-Instruct-2407"),
    "magistral-small": (23.6, 23.6, 40, 5120, "mistralai/Magistral-Small-2506"),
    "hunyuan-a13b": (80, 13, 32, 4096, "tencent/Hunyuan-A13B-Instruct"),
    "dots.llm1": (142, 14, 62, 4096, "rednote-hilab/dots.llm1.inst"),
    "olmo-2-1b": (1.48, 1.48, 16, 2048, "allenai/OLMo-2-0425-1B-Instruct"),
    "granite-3.3-2b": (2.53, 2.53, 40, 2048, "ibm-granite/granite-3.3-2b-instruct"),
    "granite-3.2-8b": (8.17, 8.17, 40, 4096, "ibm-granite/granite-3.2-8b-instruct"),
    "granite-3.2-2b": (2.53, 2.53, 40, 2048, "ibm-granite/granite-3.2-2b-instruct"),
    "granite-3.1-8b": (8.17, 8.17, 40, 4096, "ibm-granite/granite-3.1-8b-instruct"),
    "granite-3.1-2b": (2.53, 2.53, 40, 2048, "ibm-granite/granite-3.1-2b-instruct"),
    "phi-3-mini-4k": (3.82, 3.82, 32, 3072, "microsoft/Phi-3-mini-4k-instruct"),
    "phi-3-mini-128k": (3.82, 3.82, 32, 3072, "microsoft/Phi-3-mini-128k-instruct"),
    "phi-3-medium-4k": (14.0, 14.0, 40, 5120, "microsoft/Phi-3-medium-4k-instruct"),
    "phi-3-medium-128k": (14.0, 14.0, 40, 5120, "microsoft/Phi-3-medium-128k-instruct"),
    "phi-3.5-mini": (3.82, 3.82, 32, 3072, "microsoft/Phi-3.5-mini-instruct"),
    "phi-4-reasoning": (14.7, 14.7, 40, 5120, "microsoft/Phi-4-reasoning"),
    "phi-4-reasoning-plus": (14.7, 14.7, 40, 5120, "microsoft/Phi-4-reasoning-plus"),
    "phi-4-mini-reasoning": (3.84, 3.84, 32, 3072, "microsoft/Phi-4-mini-reasoning"),
    "qwen2.5-0.5b": (0.49, 0.49, 24, 896, "Qwen/Qwen2.5-0.5B-Instruct"),
    "qwen2.5-1.5b": (1.54, 1.54, 28, 1536, "Qwen/Qwen2.5-1.5B-Instruct"),
    "qwen2.5-3b": (3.09, 3.09, 36, 2048, "Qwen/Qwen2.5-3B-Instruct"),
    "qwen2.5-coder-0.5b": (0.49, 0.49, 24, 896, "Qwen/Qwen2.5-Coder-0.5B-Instruct"),
    "qwen2.5-coder-1.5b": (1.54, 1.54, 28, 1536, "Qwen/Qwen2.5-Coder-1.5B-Instruct"),
    "qwen2.5-coder-3b": (3.09, 3.09, 36, 2048, "Qwen/Qwen2.5-Coder-3B-Instruct"),
    "qwen2.5-coder-14b": (14.7, 14.7, 48, 5120, "Qwen/Qwen2.5-Coder-14B-Instruct"),
    "qwq-32b": (32.5, 32.5, 64, 5120, "Qwen/QwQ-32B"),
    "qwen2-0.5b": (0.49, 0.49, 24, 896, "Qwen/Qwen2-0.5B-Instruct"),
    "qwen2-1.5b": (1.54, 1.54, 28, 1536, "Qwen/Qwen2-1.5B-Instruct"),
    "qwen2-7b": (7.62, 7.62, 28, 3584, "Qwen/Qwen2-7B-Instruct"),
    "qwen2-72b": (72.71, 72.71, 80, 8192, "Qwen/Qwen2-72B-Instruct"),
    "qwen2-57b-a14b": (57.41, 14.24, 28, 3584, "Qwen/Qwen2-57B-A14B-Instruct"),
    "qwen1.5-moe-a2.7b": (14.3, 2.7, 24, 2048, "Qwen/Qwen1.5-MoE-A2.7B-Chat"),
    "smollm2-135m": (0.135, 0.135, 30, 576, "HuggingFaceTB/SmolLM2-135M-Instruct"),
    "starcoder2-3b": (3.03, 3.03, 30, 3072, "bigcode/starcoder2-3b"),
    "starcoder2-7b": (7.17, 7.17, 32, 4608, "bigcode/starcoder2-7b"),
    "starcoder2-15b": (16.0, 16.0, 40, 6144, "bigcode/starcoder2-15b"),
    "yi-1.5-6b": (6.06, 6.06, 32, 4096, "01-ai/Yi-1.5-6B-Chat"),
    "yi-1.5-9b": (8.83, 8.83, 48, 4096, "01-ai/Yi-1.5-9B-Chat"),
    "yi-1.5-34b": (34.4, 34.4, 60, 7168, "01-ai/Yi-1.5-34B-Chat"),
    "yi-coder-9b": (8.83, 8.83, 48, 4096, "01-ai/Yi-Coder-9B-Chat"),
    "yi-coder-1.5b": (1.48, 1.48, 24, 2048, "01-ai/Yi-Coder-1.5B-Chat"),
    # END PINNED
}

#: Publishers that count "activated" parameters without the input embedding table (a row lookup);
#: every other entry counts every weight one token uses. Reason per entry.
NO_INPUT_EMBEDDING = {
    "deepseek-coder-v2-lite": "DeepSeek's 2.4B activated leaves out the 102,400 x 2,048 input embedding",
    "deepseek-v2-lite": "DeepSeek's 2.4B activated leaves out the input embedding",
    "deepseek-v2.5": "DeepSeek-V2 paper's 21B activated leaves out the input embedding",
}

#: Published figures that are a rounded headline ("A3B", "22B activated"), with the relative slack they need.
ROUNDED = {
    "qwen3-30b-a3b-instruct-2507": (0.02, 0.06, "card: 3.3B activated; 3.35B computed without the input embedding"),
    "qwen3-30b-a3b-thinking-2507": (0.02, 0.06, "card: 3.3B activated; 3.35B computed without the input embedding"),
    "mixtral-8x22b": (0.02, 0.02, "141B / 39B as announced"),
    "deepseek-coder-v2-lite": (0.02, 0.03, "card: 2.4B activated; 2.45B computed without the input embedding"),
    "deepseek-v2-lite": (0.02, 0.03, "card: 2.4B activated; 2.45B computed without the input embedding"),
}

TOLERANCE = 0.02


def test_catalog_has_at_least_180_models():
    assert len(load_models()) >= 180


@pytest.mark.parametrize("entry_id", sorted(PINNED))
def test_entry_matches_its_pin(entry_id):
    m = load_models()[entry_id]
    params_b, active_b, layers, hidden, repo = PINNED[entry_id]
    assert (m.params_b, m.active_params_b, m.hf_repo) == (params_b, active_b, repo)
    assert (m.config["num_hidden_layers"], m.config.get("hidden_size")) == (layers, hidden)
    assert m.source.startswith(f"https://huggingface.co/{repo}/") and "config.json" in m.source
    assert "params_b" in m.sources


@pytest.mark.parametrize("entry_id", sorted(PINNED))
def test_reader_reproduces_published_parameters(entry_id):
    m = load_models()[entry_id]
    arch = m.arch
    total_tol, active_tol, _why = ROUNDED.get(entry_id, (TOLERANCE, TOLERANCE, ""))
    assert arch.params_main / 1e9 == pytest.approx(m.params_b - m.vision_params_b, rel=total_tol)
    active = arch.params_active
    if entry_id in NO_INPUT_EMBEDDING:
        active -= sum(t.params for t in arch.tensors if t.name == "token_embd")
    assert active / 1e9 == pytest.approx(m.active_params_b, rel=active_tol)
    assert len(arch.attention) == arch.layers == m.config["num_hidden_layers"]


@pytest.mark.parametrize("entry_id", sorted(PINNED))
def test_names_resolve_to_the_entry(entry_id):
    m = load_models()[entry_id]
    names = model_index().names
    assert names[normalise_name(m.name)] == entry_id
    assert names[normalise_name(m.hf_repo)] == entry_id


def _arch(entry_id):
    return load_models()[entry_id].arch


def test_hunyuan_routes_8_of_64_with_one_shared_expert():
    arch = _arch("hunyuan-a13b")
    assert (arch.n_experts, arch.experts_per_token) == (64, 8)
    shared = [t for t in arch.tensors if t.name == "ffn_up_shexp"]
    assert len(shared) == 32 and {(t.rows, t.cols) for t in shared} == {(3072, 4096)}


def test_dots1_first_block_dense_then_experts():
    arch = _arch("dots.llm1")
    dense = sorted({t.layer for t in arch.tensors if t.name == "ffn_gate"})
    routed = sorted({t.layer for t in arch.tensors if t.name == "ffn_gate_exps"})
    assert dense == [0] and routed == list(range(1, 62))
    assert {t.experts for t in arch.tensors if t.name == "ffn_gate_exps"} == {128}


def test_cohere2_three_sliding_layers_then_one_global():
    arch = _arch("command-r7b")
    kinds = [layer.kind for layer in arch.attention]
    assert kinds[:8] == ["sliding"] * 3 + ["full"] + ["sliding"] * 3 + ["full"]
    assert {layer.window for layer in arch.attention if layer.kind == "sliding"} == {4096}
    assert arch.tied_embeddings and not any(t.name == "output" for t in arch.tensors)


def test_starcoder2_mlp_has_no_gate():
    arch = _arch("starcoder2-7b")
    names = {t.name for t in arch.tensors}
    assert "ffn_up" in names and "ffn_down" in names and "ffn_gate" not in names


def test_command_r_v01_has_full_multi_head_kv():
    # 40 layers x (K + V) x 64 KV heads x 128 dims: 1.25 MiB per token at f16, 8x the 08-2024 refresh.
    v01, refresh = _arch("command-r-v01"), _arch("command-r-08-2024")
    assert sum(layer.kv_elements_per_token for layer in v01.attention) == 40 * 2 * 64 * 128
    assert sum(layer.kv_elements_per_token for layer in refresh.attention) == 40 * 2 * 8 * 128

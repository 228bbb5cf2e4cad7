"""The Gemma, gpt-oss, DeepSeek, Kimi, GLM, MiniMax, Nemotron, LFM2, OLMo 2 and Granite entries.

Every model: the parameters its architecture reader derives from the catalogued config.json must
match the publisher's totals (within 2% unless a reason below says the published figure is only
nominal). Plus hand-checked anchors for the attention layouts these families introduce: sliding
windows that cap the KV cache, MLA latents, KV-sharing layers, Mamba and short-convolution state.
"""

from __future__ import annotations

import pytest

from engine.arch import Architecture
from engine.catalog import DATA_DIR, normalise_name, read_toml_tables
from engine.models import load_models, model_index

CATALOG_FILES = {
    "gemma.toml", "gpt-oss.toml", "deepseek.toml", "kimi.toml", "glm.toml",
    "minimax.toml", "nemotron.toml", "lfm.toml", "other.toml",
}
MODEL_IDS = sorted(
    entry_id for entry_id, (_raw, file) in read_toml_tables(DATA_DIR / "models", "model").items() if file in CATALOG_FILES
)

# What a publisher's "active parameters" counts. The engine's params_active is every weight one token
# uses, input embedding table included; some publishers leave out the input embedding (a row lookup),
# some the output head as well.
EVERY_WEIGHT, NO_INPUT_EMBEDDING, NO_EMBEDDINGS = "every weight", "no input embedding", "no embeddings"
ACTIVE_COUNTING = {
    # DeepSeek and Moonshot (same architecture): 37B / 32B activated, the input embedding left out.
    "deepseek-v3": NO_INPUT_EMBEDDING,
    "deepseek-v3.1": NO_INPUT_EMBEDDING,
    "deepseek-r1": NO_INPUT_EMBEDDING,
    "deepseek-v4-flash": NO_INPUT_EMBEDDING,
    "kimi-k2-instruct": NO_INPUT_EMBEDDING,
    "kimi-k2-thinking": NO_INPUT_EMBEDDING,
    # gpt-oss model card (arXiv 2508.10925): active counts the unembedding, not the embedding.
    "gpt-oss-20b": NO_INPUT_EMBEDDING,
    "gpt-oss-120b": NO_INPUT_EMBEDDING,
    # NVIDIA: Nemotron 3 Nano "3.2B active, 3.6B including embeddings".
    "nemotron-3-nano-30b-a3b": NO_INPUT_EMBEDDING,
    "nemotron-3-super-120b-a12b": NO_INPUT_EMBEDDING,
    # Z.ai's 32B / 12B (GLM-4.5 report) and the MLA Flash model: neither embedding nor head.
    "glm-4.5": NO_EMBEDDINGS,
    "glm-4.5-air": NO_EMBEDDINGS,
    "glm-4.6": NO_EMBEDDINGS,
    "glm-4.7": NO_EMBEDDINGS,
    "glm-4.7-flash": NO_EMBEDDINGS,
    "minimax-m2": NO_INPUT_EMBEDDING,
    "minimax-m2.5": NO_INPUT_EMBEDDING,
    "minimax-m2.7": NO_INPUT_EMBEDDING,
}

DEFAULT_TOLERANCE = 0.02
# Published figures that are only nominal (a rounded headline number), with the slack they need.
TOTAL_TOLERANCE = {
    "kimi-k2-instruct": (0.03, "'1T total' is rounded: the tensors add up to 1.026T"),
    "kimi-k2-thinking": (0.03, "'1T total' is rounded: the tensors add up to 1.026T"),
}
ACTIVE_TOLERANCE = {
    "glm-4.7-flash": (0.10, "'A3B' is nominal: 3.26B without embeddings"),
    "minimax-m2": (0.05, "'10B active' is nominal: 10.4B"),
    "minimax-m2.5": (0.05, "'10B active' is nominal: 10.4B"),
    "minimax-m2.7": (0.05, "'10B active' is nominal: 10.4B"),
    "deepseek-v4-flash": (0.03, "'13B activated' is nominal: 13.3B without the input embedding"),
    "lfm2-8b-a1b": (0.05, "'1.5B active' is rounded: 1.56B"),
}

# The names our calibration data uses (measured/calibration.csv, `model` column) -> catalog id.
CALIBRATION_NAMES = {
    "gemma-4-26B-A4B": "gemma-4-26b-a4b",
    "gemma-4-31B": "gemma-4-31b",
    "gemma-4-E4B": "gemma-4-e4b",
    "gemma-4-E2B": "gemma-4-e2b",
    "gemma-4-12B": "gemma-4-12b",
    "gemma-3-4b": "gemma-3-4b",
    "gemma-3-27b": "gemma-3-27b",
    "gpt-oss-120b": "gpt-oss-120b",
    "gpt-oss-20b": "gpt-oss-20b",
    "GLM-4.7-Flash": "glm-4.7-flash",
    "NVIDIA-Nemotron-3-Super-120B-A12B": "nemotron-3-super-120b-a12b",
    "MiniMax-M2.7": "minimax-m2.7",
    "DeepSeek-V4-Flash": "deepseek-v4-flash",
}


def arch(model_id: str) -> Architecture:
    return load_models()[model_id].arch


def tensor_params(architecture: Architecture, name: str) -> int:
    return sum(t.params for t in architecture.tensors if t.name == name)


def published_style_active(model_id: str) -> int:
    architecture = arch(model_id)
    counting = ACTIVE_COUNTING.get(model_id, EVERY_WEIGHT)
    active = architecture.params_active
    if counting in (NO_INPUT_EMBEDDING, NO_EMBEDDINGS) and not architecture.tied_embeddings:
        active -= tensor_params(architecture, "token_embd")
    if counting == NO_EMBEDDINGS:
        active -= tensor_params(architecture, "output") or tensor_params(architecture, "token_embd")
    return active


def test_catalog_has_these_families():
    assert len(MODEL_IDS) >= 25


@pytest.mark.parametrize("model_id", MODEL_IDS)
def test_total_parameters_match_the_published_total(model_id):
    model = load_models()[model_id]
    # Published totals of multimodal models include their vision/audio encoders.
    derived_b = model.arch.params_main / 1e9 + model.vision_params_b
    tolerance, _reason = TOTAL_TOLERANCE.get(model_id, (DEFAULT_TOLERANCE, ""))
    assert derived_b == pytest.approx(model.params_b, rel=tolerance)


@pytest.mark.parametrize("model_id", MODEL_IDS)
def test_active_parameters_match_the_published_active_count(model_id):
    model = load_models()[model_id]
    derived_b = published_style_active(model_id) / 1e9 + model.vision_params_b
    tolerance, _reason = ACTIVE_TOLERANCE.get(model_id, (DEFAULT_TOLERANCE, ""))
    assert derived_b == pytest.approx(model.active_params_b, rel=tolerance)


@pytest.mark.parametrize(("name", "model_id"), sorted(CALIBRATION_NAMES.items()))
def test_calibration_names_resolve(name, model_id):
    assert model_index().names[normalise_name(name)] == model_id


def test_exact_totals_counted_from_published_safetensors_headers():
    # Nemotron 3 Super: 123,611,033,088 parameters in the BF16 release, MTP block included.
    assert arch("nemotron-3-super-120b-a12b").params_total == 123_611_033_088
    # Granite 3.3 8B: 8,170,864,640 parameters (Hugging Face safetensors).
    assert arch("granite-3.3-8b").params_total == 8_170_864_640


def test_gemma3_sliding_layers_hold_at_most_the_window():
    architecture = arch("gemma-3-27b")
    sliding = [a for a in architecture.attention if a.kind == "sliding"]
    full = [a for a in architecture.attention if a.kind == "full"]
    assert (len(sliding), len(full)) == (52, 10)  # five local layers per global one, 62 layers
    assert {a.cached_tokens(32768) for a in sliding} == {1024}
    assert {a.cached_tokens(32768) for a in full} == {32768}
    # 16 KV heads of 128, K and V: 4096 elements per token per layer.
    assert {a.kv_elements_per_token for a in architecture.attention} == {2 * 16 * 128}


def test_deepseek_v3_mla_caches_576_elements_per_token_per_layer():
    architecture = arch("deepseek-v3")
    assert len(architecture.attention) == 61
    assert {(a.kind, a.kv_elements_per_token) for a in architecture.attention} == {("mla", 512 + 64)}
    # 61 x 576 elements x 2 bytes (f16) = 70,272 bytes of cache per token.
    assert sum(a.kv_elements_per_token for a in architecture.attention) * 2 == 70_272
    # The 14B multi-token-prediction block is stored (685B on Hugging Face) but not in the 671B.
    assert (architecture.params_total - architecture.params_main) / 1e9 == pytest.approx(13.5, abs=0.5)


def test_kimi_k2_and_glm_flash_are_mla_too():
    for model_id in ("kimi-k2-instruct", "glm-4.7-flash"):
        assert {(a.kind, a.kv_elements_per_token) for a in arch(model_id).attention} == {("mla", 576)}


def test_gpt_oss_half_of_its_layers_slide_over_128_tokens():
    for model_id, layers in (("gpt-oss-20b", 24), ("gpt-oss-120b", 36)):
        attention = arch(model_id).attention
        sliding = [a for a in attention if a.kind == "sliding"]
        assert len(attention) == layers and len(sliding) == layers // 2
        assert {a.window for a in sliding} == {128}
        assert {a.cached_tokens(100_000) for a in sliding} == {128}
        assert {a.kv_elements_per_token for a in attention} == {2 * 8 * 64}


def test_gemma4_kv_sharing_layers_add_no_cache():
    attention = arch("gemma-4-e2b").attention
    own_cache = [a for a in attention if a.kv_elements_per_token]
    assert len(own_cache) == 35 - 20
    assert all(a.kv_elements_per_token == 0 for a in attention[15:])
    # They still attend: their FLOPs per (query, key) pair remain.
    assert all(a.flops_per_pair > 0 for a in attention[15:])


def test_gemma4_global_layers_use_their_own_heads():
    attention = arch("gemma-4-31b").attention
    sliding = {a.kv_elements_per_token for a in attention if a.kind == "sliding"}
    full = {a.kv_elements_per_token for a in attention if a.kind == "full"}
    # Local: 16 KV heads of 256; global: 4 K=V heads of 512, which llama.cpp still caches as K and V.
    assert sliding == {2 * 16 * 256} and full == {2 * 4 * 512}
    assert {a.window for a in attention if a.kind == "sliding"} == {1024}


def test_gemma4_moe_runs_dense_mlp_and_experts_in_every_block():
    architecture = arch("gemma-4-26b-a4b")
    assert (architecture.n_experts, architecture.experts_per_token) == (128, 8)
    assert {t.layer for t in architecture.tensors if t.name == "ffn_gate"} == set(range(30))
    assert {t.layer for t in architecture.tensors if t.name == "ffn_gate_exps"} == set(range(30))


def test_gemma4_per_layer_embedding_table_size():
    # Gemma 4 E4B: 262144 x (42 x 256) per-layer embedding, 2.82B of its 7.46B text parameters.
    architecture = arch("gemma-4-e4b")
    assert tensor_params(architecture, "per_layer_token_embd") == 262144 * 42 * 256


def test_deepseek_dense_first_layers_and_shared_experts():
    architecture = arch("deepseek-v3")
    dense = {t.layer for t in architecture.tensors if t.name == "ffn_gate" and not t.mtp}
    assert dense == {0, 1, 2}
    shared = {t.layer for t in architecture.tensors if t.name == "ffn_gate_shexp" and not t.mtp}
    assert shared == set(range(3, 61))


def test_nemotron_hybrids_cache_only_in_attention_blocks():
    architecture = arch("nemotron-3-super-120b-a12b")
    kinds = [a.kind for a in architecture.attention]
    assert (kinds.count("full"), kinds.count("ssm"), kinds.count("none")) == (8, 40, 40)
    assert {a.kv_elements_per_token for a in architecture.attention if a.kind == "full"} == {2 * 2 * 128}
    # Mamba-2 state: 128 heads x 64 x 128 SSM state + 3 x (8192 + 2 x 8 x 128) convolution inputs.
    assert {a.state_elements for a in architecture.attention if a.kind == "ssm"} == {128 * 64 * 128 + 3 * 10240}
    assert all(a.cached_tokens(65536) == 0 for a in architecture.attention if a.kind != "full")


def test_lfm2_short_convolutions_keep_a_constant_state():
    architecture = arch("lfm2-1.2b")
    conv = [a for a in architecture.attention if a.kind == "ssm"]
    assert len(conv) == 10 and {a.state_elements for a in conv} == {2 * 2048}
    # block_auto_adjust_ff_dim turns the declared 12288 into 8192.
    assert {t.rows for t in architecture.tensors if t.name == "ffn_gate"} == {8192}


def test_deepseek_v4_layers_map_onto_sliding_and_compressed_kinds():
    attention = arch("deepseek-v4-flash").attention
    assert len(attention) == 43
    assert [a.kind for a in attention[:2]] == ["sliding", "sliding"]
    assert {a.window for a in attention[:2]} == {128}
    compressed = attention[2:]
    # Ratio 4: 512/4 latent + 128/4 indexer elements per token; ratio 128: 512/128.
    assert [a.kv_elements_per_token for a in compressed] == [160, 4] * 20 + [160]
    assert {a.state_elements for a in compressed} == {128 * 512}

"""Catalog entries of the Llama, Qwen, Mistral, Phi, DeepSeek-R1-distill, SmolLM, TinyLlama and
Bonsai families: every architecture reader reproduces the published parameter counts, the names our
calibration data uses resolve, and hand-checked anchors of the KV cache and of the hybrid
(Gated DeltaNet) and chunked-attention layouts hold.
"""

from __future__ import annotations

import pytest

from engine.catalog import normalise_name
from engine.models import load_models, model_index

#: Catalog files owned by these families.
FAMILY_FILES = (
    "llama-1-2.toml", "llama-3.toml", "llama-4.toml", "qwen-2.5.toml", "qwen-3.toml", "qwen-3-next.toml",
    "qwen-3.5.toml", "qwen-3.6.toml", "mistral.toml", "phi.toml", "deepseek-distill.toml", "small.toml",
    "bonsai.toml",
)

#: Relative tolerance of computed vs published parameter counts (models-common.md).
TOLERANCE = 0.02

#: Models whose published figure is the rounded number of the model's name ("4B", "A3B"), with why
#: the count differs. These pass when the computed count rounds to the published figure at its
#: printed precision, counted with or without the embedding and output tables (vendors differ).
NOMINAL_TOTAL = {
    "qwen3.5-0.8b": "card says 0.8B; the language model computes to 0.75B",
    "qwen3.5-2b": "card says 2B; the language model computes to 1.88B",
    "qwen3.5-4b": "card says 4B; the language model computes to 4.21B",
}
NOMINAL_ACTIVE = {
    "qwen3-next-80b-a3b": "card says 3B activated; 3.87B computed, 3.25B without embedding/output tables",
    "qwen3-coder-next": "card says 3B activated; 3.87B computed, 3.25B without embedding/output tables",
    "qwen3.5-35b-a3b": "card says 3B activated; 3.45B computed",
    "qwen3.6-35b-a3b": "card says 3B activated; 3.45B computed",
    "qwen3.6-35b-a3b-reap50": "base card says 3B activated; pruning keeps 8 experts per token, 3.45B computed",
    "qwen3.5-122b-a10b": "card says 10B activated; 9.77B computed",
    "qwen3.5-397b-a17b": "card says 17B activated; 17.35B computed",
}

#: Model names exactly as the calibration data (shared/measured/calibration.csv) spells them.
CALIBRATION_NAMES = {
    "Meta-Llama-3-8B": "llama-3-8b",
    "Meta-Llama-3-70B": "llama-3-70b",
    "Llama-3.1-8B": "llama-3.1-8b",
    "Llama-2-7B": "llama-2-7b",
    "Llama-2-13B": "llama-2-13b",
    "Llama-2-70B": "llama-2-70b",
    "LLaMA-7B": "llama-1-7b",
    "LLaMA-13B": "llama-1-13b",
    "LLaMA-30B": "llama-1-30b",
    "LLaMA-65B": "llama-1-65b",
    "Llama-3.3-70B": "llama-3.3-70b",
    "Qwen3.6-27B": "qwen3.6-27b",
    "Qwen3.5-35B-A3B": "qwen3.5-35b-a3b",
    "Qwen3.6-35B-A3B": "qwen3.6-35b-a3b",
    "Qwen3-Coder-Next": "qwen3-coder-next",
    "Qwen3-Coder-30B-A3B": "qwen3-coder-30b-a3b",
    "Qwen2.5-Coder-7B": "qwen2.5-coder-7b",
    "Qwen3.5-122B-A10B": "qwen3.5-122b-a10b",
    "Qwen3-32B": "qwen3-32b",
    "Qwen3.5-4B": "qwen3.5-4b",
    "Qwen3.6-35B-A3B-REAP50": "qwen3.6-35b-a3b-reap50",
    "Ministral-3-14B": "ministral-3-14b",
    "Ternary-Bonsai-8B": "ternary-bonsai-8b",
}

F16_BYTES = 2


def family_models():
    from engine.catalog import DATA_DIR, read_toml_tables

    tables = read_toml_tables(DATA_DIR / "models", "model")
    ids = [entry_id for entry_id, (_raw, file) in tables.items() if file in FAMILY_FILES]
    return [load_models()[entry_id] for entry_id in ids]


MODELS = family_models()


def model(entry_id: str):
    return load_models()[entry_id]


def rounds_to(computed_b: float, published_b: float) -> bool:
    """``computed_b`` rounds to ``published_b`` at the precision ``published_b`` is printed with."""
    decimals = len(repr(float(published_b)).split(".")[1].rstrip("0"))
    return round(computed_b, decimals) == published_b


def embedding_tables(arch) -> int:
    return sum(t.params for t in arch.tensors if t.name in ("token_embd", "output"))


def kv_bytes_per_token_f16(arch, context: int) -> int:
    """KV-cache bytes that one more token of a ``context``-token history adds at f16."""
    growing = [layer for layer in arch.attention if layer.cached_tokens(context + 1) > layer.cached_tokens(context)]
    return sum(layer.kv_elements_per_token * F16_BYTES for layer in growing)


def test_family_has_at_least_forty_models():
    assert len(MODELS) >= 40


@pytest.mark.parametrize("m", MODELS, ids=lambda m: m.id)
def test_total_parameters_match_published(m):
    published = m.params_b - m.vision_params_b
    computed = m.arch.params_main / 1e9
    if m.id in NOMINAL_TOTAL:
        assert rounds_to(computed, published), NOMINAL_TOTAL[m.id]
        assert "rounded" in m.notes
    else:
        assert computed == pytest.approx(published, rel=TOLERANCE)


@pytest.mark.parametrize("m", MODELS, ids=lambda m: m.id)
def test_active_parameters_match_published(m):
    computed = m.arch.params_active / 1e9
    nominal = NOMINAL_ACTIVE.get(m.id) or NOMINAL_TOTAL.get(m.id)
    if nominal:
        without_tables = (m.arch.params_active - embedding_tables(m.arch)) / 1e9
        assert rounds_to(computed, m.active_params_b) or rounds_to(without_tables, m.active_params_b), nominal
    else:
        assert computed == pytest.approx(m.active_params_b, rel=TOLERANCE)
    if not m.arch.is_moe:
        assert m.arch.params_active == m.arch.params_main


@pytest.mark.parametrize("name,entry_id", sorted(CALIBRATION_NAMES.items()))
def test_calibration_names_resolve(name, entry_id):
    assert model_index().names[normalise_name(name)] == entry_id


@pytest.mark.parametrize("m", MODELS, ids=lambda m: m.id)
def test_every_model_reads_its_config_and_has_sources(m):
    assert m.arch.layers == m.config["num_hidden_layers"]
    assert len(m.arch.attention) == m.arch.layers
    assert "params_b" in m.sources
    if m.gguf_sizes_gb:
        assert "gguf_sizes_gb" in m.sources


def test_llama_3_8b_kv_cache_is_128_kib_per_token():
    # 32 layers x (K + V) x 8 KV heads x 128 dims x 2 bytes
    assert kv_bytes_per_token_f16(model("llama-3.1-8b").arch, 1000) == 32 * 2 * 8 * 128 * 2 == 131072
    assert kv_bytes_per_token_f16(model("llama-3-8b").arch, 1000) == 131072


def test_llama_2_7b_has_full_multi_head_kv():
    # No GQA in Llama 2 7B: 32 KV heads, 512 KiB per token at f16.
    assert kv_bytes_per_token_f16(model("llama-2-7b").arch, 100) == 32 * 2 * 32 * 128 * 2


def test_qwen3_next_linear_layers_do_not_grow():
    arch = model("qwen3-next-80b-a3b").arch
    linear = [layer for layer in arch.attention if layer.kind == "linear"]
    full = [layer for layer in arch.attention if layer.kind == "full"]
    assert (len(linear), len(full)) == (36, 12)
    assert all(layer.cached_tokens(100_000) == 0 and layer.kv_elements_per_token == 0 for layer in linear)
    # Recurrent state: 32 value heads x 128 x 128, plus 3 conv steps x (2 x 2048 + 4096) channels.
    assert {layer.state_elements for layer in linear} == {32 * 128 * 128 + 3 * 8192}
    # Only the 12 full-attention layers cache K and V: 2 KV heads x 256 dims each.
    assert kv_bytes_per_token_f16(arch, 50_000) == 12 * 2 * 2 * 256 * 2


def test_qwen3_next_layout_every_fourth_layer_full():
    arch = model("qwen3-coder-next").arch
    assert [layer.kind for layer in arch.attention[:8]] == ["linear"] * 3 + ["full"] + ["linear"] * 3 + ["full"]


def test_qwen3_5_27b_kv_cache_and_gated_query():
    arch = model("qwen3.5-27b").arch
    assert kv_bytes_per_token_f16(arch, 1000) == 16 * 2 * 4 * 256 * 2  # 16 full layers of 64
    attn_q = next(t for t in arch.tensors if t.name == "attn_q")
    assert (attn_q.rows, attn_q.cols) == (2 * 24 * 256, 5120)  # query + output gate per head
    qkv = next(t for t in arch.tensors if t.name == "attn_qkv")
    assert qkv.rows == 2 * 16 * 128 + 48 * 128


def test_qwen3_5_mtp_block_is_stored_but_not_active():
    arch = model("qwen3.5-35b-a3b").arch
    mtp = [t for t in arch.tensors if t.mtp]
    assert mtp and all(t.layer == 40 for t in mtp)
    assert arch.params_total > arch.params_main == sum(t.params for t in arch.tensors if not t.mtp)


def test_reap_pruning_halves_experts_keeps_active_weights_and_kv():
    base, pruned = model("qwen3.6-35b-a3b").arch, model("qwen3.6-35b-a3b-reap50").arch
    assert (base.n_experts, pruned.n_experts) == (256, 128)
    assert pruned.experts_per_token == base.experts_per_token == 8
    removed = 40 * 128 * 3 * 2048 * 512 + 40 * 128 * 2048  # experts + their router rows
    assert base.params_main - pruned.params_main == removed
    router = 40 * 128 * 2048
    assert base.params_active - pruned.params_active == router
    assert kv_bytes_per_token_f16(base, 4096) == kv_bytes_per_token_f16(pruned, 4096)


def test_llama_4_chunked_layers_hold_one_chunk():
    arch = model("llama-4-scout").arch
    kinds = [layer.kind for layer in arch.attention]
    assert kinds[:4] == ["sliding", "sliding", "sliding", "full"]
    chunked = [layer for layer in arch.attention if layer.kind == "sliding"]
    assert len(chunked) == 36 and all(layer.window == 8192 for layer in chunked)
    assert all(layer.cached_tokens(100_000) == 8192 for layer in chunked)


def test_llama_4_maverick_alternates_dense_and_moe():
    arch = model("llama-4-maverick").arch
    moe_layers = sorted({t.layer for t in arch.tensors if t.name == "ffn_gate_exps"})
    dense_layers = sorted({t.layer for t in arch.tensors if t.name == "ffn_gate"})
    assert moe_layers == list(range(1, 48, 2)) and dense_layers == list(range(0, 48, 2))
    assert {t.experts for t in arch.tensors if t.name == "ffn_gate_exps"} == {128}


def test_mixtral_routes_two_of_eight():
    arch = model("mixtral-8x7b").arch
    assert (arch.n_experts, arch.experts_per_token) == (8, 2)


def test_phi_4_fused_projections():
    arch = model("phi-4").arch
    qkv = next(t for t in arch.tensors if t.name == "attn_qkv")
    up = next(t for t in arch.tensors if t.name == "ffn_up")
    assert qkv.rows == (40 + 2 * 10) * 128 and up.rows == 2 * 17920
    assert kv_bytes_per_token_f16(arch, 10) == 40 * 2 * 10 * 128 * 2


def test_ternary_bonsai_is_qwen3_8b_shaped():
    bonsai, qwen = model("ternary-bonsai-8b").arch, model("qwen3-8b").arch
    assert [(t.name, t.rows, t.cols) for t in bonsai.tensors] == [(t.name, t.rows, t.cols) for t in qwen.tensors]
    assert model("ternary-bonsai-8b").gguf_sizes_gb["F16"] == pytest.approx(bonsai.params_main * 2 / 1e9, rel=0.01)


def test_tied_embeddings_store_no_output_matrix():
    for entry_id in ("llama-3.2-1b", "qwen3-4b", "qwen3.5-4b", "smollm3-3b", "phi-4-mini"):
        arch = model(entry_id).arch
        assert arch.tied_embeddings and not any(t.name == "output" for t in arch.tensors), entry_id


def test_draft_pairs_share_a_tokenizer():
    pairs = [("llama-3.2-1b", "llama-3.3-70b"), ("qwen3-0.6b", "qwen3-32b"), ("qwen2.5-coder-7b", "qwen2.5-coder-32b"),
             ("deepseek-r1-distill-qwen-1.5b", "deepseek-r1-distill-qwen-32b"), ("smollm2-360m", "smollm2-1.7b"),
             ("qwen3.5-0.8b", "qwen3.6-27b"), ("tinyllama-1.1b", "llama-2-70b")]
    for draft, target in pairs:
        assert model(draft).tokenizer == model(target).tokenizer, (draft, target)

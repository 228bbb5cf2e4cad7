"""Issue 14's missing entries, each from what was read: EXAONE 3.0 7.8B (its config.json, read from a
copy on huggingface.co; EXAONE names the layer count num_layers) and the Unsloth Dynamic levels
UD-Q3_K_XL, UD-IQ2_XXS, UD-IQ2_M and UD-IQ1_S (modelled like the other UD levels: llama.cpp's base
recipe with the tensors Unsloth documents as sensitive raised, never lowered)."""

from __future__ import annotations

import pytest

from engine.catalog import normalise_name
from engine.models import load_models, model_index
from engine.quant import parse_quant, weight_bytes


def test_exaone_reads_num_layers_and_reproduces_its_size():
    m = load_models()["exaone-3.0-7.8b"]
    assert m.verified_from.startswith("https://huggingface.co/heegyu/EXAONE-3.0-7.8B-Instruct-bf16/")
    assert (m.config["num_layers"], m.config["hidden_size"], m.config["intermediate_size"]) == (32, 4096, 14336)
    assert (m.config["num_attention_heads"], m.config["num_key_value_heads"], m.config["vocab_size"]) == (32, 8, 102400)
    assert m.arch.layers == 32 and m.arch.max_context == 4096
    assert m.arch.params_main / 1e9 == pytest.approx(m.params_b, rel=0.02)


@pytest.mark.parametrize("name", ["EXAONE-3.0-7.8B-Instruct", "LGAI-EXAONE/EXAONE-3.0-7.8B-Instruct", "exaone3.0:7.8b", "EXAONE 3.0 7.8B"])
def test_exaone_names_resolve(name):
    assert model_index().names[normalise_name(name)] == "exaone-3.0-7.8b"


UD_LEVELS = {"UD-Q3_K_XL": "Q3_K_M", "UD-IQ2_XXS": "IQ2_XXS", "UD-IQ2_M": "IQ2_M", "UD-IQ1_S": "IQ1_S"}


@pytest.mark.parametrize("name", sorted(UD_LEVELS))
def test_ud_levels_resolve_by_their_names(name):
    assert parse_quant(name).name == name
    assert parse_quant("Unsloth Dynamic " + name[3:]).name == name


@pytest.mark.parametrize("name", sorted(UD_LEVELS))
def test_ud_levels_raise_sensitive_tensors_above_their_base(name):
    """Dense model: embedding and head raised; MoE model: attention and shared tensors raised.
    Either way the UD file is larger than its llama.cpp base, never smaller."""
    for model_id in ("exaone-3.0-7.8b", "qwen3-30b-a3b"):
        arch = load_models()[model_id].arch
        assert weight_bytes(arch, parse_quant(name)) > weight_bytes(arch, parse_quant(UD_LEVELS[name]))

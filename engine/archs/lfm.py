"""Liquid AI LFM2 (``lfm2``) and LFM2-MoE (``lfm2_moe``): short-convolution / attention hybrids.

Most blocks are gated short convolutions: ``in_proj`` makes three hidden-size streams (two gates and
a value), a depthwise causal convolution over the last ``conv_L_cache`` tokens mixes the gated
value, ``out_proj`` brings it back. Their only memory of the past is the convolution's last
``conv_L_cache - 1`` inputs: a constant state, modelled as kind ``ssm`` (the closest kind: a
recurrent layer whose cache does not grow). The other blocks (``layer_types`` ``full_attention``,
or ``full_attn_idxs`` in the first configs) are GQA attention with per-head q/k norms. Every block
ends in a SwiGLU MLP (LFM2) or, after ``num_dense_layers`` dense blocks, a routed-expert MLP
(LFM2-MoE, sigmoid routing with an optional expert bias). Tensor names and shapes follow llama.cpp
(src/llama-arch.cpp LLM_ARCH_LFM2 / LFM2MOE, src/models/lfm2.cpp).
"""

from __future__ import annotations

from ..arch import (
    Architecture,
    LayerAttention,
    Tensor,
    attention_tensors,
    config_int,
    decoder,
    mlp_tensors,
    output_head,
    register,
)
from ..errors import EngineInputError

CONV, ATTENTION = "conv", "full_attention"


def dense_width(cfg: dict) -> int:
    """The MLP width. LFM2 with ``block_auto_adjust_ff_dim`` shrinks the declared width to 2/3
    (times ``block_ffn_dim_multiplier``), rounded up to ``block_multiple_of`` (transformers
    Lfm2MLP; LFM2-1.2B declares 12288 and runs 8192)."""
    declared = config_int(cfg, "intermediate_size", "block_ff_dim")
    if cfg["model_type"] != "lfm2" or not cfg.get("block_auto_adjust_ff_dim", False):
        return declared
    width = int(2 * declared / 3)
    multiplier = cfg.get("block_ffn_dim_multiplier")
    if multiplier is not None:
        width = int(multiplier * width)
    multiple = config_int(cfg, "block_multiple_of", default=256)
    return multiple * ((width + multiple - 1) // multiple)


def block_kinds(cfg: dict, layers: int) -> list[str]:
    kinds = cfg.get("layer_types")
    if kinds is None:
        attention_layers = set(cfg.get("full_attn_idxs") or ())
        kinds = [ATTENTION if layer in attention_layers else CONV for layer in range(layers)]
    if len(kinds) != layers or set(kinds) - {CONV, ATTENTION}:
        raise EngineInputError(f"config.json: layer_types must list {layers} of conv / full_attention", field="config")
    return kinds


@register("lfm2", "lfm2_moe")
def lfm2(cfg: dict) -> Architecture:
    model_type = str(cfg["model_type"])
    layers = config_int(cfg, "num_hidden_layers")
    hidden = config_int(cfg, "hidden_size")
    heads = config_int(cfg, "num_attention_heads")
    kv_heads = config_int(cfg, "num_key_value_heads", default=heads)
    head_dim = hidden // heads if heads else 0
    vocab = config_int(cfg, "vocab_size")
    conv_cache = config_int(cfg, "conv_L_cache")
    # LFM2 ties its output head to the embedding (tie_embedding in the first configs).
    tied = bool(cfg.get("tie_word_embeddings", cfg.get("tie_embedding", True)))
    if heads == 0 or kv_heads == 0 or heads % kv_heads:
        raise EngineInputError("config.json: num_attention_heads must be a multiple of num_key_value_heads", field="config")
    intermediate = dense_width(cfg)
    n_experts = config_int(cfg, "num_experts", default=0) if model_type == "lfm2_moe" else 0
    top_k = config_int(cfg, "num_experts_per_tok") if n_experts else 0
    if n_experts and not 0 < top_k <= n_experts:
        raise EngineInputError(f"config.json: num_experts_per_tok must be 1..{n_experts}", field="config")
    dense_layers = config_int(cfg, "num_dense_layers", default=0) if n_experts else layers
    expert_intermediate = config_int(cfg, "moe_intermediate_size") if n_experts else 0
    expert_bias = bool(cfg.get("use_expert_bias", False))
    full = LayerAttention(kind="full", kv_elements_per_token=2 * kv_heads * head_dim, flops_per_pair=2 * heads * (head_dim + head_dim), query_heads=heads)
    conv = LayerAttention(kind="ssm", state_elements=(conv_cache - 1) * hidden)

    tensors = [Tensor("token_embd", -1, vocab, hidden)]
    attention = []
    for layer, kind in enumerate(block_kinds(cfg, layers)):
        if kind == CONV:
            tensors += [
                Tensor("attn_norm", layer, 1, hidden),
                Tensor("shortconv.in_proj", layer, 3 * hidden, hidden),
                Tensor("shortconv.conv", layer, hidden, conv_cache),
                Tensor("shortconv.out_proj", layer, hidden, hidden),
            ]
        else:
            tensors += attention_tensors(layer, hidden, heads, kv_heads, head_dim, qk_norm=True)
        tensors.append(Tensor("ffn_norm", layer, 1, hidden))
        if layer < dense_layers:
            tensors += mlp_tensors(layer, hidden, intermediate)
        else:
            tensors.append(Tensor("ffn_gate_inp", layer, n_experts, hidden))
            if expert_bias:
                tensors.append(Tensor("exp_probs_b", layer, 1, n_experts))
            tensors += mlp_tensors(layer, hidden, expert_intermediate, "_exps", n_experts)
        attention.append(full if kind == ATTENTION else conv)
    tensors += output_head(vocab, hidden, tied)
    return decoder(model_type, tensors, attention, layers=layers, hidden=hidden, vocab=vocab, tied=tied,
                   max_context=config_int(cfg, "max_position_embeddings", default=0), n_experts=n_experts,
                   experts_per_token=top_k)

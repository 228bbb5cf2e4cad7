"""Llama 4 (Scout, Maverick): MoE with one routed expert plus a shared expert, chunked attention.

Which blocks are MoE comes from ``moe_layers`` or ``interleave_moe_layer_step`` (Scout: every
block; Maverick: every second block, the others dense with ``intermediate_size_mlp``). Routed and
shared experts both use ``intermediate_size``. Three of every four blocks use RoPE with *chunked*
attention: a token attends only within its ``attention_chunk_size``-token chunk, so those layers
hold at most one chunk of KV (llama.cpp LLAMA_SWA_TYPE_CHUNKED); the fourth (NoPE) block attends to
everything. Defaults are those of transformers' Llama4TextConfig (``no_rope_layer_interval=4``).
"""

from __future__ import annotations

from dataclasses import astuple

from ..arch import (
    Architecture,
    LayerAttention,
    Tensor,
    attention_tensors,
    config_int,
    decoder,
    mlp_tensors,
    output_head,
    read_dims,
    register,
)
from ..errors import EngineInputError

#: transformers Llama4TextConfig: every 4th block is a NoPE (global attention) block by default.
NO_ROPE_LAYER_INTERVAL = 4


def int_list(cfg: dict, key: str, length: int | None = None) -> list[int] | None:
    values = cfg.get(key)
    if values is None:
        return None
    if not isinstance(values, list) or not all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        raise EngineInputError(f"config.json: {key} must be a list of integers", field="config")
    if length is not None and len(values) != length:
        raise EngineInputError(f"config.json: {key} must have {length} entries", field="config")
    return values


@register("llama4", "llama4_text")
def llama4(cfg: dict) -> Architecture:
    layers, hidden, heads, kv_heads, head_dim, vocab, tied = astuple(read_dims(cfg))
    n_experts = config_int(cfg, "num_local_experts")
    top_k = config_int(cfg, "num_experts_per_tok", default=1)
    expert_intermediate = config_int(cfg, "intermediate_size")
    dense_intermediate = config_int(cfg, "intermediate_size_mlp", default=expert_intermediate)
    chunk = config_int(cfg, "attention_chunk_size", default=0)
    if not 0 < top_k <= n_experts:
        raise EngineInputError(f"config.json: num_experts_per_tok must be 1..{n_experts}", field="config")
    step = config_int(cfg, "interleave_moe_layer_step", default=1) or 1
    moe_layers = set(int_list(cfg, "moe_layers") or range(step - 1, layers, step))
    uses_rope = int_list(cfg, "no_rope_layers", layers) or [
        int((layer + 1) % NO_ROPE_LAYER_INTERVAL != 0) for layer in range(layers)
    ]

    tensors = [Tensor("token_embd", -1, vocab, hidden)]
    attention = []
    for layer in range(layers):
        tensors += attention_tensors(layer, hidden, heads, kv_heads, head_dim, qk_norm=False)
        tensors.append(Tensor("ffn_norm", layer, 1, hidden))
        if layer in moe_layers:
            tensors.append(Tensor("ffn_gate_inp", layer, n_experts, hidden))
            tensors += mlp_tensors(layer, hidden, expert_intermediate, "_exps", n_experts)
            tensors += mlp_tensors(layer, hidden, expert_intermediate, "_shexp")
        else:
            tensors += mlp_tensors(layer, hidden, dense_intermediate)
        chunked = bool(uses_rope[layer]) and chunk > 0
        attention.append(
            LayerAttention(
                kind="sliding" if chunked else "full",
                kv_elements_per_token=2 * kv_heads * head_dim,
                window=chunk if chunked else 0,
                flops_per_pair=2 * heads * (head_dim + head_dim),
                query_heads=heads,
            )
        )
    tensors += output_head(vocab, hidden, tied)
    return decoder(str(cfg.get("model_type", "llama4_text")), tensors, attention, layers=layers, hidden=hidden,
                   vocab=vocab, tied=tied, max_context=config_int(cfg, "max_position_embeddings", default=0),
                   n_experts=n_experts, experts_per_token=top_k)

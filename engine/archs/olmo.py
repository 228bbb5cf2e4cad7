"""AI2 OLMo 2 (``olmo2``): a Llama-shaped transformer with norms after, not before, each sublayer.

Each block normalises the outputs of attention and of the SwiGLU MLP (``post_attention_norm``,
``post_ffw_norm``) and applies RMS norms to the whole query and key projections (one vector of
``num_attention_heads * head_dim`` and one of ``num_key_value_heads * head_dim``, not per head).
Tensor names and shapes follow llama.cpp (src/llama-arch.cpp LLM_ARCH_OLMO2, src/models/olmo2.cpp).
"""

from __future__ import annotations

from dataclasses import astuple

from ..arch import (
    Architecture,
    LayerAttention,
    Tensor,
    config_int,
    decoder,
    mlp_tensors,
    output_head,
    read_dims,
    register,
)


@register("olmo2")
def olmo2(cfg: dict) -> Architecture:
    layers, hidden, heads, kv_heads, head_dim, vocab, tied = astuple(read_dims(cfg))
    intermediate = config_int(cfg, "intermediate_size")
    q_dim, kv_dim = heads * head_dim, kv_heads * head_dim

    tensors = [Tensor("token_embd", -1, vocab, hidden)]
    for layer in range(layers):
        tensors += [
            Tensor("attn_q", layer, q_dim, hidden),
            Tensor("attn_k", layer, kv_dim, hidden),
            Tensor("attn_v", layer, kv_dim, hidden),
            Tensor("attn_output", layer, hidden, q_dim),
            Tensor("attn_q_norm", layer, 1, q_dim),
            Tensor("attn_k_norm", layer, 1, kv_dim),
            Tensor("post_attention_norm", layer, 1, hidden),
            *mlp_tensors(layer, hidden, intermediate),
            Tensor("post_ffw_norm", layer, 1, hidden),
        ]
    tensors += output_head(vocab, hidden, tied)
    full = LayerAttention(kind="full", kv_elements_per_token=2 * kv_dim, flops_per_pair=2 * heads * (head_dim + head_dim), query_heads=heads)
    return decoder("olmo2", tensors, (full,) * layers, layers=layers, hidden=hidden, vocab=vocab, tied=tied,
                   max_context=config_int(cfg, "max_position_embeddings", default=0))

"""IBM Granite 3.x (``granite``): a Llama-shaped transformer with scalar multipliers.

``embedding_multiplier``, ``attention_multiplier``, ``residual_multiplier`` and ``logits_scaling``
rescale activations and change no weight, so the tensors are Llama's (GQA attention, SwiGLU MLP;
the 8B ties its output head to the embedding). Tensor names follow llama.cpp
(src/llama-arch.cpp LLM_ARCH_GRANITE, src/models/granite.cpp).
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


@register("granite")
def granite(cfg: dict) -> Architecture:
    layers, hidden, heads, kv_heads, head_dim, vocab, tied = astuple(read_dims(cfg))
    intermediate = config_int(cfg, "intermediate_size")

    tensors = [Tensor("token_embd", -1, vocab, hidden)]
    for layer in range(layers):
        tensors += attention_tensors(layer, hidden, heads, kv_heads, head_dim, qk_norm=False)
        tensors.append(Tensor("ffn_norm", layer, 1, hidden))
        tensors += mlp_tensors(layer, hidden, intermediate)
    tensors += output_head(vocab, hidden, tied)
    full = LayerAttention(kind="full", kv_elements_per_token=2 * kv_heads * head_dim, flops_per_pair=2 * heads * (head_dim + head_dim), query_heads=heads)
    return decoder("granite", tensors, (full,) * layers, layers=layers, hidden=hidden, vocab=vocab, tied=tied,
                   max_context=config_int(cfg, "max_position_embeddings", default=0))

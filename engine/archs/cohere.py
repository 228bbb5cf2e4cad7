"""Cohere Command R / R+ and Aya (``cohere``), Command R7B and Command A (``cohere2``).

Parallel blocks: one LayerNorm (weights only) feeds both the attention and the SwiGLU MLP, whose
outputs are added to the residual together, so a block has no second norm. Embeddings are tied.
Command R+ normalises queries and keys per head (``use_qk_norm``, one weight per head and
dimension). ``cohere2`` interleaves sliding-window layers with global ones: ``layer_types`` when the
config lists them, else ``sliding_window_pattern - 1`` sliding layers then one global layer
(transformers Cohere2Config). Tensor names follow llama.cpp (LLM_ARCH_COMMAND_R, LLM_ARCH_COHERE2).
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
from .gemma import GLOBAL, SLIDING, layer_kinds


@register("cohere", "cohere2")
def cohere(cfg: dict) -> Architecture:
    model_type = str(cfg["model_type"])
    layers, hidden, heads, kv_heads, head_dim, vocab, tied = astuple(read_dims(cfg))
    tied = bool(cfg.get("tie_word_embeddings", True))
    intermediate = config_int(cfg, "intermediate_size")
    qk_norm = bool(cfg.get("use_qk_norm", False))
    if model_type == "cohere2":
        window = config_int(cfg, "sliding_window")
        kinds = layer_kinds(cfg, layers, config_int(cfg, "sliding_window_pattern", default=4), last_is_global=False)
    else:
        window, kinds = 0, [GLOBAL] * layers

    tensors = [Tensor("token_embd", -1, vocab, hidden)]
    attention = []
    for layer in range(layers):
        tensors += [
            Tensor("attn_norm", layer, 1, hidden),
            Tensor("attn_q", layer, heads * head_dim, hidden),
            Tensor("attn_k", layer, kv_heads * head_dim, hidden),
            Tensor("attn_v", layer, kv_heads * head_dim, hidden),
            Tensor("attn_output", layer, hidden, heads * head_dim),
        ]
        if qk_norm:
            tensors += [Tensor("attn_q_norm", layer, 1, heads * head_dim), Tensor("attn_k_norm", layer, 1, kv_heads * head_dim)]
        tensors += mlp_tensors(layer, hidden, intermediate)
        sliding = kinds[layer] == SLIDING
        attention.append(
            LayerAttention(
                kind="sliding" if sliding else "full",
                kv_elements_per_token=2 * kv_heads * head_dim,
                window=window if sliding else 0,
                flops_per_pair=2 * heads * (head_dim + head_dim),
                query_heads=heads,
            )
        )
    tensors += output_head(vocab, hidden, tied)
    return decoder(model_type, tensors, attention, layers=layers, hidden=hidden, vocab=vocab, tied=tied,
                   max_context=_context(cfg))


def _context(cfg: dict) -> int:
    """Command R v01 and R+ publish ``max_position_embeddings`` 8192 and the 131,072 tokens they were
    trained on as ``model_max_length`` (copies of their config.json: data/models/cohere.toml
    verified_from); llama.cpp's Command R converter reads model_max_length first, falling back to
    max_position_embeddings ("max_position_embeddings = 8192 in config.json but model was actually
    trained on 128k context length"). The engine does the same."""
    return config_int(cfg, "model_max_length", "max_position_embeddings", default=0)

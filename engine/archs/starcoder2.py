"""BigCode StarCoder2 (``starcoder2``) and Microsoft Phi-1.5 / Phi-2 (``phi``): attention and a plain
two-matrix GELU MLP (``c_fc``/``fc1`` up, ``c_proj``/``fc2`` down, no gate), LayerNorms and biases on
every projection. Phi runs attention and MLP in parallel off one LayerNorm, so it has no second norm
(2 x hidden weights per block fewer than listed here) and a biased output head.
Tensor names follow llama.cpp (src/llama-arch.cpp LLM_ARCH_STARCODER2, LLM_ARCH_PHI2).
"""

from __future__ import annotations

from dataclasses import astuple

from ..arch import Architecture, LayerAttention, Tensor, config_int, decoder, read_dims, register


@register("starcoder2", "phi")
def starcoder2(cfg: dict) -> Architecture:
    layers, hidden, heads, kv_heads, head_dim, vocab, tied = astuple(read_dims(cfg))
    intermediate = config_int(cfg, "intermediate_size")
    sliding = config_int(cfg, "sliding_window", default=0)
    max_context = config_int(cfg, "max_position_embeddings", default=0)
    window = sliding if 0 < sliding < max_context else 0
    q_dim, kv_dim = heads * head_dim, kv_heads * head_dim

    tensors = [Tensor("token_embd", -1, vocab, hidden)]
    for layer in range(layers):
        tensors += [
            Tensor("attn_norm", layer, 1, hidden),
            Tensor("attn_norm.bias", layer, 1, hidden),
            Tensor("attn_q", layer, q_dim, hidden),
            Tensor("attn_k", layer, kv_dim, hidden),
            Tensor("attn_v", layer, kv_dim, hidden),
            Tensor("attn_output", layer, hidden, q_dim),
            Tensor("attn_qkvo.bias", layer, 1, q_dim + 2 * kv_dim + hidden),
            Tensor("ffn_norm", layer, 1, hidden),
            Tensor("ffn_norm.bias", layer, 1, hidden),
            Tensor("ffn_up", layer, intermediate, hidden),
            Tensor("ffn_down", layer, hidden, intermediate),
            Tensor("ffn_up_down.bias", layer, 1, intermediate + hidden),
        ]
    tensors += [Tensor("output_norm", -1, 1, hidden), Tensor("output_norm.bias", -1, 1, hidden)]
    if not tied:
        tensors.append(Tensor("output", -1, vocab, hidden))
    layer_attention = LayerAttention(
        kind="sliding" if window else "full",
        kv_elements_per_token=2 * kv_dim,
        window=window,
        flops_per_pair=2 * heads * (head_dim + head_dim),
        query_heads=heads,
    )
    return decoder(str(cfg.get("model_type", "starcoder2")), tensors, (layer_attention,) * layers, layers=layers,
                   hidden=hidden, vocab=vocab, tied=tied, max_context=max_context)

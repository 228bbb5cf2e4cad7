"""TII Falcon 7B / 40B / 180B (``falcon``, the original RefinedWeb models; Falcon3 is Llama-shaped).

Parallel blocks: attention and a plain two-matrix GELU MLP (4 x hidden unless ``ffn_hidden_size``)
read the same LayerNorm output (the 40B/180B "new decoder architecture" gives each its own LayerNorm).
Falcon-7B uses multi-query attention (``multi_query``: one KV head); 40B and 180B have
``num_kv_heads`` = 8. No biases; the output head is tied to the embedding.
Tensor names follow llama.cpp (src/llama-arch.cpp LLM_ARCH_FALCON).
"""

from __future__ import annotations

from ..arch import Architecture, LayerAttention, Tensor, config_int, decoder, register
from ..errors import EngineInputError


@register("falcon")
def falcon(cfg: dict) -> Architecture:
    layers = config_int(cfg, "num_hidden_layers", "n_layer")
    hidden = config_int(cfg, "hidden_size")
    heads = config_int(cfg, "num_attention_heads", "n_head")
    vocab = config_int(cfg, "vocab_size")
    new_arch = bool(cfg.get("new_decoder_architecture", False))
    if new_arch:
        kv_heads = config_int(cfg, "num_kv_heads", default=heads)
    else:
        kv_heads = 1 if cfg.get("multi_query", True) else heads
    if not heads or hidden % heads or heads % kv_heads:
        raise EngineInputError("config.json: Falcon needs hidden_size divisible by num_attention_heads and heads by num_kv_heads", field="config")
    head_dim = hidden // heads
    ffn = config_int(cfg, "ffn_hidden_size", default=4 * hidden)
    tied = bool(cfg.get("tie_word_embeddings", True))

    tensors = [Tensor("token_embd", -1, vocab, hidden)]
    for layer in range(layers):
        norms = 2 if new_arch else 1
        tensors += [Tensor("attn_norm", layer, 1, 2 * hidden * norms),
                    Tensor("attn_qkv", layer, (heads + 2 * kv_heads) * head_dim, hidden),
                    Tensor("attn_output", layer, hidden, heads * head_dim),
                    Tensor("ffn_up", layer, ffn, hidden),
                    Tensor("ffn_down", layer, hidden, ffn)]
    tensors.append(Tensor("output_norm", -1, 1, 2 * hidden))
    if not tied:
        tensors.append(Tensor("output", -1, vocab, hidden))
    full = LayerAttention(kind="full", kv_elements_per_token=2 * kv_heads * head_dim,
                          flops_per_pair=2 * heads * (head_dim + head_dim), query_heads=heads)
    return decoder("falcon", tensors, (full,) * layers, layers=layers, hidden=hidden, vocab=vocab, tied=tied,
                   max_context=config_int(cfg, "max_position_embeddings", default=2048))

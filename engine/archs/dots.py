"""rednote-hilab dots.llm1 (``dots1``) and the first DeepSeekMoE 16B (``deepseek``): DeepSeek's mixture of experts (dense first
``first_k_dense_replace`` blocks, then ``n_routed_experts`` routed experts, top
``num_experts_per_tok``, plus ``n_shared_experts`` shared ones, sigmoid routing with a learned
bias on dots.llm1) under ordinary multi-head attention instead of MLA; dots.llm1 adds per-head q/k RMS
norms, DeepSeekMoE 16B routes by softmax without a bias.
Tensor names follow llama.cpp (src/llama-arch.cpp LLM_ARCH_DOTS1).
"""

from __future__ import annotations

from dataclasses import astuple

from ..arch import Architecture, LayerAttention, attention_tensors, config_int, decoder, read_dims, register
from .deepseek import DeepSeekMoE, model_tensors


@register("dots1", "deepseek")
def dots1(cfg: dict) -> Architecture:
    layers, hidden, heads, kv_heads, head_dim, vocab, tied = astuple(read_dims(cfg))
    dots = cfg.get("model_type") == "dots1"
    moe = DeepSeekMoE.from_config({**cfg, "topk_method": "noaux_tc"} if dots else cfg, layers)
    head, tail = model_tensors(vocab, hidden, tied)
    tensors = list(head)
    for layer in range(layers):
        tensors += attention_tensors(layer, hidden, heads, kv_heads, head_dim, qk_norm=dots) + moe.tensors(layer, hidden)
    full = LayerAttention(kind="full", kv_elements_per_token=2 * kv_heads * head_dim,
                          flops_per_pair=2 * heads * (head_dim + head_dim), query_heads=heads)
    return decoder(str(cfg["model_type"]), tuple(tensors + tail), (full,) * layers, layers=layers, hidden=hidden,
                   vocab=vocab, tied=tied, max_context=config_int(cfg, "max_position_embeddings", default=0),
                   n_experts=moe.n_experts, experts_per_token=moe.top_k)

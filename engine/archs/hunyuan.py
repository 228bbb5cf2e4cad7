"""Tencent Hunyuan-A13B (``hunyuan_v1_moe``): GQA attention with per-head q/k RMS norms
(``use_qk_norm``), and in every block ``num_experts`` routed experts (top ``moe_topk``) plus
``num_shared_expert`` always-on shared experts of ``moe_intermediate_size`` each.

The config gives ``moe_topk``, ``num_shared_expert`` and ``moe_intermediate_size`` either as one
number or as one value per layer (Hunyuan-A13B writes lists of 32 equal values); both are read.
Tensor names follow llama.cpp (src/llama-arch.cpp LLM_ARCH_HUNYUAN_MOE).
"""

from __future__ import annotations

from dataclasses import astuple

from ..arch import (
    Architecture,
    LayerAttention,
    Tensor,
    attention_tensors,
    decoder,
    mlp_tensors,
    output_head,
    read_dims,
    register,
)
from ..errors import EngineInputError


def per_layer(cfg: dict, key: str, layers: int, default: int) -> list[int]:
    """``cfg[key]`` as one non-negative int per layer (a single number applies to every layer)."""
    value = cfg.get(key, default)
    values = value if isinstance(value, list) else [value] * layers
    if len(values) != layers or not all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in values):
        raise EngineInputError(f"config.json: {key} must be a non-negative integer or a list of {layers} of them", field="config")
    return values


@register("hunyuan_v1_moe")
def hunyuan_moe(cfg: dict) -> Architecture:
    layers, hidden, heads, kv_heads, head_dim, vocab, tied = astuple(read_dims(cfg))
    n_experts = per_layer(cfg, "num_experts", 1, 0)[0]
    top_k = per_layer(cfg, "moe_topk", layers, 1)
    shared = per_layer(cfg, "num_shared_expert", layers, 0)
    expert_size = per_layer(cfg, "moe_intermediate_size", layers, cfg.get("intermediate_size", 0))
    if not n_experts or not all(0 < k <= n_experts for k in top_k) or not all(expert_size):
        raise EngineInputError("config.json: Hunyuan MoE needs num_experts, moe_topk (1..num_experts) and moe_intermediate_size", field="config")
    qk_norm = bool(cfg.get("use_qk_norm", False))

    tensors = [Tensor("token_embd", -1, vocab, hidden)]
    for layer in range(layers):
        tensors += attention_tensors(layer, hidden, heads, kv_heads, head_dim, qk_norm=qk_norm)
        tensors.append(Tensor("ffn_norm", layer, 1, hidden))
        tensors.append(Tensor("ffn_gate_inp", layer, n_experts, hidden))
        tensors += mlp_tensors(layer, hidden, expert_size[layer], "_exps", n_experts)
        if shared[layer]:
            tensors += mlp_tensors(layer, hidden, shared[layer] * expert_size[layer], "_shexp")
    tensors += output_head(vocab, hidden, tied)
    full = LayerAttention(kind="full", kv_elements_per_token=2 * kv_heads * head_dim,
                          flops_per_pair=2 * heads * (head_dim + head_dim), query_heads=heads)
    return decoder("hunyuan_v1_moe", tensors, (full,) * layers, layers=layers, hidden=hidden, vocab=vocab, tied=tied,
                   max_context=int(cfg.get("max_position_embeddings") or 0), n_experts=n_experts,
                   experts_per_token=max(top_k))

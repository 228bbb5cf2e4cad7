"""Zhipu / Z.ai GLM-4.5, GLM-4.5-Air, GLM-4.6 and GLM-4.7 (``glm4_moe``).

GQA attention with biased q/k/v projections (``attention_bias``) and, on GLM-4.5/4.6/4.7, per-head
q/k RMS norms (``use_qk_norm``); the first ``first_k_dense_replace`` blocks have a dense MLP, the
others ``n_routed_experts`` routed experts (sigmoid routing with a learned bias, top
``num_experts_per_tok``) plus ``n_shared_experts`` shared ones. ``num_nextn_predict_layers``
multi-token-prediction blocks follow the main stack and share its embedding and head.
GLM-4.7-Flash is a different design (MLA, ``glm4_moe_lite``): see deepseek.py.
Tensor names and shapes follow llama.cpp (src/llama-arch.cpp LLM_ARCH_GLM4_MOE,
src/models/glm4-moe.cpp).
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
    read_dims,
    register,
)
from .deepseek import DeepSeekMoE, as_mtp, model_tensors, nextn_tensors


def biased_attention(layer: int, hidden: int, heads: int, kv_heads: int, head_dim: int, *, bias: bool, qk_norm: bool) -> list[Tensor]:
    tensors = attention_tensors(layer, hidden, heads, kv_heads, head_dim, qk_norm=qk_norm)
    if bias:
        tensors += [
            Tensor("attn_q.bias", layer, 1, heads * head_dim),
            Tensor("attn_k.bias", layer, 1, kv_heads * head_dim),
            Tensor("attn_v.bias", layer, 1, kv_heads * head_dim),
        ]
    return tensors


@register("glm4_moe")
def glm4_moe(cfg: dict) -> Architecture:
    layers, hidden, heads, kv_heads, head_dim, vocab, tied = astuple(read_dims(cfg))
    # Glm4MoeConfig routes with noaux_tc, always with the correction bias.
    moe = DeepSeekMoE.from_config({**cfg, "topk_method": "noaux_tc"}, layers)
    bias = bool(cfg.get("attention_bias", False))
    qk_norm = bool(cfg.get("use_qk_norm", False))

    def block(layer: int) -> list[Tensor]:
        return biased_attention(layer, hidden, heads, kv_heads, head_dim, bias=bias, qk_norm=qk_norm) + moe.tensors(layer, hidden)

    head, tail = model_tensors(vocab, hidden, tied)
    tensors = list(head)
    for layer in range(layers):
        tensors += block(layer)
    for layer in range(layers, layers + config_int(cfg, "num_nextn_predict_layers", default=0)):
        tensors += as_mtp(block(layer)) + nextn_tensors(layer, hidden, vocab, own_embeddings=False)
    full = LayerAttention(
        kind="full",
        kv_elements_per_token=2 * kv_heads * head_dim,
        flops_per_pair=2 * heads * (head_dim + head_dim),
        query_heads=heads,
    )
    return decoder("glm4_moe", tuple(tensors + tail), (full,) * layers, layers=layers, hidden=hidden, vocab=vocab,
                   tied=tied, max_context=config_int(cfg, "max_position_embeddings", default=0),
                   n_experts=moe.n_experts, experts_per_token=moe.top_k)


@register("glm4")
def glm4(cfg: dict) -> Architecture:
    """GLM-4-0414 and GLM-Z1 (dense ``glm4``): GQA attention with biased q/k/v, a SwiGLU MLP whose gate
    and up projections are stored fused (same weights as separate ones), and extra norms after
    attention and after the MLP (llama.cpp LLM_ARCH_GLM4: attn_post_norm, ffn_post_norm)."""
    layers, hidden, heads, kv_heads, head_dim, vocab, tied = astuple(read_dims(cfg))
    intermediate = config_int(cfg, "intermediate_size")
    bias = bool(cfg.get("attention_bias", True))
    head, tail = model_tensors(vocab, hidden, tied)
    tensors = list(head)
    for layer in range(layers):
        tensors += biased_attention(layer, hidden, heads, kv_heads, head_dim, bias=bias, qk_norm=False)
        tensors += [
            Tensor("attn_post_norm", layer, 1, hidden),
            Tensor("ffn_norm", layer, 1, hidden),
            *mlp_tensors(layer, hidden, intermediate),
            Tensor("ffn_post_norm", layer, 1, hidden),
        ]
    full = LayerAttention(
        kind="full",
        kv_elements_per_token=2 * kv_heads * head_dim,
        flops_per_pair=2 * heads * (head_dim + head_dim),
        query_heads=heads,
    )
    return decoder("glm4", tuple(tensors + tail), (full,) * layers, layers=layers, hidden=hidden, vocab=vocab,
                   tied=tied, max_context=config_int(cfg, "max_position_embeddings", default=0))

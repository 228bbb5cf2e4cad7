"""Arcee Trinity (``afmoe``): Trinity Nano, Mini and Large.

GQA attention with per-head q/k RMS norms and an output gate (a sigmoid of ``gate_proj`` of the
block input, one value per query channel, multiplies the attention output), norms after the
attention and after the MLP; three of every four layers attend over a ``sliding_window`` of tokens
and every ``global_attn_every_n_layers``-th over the whole context (``layer_types`` spells it out);
the first ``num_dense_layers`` blocks have a dense SwiGLU MLP, the others ``num_experts`` routed
experts (sigmoid scores with a learned bias, top ``num_experts_per_tok``) plus
``num_shared_experts`` shared ones. Tensors follow llama.cpp (LLM_ARCH_AFMOE: "Pattern: 3 sliding -
1 full (global_attn_every_n_layers = 4)"; post-norms + QK-norm).
"""

from __future__ import annotations

from dataclasses import astuple

from ..arch import Architecture, Tensor, attention_tensors, config_int, decoder, gqa_attention, read_dims, register
from ..errors import EngineInputError
from .deepseek import DeepSeekMoE, model_tensors


def layer_kinds(cfg: dict, layers: int) -> list[str]:
    """``full_attention`` / ``sliding_attention`` per layer: the config's ``layer_types``, else
    every ``global_attn_every_n_layers``-th layer full (1-based, as the configs write them out)."""
    kinds = cfg.get("layer_types")
    if kinds is None:
        every = config_int(cfg, "global_attn_every_n_layers", default=1) or 1
        kinds = ["full_attention" if (i + 1) % every == 0 else "sliding_attention" for i in range(layers)]
    if len(kinds) != layers or set(kinds) - {"full_attention", "sliding_attention"}:
        raise EngineInputError("config.json: layer_types must name full_attention or sliding_attention for every layer", field="config")
    return list(kinds)


@register("afmoe")
def afmoe(cfg: dict) -> Architecture:
    layers, hidden, heads, kv_heads, head_dim, vocab, tied = astuple(read_dims(cfg))
    moe = DeepSeekMoE.from_config({
        "intermediate_size": cfg.get("intermediate_size"),
        "first_k_dense_replace": cfg.get("num_dense_layers", 0),
        "n_routed_experts": cfg.get("num_experts"),
        "num_experts_per_tok": cfg.get("num_experts_per_tok"),
        "moe_intermediate_size": cfg.get("moe_intermediate_size"),
        "n_shared_experts": cfg.get("num_shared_experts", 0),
        "topk_method": "noaux_tc",  # sigmoid scores plus the learned expert_bias
    }, layers)
    window = config_int(cfg, "sliding_window", default=0)
    kinds = layer_kinds(cfg, layers)
    head, tail = model_tensors(vocab, hidden, tied)
    tensors = list(head)
    for layer in range(layers):
        tensors += attention_tensors(layer, hidden, heads, kv_heads, head_dim, qk_norm=True)
        tensors += [
            Tensor("attn_gate", layer, heads * head_dim, hidden),
            Tensor("attn_post_norm", layer, 1, hidden),
            *moe.tensors(layer, hidden),
            Tensor("ffn_post_norm", layer, 1, hidden),
        ]
    attention = [gqa_attention(heads, kv_heads, head_dim, window if kind == "sliding_attention" else 0) for kind in kinds]
    return decoder("afmoe", tuple(tensors + tail), attention, layers=layers, hidden=hidden, vocab=vocab, tied=tied,
                   max_context=config_int(cfg, "max_position_embeddings", default=0),
                   n_experts=moe.n_experts, experts_per_token=moe.top_k)

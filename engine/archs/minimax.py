"""MiniMax-M2 / M2.1 / M2.5 / M2.7 (``minimax_m2``): full-attention MoE transformer.

GQA attention whose q/k RMS norms span all heads at once (``qk_norm_type: per_layer``: one
``num_attention_heads * head_dim`` vector for q, one ``num_key_value_heads * head_dim`` for k) and
partial RoPE; every block routes to ``num_experts_per_tok`` of ``num_local_experts`` experts of
``intermediate_size`` (sigmoid scores plus a learned bias), with no shared expert. The config
describes ``num_mtp_modules`` multi-token-prediction modules; llama.cpp loads none and the GGUF
conversions carry none, so they are not listed. Tensor names and shapes follow llama.cpp
(src/models/minimax-m2.cpp).
"""

from __future__ import annotations

from ..arch import Architecture, LayerAttention, Tensor, config_int, decoder, mlp_tensors, output_head, register
from ..errors import EngineInputError


@register("minimax_m2")
def minimax_m2(cfg: dict) -> Architecture:
    layers = config_int(cfg, "num_hidden_layers")
    hidden = config_int(cfg, "hidden_size")
    heads = config_int(cfg, "num_attention_heads")
    kv_heads = config_int(cfg, "num_key_value_heads")
    head_dim = config_int(cfg, "head_dim")
    vocab = config_int(cfg, "vocab_size")
    expert_intermediate = config_int(cfg, "intermediate_size")
    n_experts = config_int(cfg, "num_local_experts")
    top_k = config_int(cfg, "num_experts_per_tok")
    tied = bool(cfg.get("tie_word_embeddings", False))
    if heads == 0 or kv_heads == 0 or heads % kv_heads:
        raise EngineInputError("config.json: num_attention_heads must be a multiple of num_key_value_heads", field="config")
    if not 0 < top_k <= n_experts:
        raise EngineInputError(f"config.json: num_experts_per_tok must be 1..{n_experts}", field="config")
    q_dim, kv_dim = heads * head_dim, kv_heads * head_dim
    qk_norm = bool(cfg.get("use_qk_norm", True))

    tensors = [Tensor("token_embd", -1, vocab, hidden)]
    for layer in range(layers):
        tensors += [
            Tensor("attn_norm", layer, 1, hidden),
            Tensor("attn_q", layer, q_dim, hidden),
            Tensor("attn_k", layer, kv_dim, hidden),
            Tensor("attn_v", layer, kv_dim, hidden),
            Tensor("attn_output", layer, hidden, q_dim),
        ]
        if qk_norm:
            tensors += [Tensor("attn_q_norm", layer, 1, q_dim), Tensor("attn_k_norm", layer, 1, kv_dim)]
        tensors += [
            Tensor("ffn_norm", layer, 1, hidden),
            Tensor("ffn_gate_inp", layer, n_experts, hidden),
            Tensor("exp_probs_b", layer, 1, n_experts),
            *mlp_tensors(layer, hidden, expert_intermediate, "_exps", n_experts),
        ]
    tensors += output_head(vocab, hidden, tied)
    full = LayerAttention(
        kind="full",
        kv_elements_per_token=2 * kv_dim,
        flops_per_pair=2 * heads * (head_dim + head_dim),
        query_heads=heads,
    )
    return decoder("minimax_m2", tensors, (full,) * layers, layers=layers, hidden=hidden, vocab=vocab, tied=tied,
                   max_context=config_int(cfg, "max_position_embeddings", default=0), n_experts=n_experts,
                   experts_per_token=top_k)

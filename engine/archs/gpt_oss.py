"""OpenAI gpt-oss (20b, 120b): MoE transformer with alternating sliding and full attention.

Every block has biased q/k/v/o projections, one learned attention sink per head, and a routed-expert
MLP (top-4, SwiGLU with biases, no shared expert). ``layer_types`` alternates
``sliding_attention`` (a 128-token window, ``sliding_window``) and ``full_attention``. The experts
ship as MXFP4; here they are plain tensors (the weight format is engine/quant's business).
Tensor names and shapes follow llama.cpp (src/llama-arch.cpp, LLM_ARCH_OPENAI_MOE;
src/models/openai-moe-iswa.cpp).
"""

from __future__ import annotations

from ..arch import Architecture, LayerAttention, Tensor, config_int, decoder, mlp_tensors, output_head, register
from ..errors import EngineInputError

SLIDING, FULL = "sliding_attention", "full_attention"


def bias(name: str, layer: int, length: int, experts: int = 1) -> Tensor:
    """A bias vector (of each of ``experts`` experts)."""
    return Tensor(f"{name}.bias", layer, 1, length, experts)


@register("gpt_oss")
def gpt_oss(cfg: dict) -> Architecture:
    layers = config_int(cfg, "num_hidden_layers")
    hidden = config_int(cfg, "hidden_size")
    heads = config_int(cfg, "num_attention_heads")
    kv_heads = config_int(cfg, "num_key_value_heads")
    head_dim = config_int(cfg, "head_dim")
    vocab = config_int(cfg, "vocab_size")
    expert_intermediate = config_int(cfg, "intermediate_size")
    n_experts = config_int(cfg, "num_local_experts")
    top_k = config_int(cfg, "num_experts_per_tok", "experts_per_token")
    window = config_int(cfg, "sliding_window")
    tied = bool(cfg.get("tie_word_embeddings", False))
    if heads == 0 or kv_heads == 0 or heads % kv_heads:
        raise EngineInputError("config.json: num_attention_heads must be a multiple of num_key_value_heads", field="config")
    if not 0 < top_k <= n_experts:
        raise EngineInputError(f"config.json: num_experts_per_tok must be 1..{n_experts}", field="config")
    # transformers GptOssConfig: sliding on even layers, full on odd ones when layer_types is absent.
    kinds = cfg.get("layer_types") or [SLIDING if layer % 2 == 0 else FULL for layer in range(layers)]
    if len(kinds) != layers or set(kinds) - {SLIDING, FULL}:
        raise EngineInputError(f"config.json: layer_types must list {layers} of {SLIDING}/{FULL}", field="config")

    q_dim, kv_dim = heads * head_dim, kv_heads * head_dim
    tensors = [Tensor("token_embd", -1, vocab, hidden)]
    attention = []
    for layer, kind in enumerate(kinds):
        tensors += [
            Tensor("attn_norm", layer, 1, hidden),
            Tensor("attn_q", layer, q_dim, hidden), bias("attn_q", layer, q_dim),
            Tensor("attn_k", layer, kv_dim, hidden), bias("attn_k", layer, kv_dim),
            Tensor("attn_v", layer, kv_dim, hidden), bias("attn_v", layer, kv_dim),
            Tensor("attn_output", layer, hidden, q_dim), bias("attn_output", layer, hidden),
            Tensor("attn_sinks", layer, 1, heads),
            Tensor("post_attention_norm", layer, 1, hidden),
            Tensor("ffn_gate_inp", layer, n_experts, hidden), bias("ffn_gate_inp", layer, n_experts),
            *mlp_tensors(layer, hidden, expert_intermediate, "_exps", n_experts),
            bias("ffn_gate_exps", layer, expert_intermediate, n_experts),
            bias("ffn_up_exps", layer, expert_intermediate, n_experts),
            bias("ffn_down_exps", layer, hidden, n_experts),
        ]
        sliding = kind == SLIDING
        attention.append(
            LayerAttention(
                kind="sliding" if sliding else "full",
                kv_elements_per_token=2 * kv_dim,
                window=window if sliding else 0,
                flops_per_pair=2 * heads * (head_dim + head_dim),
                query_heads=heads,
            )
        )
    tensors += output_head(vocab, hidden, tied)
    return decoder("gpt_oss", tensors, attention, layers=layers, hidden=hidden, vocab=vocab, tied=tied,
                   max_context=config_int(cfg, "max_position_embeddings", default=0), n_experts=n_experts,
                   experts_per_token=top_k)

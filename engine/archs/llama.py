"""Llama-shaped transformers: Llama 1-3, Mistral, Mixtral, Qwen2/2.5/3 and their MoE variants, Phi-3/4.

GQA attention (q, k, v, o), SwiGLU MLP (gate, up, down) or a routed-expert MLP with optional
shared experts; Qwen3 adds per-head q/k RMS norms. SmolLM3 and Ministral 3 are Llama-shaped (their
NoPE layers and RoPE scaling change no weight). InternLM2/2.5/3 are Llama-shaped too (InternLM2
stores q/k/v as one ``wqkv`` matrix: the same weights), and so are Gemma 1 (GeGLU is a gated MLP of the
same three matrices), the language decoders of Qwen2-VL / Qwen2.5-VL (their config's top-level keys;
the vision encoder is not read), Phi-3.5-MoE (``phimoe``: 16 experts of ``intermediate_size``) and
OLMoE (``olmoe``: 64 experts of ``intermediate_size``; its q/k norms span whole projections, a few
thousand weights this reader leaves out). StableLM 2 (LayerNorm biases), MiniCPM (scalar embedding and
residual scales) and MobileLLM (embedding sharing, deep-and-thin) change no weight matrix; nor do Baichuan's packed W_pack
q/k/v, Orion's LayerNorms, Seed-OSS's q/k/v biases or ERNIE 4.5's dense models. Phi-3/Phi-4 store q/k/v and gate/up fused, as
llama.cpp's ``attn_qkv`` and double-height ``ffn_up`` (src/llama-model.cpp, LLM_ARCH_PHI3).
"""

from __future__ import annotations

from dataclasses import astuple

from ..arch import (
    Architecture,
    Tensor,
    attention_tensors,
    config_int,
    decoder,
    gqa_attention,
    mlp_tensors,
    output_head,
    read_dims,
    register,
)
from ..errors import EngineInputError


@register("llama", "mistral", "ministral3", "mixtral", "qwen2", "qwen2_moe", "qwen3", "qwen3_moe", "smollm3", "internlm2", "internlm3",
          "gemma", "qwen2_vl", "qwen2_5_vl", "phimoe", "olmoe", "stablelm", "minicpm", "mobilellm",
          "baichuan", "orion", "seed_oss", "ernie4_5", "exaone")
def llama_like(cfg: dict) -> Architecture:
    """Llama, Mistral, Qwen2/3 and their MoE variants (Mixtral, Qwen2/3-MoE)."""
    model_type = str(cfg.get("model_type", "llama"))
    layers, hidden, heads, kv_heads, head_dim, vocab, tied = astuple(read_dims(cfg))
    intermediate = config_int(cfg, "intermediate_size", default=0)
    n_experts = config_int(cfg, "num_experts", "num_local_experts", "n_routed_experts", default=0)
    top_k = config_int(cfg, "num_experts_per_tok", default=0) if n_experts else 0
    moe_intermediate = config_int(cfg, "moe_intermediate_size", default=intermediate) if n_experts else 0
    shared_intermediate = config_int(cfg, "shared_expert_intermediate_size", default=0) if n_experts else 0
    sliding = config_int(cfg, "sliding_window", default=0) if cfg.get("use_sliding_window", model_type == "mistral") else 0
    max_context = config_int(cfg, "max_position_embeddings", default=0)
    qk_norm = model_type.startswith("qwen3")
    if n_experts and not (0 < top_k <= n_experts):
        raise EngineInputError(f"config.json: num_experts_per_tok must be 1..{n_experts}", field="config")

    tensors = [Tensor("token_embd", -1, vocab, hidden)]
    attention = []
    for layer in range(layers):
        tensors += attention_tensors(layer, hidden, heads, kv_heads, head_dim, qk_norm=qk_norm)
        tensors.append(Tensor("ffn_norm", layer, 1, hidden))
        if n_experts:
            tensors.append(Tensor("ffn_gate_inp", layer, n_experts, hidden))
            tensors += mlp_tensors(layer, hidden, moe_intermediate, "_exps", n_experts)
            if shared_intermediate:
                tensors.append(Tensor("ffn_gate_inp_shexp", layer, 1, hidden))
                tensors += mlp_tensors(layer, hidden, shared_intermediate, "_shexp")
        else:
            if not intermediate:
                raise EngineInputError("config.json: missing intermediate_size", field="config")
            tensors += mlp_tensors(layer, hidden, intermediate)
        attention.append(
            gqa_attention(heads, kv_heads, head_dim, sliding)
        )
    tensors += output_head(vocab, hidden, tied)
    return decoder(model_type, tensors, attention, layers=layers, hidden=hidden, vocab=vocab, tied=tied,
                   max_context=max_context, n_experts=n_experts, experts_per_token=top_k)


@register("phi3")
def phi3(cfg: dict) -> Architecture:
    """Phi-3 / Phi-4: fused qkv projection and fused gate+up projection."""
    layers, hidden, heads, kv_heads, head_dim, vocab, tied = astuple(read_dims(cfg))
    intermediate = config_int(cfg, "intermediate_size")
    sliding = config_int(cfg, "sliding_window", default=0)
    max_context = config_int(cfg, "max_position_embeddings", default=0)
    # A window no shorter than the context is no window at all.
    window = sliding if 0 < sliding < max_context else 0

    tensors = [Tensor("token_embd", -1, vocab, hidden)]
    attention = []
    for layer in range(layers):
        tensors += [
            Tensor("attn_norm", layer, 1, hidden),
            Tensor("attn_qkv", layer, (heads + 2 * kv_heads) * head_dim, hidden),
            Tensor("attn_output", layer, hidden, heads * head_dim),
            Tensor("ffn_norm", layer, 1, hidden),
            Tensor("ffn_up", layer, 2 * intermediate, hidden),
            Tensor("ffn_down", layer, hidden, intermediate),
        ]
        attention.append(
            gqa_attention(heads, kv_heads, head_dim, window)
        )
    tensors += output_head(vocab, hidden, tied)
    return decoder("phi3", tensors, attention, layers=layers, hidden=hidden, vocab=vocab, tied=tied,
                   max_context=max_context)

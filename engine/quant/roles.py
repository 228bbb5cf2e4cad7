"""Tensor roles by GGUF name (engine/arch.py): which tensors are embeddings, routers, attention,
shared experts, or not the weights of a linear layer at all. The recipes choose types by role."""

from __future__ import annotations

from ..arch import Architecture, Tensor

EMBEDDINGS = frozenset({"token_embd", "per_layer_token_embd"})
ROUTERS = frozenset({"ffn_gate_inp", "ffn_gate_inp_shexp"})
#: Tensors that are not matrix weights of a Linear layer (convolutions, SSM parameters).
NON_LINEAR = frozenset({"ssm_conv1d", "ssm_a", "ssm_d", "ssm_dt", "attn_sinks"})
#: Low-rank gate projections of gated-DeltaNet layers that Ollama's Qwen3.5 import keeps in BF16.
LINEAR_ATTENTION_GATES = frozenset({"ssm_alpha", "ssm_beta", "ssm_ba"})


def is_vector(t: Tensor) -> bool:
    """A 1-D tensor (norm, bias, per-head scalar): ggml_n_dims() == 1."""
    return t.rows == 1 and t.experts == 1


def is_bias(t: Tensor) -> bool:
    return t.name.endswith(".bias")


def is_matrix_weight(t: Tensor) -> bool:
    """A 2-D (or merged-expert 3-D) weight of a linear or embedding layer."""
    base = t.name.rsplit(".", 1)[-1] if "." in t.name else t.name
    return not (is_vector(t) or is_bias(t) or "norm" in base or t.name in NON_LINEAR)


def is_attention(t: Tensor) -> bool:
    """Attention and linear-attention/SSM projections (the tensors Unsloth keeps at more bits)."""
    return (t.name.startswith("attn_") or t.name.startswith("ssm_")) and is_matrix_weight(t)


def is_shared_expert(t: Tensor) -> bool:
    return t.name.endswith("_shexp") and is_matrix_weight(t)


def has_linear_attention(arch: Architecture) -> bool:
    """Some blocks use linear attention (gated DeltaNet: Qwen3-Next, Qwen3.5/3.6) instead of softmax."""
    return any(layer.kind == "linear" for layer in arch.attention)


def is_attention_or_shared(t: Tensor) -> bool:
    return is_attention(t) or is_shared_expert(t)


def is_embedding_or_head(t: Tensor) -> bool:
    return t.name in ("token_embd", "output")

"""TII Falcon-H1 (``falcon_h1``): 0.5B, 1.5B, 1.5B-Deep, 3B, 7B and 34B.

Every block runs GQA attention and a Mamba-2 mixer side by side on the same normed input and sums
them ("each block integrates both State Space Models (SSMs) and Attention Mechanisms, with all
channels passing through both", https://github.com/tiiuae/Falcon-H1), then a SwiGLU MLP. So every
layer keeps a KV cache that grows with the context and a constant Mamba-2 state: one
LayerAttention of kind ``full`` carrying the state too. The Mamba mixer has ``mamba_n_heads``
heads of ``mamba_d_head`` channels (``mamba_d_ssm`` = their product), ``mamba_n_groups`` B/C
groups of ``mamba_d_state``, a ``mamba_d_conv`` convolution. Tensors follow llama.cpp
(LLM_ARCH_FALCON_H1: llm_build_falcon_h1 builds on the Mamba base with a hybrid memory).
The fixed per-layer cost of a recurrent kernel (decode's t_recurrent_layer_s) counts layers of
kind ssm/linear only, so it is not charged here.
"""

from __future__ import annotations

from dataclasses import astuple, replace

from ..arch import Architecture, Tensor, attention_tensors, config_int, decoder, gqa_attention, mlp_tensors, output_head, read_dims, register
from ..errors import EngineInputError
from .nemotron import mamba2_from_config


@register("falcon_h1")
def falcon_h1(cfg: dict) -> Architecture:
    layers, hidden, heads, kv_heads, head_dim, vocab, tied = astuple(read_dims(cfg))
    intermediate = config_int(cfg, "intermediate_size")
    mamba = mamba2_from_config(cfg, hidden)
    d_ssm = config_int(cfg, "mamba_d_ssm", default=mamba.inner)
    if d_ssm != mamba.inner:
        raise EngineInputError(f"config.json: mamba_d_ssm ({d_ssm}) must be mamba_n_heads x mamba_d_head ({mamba.inner})", field="config")
    tensors = [Tensor("token_embd", -1, vocab, hidden)]
    for layer in range(layers):
        tensors += attention_tensors(layer, hidden, heads, kv_heads, head_dim, qk_norm=False)
        tensors += mamba.tensors(layer, hidden)
        tensors += [Tensor("ffn_norm", layer, 1, hidden), *mlp_tensors(layer, hidden, intermediate)]
    tensors += output_head(vocab, hidden, tied)
    both = replace(gqa_attention(heads, kv_heads, head_dim), state_elements=mamba.state_elements)
    return decoder("falcon_h1", tensors, (both,) * layers, layers=layers, hidden=hidden, vocab=vocab, tied=tied,
                   max_context=config_int(cfg, "max_position_embeddings", default=0))

"""Qwen hybrids with Gated DeltaNet linear attention: Qwen3-Next, Qwen3.5 and Qwen3.6 (dense and MoE).

Three of every four blocks are Gated DeltaNet layers (``linear_attention``): a fused q/k/v projection
feeding a short causal convolution, a delta-rule recurrence whose state does not grow with context,
a gate ``z`` and an output projection. Every fourth block is gated full attention: ``q_proj`` is
twice as wide (query and an output gate per head) and q/k get per-head RMS norms. The layout comes
from ``layer_types`` or, when absent, ``full_attention_interval``.

Tensor names and shapes follow llama.cpp (src/models/qwen35.cpp, src/models/qwen3next.cpp and the
LLM_ARCH_QWEN3NEXT table of src/llama-arch.cpp): Qwen3.5 stores ``attn_qkv`` + ``attn_gate`` and
separate ``ssm_beta`` / ``ssm_alpha``; Qwen3-Next the fused ``ssm_in`` (q, k, v, z) and ``ssm_ba``.
``mtp_num_hidden_layers`` extra blocks (multi-token prediction) are stored but unused by decoding.
"""

from __future__ import annotations

from dataclasses import astuple, dataclass

from ..arch import (
    Architecture,
    LayerAttention,
    Tensor,
    config_int,
    decoder,
    mlp_tensors,
    output_head,
    read_dims,
    register,
)
from ..errors import EngineInputError

#: Qwen3-Next / Qwen3.5 put full attention on every 4th block when the config names no layout
#: (transformers Qwen3NextConfig / Qwen3_5TextConfig default ``full_attention_interval=4``).
DEFAULT_FULL_ATTENTION_INTERVAL = 4


@dataclass(frozen=True)
class DeltaNetShape:
    """Head layout of a Gated DeltaNet layer (the ``linear_*`` keys of config.json)."""

    key_heads: int
    value_heads: int
    key_head_dim: int
    value_head_dim: int
    conv_kernel: int

    @property
    def key_dim(self) -> int:
        return self.key_heads * self.key_head_dim

    @property
    def value_dim(self) -> int:
        return self.value_heads * self.value_head_dim

    @property
    def conv_channels(self) -> int:
        """Channels through the causal convolution: q, k and v."""
        return 2 * self.key_dim + self.value_dim

    @property
    def state_elements(self) -> int:
        """Recurrent state per sequence: one key x value matrix per value head, plus the
        convolution's last ``kernel - 1`` inputs. Constant in context length."""
        recurrent = self.value_heads * self.key_head_dim * self.value_head_dim
        return recurrent + (self.conv_kernel - 1) * self.conv_channels


def layer_is_full_attention(cfg: dict, layers: int) -> list[bool]:
    layer_types = cfg.get("layer_types")
    if layer_types is not None:
        if not isinstance(layer_types, list) or len(layer_types) != layers:
            raise EngineInputError(f"config.json: layer_types must list {layers} layer types", field="config")
        unknown = sorted(set(layer_types) - {"full_attention", "linear_attention"})
        if unknown:
            raise EngineInputError(f"config.json: unknown layer_types {', '.join(map(str, unknown))}", field="config")
        return [kind == "full_attention" for kind in layer_types]
    interval = config_int(cfg, "full_attention_interval", default=DEFAULT_FULL_ATTENTION_INTERVAL)
    if interval == 0:
        raise EngineInputError("config.json: full_attention_interval must be positive", field="config")
    return [(layer + 1) % interval == 0 for layer in range(layers)]


def gated_attention_tensors(
    layer: int, hidden: int, heads: int, kv_heads: int, head_dim: int, *, output_gate: bool, mtp: bool
) -> list[Tensor]:
    query_rows = heads * head_dim * (2 if output_gate else 1)
    return [
        Tensor("attn_q", layer, query_rows, hidden, mtp=mtp),
        Tensor("attn_k", layer, kv_heads * head_dim, hidden, mtp=mtp),
        Tensor("attn_v", layer, kv_heads * head_dim, hidden, mtp=mtp),
        Tensor("attn_output", layer, hidden, heads * head_dim, mtp=mtp),
        Tensor("attn_q_norm", layer, 1, head_dim, mtp=mtp),
        Tensor("attn_k_norm", layer, 1, head_dim, mtp=mtp),
    ]


def delta_net_tensors(layer: int, hidden: int, shape: DeltaNetShape, *, fused_qkvz: bool) -> list[Tensor]:
    if fused_qkvz:  # Qwen3-Next: in_proj_qkvz and in_proj_ba
        projections = [
            Tensor("ssm_in", layer, shape.conv_channels + shape.value_dim, hidden),
            Tensor("ssm_ba", layer, 2 * shape.value_heads, hidden),
        ]
    else:  # Qwen3.5 / 3.6: in_proj_qkv, in_proj_z, in_proj_b, in_proj_a
        projections = [
            Tensor("attn_qkv", layer, shape.conv_channels, hidden),
            Tensor("attn_gate", layer, shape.value_dim, hidden),
            Tensor("ssm_beta", layer, shape.value_heads, hidden),
            Tensor("ssm_alpha", layer, shape.value_heads, hidden),
        ]
    return projections + [
        Tensor("ssm_conv1d", layer, shape.conv_channels, shape.conv_kernel),
        Tensor("ssm_dt", layer, 1, shape.value_heads),
        Tensor("ssm_a", layer, 1, shape.value_heads),
        Tensor("ssm_norm", layer, 1, shape.value_head_dim),
        Tensor("ssm_out", layer, hidden, shape.value_dim),
    ]


@dataclass(frozen=True)
class FeedForward:
    """The MLP of every block: dense (``intermediate``) or routed experts plus a shared expert."""

    intermediate: int
    n_experts: int
    expert_intermediate: int
    shared_intermediate: int

    def tensors(self, layer: int, hidden: int, *, mtp: bool = False) -> list[Tensor]:
        if not self.n_experts:
            tensors = mlp_tensors(layer, hidden, self.intermediate)
        else:
            tensors = [Tensor("ffn_gate_inp", layer, self.n_experts, hidden)]
            tensors += mlp_tensors(layer, hidden, self.expert_intermediate, "_exps", self.n_experts)
            if self.shared_intermediate:
                tensors.append(Tensor("ffn_gate_inp_shexp", layer, 1, hidden))
                tensors += mlp_tensors(layer, hidden, self.shared_intermediate, "_shexp")
        return [Tensor(t.name, t.layer, t.rows, t.cols, t.experts, mtp=mtp) for t in tensors]


def mtp_block_tensors(layer: int, hidden: int, attention: list[Tensor], ffn: list[Tensor]) -> list[Tensor]:
    """One multi-token-prediction block: a full-attention decoder block plus the projection that
    joins the embedding of the next token with the last hidden state (llama.cpp NEXTN tensors);
    it shares the model's embedding and output head."""
    return [
        Tensor("nextn.eh_proj", layer, hidden, 2 * hidden, mtp=True),
        Tensor("nextn.enorm", layer, 1, hidden, mtp=True),
        Tensor("nextn.hnorm", layer, 1, hidden, mtp=True),
        Tensor("nextn.shared_head_norm", layer, 1, hidden, mtp=True),
        Tensor("attn_norm", layer, 1, hidden, mtp=True),
        Tensor("attn_post_norm", layer, 1, hidden, mtp=True),
        *attention,
        *ffn,
    ]


@register("qwen3_next", "qwen3_5", "qwen3_5_text", "qwen3_5_moe", "qwen3_5_moe_text")
def qwen_hybrid(cfg: dict) -> Architecture:
    """Qwen3-Next (``qwen3_next``) and Qwen3.5 / Qwen3.6 (``qwen3_5*``), dense or MoE."""
    model_type = str(cfg["model_type"])
    layers, hidden, heads, kv_heads, head_dim, vocab, tied = astuple(read_dims(cfg))
    delta_net = DeltaNetShape(
        key_heads=config_int(cfg, "linear_num_key_heads"),
        value_heads=config_int(cfg, "linear_num_value_heads"),
        key_head_dim=config_int(cfg, "linear_key_head_dim"),
        value_head_dim=config_int(cfg, "linear_value_head_dim"),
        conv_kernel=config_int(cfg, "linear_conv_kernel_dim"),
    )
    n_experts = config_int(cfg, "num_experts", default=0)
    top_k = config_int(cfg, "num_experts_per_tok", default=0) if n_experts else 0
    if n_experts and not 0 < top_k <= n_experts:
        raise EngineInputError(f"config.json: num_experts_per_tok must be 1..{n_experts}", field="config")
    ffn = FeedForward(
        intermediate=config_int(cfg, "intermediate_size", default=0),
        n_experts=n_experts,
        expert_intermediate=config_int(cfg, "moe_intermediate_size", default=0) if n_experts else 0,
        shared_intermediate=config_int(cfg, "shared_expert_intermediate_size", default=0) if n_experts else 0,
    )
    if (n_experts and not ffn.expert_intermediate) or (not n_experts and not ffn.intermediate):
        raise EngineInputError("config.json: missing intermediate_size / moe_intermediate_size", field="config")
    # Qwen3-Next always gates its attention output; Qwen3.5 says so in attn_output_gate.
    output_gate = bool(cfg.get("attn_output_gate", True))
    fused_qkvz = model_type == "qwen3_next"
    full_attention = LayerAttention(
        kind="full",
        kv_elements_per_token=2 * kv_heads * head_dim,
        flops_per_pair=2 * heads * (head_dim + head_dim),
        query_heads=heads,
    )
    linear_attention = LayerAttention(kind="linear", state_elements=delta_net.state_elements)

    tensors = [Tensor("token_embd", -1, vocab, hidden)]
    attention = []
    for layer, is_full in enumerate(layer_is_full_attention(cfg, layers)):
        tensors += [Tensor("attn_norm", layer, 1, hidden), Tensor("attn_post_norm", layer, 1, hidden)]
        if is_full:
            tensors += gated_attention_tensors(
                layer, hidden, heads, kv_heads, head_dim, output_gate=output_gate, mtp=False
            )
        else:
            tensors += delta_net_tensors(layer, hidden, delta_net, fused_qkvz=fused_qkvz)
        tensors += ffn.tensors(layer, hidden)
        attention.append(full_attention if is_full else linear_attention)
    for layer in range(layers, layers + config_int(cfg, "mtp_num_hidden_layers", default=0)):
        block_attention = gated_attention_tensors(
            layer, hidden, heads, kv_heads, head_dim, output_gate=output_gate, mtp=True
        )
        tensors += mtp_block_tensors(layer, hidden, block_attention, ffn.tensors(layer, hidden, mtp=True))
    tensors += output_head(vocab, hidden, tied)
    return decoder(model_type, tensors, attention, layers=layers, hidden=hidden, vocab=vocab, tied=tied,
                   max_context=config_int(cfg, "max_position_embeddings", default=0), n_experts=n_experts,
                   experts_per_token=top_k)

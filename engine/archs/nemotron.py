"""NVIDIA Nemotron-H hybrids (``nemotron_h``): Nemotron Nano 9B v2, Nemotron-3 Nano and Super.

Each block is one of four kinds, spelled by ``hybrid_override_pattern`` one character per block:
``M`` a Mamba-2 mixer (constant recurrent state), ``*`` GQA attention (the only blocks with a KV
cache), ``-`` a squared-ReLU MLP (up, down; no gate), ``E`` a mixture of experts: ``n_routed_experts``
squared-ReLU experts (top ``num_experts_per_tok``, sigmoid routing with a learned bias) plus a
shared expert. Nemotron-3 Super routes in a smaller "latent" space: the block projects the hidden
state down to ``moe_latent_size`` before the experts and back up after them.
``num_nextn_predict_layers`` multi-token-prediction blocks (``mtp_hybrid_override_pattern``)
follow. Tensor names and shapes follow llama.cpp (src/models/nemotron-h.cpp, src/llama-arch.cpp).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..arch import Architecture, LayerAttention, Tensor, config_int, decoder, output_head, register
from ..errors import EngineInputError

MAMBA, ATTENTION, MLP, MOE = "M", "*", "-", "E"


def vector(name: str, layer: int, length: int) -> Tensor:
    return Tensor(name, layer, 1, length)


@dataclass(frozen=True)
class Mamba2:
    """A Mamba-2 mixer: ``heads`` SSM heads of ``head_dim`` channels, state size ``state``."""

    heads: int
    head_dim: int
    groups: int
    state: int
    conv_kernel: int

    @property
    def inner(self) -> int:
        return self.heads * self.head_dim

    @property
    def conv_channels(self) -> int:
        """x, B and C go through the causal convolution."""
        return self.inner + 2 * self.groups * self.state

    @property
    def state_elements(self) -> int:
        """Per sequence: the SSM state (heads x head_dim x state) and the convolution's last
        ``conv_kernel - 1`` inputs. Constant in context length."""
        return self.heads * self.head_dim * self.state + (self.conv_kernel - 1) * self.conv_channels

    def tensors(self, layer: int, hidden: int) -> list[Tensor]:
        return [
            # in_proj: z, x, B, C and dt.
            Tensor("ssm_in", layer, 2 * self.inner + 2 * self.groups * self.state + self.heads, hidden),
            Tensor("ssm_conv1d", layer, self.conv_channels, self.conv_kernel),
            vector("ssm_conv1d.bias", layer, self.conv_channels),
            vector("ssm_dt.bias", layer, self.heads),
            vector("ssm_a", layer, self.heads),
            vector("ssm_d", layer, self.heads),
            vector("ssm_norm", layer, self.inner),
            Tensor("ssm_out", layer, hidden, self.inner),
        ]

    def layer_attention(self) -> LayerAttention:
        return LayerAttention(kind="ssm", state_elements=self.state_elements)


def mamba2_from_config(cfg: dict, hidden: int) -> Mamba2:
    heads = config_int(cfg, "mamba_num_heads", "mamba_n_heads")
    head_dim = config_int(cfg, "mamba_head_dim", "mamba_d_head", default=0) or config_int(cfg, "expand") * hidden // heads
    return Mamba2(
        heads=heads,
        head_dim=head_dim,
        groups=config_int(cfg, "n_groups", "mamba_n_groups", "mamba_num_groups"),
        state=config_int(cfg, "ssm_state_size", "mamba_d_state"),
        conv_kernel=config_int(cfg, "conv_kernel", "mamba_d_conv"),
    )


@dataclass(frozen=True)
class NemotronMoE:
    n_experts: int
    top_k: int
    expert_intermediate: int
    shared_intermediate: int
    latent: int

    def tensors(self, layer: int, hidden: int) -> list[Tensor]:
        width = self.latent or hidden
        tensors = [Tensor("ffn_gate_inp", layer, self.n_experts, hidden), vector("exp_probs_b", layer, self.n_experts)]
        if self.latent:
            tensors += [Tensor("ffn_latent_down", layer, self.latent, hidden), Tensor("ffn_latent_up", layer, hidden, self.latent)]
        return tensors + [
            Tensor("ffn_up_exps", layer, self.expert_intermediate, width, self.n_experts),
            Tensor("ffn_down_exps", layer, width, self.expert_intermediate, self.n_experts),
            Tensor("ffn_up_shexp", layer, self.shared_intermediate, hidden),
            Tensor("ffn_down_shexp", layer, hidden, self.shared_intermediate),
        ]


def block_pattern(cfg: dict, key: str, length: int | None) -> str:
    pattern = cfg.get(key)
    if not isinstance(pattern, str) or (length is not None and len(pattern) != length) or set(pattern) - {MAMBA, ATTENTION, MLP, MOE}:
        raise EngineInputError(f"config.json: {key} must spell one of M * - E per block", field="config")
    return pattern


@register("nemotron_h")
def nemotron_h(cfg: dict) -> Architecture:
    layers = config_int(cfg, "num_hidden_layers")
    hidden = config_int(cfg, "hidden_size")
    vocab = config_int(cfg, "vocab_size")
    heads = config_int(cfg, "num_attention_heads")
    kv_heads = config_int(cfg, "num_key_value_heads")
    head_dim = config_int(cfg, "head_dim", default=hidden // heads if heads else 0)
    tied = bool(cfg.get("tie_word_embeddings", False))
    if heads == 0 or kv_heads == 0 or heads % kv_heads:
        raise EngineInputError("config.json: num_attention_heads must be a multiple of num_key_value_heads", field="config")
    pattern = block_pattern(cfg, "hybrid_override_pattern", layers)
    mamba = mamba2_from_config(cfg, hidden) if MAMBA in pattern else None
    moe = None
    if MOE in pattern:
        moe = NemotronMoE(
            n_experts=config_int(cfg, "n_routed_experts"),
            top_k=config_int(cfg, "num_experts_per_tok"),
            expert_intermediate=config_int(cfg, "moe_intermediate_size"),
            shared_intermediate=config_int(cfg, "moe_shared_expert_intermediate_size"),
            latent=config_int(cfg, "moe_latent_size", default=0),
        )
        if not 0 < moe.top_k <= moe.n_experts:
            raise EngineInputError(f"config.json: num_experts_per_tok must be 1..{moe.n_experts}", field="config")
    mlp_intermediate = config_int(cfg, "intermediate_size") if MLP in pattern else 0
    q_dim, kv_dim = heads * head_dim, kv_heads * head_dim
    full = LayerAttention(kind="full", kv_elements_per_token=2 * kv_dim, flops_per_pair=2 * heads * (head_dim + head_dim), query_heads=heads)

    def block(layer: int, kind: str) -> list[Tensor]:
        tensors = [vector("attn_norm", layer, hidden)]  # every block's one pre-norm
        if kind == MAMBA:
            return tensors + mamba.tensors(layer, hidden)
        if kind == ATTENTION:
            return tensors + [
                Tensor("attn_q", layer, q_dim, hidden),
                Tensor("attn_k", layer, kv_dim, hidden),
                Tensor("attn_v", layer, kv_dim, hidden),
                Tensor("attn_output", layer, hidden, q_dim),
            ]
        if kind == MLP:
            return tensors + [Tensor("ffn_up", layer, mlp_intermediate, hidden), Tensor("ffn_down", layer, hidden, mlp_intermediate)]
        return tensors + moe.tensors(layer, hidden)

    tensors = [Tensor("token_embd", -1, vocab, hidden)]
    attention = []
    for layer, kind in enumerate(pattern):
        tensors += block(layer, kind)
        attention.append(full if kind == ATTENTION else mamba.layer_attention() if kind == MAMBA else LayerAttention(kind="none"))
    mtp_blocks = config_int(cfg, "num_nextn_predict_layers", default=0)
    if mtp_blocks:
        mtp_pattern = block_pattern(cfg, "mtp_hybrid_override_pattern", None)
        for index in range(mtp_blocks):
            layer = layers + index
            tensors += [
                Tensor("nextn.eh_proj", layer, hidden, 2 * hidden, mtp=True),
                Tensor("nextn.enorm", layer, 1, hidden, mtp=True),
                Tensor("nextn.hnorm", layer, 1, hidden, mtp=True),
                Tensor("nextn.shared_head_norm", layer, 1, hidden, mtp=True),
            ]
            for kind in mtp_pattern:
                tensors += [Tensor(t.name, t.layer, t.rows, t.cols, t.experts, mtp=True) for t in block(layer, kind)]
    tensors += output_head(vocab, hidden, tied)
    return decoder("nemotron_h", tensors, attention, layers=layers, hidden=hidden, vocab=vocab, tied=tied,
                   max_context=config_int(cfg, "max_position_embeddings", default=0),
                   n_experts=moe.n_experts if moe else 0, experts_per_token=moe.top_k if moe else 0)

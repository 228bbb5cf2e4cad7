"""DeepSeek V2/V3/R1 and the models built on them (Kimi K2, GLM-4.7-Flash), and DeepSeek V4.

Multi-head latent attention (MLA): queries pass through a low-rank bottleneck (``q_lora_rank``);
keys and values are rebuilt per head from one compressed latent of ``kv_lora_rank`` elements plus a
shared rotary key of ``qk_rope_head_dim`` elements, and only those two are cached: 512 + 64 = 576
elements per token per layer for DeepSeek V3. llama.cpp decodes in the latent space ("absorbed"
MLA, src/models/deepseek2.cpp): each head scores the 576-element cache entry and reads back the
512-element latent, and the key/value up-projections are stored per head as ``attn_k_b`` and
``attn_v_b``. The first ``first_k_dense_replace`` blocks have a dense MLP, the others
``n_routed_experts`` routed experts (top ``num_experts_per_tok``) plus ``n_shared_experts`` shared
ones; ``num_nextn_predict_layers`` multi-token-prediction blocks follow the main stack.

DeepSeek V4 (``deepseek_v4``, src/models/deepseek4.cpp) replaces MLA with a single 512-wide
key=value head per layer and three kinds of layers set by ``compress_ratios``: ratio 0 is plain
sliding-window attention (``sliding_window`` = 128 tokens); ratio 4 ("compressed sparse
attention") adds a cache of one compressed entry per 4 tokens, of which a lightning indexer (its
own 128-wide compressed keys) picks ``index_topk`` to attend to; ratio 128 ("heavily compressed
attention") attends to all entries of a cache compressed 128:1. Outputs go through grouped low-rank
projections (``o_groups`` x ``o_lora_rank``) and the residual stream is widened ``hc_mult`` times
(hyper-connections). How this maps onto :class:`LayerAttention` is said in :func:`v4_attention`.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..arch import Architecture, LayerAttention, Tensor, config_int, decoder, mlp_tensors, register
from ..errors import EngineInputError


def vector(name: str, layer: int, length: int, *, mtp: bool = False) -> Tensor:
    return Tensor(name, layer, 1, length, mtp=mtp)


def as_mtp(tensors: list[Tensor]) -> list[Tensor]:
    return [Tensor(t.name, t.layer, t.rows, t.cols, t.experts, mtp=True) for t in tensors]


@dataclass(frozen=True)
class LatentAttention:
    """MLA dimensions (the ``*_lora_rank`` and ``*_head_dim`` keys of config.json)."""

    heads: int
    q_lora_rank: int
    kv_lora_rank: int
    nope_dim: int
    rope_dim: int
    v_dim: int

    @classmethod
    def from_config(cls, cfg: dict) -> LatentAttention:
        shape = cls(
            heads=config_int(cfg, "num_attention_heads"),
            q_lora_rank=config_int(cfg, "q_lora_rank", default=0),
            kv_lora_rank=config_int(cfg, "kv_lora_rank"),
            nope_dim=config_int(cfg, "qk_nope_head_dim"),
            rope_dim=config_int(cfg, "qk_rope_head_dim"),
            v_dim=config_int(cfg, "v_head_dim"),
        )
        if not (shape.heads and shape.kv_lora_rank and shape.rope_dim and shape.v_dim):
            raise EngineInputError("config.json: MLA needs num_attention_heads, kv_lora_rank, qk_rope_head_dim, v_head_dim", field="config")
        return shape

    @property
    def cached_elements(self) -> int:
        """The latent plus the shared rotary key, per token."""
        return self.kv_lora_rank + self.rope_dim

    def tensors(self, layer: int, hidden: int) -> list[Tensor]:
        q_rows = self.heads * (self.nope_dim + self.rope_dim)
        if self.q_lora_rank:
            query = [
                Tensor("attn_q_a", layer, self.q_lora_rank, hidden),
                vector("attn_q_a_norm", layer, self.q_lora_rank),
                Tensor("attn_q_b", layer, q_rows, self.q_lora_rank),
            ]
        else:
            query = [Tensor("attn_q", layer, q_rows, hidden)]
        return [
            vector("attn_norm", layer, hidden),
            *query,
            Tensor("attn_kv_a_mqa", layer, self.cached_elements, hidden),
            vector("attn_kv_a_norm", layer, self.kv_lora_rank),
            # kv_b_proj split per head as llama.cpp stores it: k_b {nope, kv_lora, heads}, v_b {kv_lora, v, heads}.
            Tensor("attn_k_b", layer, self.kv_lora_rank * self.heads, self.nope_dim),
            Tensor("attn_v_b", layer, self.v_dim * self.heads, self.kv_lora_rank),
            Tensor("attn_output", layer, hidden, self.heads * self.v_dim),
        ]

    def layer_attention(self) -> LayerAttention:
        # Absorbed MLA: each head takes a dot product over the whole cache entry (latent + rope)
        # and a weighted sum over the latent.
        return LayerAttention(
            kind="mla",
            kv_elements_per_token=self.cached_elements,
            flops_per_pair=2 * self.heads * (self.cached_elements + self.kv_lora_rank),
            query_heads=self.heads,
        )


@dataclass(frozen=True)
class DeepSeekMoE:
    """Dense MLP for the first blocks, routed + shared experts for the others."""

    dense_intermediate: int
    dense_layers: int
    n_experts: int
    top_k: int
    expert_intermediate: int
    n_shared: int
    routing_bias: bool

    @classmethod
    def from_config(cls, cfg: dict, layers: int) -> DeepSeekMoE:
        n_experts = config_int(cfg, "n_routed_experts", default=0)
        moe = cls(
            dense_intermediate=config_int(cfg, "intermediate_size", default=0),
            dense_layers=config_int(cfg, "first_k_dense_replace", default=0) if n_experts else layers,
            n_experts=n_experts,
            top_k=config_int(cfg, "num_experts_per_tok", default=0) if n_experts else 0,
            expert_intermediate=config_int(cfg, "moe_intermediate_size", default=0),
            n_shared=config_int(cfg, "n_shared_experts", default=0),
            # noaux_tc routing adds a learned per-expert bias (e_score_correction_bias).
            routing_bias=cfg.get("topk_method") == "noaux_tc",
        )
        if n_experts and not (0 < moe.top_k <= n_experts and moe.expert_intermediate):
            raise EngineInputError("config.json: MoE needs num_experts_per_tok (1..n_routed_experts) and moe_intermediate_size", field="config")
        if moe.dense_layers and not moe.dense_intermediate:
            raise EngineInputError("config.json: dense blocks need intermediate_size", field="config")
        return moe

    def tensors(self, layer: int, hidden: int) -> list[Tensor]:
        tensors = [vector("ffn_norm", layer, hidden)]
        if layer < self.dense_layers:
            return tensors + mlp_tensors(layer, hidden, self.dense_intermediate)
        tensors.append(Tensor("ffn_gate_inp", layer, self.n_experts, hidden))
        if self.routing_bias:
            tensors.append(vector("exp_probs_b", layer, self.n_experts))
        tensors += mlp_tensors(layer, hidden, self.expert_intermediate, "_exps", self.n_experts)
        if self.n_shared:
            tensors += mlp_tensors(layer, hidden, self.n_shared * self.expert_intermediate, "_shexp")
        return tensors


def nextn_tensors(layer: int, hidden: int, vocab: int, *, own_embeddings: bool) -> list[Tensor]:
    """The extra weights of a multi-token-prediction block (llama.cpp NEXTN tensors). DeepSeek V3
    ships its own copies of the embedding and output head with it; GLM shares the model's."""
    tensors = [
        Tensor("nextn.eh_proj", layer, hidden, 2 * hidden, mtp=True),
        vector("nextn.enorm", layer, hidden, mtp=True),
        vector("nextn.hnorm", layer, hidden, mtp=True),
        vector("nextn.shared_head_norm", layer, hidden, mtp=True),
    ]
    if own_embeddings:
        tensors += [
            Tensor("nextn.embed_tokens", layer, vocab, hidden, mtp=True),
            Tensor("nextn.shared_head_head", layer, vocab, hidden, mtp=True),
        ]
    return tensors


def model_tensors(vocab: int, hidden: int, tied: bool) -> tuple[list[Tensor], list[Tensor]]:
    """(before the blocks, after the blocks)."""
    tail = [vector("output_norm", -1, hidden)]
    if not tied:
        tail.append(Tensor("output", -1, vocab, hidden))
    return [Tensor("token_embd", -1, vocab, hidden)], tail


@register("deepseek_v2", "deepseek_v3", "kimi_k2", "glm4_moe_lite")
def deepseek_mla(cfg: dict) -> Architecture:
    """DeepSeek V2/V3/R1, Kimi K2 and GLM-4.7-Flash: MLA + DeepSeekMoE (+ MTP blocks)."""
    model_type = str(cfg["model_type"])
    layers = config_int(cfg, "num_hidden_layers")
    hidden = config_int(cfg, "hidden_size")
    vocab = config_int(cfg, "vocab_size")
    tied = bool(cfg.get("tie_word_embeddings", False))
    mla = LatentAttention.from_config(cfg)
    moe = DeepSeekMoE.from_config(cfg, layers)
    mtp_layers = config_int(cfg, "num_nextn_predict_layers", default=0)

    head, tail = model_tensors(vocab, hidden, tied)
    tensors = list(head)
    for layer in range(layers):
        tensors += mla.tensors(layer, hidden) + moe.tensors(layer, hidden)
    for layer in range(layers, layers + mtp_layers):
        tensors += as_mtp(mla.tensors(layer, hidden) + moe.tensors(layer, hidden))
        # DeepSeek V3/R1 checkpoints carry embedding and head copies in their MTP block.
        tensors += nextn_tensors(layer, hidden, vocab, own_embeddings=model_type == "deepseek_v3")
    return decoder(model_type, tuple(tensors + tail), tuple(mla.layer_attention() for _ in range(layers)),
                   layers=layers, hidden=hidden, vocab=vocab, tied=tied,
                   max_context=config_int(cfg, "max_position_embeddings", default=0), n_experts=moe.n_experts,
                   experts_per_token=moe.top_k)


#: DeepSeek V4 compression ratios: 0 = sliding window only, 4 = compressed sparse attention (with a
#: lightning indexer), 128 = heavily compressed attention (src/models/deepseek4.cpp).
V4_SLIDING, V4_CSA, V4_HCA = 0, 4, 128


@dataclass(frozen=True)
class V4Attention:
    heads: int
    head_dim: int
    q_lora_rank: int
    o_groups: int
    o_lora_rank: int
    window: int
    index_heads: int
    index_head_dim: int

    def tensors(self, layer: int, hidden: int, ratio: int, *, mtp: bool) -> list[Tensor]:
        tensors = [
            vector("attn_norm", layer, hidden),
            vector("attn_sinks", layer, self.heads),
            Tensor("attn_q_a", layer, self.q_lora_rank, hidden),
            vector("attn_q_a_norm", layer, self.q_lora_rank),
            Tensor("attn_q_b", layer, self.heads * self.head_dim, self.q_lora_rank),
            Tensor("attn_kv", layer, self.head_dim, hidden),
            vector("attn_kv_norm", layer, self.head_dim),
            Tensor("attn_out_a", layer, self.o_groups * self.o_lora_rank, self.heads * self.head_dim // self.o_groups),
            Tensor("attn_out_b", layer, hidden, self.o_groups * self.o_lora_rank),
        ]
        if ratio != V4_SLIDING:
            # The compressor: overlapping windows (two per entry at ratio 4) gated and pooled.
            width = (2 if ratio == V4_CSA else 1) * self.head_dim
            tensors += [
                Tensor("attn_compressor_wkv", layer, width, hidden),
                Tensor("attn_compressor_wgate", layer, width, hidden),
                Tensor("attn_compressor_ape", layer, ratio, width),
                vector("attn_compressor_norm", layer, self.head_dim),
            ]
        if ratio == V4_CSA:
            tensors += [
                Tensor("indexer_proj", layer, self.index_heads, hidden),
                Tensor("indexer_attn_q_b", layer, self.index_heads * self.index_head_dim, self.q_lora_rank),
                Tensor("indexer_compressor_wkv", layer, 2 * self.index_head_dim, hidden),
                Tensor("indexer_compressor_wgate", layer, 2 * self.index_head_dim, hidden),
                Tensor("indexer_compressor_ape", layer, ratio, 2 * self.index_head_dim),
                vector("indexer_compressor_norm", layer, self.index_head_dim),
            ]
        return as_mtp(tensors) if mtp else tensors

    def layer_attention(self, ratio: int) -> LayerAttention:
        """Closest :class:`LayerAttention` of a V4 layer (an approximation, see below).

        Ratio 0: a sliding window of ``window`` tokens, one 512-element key=value vector each.
        Ratios 4 and 128: kind ``mla`` (a compressed cache that grows with context) with the growth
        amortised per token: 512 / ratio elements, plus the indexer's 128 / 4 at ratio 4. The raw
        sliding window these layers also keep is the constant ``state_elements``.
        FLOPs per (query, context token): ratio 128 attends to every compressed entry,
        2 * heads * (512 + 512) / 128; ratio 4 scores every compressed entry with the indexer,
        2 * index_heads * 128 / 4. NOT represented: the fixed cost of ratio-4 layers attending to
        ``index_topk`` selected entries and of all layers attending to their window (it does not
        grow with context).
        """
        score_and_sum = 2 * self.heads * (self.head_dim + self.head_dim)
        if ratio == V4_SLIDING:
            return LayerAttention(kind="sliding", kv_elements_per_token=self.head_dim, window=self.window,
                                  flops_per_pair=score_and_sum, query_heads=self.heads)
        window_state = self.window * self.head_dim
        if ratio == V4_HCA:
            return LayerAttention(kind="mla", kv_elements_per_token=self.head_dim // ratio, state_elements=window_state,
                                  flops_per_pair=score_and_sum // ratio, query_heads=self.heads)
        return LayerAttention(kind="mla", kv_elements_per_token=(self.head_dim + self.index_head_dim) // ratio,
                              state_elements=window_state,
                              flops_per_pair=2 * self.index_heads * self.index_head_dim // ratio, query_heads=self.heads)


def hyper_connection_tensors(layer: int, hidden: int, hc_mult: int, *, mtp: bool) -> list[Tensor]:
    """Manifold-constrained hyper-connections around attention and around the MLP."""
    mix = (2 + hc_mult) * hc_mult
    tensors = []
    for part in ("attn", "ffn"):
        tensors += [
            Tensor(f"hc_{part}_fn", layer, mix, hc_mult * hidden),
            vector(f"hc_{part}_base", layer, mix),
            vector(f"hc_{part}_scale", layer, 3),
        ]
    return as_mtp(tensors) if mtp else tensors


@register("deepseek_v4")
def deepseek_v4(cfg: dict) -> Architecture:
    """DeepSeek V4 (Flash, Pro): hybrid compressed attention, all-MoE blocks, MTP."""
    layers = config_int(cfg, "num_hidden_layers")
    hidden = config_int(cfg, "hidden_size")
    vocab = config_int(cfg, "vocab_size")
    tied = bool(cfg.get("tie_word_embeddings", False))
    mtp_layers = config_int(cfg, "num_nextn_predict_layers", default=0)
    ratios = cfg.get("compress_ratios")
    if not isinstance(ratios, list) or len(ratios) < layers + mtp_layers or set(ratios) - {V4_SLIDING, V4_CSA, V4_HCA}:
        raise EngineInputError(f"config.json: compress_ratios must give 0, 4 or 128 for each of {layers + mtp_layers} blocks", field="config")
    if config_int(cfg, "num_key_value_heads", default=1) != 1:
        raise EngineInputError("config.json: DeepSeek V4 attention has one key/value head", field="config")
    attn = V4Attention(
        heads=config_int(cfg, "num_attention_heads"),
        head_dim=config_int(cfg, "head_dim"),
        q_lora_rank=config_int(cfg, "q_lora_rank"),
        o_groups=config_int(cfg, "o_groups"),
        o_lora_rank=config_int(cfg, "o_lora_rank"),
        window=config_int(cfg, "sliding_window"),
        index_heads=config_int(cfg, "index_n_heads"),
        index_head_dim=config_int(cfg, "index_head_dim"),
    )
    if attn.o_groups == 0 or (attn.heads * attn.head_dim) % attn.o_groups:
        raise EngineInputError("config.json: o_groups must divide num_attention_heads * head_dim", field="config")
    hc_mult = config_int(cfg, "hc_mult", default=1)
    # Every block is MoE (no first_k_dense_replace); the first num_hash_layers route by token id
    # (a vocab x top-k table of expert ids, not a weight) instead of a learned bias.
    moe = DeepSeekMoE(
        dense_intermediate=0, dense_layers=0,
        n_experts=config_int(cfg, "n_routed_experts"), top_k=config_int(cfg, "num_experts_per_tok"),
        expert_intermediate=config_int(cfg, "moe_intermediate_size"), n_shared=config_int(cfg, "n_shared_experts", default=0),
        routing_bias=False,
    )
    hash_layers = config_int(cfg, "num_hash_layers", default=0)

    head, tail = model_tensors(vocab, hidden, tied)
    tensors = list(head) + [
        Tensor("hc_head_fn", -1, hc_mult, hc_mult * hidden),
        vector("hc_head_base", -1, hc_mult),
        vector("hc_head_scale", -1, 1),
    ]
    for layer in range(layers + mtp_layers):
        mtp = layer >= layers
        block = attn.tensors(layer, hidden, ratios[layer], mtp=mtp) + hyper_connection_tensors(layer, hidden, hc_mult, mtp=mtp)
        ffn = moe.tensors(layer, hidden)
        if mtp or layer >= hash_layers:
            ffn.append(vector("exp_probs_b", layer, moe.n_experts))
        block += as_mtp(ffn) if mtp else ffn
        if mtp:
            block += nextn_tensors(layer, hidden, vocab, own_embeddings=False)
        tensors += block
    return decoder("deepseek_v4", tuple(tensors + tail),
                   tuple(attn.layer_attention(ratios[layer]) for layer in range(layers)), layers=layers,
                   hidden=hidden, vocab=vocab, tied=tied,
                   max_context=config_int(cfg, "max_position_embeddings", default=0), n_experts=moe.n_experts,
                   experts_per_token=moe.top_k)

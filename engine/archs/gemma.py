"""Google Gemma 2, Gemma 3, Gemma 3n and Gemma 4.

All interleave sliding-window ("local") and global attention layers. Gemma 2 alternates them;
Gemma 3 puts one global layer after every five local ones; Gemma 3n four local then one global;
Gemma 4 names each layer in ``layer_types`` (five local then one global, the last layer always
global). Sliding layers hold at most ``sliding_window`` tokens in the KV cache. Every block has
pre- and post-norms around attention and the GeGLU MLP; Gemma 3/3n/4 add per-head q/k norms.

Gemma 3n and the Gemma 4 "E" models add per-layer embeddings (PLE): a second embedding table of
``num_hidden_layers * hidden_size_per_layer_input`` columns, read one row per token like
``token_embd``, fed into every block through a small gate/projection pair. Their last
``num_kv_shared_layers`` blocks compute no keys and values of their own: they attend over the cache
of the last earlier block of the same kind, so they add nothing to the KV cache (their attention
FLOPs remain). Gemma 3n further carries AltUp (four parallel copies of the residual stream) and
LAuReL (a low-rank residual) in every block.

Gemma 4 global layers use their own head size (``global_head_dim``) and KV head count
(``num_global_key_value_heads``); with ``attention_k_eq_v`` they have no value projection (values
are the keys), yet llama.cpp still caches K and V separately, so the cache counts both. The
26B-A4B model runs a dense MLP and 128 routed experts side by side in every block.

Keys absent from a config.json take the defaults of the transformers configuration classes
(configuration_gemma2.py, configuration_gemma3.py, configuration_gemma3n.py,
configuration_gemma4.py); the published multimodal configs rely on them (gemma-3-4b-it's
``text_config`` names neither head counts nor vocabulary). Tensor names and shapes follow
llama.cpp: src/llama-arch.cpp and src/models/gemma2-iswa.cpp, gemma3.cpp, gemma3n-iswa.cpp,
gemma4.cpp.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..arch import Architecture, LayerAttention, Tensor, config_int, decoder, mlp_tensors, output_head, register
from ..errors import EngineInputError

#: transformers Gemma2Config / Gemma3TextConfig / Gemma3nTextConfig / Gemma4TextConfig defaults
#: for the keys the readers use.
GEMMA2_DEFAULTS = {
    "vocab_size": 256000, "hidden_size": 2304, "intermediate_size": 9216, "num_hidden_layers": 26,
    "num_attention_heads": 8, "num_key_value_heads": 4, "head_dim": 256, "max_position_embeddings": 8192,
    "sliding_window": 4096, "tie_word_embeddings": True,
}
GEMMA3_DEFAULTS = {
    "vocab_size": 262208, "hidden_size": 2304, "intermediate_size": 9216, "num_hidden_layers": 26,
    "num_attention_heads": 8, "num_key_value_heads": 4, "head_dim": 256, "max_position_embeddings": 131072,
    "sliding_window": 4096, "sliding_window_pattern": 6, "tie_word_embeddings": True,
}
GEMMA3N_DEFAULTS = {
    "vocab_size": 262400, "vocab_size_per_layer_input": 262144, "hidden_size": 2048,
    "hidden_size_per_layer_input": 256, "intermediate_size": 16384, "num_hidden_layers": 35,
    "num_attention_heads": 8, "num_key_value_heads": 2, "head_dim": 256, "max_position_embeddings": 32768,
    "sliding_window": 512, "num_kv_shared_layers": 15, "laurel_rank": 64, "altup_num_inputs": 4,
    "tie_word_embeddings": True,
}
GEMMA4_DEFAULTS = {
    "vocab_size": 262144, "vocab_size_per_layer_input": 262144, "hidden_size": 2304,
    "hidden_size_per_layer_input": 256, "intermediate_size": 9216, "num_hidden_layers": 30,
    "num_attention_heads": 8, "num_key_value_heads": 4, "head_dim": 256, "global_head_dim": 512,
    "max_position_embeddings": 131072, "sliding_window": 512, "num_kv_shared_layers": 0,
    "tie_word_embeddings": True,
}

#: Gemma 3 and Gemma 4 place one global layer after every ``pattern - 1`` local layers when the
#: config lists no ``layer_types``; Gemma 3n after every four (Gemma3nTextConfig).
GEMMA3_SLIDING_WINDOW_PATTERN = 6
GEMMA3N_SLIDING_WINDOW_PATTERN = 5

SLIDING, GLOBAL = "sliding_attention", "full_attention"


def with_defaults(cfg: dict, defaults: dict) -> dict:
    """``cfg`` with the transformers defaults filled in for absent keys (an explicit null stays:
    Gemma 4 26B-A4B writes ``hidden_size_per_layer_input: null`` for "no per-layer embeddings")."""
    return {**defaults, **cfg}


def vector(name: str, layer: int, length: int) -> Tensor:
    """A norm or scale vector (one row)."""
    return Tensor(name, layer, 1, length)


def layer_kinds(cfg: dict, layers: int, pattern: int, *, last_is_global: bool) -> list[str]:
    """``layer_types`` if given, else ``pattern - 1`` sliding layers then one global layer."""
    kinds = cfg.get("layer_types")
    if kinds is None:
        kinds = [GLOBAL if (layer + 1) % pattern == 0 else SLIDING for layer in range(layers)]
        if last_is_global and kinds:
            kinds[-1] = GLOBAL
    if not isinstance(kinds, list) or len(kinds) != layers:
        raise EngineInputError(f"config.json: layer_types must list {layers} layer types", field="config")
    unknown = sorted(set(kinds) - {SLIDING, GLOBAL})
    if unknown:
        raise EngineInputError(f"config.json: unknown layer_types {', '.join(map(str, unknown))}", field="config")
    return list(kinds)


@dataclass(frozen=True)
class AttentionShape:
    """Heads of one kind of attention layer."""

    heads: int
    kv_heads: int
    head_dim: int

    def tensors(self, layer: int, hidden: int, *, has_kv: bool, has_value: bool, qk_norm: bool) -> list[Tensor]:
        tensors = [Tensor("attn_q", layer, self.heads * self.head_dim, hidden)]
        if has_kv:
            tensors.append(Tensor("attn_k", layer, self.kv_heads * self.head_dim, hidden))
            if has_value:
                tensors.append(Tensor("attn_v", layer, self.kv_heads * self.head_dim, hidden))
        tensors.append(Tensor("attn_output", layer, hidden, self.heads * self.head_dim))
        if qk_norm:
            tensors.append(vector("attn_q_norm", layer, self.head_dim))
            if has_kv:
                tensors.append(vector("attn_k_norm", layer, self.head_dim))
        return tensors

    def layer_attention(self, kind: str, window: int, *, caches: bool) -> LayerAttention:
        """``caches=False``: a KV-sharing layer that reads an earlier layer's cache."""
        sliding = kind == SLIDING
        elements = 2 * self.kv_heads * self.head_dim
        return LayerAttention(
            kind="sliding" if sliding else "full",
            kv_elements_per_token=elements if caches else 0,
            shared_kv_elements=0 if caches else elements,
            window=window if sliding else 0,
            flops_per_pair=2 * self.heads * (self.head_dim + self.head_dim),
            query_heads=self.heads,
        )


def check_heads(heads: int, kv_heads: int) -> None:
    if heads == 0 or kv_heads == 0 or heads % kv_heads:
        raise EngineInputError(
            f"config.json: num_attention_heads ({heads}) must be a positive multiple of num_key_value_heads ({kv_heads})",
            field="config",
        )


def block_norms(layer: int, hidden: int) -> list[Tensor]:
    """The four norms of a Gemma block: pre/post attention, pre/post MLP."""
    return [
        vector("attn_norm", layer, hidden),
        vector("post_attention_norm", layer, hidden),
        vector("ffn_norm", layer, hidden),
        vector("post_ffw_norm", layer, hidden),
    ]


def build(cfg: dict, *, tensors: list[Tensor], attention: list[LayerAttention], hidden: int, vocab: int,
          n_experts: int = 0, top_k: int = 0) -> Architecture:
    tied = bool(cfg.get("tie_word_embeddings", True))
    tensors += output_head(vocab, hidden, tied)
    return decoder(str(cfg["model_type"]), tensors, attention, layers=len(attention), hidden=hidden, vocab=vocab,
                   tied=tied, max_context=config_int(cfg, "max_position_embeddings", default=0), n_experts=n_experts,
                   experts_per_token=top_k)


@register("gemma2", "gemma3", "gemma3_text")
def gemma2_or_3(cfg: dict) -> Architecture:
    """Gemma 2 (local/global alternating) and Gemma 3 (five local, one global; q/k norms)."""
    gemma2 = cfg["model_type"] == "gemma2"
    cfg = with_defaults(cfg, GEMMA2_DEFAULTS if gemma2 else GEMMA3_DEFAULTS)
    layers = config_int(cfg, "num_hidden_layers")
    hidden = config_int(cfg, "hidden_size")
    vocab = config_int(cfg, "vocab_size")
    intermediate = config_int(cfg, "intermediate_size")
    window = config_int(cfg, "sliding_window")
    shape = AttentionShape(
        heads=config_int(cfg, "num_attention_heads"),
        kv_heads=config_int(cfg, "num_key_value_heads"),
        head_dim=config_int(cfg, "head_dim"),
    )
    check_heads(shape.heads, shape.kv_heads)
    # Gemma 2: even layers local, odd layers global (transformers Gemma2DecoderLayer).
    pattern = 2 if gemma2 else config_int(cfg, "sliding_window_pattern", default=GEMMA3_SLIDING_WINDOW_PATTERN)
    kinds = layer_kinds(cfg, layers, pattern, last_is_global=False)

    tensors = [Tensor("token_embd", -1, vocab, hidden)]
    attention = []
    for layer, kind in enumerate(kinds):
        tensors += block_norms(layer, hidden)
        tensors += shape.tensors(layer, hidden, has_kv=True, has_value=True, qk_norm=not gemma2)
        tensors += mlp_tensors(layer, hidden, intermediate)
        attention.append(shape.layer_attention(kind, window, caches=True))
    return build(cfg, tensors=tensors, attention=attention, hidden=hidden, vocab=vocab)


@dataclass(frozen=True)
class PerLayerEmbeddings:
    """Gemma 3n / Gemma 4 per-layer embeddings: ``width`` columns per block."""

    width: int
    vocab: int

    def model_tensors(self, hidden: int, layers: int) -> list[Tensor]:
        return [
            Tensor("per_layer_token_embd", -1, self.vocab, self.width * layers),
            Tensor("per_layer_model_proj", -1, self.width * layers, hidden),
            vector("per_layer_proj_norm", -1, self.width),
        ]

    def block_tensors(self, layer: int, hidden: int) -> list[Tensor]:
        return [
            Tensor("inp_gate", layer, self.width, hidden),
            Tensor("proj", layer, hidden, self.width),
            vector("post_norm", layer, hidden),
        ]


def intermediate_per_layer(cfg: dict, layers: int) -> list[int]:
    """``intermediate_size`` as a per-layer list (Gemma 3n may give one value or a list)."""
    value = cfg.get("intermediate_size")
    sizes = value if isinstance(value, list) else [value] * layers
    if len(sizes) == 1:
        sizes = sizes * layers
    if len(sizes) != layers:
        raise EngineInputError(f"config.json: intermediate_size must list {layers} sizes", field="config")
    return [config_int({"intermediate_size": size}, "intermediate_size") for size in sizes]


def first_kv_shared_layer(cfg: dict, layers: int) -> int:
    shared = config_int(cfg, "num_kv_shared_layers")
    if shared >= layers:
        raise EngineInputError("config.json: num_kv_shared_layers must be below num_hidden_layers", field="config")
    return layers - shared


@register("gemma3n", "gemma3n_text")
def gemma3n(cfg: dict) -> Architecture:
    """Gemma 3n E2B / E4B: PLE, KV sharing, AltUp and LAuReL in every block."""
    cfg = with_defaults(cfg, GEMMA3N_DEFAULTS)
    layers = config_int(cfg, "num_hidden_layers")
    hidden = config_int(cfg, "hidden_size")
    vocab = config_int(cfg, "vocab_size")
    window = config_int(cfg, "sliding_window")
    laurel_rank = config_int(cfg, "laurel_rank")
    altup = config_int(cfg, "altup_num_inputs")
    shape = AttentionShape(
        heads=config_int(cfg, "num_attention_heads"),
        kv_heads=config_int(cfg, "num_key_value_heads"),
        head_dim=config_int(cfg, "head_dim"),
    )
    check_heads(shape.heads, shape.kv_heads)
    ple = PerLayerEmbeddings(
        width=config_int(cfg, "hidden_size_per_layer_input"),
        vocab=config_int(cfg, "vocab_size_per_layer_input"),
    )
    kinds = layer_kinds(cfg, layers, GEMMA3N_SLIDING_WINDOW_PATTERN, last_is_global=False)
    first_shared = first_kv_shared_layer(cfg, layers)

    tensors = [
        Tensor("token_embd", -1, vocab, hidden),
        *ple.model_tensors(hidden, layers),
        # AltUp projects the residual stream into its extra copies and back (altup_num_inputs - 1).
        Tensor("altup_proj", -1, hidden, hidden, altup - 1),
        Tensor("altup_unembd_proj", -1, hidden, hidden, altup - 1),
    ]
    attention = []
    for layer, (kind, intermediate) in enumerate(zip(kinds, intermediate_per_layer(cfg, layers))):
        tensors += block_norms(layer, hidden)
        # Gemma 3n checkpoints (and llama.cpp) keep k/v projections in KV-sharing layers too.
        tensors += shape.tensors(layer, hidden, has_kv=True, has_value=True, qk_norm=True)
        tensors += mlp_tensors(layer, hidden, intermediate)
        tensors += ple.block_tensors(layer, hidden)
        tensors += [
            Tensor("laurel_l", layer, laurel_rank, hidden),
            Tensor("laurel_r", layer, hidden, laurel_rank),
            vector("laurel_post_norm", layer, hidden),
            Tensor("altup_correct_coef", layer, altup, altup),
            vector("altup_correct_scale", layer, hidden),
            Tensor("altup_predict_coef", layer, altup * altup, altup),
            Tensor("altup_router", layer, altup, hidden),
            vector("altup_router_norm", layer, hidden),
        ]
        attention.append(shape.layer_attention(kind, window, caches=layer < first_shared))
    return build(cfg, tensors=tensors, attention=attention, hidden=hidden, vocab=vocab)


@register("gemma4", "gemma4_text", "gemma4_unified", "gemma4_unified_text")
def gemma4(cfg: dict) -> Architecture:
    """Gemma 4: E2B/E4B (PLE, KV sharing), 12B and 31B (dense), 26B-A4B (dense MLP + experts)."""
    cfg = with_defaults(cfg, GEMMA4_DEFAULTS)
    layers = config_int(cfg, "num_hidden_layers")
    hidden = config_int(cfg, "hidden_size")
    vocab = config_int(cfg, "vocab_size")
    window = config_int(cfg, "sliding_window")
    intermediate = config_int(cfg, "intermediate_size")
    heads = config_int(cfg, "num_attention_heads")
    k_eq_v = bool(cfg.get("attention_k_eq_v", False))
    local = AttentionShape(heads, config_int(cfg, "num_key_value_heads"), config_int(cfg, "head_dim"))
    # Gemma4TextConfig: global layers take num_global_key_value_heads only when attention_k_eq_v.
    global_kv_heads = config_int(cfg, "num_global_key_value_heads", default=local.kv_heads) if k_eq_v else local.kv_heads
    global_ = AttentionShape(heads, global_kv_heads, config_int(cfg, "global_head_dim"))
    check_heads(heads, local.kv_heads)
    check_heads(heads, global_.kv_heads)
    ple_width = config_int(cfg, "hidden_size_per_layer_input", default=0)
    ple = PerLayerEmbeddings(ple_width, config_int(cfg, "vocab_size_per_layer_input")) if ple_width else None
    moe = bool(cfg.get("enable_moe_block", False))
    n_experts = config_int(cfg, "num_experts") if moe else 0
    top_k = config_int(cfg, "top_k_experts") if moe else 0
    if moe and not 0 < top_k <= n_experts:
        raise EngineInputError(f"config.json: top_k_experts must be 1..{n_experts}", field="config")
    expert_intermediate = config_int(cfg, "moe_intermediate_size") if moe else 0
    kinds = layer_kinds(cfg, layers, GEMMA3_SLIDING_WINDOW_PATTERN, last_is_global=True)
    first_shared = first_kv_shared_layer(cfg, layers)
    double_wide = bool(cfg.get("use_double_wide_mlp", False))

    tensors = [Tensor("token_embd", -1, vocab, hidden)]
    if ple:
        tensors += ple.model_tensors(hidden, layers)
    attention = []
    for layer, kind in enumerate(kinds):
        shape = global_ if kind == GLOBAL else local
        caches = layer < first_shared
        tensors += block_norms(layer, hidden)
        tensors.append(vector("layer_output_scale", layer, 1))
        tensors += shape.tensors(layer, hidden, has_kv=caches, has_value=not (k_eq_v and kind == GLOBAL), qk_norm=True)
        # KV-sharing layers of the E2B get an MLP twice as wide (Gemma4TextMLP, use_double_wide_mlp).
        tensors += mlp_tensors(layer, hidden, intermediate * (2 if double_wide and not caches else 1))
        if moe:
            tensors += [
                Tensor("ffn_gate_inp", layer, n_experts, hidden),
                vector("ffn_gate_inp.scale", layer, hidden),
                vector("ffn_down_exps.scale", layer, n_experts),
                vector("pre_ffw_norm_2", layer, hidden),
                vector("post_ffw_norm_1", layer, hidden),
                vector("post_ffw_norm_2", layer, hidden),
                *mlp_tensors(layer, hidden, expert_intermediate, "_exps", n_experts),
            ]
        if ple:
            tensors += ple.block_tensors(layer, hidden)
        attention.append(shape.layer_attention(kind, window, caches=caches))
    return build(cfg, tensors=tensors, attention=attention, hidden=hidden, vocab=vocab, n_experts=n_experts, top_k=top_k)

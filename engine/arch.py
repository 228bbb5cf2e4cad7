"""A model's architecture, read from its Hugging Face ``config.json``.

The same reader serves the catalog (``data/models/*.toml`` keep a verbatim subset of each model's
config.json) and a config.json a user pastes into the page. It produces the model as a list of
weight tensors named as llama.cpp names them in a GGUF file, so that the weight formats in
``engine/quant/llamacpp.py`` can apply llama.cpp's own per-tensor rules, plus one attention description per block
for the KV cache and the attention FLOPs.

Tensor names follow llama.cpp's ``LLM_TENSOR_*`` GGUF names (src/llama-arch.cpp):
``token_embd``, ``output``, ``attn_q``, ``attn_k``, ``attn_v``, ``attn_output``, ``ffn_gate``,
``ffn_up``, ``ffn_down``, ``ffn_gate_inp`` (router), ``ffn_{gate,up,down}_exps`` (all routed
experts of a layer in one tensor), ``ffn_{gate,up,down}_shexp`` (shared experts) ...
Norm vectors are included (they are tiny, but they count in the published totals).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from .errors import EngineInputError

#: Attention kinds of a block. ``full`` caches K and V of every token; ``sliding`` at most
#: ``window`` tokens; ``mla`` caches a compressed latent per token; ``linear`` (gated DeltaNet and
#: friends) and ``ssm`` (Mamba) keep a constant state; ``none`` has no token mixer with a cache.
ATTENTION_KINDS = ("full", "sliding", "mla", "linear", "ssm", "none")


@dataclass(frozen=True)
class Tensor:
    """One weight tensor as stored in a GGUF file.

    ``cols`` is the input dimension (GGUF ``ne[0]``), the one quantisation blocks run along;
    ``rows`` the output dimension. Merged expert tensors (``*_exps``) hold ``experts`` matrices of
    ``rows x cols`` each. ``layer`` is the block index, -1 outside the repeated blocks.
    ``mtp`` marks multi-token-prediction weights: stored in the file, unused by plain decoding.
    """

    name: str
    layer: int
    rows: int
    cols: int
    experts: int = 1
    mtp: bool = False

    @property
    def params(self) -> int:
        return self.rows * self.cols * self.experts

    @property
    def is_routed_expert(self) -> bool:
        return self.name.endswith("_exps")


@dataclass(frozen=True)
class LayerAttention:
    """The token mixer of one block, as far as the KV cache and attention FLOPs care.

    ``kv_elements_per_token``: elements cached per token of context (K plus V; for MLA the latent
    plus the rope key; 0 for a layer that reads another layer's cache, see ``shared_kv_elements``).
    ``window``: a sliding window's length (0 = unbounded). ``state_elements``:
    a constant recurrent state that does not grow with context (linear attention, SSM).
    ``flops_per_pair``: FLOPs of one query attending to one key (QK^T and AV, 2 per multiply-add):
    ``2 * n_heads * (qk_head_dim + v_head_dim)``. ``query_heads``: attention heads (rows of the
    score matrix per token, which llama.cpp materialises without flash attention).
    """

    kind: str
    kv_elements_per_token: int = 0
    window: int = 0
    state_elements: int = 0
    flops_per_pair: int = 0
    query_heads: int = 0
    #: Elements per token this layer *reads* from another layer's cache (Gemma 3n/4 KV sharing:
    #: the memory is counted once, at the owning layer; the reads happen here too).
    shared_kv_elements: int = 0

    @property
    def kv_read_elements_per_token(self) -> int:
        return self.kv_elements_per_token + self.shared_kv_elements

    def cached_tokens(self, context: int) -> int:
        """Tokens of a ``context``-token history this layer holds in its cache."""
        if self.kind in ("linear", "ssm", "none"):
            return 0
        if self.kind == "sliding" and self.window:
            return min(context, self.window)
        return context


@dataclass(frozen=True, eq=False)
class Architecture:
    """A model's weights and attention layout, independent of any weight format.

    Compared and hashed by identity (``eq=False``): a catalog model builds its architecture once,
    and caches keyed on it must not hash a thousand tensors on every look-up.
    """

    model_type: str
    layers: int
    hidden_size: int
    vocab_size: int
    tied_embeddings: bool
    n_experts: int
    experts_per_token: int
    max_context: int
    tensors: tuple[Tensor, ...]
    attention: tuple[LayerAttention, ...]

    @cached_property
    def params_total(self) -> int:
        """Every stored weight, MTP heads included."""
        return sum(t.params for t in self.tensors)

    @cached_property
    def params_main(self) -> int:
        """Stored weights without multi-token-prediction heads."""
        return sum(t.params for t in self.tensors if not t.mtp)

    @cached_property
    def params_active(self) -> int:
        """Weights one token uses in plain decoding: routed experts count top-k of n."""
        total = 0
        for t in self.tensors:
            if t.mtp:
                continue
            if t.is_routed_expert:
                total += t.rows * t.cols * min(t.experts, self.experts_per_token)
            else:
                total += t.params
        return total

    @cached_property
    def is_moe(self) -> bool:
        return self.n_experts > 0


def config_int(config: dict, *keys: str, default: int | None = None) -> int:
    """First of ``keys`` present in ``config`` as a positive int, else ``default``."""
    for key in keys:
        value = config.get(key)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value != int(value) or value < 0:
            raise EngineInputError(f"config.json: {key} must be a non-negative integer, got {value!r}", field="config")
        return int(value)
    if default is None:
        raise EngineInputError(f"config.json: missing {' / '.join(keys)}", field="config")
    return default


@dataclass(frozen=True)
class Dims:
    """The dimensions every transformer config.json states, with Hugging Face's defaults
    (``num_key_value_heads`` = heads, ``head_dim`` = hidden / heads), checked for consistency."""

    layers: int
    hidden: int
    heads: int
    kv_heads: int
    head_dim: int
    vocab: int
    tied: bool


def read_dims(cfg: dict) -> Dims:
    """:class:`Dims` of a config; EngineInputError when they cannot describe a transformer."""
    layers = config_int(cfg, "num_hidden_layers", "n_layer", "num_layers")
    hidden = config_int(cfg, "hidden_size", "n_embd")
    heads = config_int(cfg, "num_attention_heads", "n_head")
    kv_heads = config_int(cfg, "num_key_value_heads", default=heads)
    head_dim = config_int(cfg, "head_dim", default=hidden // heads if heads else 0)
    vocab = config_int(cfg, "vocab_size")
    if heads == 0 or layers == 0 or hidden == 0 or kv_heads == 0:
        raise EngineInputError("config.json: layers, hidden size and attention heads must be positive", field="config")
    if heads % kv_heads:
        raise EngineInputError(
            f"config.json: num_attention_heads ({heads}) must be a multiple of num_key_value_heads ({kv_heads})", field="config"
        )
    return Dims(layers, hidden, heads, kv_heads, head_dim, vocab, bool(cfg.get("tie_word_embeddings", False)))


def text_config(config: dict) -> dict:
    """The language model's part of a (possibly multimodal) config.json."""
    if not isinstance(config, dict):
        raise EngineInputError("config.json must be a JSON object", field="config")
    inner = config.get("text_config")
    if "text_config" in config and not isinstance(inner, dict):
        raise EngineInputError("config.json: text_config must be an object", field="config")
    if isinstance(inner, dict):
        merged = {k: v for k, v in config.items() if k != "text_config"}
        merged.update(inner)
        return merged
    return config


def attention_tensors(layer: int, hidden: int, heads: int, kv_heads: int, head_dim: int, *, qk_norm: bool) -> list[Tensor]:
    tensors = [
        Tensor("attn_norm", layer, 1, hidden),
        Tensor("attn_q", layer, heads * head_dim, hidden),
        Tensor("attn_k", layer, kv_heads * head_dim, hidden),
        Tensor("attn_v", layer, kv_heads * head_dim, hidden),
        Tensor("attn_output", layer, hidden, heads * head_dim),
    ]
    if qk_norm:
        tensors += [Tensor("attn_q_norm", layer, 1, head_dim), Tensor("attn_k_norm", layer, 1, head_dim)]
    return tensors


def mlp_tensors(layer: int, hidden: int, intermediate: int, suffix: str = "", experts: int = 1) -> list[Tensor]:
    return [
        Tensor(f"ffn_gate{suffix}", layer, intermediate, hidden, experts),
        Tensor(f"ffn_up{suffix}", layer, intermediate, hidden, experts),
        Tensor(f"ffn_down{suffix}", layer, hidden, intermediate, experts),
    ]


def gqa_attention(heads: int, kv_heads: int, head_dim: int, window: int = 0) -> LayerAttention:
    """A softmax attention layer whose ``heads`` query heads share ``kv_heads`` key/value heads,
    over the whole context or, with ``window``, its last ``window`` tokens."""
    return LayerAttention(
        kind="sliding" if window else "full",
        kv_elements_per_token=2 * kv_heads * head_dim,
        window=window,
        flops_per_pair=2 * heads * (head_dim + head_dim),
        query_heads=heads,
    )


def output_head(vocab: int, hidden: int, tied: bool) -> list[Tensor]:
    """What closes a decoder: the final norm and, unless the config ties it to the token
    embedding, the output head (vocab x hidden)."""
    tensors = [Tensor("output_norm", -1, 1, hidden)]
    if not tied:
        tensors.append(Tensor("output", -1, vocab, hidden))
    return tensors


def decoder(
    model_type: str,
    tensors,
    attention,
    *,
    layers: int,
    hidden: int,
    vocab: int,
    tied: bool,
    max_context: int,
    n_experts: int = 0,
    experts_per_token: int = 0,
) -> Architecture:
    """The Architecture of a decoder with these tensors (output head included) and attention layers."""
    return Architecture(
        model_type=model_type,
        layers=layers,
        hidden_size=hidden,
        vocab_size=vocab,
        tied_embeddings=tied,
        n_experts=n_experts,
        experts_per_token=experts_per_token,
        max_context=max_context,
        tensors=tuple(tensors),
        attention=tuple(attention),
    )


def register(*model_types: str):
    """Decorator: the function reads configs whose ``model_type`` is one of ``model_types``."""

    def wrap(reader):
        for model_type in model_types:
            if model_type in READERS:
                raise RuntimeError(f"two readers for model_type {model_type!r}")
            READERS[model_type] = reader
        return reader

    return wrap


#: config.json ``model_type`` -> reader returning an :class:`Architecture`. Filled by the modules
#: of ``engine.archs`` (one per model family) through :func:`register`.
READERS: dict = {}


#: Plausibility limits on a config.json, checked before any reader runs: nothing published comes
#: near them, and they keep a pasted file from building billions of tensors.
MAX_LAYERS = 1024
MAX_DIMENSION = 10**8
MAX_LIST = 4096
LAYER_KEYS = ("num_hidden_layers", "n_layer", "num_layers", "n_layers")


def _check_plausible(cfg: dict) -> None:
    for key, value in cfg.items():
        if isinstance(value, bool):
            continue
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            if value != value or value in (float("inf"), float("-inf")):
                raise EngineInputError(f"config.json: {key} is not a finite number", field="config")
            limit = MAX_LAYERS if key in LAYER_KEYS else MAX_DIMENSION
            if abs(value) > limit:
                raise EngineInputError(f"config.json: {key} = {value} is implausibly large (limit {limit:,})", field="config")
        elif isinstance(value, (list, str)) and len(value) > MAX_LIST:
            raise EngineInputError(f"config.json: {key} is implausibly long ({len(value):,} items)", field="config")


def _check_architecture(arch: Architecture) -> None:
    """What any reader returns must describe a real network."""
    if arch.layers <= 0 or len(arch.attention) != arch.layers:
        raise EngineInputError("config.json: the model needs at least one layer", field="config")
    for tensor in arch.tensors:
        if tensor.rows <= 0 or tensor.cols <= 0 or tensor.experts <= 0:
            raise EngineInputError(
                f"config.json: {tensor.name} would have a zero or negative size; check the dimensions "
                "(hidden_size, head_dim, intermediate sizes, vocab_size, expert counts)",
                field="config",
            )


def architecture_from_config(config: dict) -> Architecture:
    """Read a Hugging Face config.json (a dict) into an :class:`Architecture`.

    Raises :class:`EngineInputError` (field ``config``) for a config it cannot read, naming what
    is missing, malformed or contradictory; never another exception.
    """
    from . import archs  # noqa: F401 - importing the package registers every reader

    cfg = text_config(config)
    model_type = cfg.get("model_type")
    if not isinstance(model_type, str) or not model_type:
        raise EngineInputError("config.json: missing model_type", field="config")
    reader = READERS.get(model_type)
    if reader is None:
        known = ", ".join(sorted(READERS))
        raise EngineInputError(f"config.json: model_type {model_type!r} is not supported (supported: {known})", field="config")
    _check_plausible(cfg)
    try:
        arch = reader(cfg)
    except EngineInputError:
        raise
    except (TypeError, ValueError, KeyError, IndexError, ZeroDivisionError, AttributeError, OverflowError) as exc:
        raise EngineInputError(f"config.json: a field has the wrong type or value for {model_type} ({exc})", field="config") from exc
    _check_architecture(arch)
    return arch

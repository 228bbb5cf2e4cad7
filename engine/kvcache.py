"""The KV cache: bytes held and bytes read per token, as the context grows.

Per token of context, each attention layer caches ``kv_elements_per_token`` elements (K and V of
every KV head: GQA models use ``num_key_value_heads``, never the query heads); sliding-window
layers hold at most ``window`` tokens; MLA layers hold a compressed latent; linear-attention and
SSM layers hold a constant state instead (kept in f32, 4 bytes per element, as llama.cpp does).
KV quantisation (``-ctk q8_0 -ctv q8_0``) changes the bytes per element.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from functools import lru_cache

from .arch import Architecture, LayerAttention

#: Recurrent states (linear attention, SSM) are kept in f32 by llama.cpp (llama-memory-recurrent).
STATE_BYTES_PER_ELEMENT = 4.0


def cached_tokens_mean(layer: LayerAttention, start: int, count: int) -> float:
    """Mean tokens held by ``layer`` over contexts start, start+1, ..., start+count-1 (exact)."""
    if layer.kind in ("linear", "ssm", "none") or count <= 0:
        return 0.0
    end = start + count - 1
    if layer.kind != "sliding" or not layer.window or end <= layer.window:
        return (start + end) / 2
    window = layer.window
    if start >= window:
        return float(window)
    # Contexts start..window grow linearly, window+1..end are capped.
    growing = window - start + 1
    return ((start + window) / 2 * growing + window * (count - growing)) / count


@lru_cache(maxsize=256)
def layer_groups(arch: Architecture) -> tuple[tuple[LayerAttention, int], ...]:
    """The distinct token mixers of a model with their counts: a 94-layer model has two or three
    kinds, so every sum over layers below costs a few terms (the stream schedule evaluates them
    hundreds of times per estimate)."""
    return tuple(Counter(arch.attention).items())


def kv_elements(arch: Architecture, context: float) -> float:
    """KV-cache elements held for a ``context``-token history (all layers)."""
    return sum(n * layer.cached_tokens(int(context)) * layer.kv_elements_per_token for layer, n in layer_groups(arch))


def kv_read_elements(arch: Architecture, context: float) -> float:
    """KV-cache elements one decode step reads at ``context`` (shared caches are read per layer)."""
    return sum(n * layer.cached_tokens(int(context)) * layer.kv_read_elements_per_token for layer, n in layer_groups(arch))


def kv_elements_mean(arch: Architecture, start: int, count: int) -> float:
    """Mean KV-cache elements read per step while generating ``count`` tokens after ``start``."""
    return sum(n * cached_tokens_mean(layer, start, count) * layer.kv_read_elements_per_token for layer, n in layer_groups(arch))


def state_bytes(arch: Architecture) -> float:
    """Constant recurrent state of linear-attention / SSM layers, bytes per sequence."""
    return sum(n * layer.state_elements for layer, n in layer_groups(arch)) * STATE_BYTES_PER_ELEMENT


def attention_pairs(layer: LayerAttention, new_tokens: int, depth: int, scanned_cells: int = 0) -> float:
    """(query, key) pairs a causal prefill of ``new_tokens`` after ``depth`` cached tokens scores.

    ``scanned_cells``: for a sliding-window layer, the cells of its cache the kernel scores every
    query against (:func:`swa_scanned_cells`); 0 counts the window alone."""
    if layer.kind in ("linear", "ssm", "none"):
        return 0.0
    n, d = new_tokens, depth
    full = n * d + n * (n + 1) / 2
    if layer.kind != "sliding" or not layer.window:
        return full
    if scanned_cells > layer.window:
        # Token i (0-based) is scored against every filled cell of the cache, at most scanned_cells.
        return n * cached_tokens_mean(replace(layer, window=scanned_cells), d + 1, n)
    # Token i (0-based) sees min(d + i + 1, window) keys.
    return n * cached_tokens_mean(layer, d + 1, n)


#: Cells llama.cpp pads a KV cache to (src/llama-kv-cache-iswa.cpp: "the SWA cache is always padded
#: to 256 for performance", PR 17046, https://github.com/ggml-org/llama.cpp/pull/17046).
KV_CELL_PAD = 256


def swa_scanned_cells(window: int, ubatch: int) -> int:
    """Cells of a sliding-window layer's cache that llama.cpp's GPU attention scores each query of a
    micro-batch against, once the context exceeds the window.

    Since PR 13833 (https://github.com/ggml-org/llama.cpp/pull/13833, "use n_swa + n_ubatch cells for
    SWA cache") a sliding-window layer's cache holds window + micro-batch cells, padded to 256
    (llama_kv_cache_iswa: ``GGML_PAD(std::min(size_base, n_swa + n_ubatch), 256)``; llama-bench sets
    ``swa_full = false``). The cache is a ring: cells out of a query's window stay in the K/V views
    and only the mask removes them, and ggml-cuda's flash-attention kernels skip only the masked
    tail of the cells (fattn-common.cuh ``flash_attn_mask_to_KV_max`` scans from the last cell
    back), so every query of a micro-batch is scored against the whole cache: -ub 2048 with a
    1024-token window scores 3,072 cells, not 1,024."""
    return -(-(window + ubatch) // KV_CELL_PAD) * KV_CELL_PAD


def attention_flops(arch: Architecture, new_tokens: int, depth: int, ubatch: int = 0, layers=None) -> float:
    """FLOPs of attention scores and weighted sums for a prefill (all layers, or those for which
    ``layers(layer)`` is true); with ``ubatch``, the sliding-window layers score the whole window +
    micro-batch cache (:func:`swa_scanned_cells`)."""
    return sum(
        n * layer.flops_per_pair * attention_pairs(layer, new_tokens, depth, swa_scanned_cells(layer.window, ubatch) if ubatch else 0)
        for layer, n in layer_groups(arch)
        if layers is None or layers(layer)
    )


def head_dim(layer: LayerAttention) -> float:
    """Elements of one query head's key (= value) vector: flops_per_pair = 2 x heads x (qk + v)."""
    return layer.flops_per_pair / (4 * layer.query_heads) if layer.query_heads else 0.0


def gqa_ratio(layer: LayerAttention) -> float:
    """Query heads per KV head: the cache holds K and V of each KV head (2 x head_dim elements)."""
    kv = layer.kv_read_elements_per_token
    dim = head_dim(layer)
    return layer.query_heads * 2 * dim / kv if kv and dim else 1.0


def decode_attention_flops(arch: Architecture, context: float) -> float:
    """FLOPs of attention for one generated token attending to ``context`` cached tokens."""
    return sum(n * layer.flops_per_pair * layer.cached_tokens(int(context)) for layer, n in layer_groups(arch))


#: Bytes of F32 attention scores the unfused (no flash attention) decode path moves per query
#: head and cached token: KQ written (4), read and written by the softmax (8), read by KQV (4)
#: (llama.cpp src/llama-graph.cpp build_attn_mha: ggml_mul_mat, ggml_soft_max_ext, ggml_mul_mat).
UNFUSED_SCORE_BYTES = 16.0


def unfused_kv_read_factor(arch: Architecture, context: float, bytes_per_element: float) -> float:
    """Bytes a decode step's attention moves without flash attention, per byte of KV cache read.

    Without flash attention llama.cpp runs attention as matrix-vector products over the cache
    (KQ = K^T q, then V softmax(KQ)), and its GPU kernels broadcast a KV head to the query
    heads of its group by running one block per query head (ggml-cuda mmvf.cu: ``channel_x =
    channel_dst / channel_ratio``; Metal's mul_mv the same with ``r2 = ne12 / ne02``): a GQA
    model's cache streams once per query head, not once per KV head as in the fused kernel,
    and the F32 scores go through memory (UNFUSED_SCORE_BYTES). An MHA model (one query head
    per KV head) pays only the scores. The calibration's flash-attention-off rows show it: eight
    CUDA cards with Llama 3 8B (4 query heads per KV head), tg512 to tg8192 from an empty
    context, lose speed with context at the rate of ~4x its KV bytes (xiongjiedai rows in
    data/calibration/measurements.csv; RTX 3090, Q4_K_M: 115.42 -> 97.31 tok/s from tg512 to
    tg4096 is 1.61 ms more for 1,792 more tokens of mean context, 0.94 GB at four reads per
    token: 583 GB/s, 62% of the card's 936 GB/s, where one read would be 146 GB/s, 16%).
    Multi-head latent attention and recurrent layers keep their own cost (factor 1).
    """
    fused = unfused = 0.0
    for layer, n in layer_groups(arch):
        elements = layer.kv_read_elements_per_token
        if not elements:
            continue
        tokens = max(layer.cached_tokens(int(context)), 1)
        cache_bytes = n * tokens * elements * bytes_per_element
        fused += cache_bytes
        if layer.kind not in ("full", "sliding") or not layer.query_heads:
            unfused += cache_bytes
            continue
        # 2 * heads * (qk + v head dims) FLOPs per pair: heads * (qk + v) elements, one read per query head.
        per_query_head = max(layer.flops_per_pair / 2, elements)
        unfused += n * tokens * (per_query_head * bytes_per_element + UNFUSED_SCORE_BYTES * layer.query_heads)
    return unfused / fused if fused else 1.0

"""Bytes of a model's weights in a given format, and which of them one token reads.

Decode reads, per generated token: every attention and dense-MLP weight, the shared experts, the
routed experts the router picks (top-k of n per MoE layer), the whole output head (vocab x hidden;
with tied embeddings the head *is* the embedding matrix), and one row of the token embedding.
Multi-token-prediction layers are stored but not read by plain decoding.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache

from .arch import Architecture
from .quant import QuantFormat, storage, tensor_bytes, tensor_types

#: Tensors read one row per token (embedding lookups), not in full.
LOOKUP_TENSORS = frozenset({"token_embd", "per_layer_token_embd"})


def prompt_matmul(tensor) -> bool:
    """Whether every prompt token multiplies ``tensor`` as a whole matrix: not a routed expert, an
    embedding look-up, a 1-D tensor, an MTP head or the output head (one token per sequence)."""
    return not (tensor.mtp or tensor.is_routed_expert or tensor.name in LOOKUP_TENSORS or tensor.name == "output" or tensor.rows == 1)


def multiplied_quantised_weights(arch: Architecture, quant: QuantFormat):
    """(ggml type, its storage, weights) of every quantised tensor one token multiplies: routed
    experts at their top-k share; embedding rows, 1-D tensors and MTP heads are not multiplied."""
    share = arch.experts_per_token / arch.n_experts if arch.is_moe else 1.0
    for tensor, type_name in zip(arch.tensors, tensor_types(arch, quant)):
        kind = storage(type_name)
        if tensor.mtp or tensor.name in LOOKUP_TENSORS or not kind.quantized or tensor.rows == 1:
            continue
        yield type_name, kind, tensor.params * (share if tensor.is_routed_expert else 1.0)


@dataclass(frozen=True)
class WeightProfile:
    """Where a model's weight bytes sit, for one weight format (all sizes in bytes)."""

    total: float  # every stored byte except MTP layers (published GGUFs leave them out)
    mtp: float  # multi-token-prediction layers (loaded, and read, only when MTP drafting)
    dense_read: float  # read in full by every token: attention, dense MLP, shared experts, head, norms
    lookup_row: float  # one row of each embedding table, read per token
    experts: float  # all routed experts of all layers
    expert_layers: int  # layers that have routed experts
    per_layer: tuple[float, ...]  # bytes of each block (experts included), for layer offload and splits
    per_layer_experts: tuple[float, ...]  # routed-expert bytes of each block
    outside_layers: float  # embedding, head and final norm
    head: float  # the output projection read per token (the embedding matrix when tied)
    dense_read_params: int = 0  # weights (not bytes) of dense_read + lookup rows
    expert_params: int = 0  # weights of all routed experts
    mtp_experts: float = 0.0  # routed-expert bytes inside the MTP layers
    dense_codebook_params: int = 0  # weights of dense_read stored in a lattice-codebook type (IQ1-IQ3)
    expert_codebook_params: int = 0  # the same among all routed experts
    lookup_tables: float = 0.0  # embedding tables (token_embd, per_layer_token_embd), part of outside_layers
    tied: bool = False  # the output head is the token embedding (no output.weight in the file)

    def experts_read(self, fraction: float) -> float:
        """Routed-expert bytes read when ``fraction`` of each layer's experts are touched."""
        return self.experts * fraction

    def read_per_token(self, expert_fraction: float) -> float:
        return self.dense_read + self.lookup_row + self.experts_read(expert_fraction)

    def mtp_read_per_token(self, expert_fraction: float) -> float:
        """Bytes one multi-token-prediction draft step reads: its block (top-k of its experts)
        and the output head it shares with the main model."""
        if not self.mtp:
            return 0.0
        return self.mtp - self.mtp_experts * (1 - expert_fraction) + self.head


#: What weight_profile() does with a tensor's bytes (_tensor_roles).
_MTP, _MTP_EXPERT, _EXPERT, _LOOKUP, _LOOKUP_HEAD, _DENSE, _HEAD = range(7)


@lru_cache(maxsize=512)
def _tensor_roles(arch: Architecture) -> tuple[bool, tuple[tuple[int, ...], ...]]:
    """Whether the model has an output head, and per tensor (role, block or -1 outside the
    blocks, the tensor's own block number, weights, rows, weights of one row of each expert): what weight_profile() needs of the
    architecture, whatever the format, decided once per architecture."""
    has_output = any(t.name == "output" for t in arch.tensors)
    roles = []
    for tensor in arch.tensors:
        if tensor.mtp:
            role = _MTP_EXPERT if tensor.is_routed_expert else _MTP
        elif tensor.is_routed_expert:
            role = _EXPERT
        elif tensor.name in LOOKUP_TENSORS:
            # Tied embeddings: the output head multiplies by the embedding matrix.
            role = _LOOKUP_HEAD if tensor.name == "token_embd" and not has_output else _LOOKUP
        else:
            role = _HEAD if tensor.name == "output" else _DENSE
        layer = tensor.layer if 0 <= tensor.layer < arch.layers else -1
        roles.append((role, layer, tensor.layer, tensor.params, tensor.rows, tensor.cols * tensor.experts))
    return has_output, tuple(roles)


@lru_cache(maxsize=512)
def weight_profile(arch: Architecture, quant: QuantFormat) -> WeightProfile:
    sizes = tensor_bytes(arch, quant)
    types = tensor_types(arch, quant)
    coded_types = {type_name for type_name in set(types) if storage(type_name).codebook}
    codebook = [type_name in coded_types for type_name in types]
    per_layer = [0.0] * arch.layers
    per_layer_experts = [0.0] * arch.layers
    total = mtp = dense = lookup = experts = outside = head = tables = 0.0
    dense_params = expert_params = dense_codebook = expert_codebook = 0
    mtp_experts = 0.0
    has_output, roles = _tensor_roles(arch)
    for (role, layer, block, params, rows, row_params), size, coded in zip(roles, sizes, codebook):
        if role in (_MTP, _MTP_EXPERT):
            mtp += size
            if role == _MTP_EXPERT:
                mtp_experts += size
            continue
        total += size
        if layer >= 0:
            per_layer[layer] += size
        else:
            outside += size
        if role == _EXPERT:
            experts += size
            expert_params += params
            expert_codebook += params if coded else 0
            per_layer_experts[block] += size
        elif role in (_LOOKUP, _LOOKUP_HEAD):
            lookup += size / rows
            tables += size
            dense_params += row_params
            if role == _LOOKUP_HEAD:
                dense += size
                dense_params += params
                head = size
        else:
            dense += size
            dense_params += params
            dense_codebook += params if coded else 0
            if role == _HEAD:
                head = size
    return WeightProfile(
        total=total,
        mtp=mtp,
        dense_read=dense,
        lookup_row=lookup,
        experts=experts,
        expert_layers=sum(1 for b in per_layer_experts if b > 0),
        per_layer=tuple(per_layer),
        per_layer_experts=tuple(per_layer_experts),
        outside_layers=outside,
        head=head,
        dense_read_params=dense_params,
        expert_params=expert_params,
        mtp_experts=mtp_experts,
        dense_codebook_params=dense_codebook,
        expert_codebook_params=expert_codebook,
        lookup_tables=tables,
        tied=not has_output and head > 0,
    )


#: Smallest share of its recipe's bytes a routed expert tensor keeps in a custom mix (Q8_0 ->
#: ~2 bits a weight): a file that is smaller still is scaled as a whole.
MIN_EXPERT_SHARE = 0.2


def scaled_profile(profile: WeightProfile, file_bytes: float) -> WeightProfile:
    """The profile of a file whose size is known (llama-bench prints it; a model page states it),
    so a custom mix reads what its file holds rather than what the format's default recipe would.
    Weight counts are unchanged.

    A MoE file smaller than its label's recipe took the difference out of its routed experts:
    custom mixes keep attention, shared experts, the dense layers and the head at the labelled
    type and quantise the experts harder, since they are most of the bytes and each token reads
    few of them (ik_llama.cpp discussion 266's 307 GiB "Q8_0" DeepSeek-R1: attention and head
    q8_0, shared experts q5_K, routed experts iq3_s/iq4_xs/q5_K; the recipes of ik_llama.cpp
    discussion 258, https://github.com/ikawrakow/ik_llama.cpp/discussions/258). Any other file
    has every tensor's bytes scaled by the same factor."""
    shrink = profile.total - file_bytes
    if profile.experts and 0 < shrink <= (1 - MIN_EXPERT_SHARE) * profile.experts:
        keep = 1 - shrink / profile.experts
        return replace(
            profile,
            total=file_bytes,
            mtp_experts=profile.mtp_experts * keep,
            mtp=profile.mtp - profile.mtp_experts * (1 - keep),
            experts=profile.experts * keep,
            per_layer=tuple(b - e * (1 - keep) for b, e in zip(profile.per_layer, profile.per_layer_experts)),
            per_layer_experts=tuple(e * keep for e in profile.per_layer_experts),
        )
    if profile.tied and abs(file_bytes - profile.total - profile.head) <= UNTIED_COPY_TOLERANCE * profile.head:
        return _untied_copy(profile, file_bytes)
    factor = file_bytes / profile.total if profile.total else 1.0
    return replace(
        profile,
        total=profile.total * factor,
        mtp=profile.mtp * factor,
        dense_read=profile.dense_read * factor,
        lookup_row=profile.lookup_row * factor,
        experts=profile.experts * factor,
        per_layer=tuple(b * factor for b in profile.per_layer),
        per_layer_experts=tuple(e * factor for e in profile.per_layer_experts),
        outside_layers=profile.outside_layers * factor,
        head=profile.head * factor,
        lookup_tables=profile.lookup_tables * factor,
        mtp_experts=profile.mtp_experts * factor,
    )


#: How near one embedding table's bytes a tied model's excess must be to be read as a second copy
#: of it: ikawrakow's Llama 3.2 1B / 3B files are 1.00-1.06 tables over their recipe in every
#: format he posted (discussion 63). A recipe's mismatch is some other amount and is read in full
#: (Gemma GGUFs are tied, llama.cpp convert_hf_to_gguf.py; the R9700 rows' Gemma 3 12B
#: UD-Q8_K_XL is 0.47 of a table over its recipe).
UNTIED_COPY_TOLERANCE = 0.2


def _untied_copy(profile: WeightProfile, file_bytes: float) -> WeightProfile:
    """A tied model's file larger than its recipe: the excess, up to one embedding matrix, is a
    separate ``output.weight`` beside ``token_embd`` (converters that write the head untied), so
    the file holds the table twice and a token still reads one copy in full and a row of the
    other. ikawrakow's Llama 3.2 1B files (ik_llama.cpp discussion 63) are 2.79 GiB in BF16 for
    a 1.24B-weight model: 1.50B weights, the 1.24B plus a second 128256 x 2048 table. The rest
    of any excess scales every tensor as for other files."""
    table = min(file_bytes - profile.total, profile.head)
    scaled = scaled_profile(replace(profile, tied=False), file_bytes - table)
    return replace(
        scaled,
        total=scaled.total + table,
        outside_layers=scaled.outside_layers + table,
        lookup_tables=scaled.lookup_tables + table,
        tied=False,
    )


def distinct_expert_fraction(arch: Architecture, tokens_in_flight: int, exponent: float = 1.0) -> float:
    """Expected share of a layer's routed experts touched by ``tokens_in_flight`` tokens at once.

    With top-k routing over n experts and independent tokens, an expert is missed by one token
    with probability 1 - k/n, so by B tokens with (1 - k/n)^B (docs/physics.md section 7). Real tokens
    are not independent (related sequences route alike), which the calibration captures as an
    effective token count B^exponent (exponent 1 = independent). One token: exactly k/n.
    """
    if not arch.is_moe:
        return 1.0
    return expert_fraction(arch.experts_per_token / arch.n_experts, tokens_in_flight, exponent)


def expert_fraction(share: float, tokens_in_flight: int, exponent: float = 1.0) -> float:
    """1 - (1 - share)^(B^exponent): the distinct-expert share for a per-token share ``share``."""
    if share >= 1.0:
        return 1.0
    return 1.0 - (1.0 - share) ** (max(1, tokens_in_flight) ** exponent)

"""Weight formats and KV-cache element formats: how many bytes each tensor of a model takes.

A weight format is not one number of bits per weight. llama.cpp's "Q4_K_M" stores most matrices as
Q4_K (4.5 bpw) but the output head as Q6_K and half the ``attn_v``/``ffn_down`` matrices as Q6_K,
which puts Llama 3 8B at ~4.9 bpw; MLX keeps MoE routers at 8 bits; AWQ leaves the embeddings and
the head unquantised. So every format names a *recipe*, a per-tensor choice of storage type, and
each storage type has its own exact size (ggml's block structs, MLX's group layout ...).

The catalog of formats is ``data/quants.toml`` (schema below, loaded as strictly as the hardware
catalog). Tensor names are llama.cpp's GGUF names (see ``engine/arch.py``), which lets the GGUF
recipe be a line-by-line port of llama.cpp's ``llama_tensor_get_type`` and lets the other recipes
say "embeddings", "routers", "attention" by name.
"""

from __future__ import annotations

import math
import re
import tomllib
from dataclasses import dataclass, field, replace
from functools import cache, lru_cache

from .arch import Architecture, Tensor
from .catalog import DATA_DIR, AliasIndex, CatalogError, Field, validate_entry
from .errors import EngineInputError
from .resolve import resolve

# --------------------------------------------------------------------------------------------
# Storage types: bytes of a matrix stored in one type
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Storage:
    """How one storage type lays out a ``rows x cols`` matrix.

    Blocks of ``block`` consecutive elements of a row (along ``cols``, the input dimension) take
    ``block_bytes`` each; ``row_bytes`` are per-output-channel extras (a scale per row),
    ``col_bytes`` per-input-channel extras (GPTQ's act-order index), ``matrix_bytes`` per-matrix
    extras (a global scale). Each expert of a merged expert tensor is one matrix. ``pads``: a row
    that is not a whole number of blocks is padded (block-scaled FP8) rather than refused.
    """

    name: str
    block: int
    block_bytes: float
    row_bytes: float = 0.0
    col_bytes: float = 0.0
    matrix_bytes: float = 0.0
    quantized: bool = True
    pads: bool = False
    #: Codes are indices into a lattice codebook (ggml's iq1s/iq2xxs/iq2xs/iq2s/iq3xxs/iq3s_grid
    #: tables in ggml-common.h) plus sign bits: unpacking gathers table entries, which SIMD CPU
    #: kernels cannot do as cheaply as shifting nibbles (decode.py, ``codebook_ops``).
    codebook: bool = False

    @property
    def bits_per_weight(self) -> float:
        """Bits per element of the blocks (row/col/matrix extras excluded)."""
        return self.block_bytes * 8 / self.block

    def matrix_size(self, rows: int, cols: int) -> float:
        # A padding type stores partial blocks at their share of a block (the scale rounding up is
        # a few bytes per row); the others need whole blocks.
        blocks_per_row = cols / self.block if self.pads else math.ceil(cols / self.block)
        row = blocks_per_row * self.block_bytes
        return rows * (row + self.row_bytes) + cols * self.col_bytes + self.matrix_bytes


def _ggml(name: str, block: int, block_bytes: int, quantized: bool = True, codebook: bool = False) -> Storage:
    return Storage(name, block, block_bytes, quantized=quantized, codebook=codebook)


#: ggml's tensor types: elements per block and bytes per block, from the block structs and their
#: static_asserts in ggml/src/ggml-common.h (llama.cpp commit 01243c58) and ggml.c type_traits.
#: Names are ggml_type_name()'s. QK_K = 256.
GGML_TYPES: dict[str, Storage] = {
    s.name: s
    for s in (
        _ggml("f32", 1, 4, quantized=False),
        _ggml("f16", 1, 2, quantized=False),
        _ggml("bf16", 1, 2, quantized=False),
        _ggml("q4_0", 32, 2 + 16),  # half d; 16 bytes of nibbles
        _ggml("q4_1", 32, 2 + 2 + 16),  # half d, half m; nibbles
        _ggml("q5_0", 32, 2 + 4 + 16),  # half d; 4 bytes high bits; nibbles
        _ggml("q5_1", 32, 2 + 2 + 4 + 16),
        _ggml("q8_0", 32, 2 + 32),  # half d; 32 int8
        _ggml("q8_1", 32, 2 + 2 + 32),  # half d, half s; 32 int8 (activations only)
        _ggml("q2_K", 256, 256 // 16 + 256 // 4 + 2 + 2),  # scales, quants, d, dmin = 84
        _ggml("q3_K", 256, 256 // 8 + 256 // 4 + 12 + 2),  # hmask, quants, scales, d = 110
        _ggml("q4_K", 256, 2 + 2 + 12 + 256 // 2),  # d, dmin, scales, quants = 144
        _ggml("q5_K", 256, 2 + 2 + 12 + 256 // 8 + 256 // 2),  # = 176
        _ggml("q6_K", 256, 256 // 2 + 256 // 4 + 256 // 16 + 2),  # ql, qh, scales, d = 210
        _ggml("q8_K", 256, 4 + 256 + 256 // 16 * 2),  # float d, quants, int16 bsums = 292
        _ggml("iq2_xxs", 256, 2 + 256 // 8 * 2, codebook=True),  # = 66
        _ggml("iq2_xs", 256, 2 + 256 // 8 * 2 + 256 // 32, codebook=True),  # = 74
        _ggml("iq2_s", 256, 2 + 256 // 4 + 256 // 16, codebook=True),  # = 82
        _ggml("iq3_xxs", 256, 2 + 3 * (256 // 8), codebook=True),  # = 98
        _ggml("iq3_s", 256, 2 + 13 * (256 // 32) + 256 // 64, codebook=True),  # = 110
        _ggml("iq1_s", 256, 2 + 256 // 8 + 256 // 16, codebook=True),  # = 50
        _ggml("iq1_m", 256, 256 // 8 + 256 // 16 + 256 // 32, codebook=True),  # = 56
        _ggml("iq4_nl", 32, 2 + 16),  # = 18
        _ggml("iq4_xs", 256, 2 + 2 + 256 // 64 + 256 // 2),  # = 136
        _ggml("tq1_0", 256, (256 - 4 * 256 // 64) // 5 + 256 // 64 + 2),  # = 54
        _ggml("tq2_0", 256, 256 // 4 + 2),  # = 66
        _ggml("mxfp4", 32, 1 + 16),  # E8M0 exponent + 16 bytes of E2M1 pairs = 17
        _ggml("nvfp4", 64, 64 // 16 + 64 // 2),  # 4 UE4M3 sub-block scales + 32 bytes = 36
        _ggml("q1_0", 128, 2 + 128 // 8),  # = 18
        _ggml("q2_0", 64, 2 + 64 // 4),  # = 18
    )
}

#: PrismML's llama.cpp fork: the original 2-bit group-128 pack of its ternary Bonsai models
#: (one fp16 scale + 32 bytes of 2-bit codes per 128), now called PQ2_0 there.
FORK_TYPES: dict[str, Storage] = {"pq2_0": Storage("pq2_0", 128, 2 + 128 // 4)}

#: Storage types of the non-GGUF formats (sources in data/quants.toml, per format).
OTHER_TYPES: dict[str, Storage] = {
    s.name: s
    for s in (
        # MLX affine: packed uint32 codes, a scale and a bias per group of 64 in the model's
        # dtype (bf16): 4 + 32/64 and 8 + 32/64 bits (ml-explore mlx.core.quantize docs).
        Storage("mlx4-g64", 64, 64 * 4 / 8 + 2 + 2),
        Storage("mlx8-g64", 64, 64 * 8 / 8 + 2 + 2),
        # MLX mxfp4: E2M1 values, one E8M0 (uint8) scale per 32, no bias; nvfp4: one E4M3 scale
        # per 16, no bias, no per-tensor scale.
        Storage("mlx-mxfp4-g32", 32, 16 + 1),
        Storage("mlx-nvfp4-g16", 16, 8 + 1),
        # NVIDIA NVFP4 checkpoints (ModelOpt / compressed-tensors): E2M1 values, an E4M3 scale
        # per 16, plus an FP32 global weight scale and an FP32 input scale per matrix.
        Storage("nvfp4-g16", 16, 8 + 1, matrix_bytes=4 + 4),
        # FP8 E4M3 weights with one FP32 scale per 128x128 tile (DeepSeek/Qwen "block" FP8): the
        # tile's 4 bytes are shared by 128 rows, so a 128-element row block carries 4/128 bytes.
        # Edge tiles are partial (the scale grid is ceil(rows/128) x ceil(cols/128)).
        Storage("fp8-block128", 128, 128 + 4 / 128, pads=True),
        # AutoAWQ GEMM: 4-bit codes, an fp16 scale and a packed 4-bit zero point per 128 inputs.
        Storage("awq4-g128", 128, 64 + 2 + 0.5),
        # GPTQ: the same per group, plus an int32 act-order index (g_idx) per input column.
        Storage("gptq4-g128", 128, 64 + 2 + 0.5, col_bytes=4),
        # AutoRound's auto_round export: GPTQ-style packing (qweight, qzeros, fp16 scales), no g_idx.
        Storage("autoround4-g128", 128, 64 + 2 + 0.5),
        # compressed-tensors pack-quantized int4, symmetric: a bf16 scale per 128, no zero point.
        Storage("int4-g128", 128, 64 + 2),
        # Channel-wise integer weights (compressed-tensors "channel" strategy, QAT exports): a
        # bf16 scale per output row.
        Storage("int8-channel", 1, 1, row_bytes=2),
        Storage("int4-channel", 2, 1, row_bytes=2),
        Storage("int2-channel", 4, 1, row_bytes=2),
    )
}

#: exllamav3 EXL3 tensors: ``exl3-<bits>``, a trellis code of exactly ``bits`` per weight in 16x16
#: tiles plus fp16 sign vectors over the input and output channels (suh, svh).
EXL3_TYPE = re.compile(r"^exl3-(\d+(?:\.\d+)?)$")


@cache
def storage(type_name: str) -> Storage:
    """The storage type called ``type_name`` (a ggml type, an other-format type or ``exl3-<bits>``)."""
    known = GGML_TYPES.get(type_name) or FORK_TYPES.get(type_name) or OTHER_TYPES.get(type_name)
    if known:
        return known
    match = EXL3_TYPE.match(type_name)
    if match:
        bits = float(match.group(1))
        return Storage(type_name, 16, 16 * bits / 8, row_bytes=2, col_bytes=2)
    raise KeyError(f"unknown storage type {type_name!r}")


def tensor_size(tensor: Tensor, type_name: str) -> float:
    """Bytes of ``tensor`` stored as ``type_name``."""
    return tensor.experts * storage(type_name).matrix_size(tensor.rows, tensor.cols)


def _bits(type_name: str) -> float:
    return storage(type_name).bits_per_weight


def _fits(tensor: Tensor, type_name: str) -> bool:
    """Whether the tensor's rows split into whole blocks of the type, which the quantisers require
    (except for padding types)."""
    kind = storage(type_name)
    return kind.pads or tensor.cols % kind.block == 0


# --------------------------------------------------------------------------------------------
# Tensor roles (GGUF names, engine/arch.py)
# --------------------------------------------------------------------------------------------

EMBEDDINGS = frozenset({"token_embd", "per_layer_token_embd"})
ROUTERS = frozenset({"ffn_gate_inp", "ffn_gate_inp_shexp"})
#: Tensors that are not matrix weights of a Linear layer (convolutions, SSM parameters).
NON_LINEAR = frozenset({"ssm_conv1d", "ssm_a", "ssm_d", "ssm_dt", "attn_sinks"})
#: Low-rank gate projections of gated-DeltaNet layers that Ollama's Qwen3.5 import keeps in BF16.
LINEAR_ATTENTION_GATES = frozenset({"ssm_alpha", "ssm_beta", "ssm_ba"})


def _is_vector(t: Tensor) -> bool:
    """A 1-D tensor (norm, bias, per-head scalar): ggml_n_dims() == 1."""
    return t.rows == 1 and t.experts == 1


def _is_bias(t: Tensor) -> bool:
    return t.name.endswith(".bias")


def _is_matrix_weight(t: Tensor) -> bool:
    """A 2-D (or merged-expert 3-D) weight of a linear or embedding layer."""
    base = t.name.rsplit(".", 1)[-1] if "." in t.name else t.name
    return not (_is_vector(t) or _is_bias(t) or "norm" in base or t.name in NON_LINEAR)


def _is_attention(t: Tensor) -> bool:
    """Attention and linear-attention/SSM projections (the tensors Unsloth keeps at more bits)."""
    return (t.name.startswith("attn_") or t.name.startswith("ssm_")) and _is_matrix_weight(t)


def _is_shared_expert(t: Tensor) -> bool:
    return t.name.endswith("_shexp") and _is_matrix_weight(t)


# --------------------------------------------------------------------------------------------
# llama.cpp: llama_tensor_get_type, ported
# --------------------------------------------------------------------------------------------

#: llama_ftype_get_default_type (src/llama-quant.cpp, llama.cpp commit 007dbbf3).
FTYPE_DEFAULT_TYPE = {
    "F32": "f32", "F16": "f16", "BF16": "bf16",
    "Q4_0": "q4_0", "Q4_1": "q4_1", "Q5_0": "q5_0", "Q5_1": "q5_1", "Q8_0": "q8_0",
    "Q1_0": "q1_0", "Q2_0": "q2_0", "MXFP4_MOE": "mxfp4", "NVFP4": "nvfp4", "PQ2_0": "pq2_0",
    "Q2_K": "q2_K", "Q2_K_S": "q2_K",
    "Q3_K_S": "q3_K", "Q3_K_M": "q3_K", "Q3_K_L": "q3_K",
    "Q4_K_S": "q4_K", "Q4_K_M": "q4_K", "Q5_K_S": "q5_K", "Q5_K_M": "q5_K", "Q6_K": "q6_K",
    "TQ1_0": "tq1_0", "TQ2_0": "tq2_0",
    "IQ2_XXS": "iq2_xxs", "IQ2_XS": "iq2_xs", "IQ2_S": "iq2_xs", "IQ2_M": "iq2_s",
    "IQ3_XXS": "iq3_xxs", "IQ3_XS": "iq3_s", "IQ3_S": "iq3_s", "IQ3_M": "iq3_s",
    "IQ1_S": "iq1_s", "IQ1_M": "iq1_m", "IQ4_NL": "iq4_nl", "IQ4_XS": "iq4_xs",
}

#: tensor_type_fallback: the type used when a row is not a whole number of blocks.
_FALLBACK = {
    "iq1_s": "iq4_nl", "iq1_m": "iq4_nl", "iq2_xxs": "iq4_nl", "iq2_xs": "iq4_nl", "iq2_s": "iq4_nl",
    "iq3_xxs": "iq4_nl", "iq3_s": "iq4_nl", "iq4_xs": "iq4_nl",
    "q2_0": "q4_0", "q2_K": "q4_0", "q3_K": "q4_0", "tq1_0": "q4_0", "tq2_0": "q4_0",
    "q4_K": "q5_0", "q5_K": "q5_1", "q6_K": "q8_0",
}

_IQ2_FTYPES = frozenset({"IQ2_XXS", "IQ2_XS", "IQ1_S", "IQ2_S", "IQ2_M", "IQ1_M"})
#: llama.cpp model families that convert to LLM_ARCH_LLAMA (convert_hf_to_gguf.py LlamaModel).
_LLAMA_ARCH = frozenset({"llama", "mistral", "mixtral"})
#: Tensors convert_hf_to_gguf.py always writes as F32 (besides 1-D ones and norms).
_F32_IN_SOURCE = frozenset({"ffn_gate_inp", "position_embd", "token_types", "ssm_conv1d", "shortconv.conv"})
#: 2-D weights tensor_allows_quantization() leaves in their source type (besides the above).
_NOT_QUANTIZED = ("ffn_gate_inp.weight", "ffn_gate_tid2eid.weight", "altup", "laurel", "per_layer_model_proj",
                  "ssm_conv1d", "shortconv.conv.weight", "indexer.k_proj.weight", "indexer.q_proj.weight",
                  "time_mix_", "attn_rel_b.weight", "position_embd", "token_types")
#: GGUF tensors whose names have no ``.weight`` suffix (src/llama-arch.cpp: LLM_TENSOR_SSM_A/D).
_NO_WEIGHT_SUFFIX = frozenset({"ssm_a", "ssm_d"})


def gguf_name(t: Tensor) -> str:
    """The tensor's full name in a GGUF file: ``blk.<layer>.<name>.weight``."""
    name = t.name
    if not (name.endswith(".weight") or name.endswith(".bias") or name in _NO_WEIGHT_SUFFIX):
        name += ".weight"
    return f"blk.{t.layer}.{name}" if t.layer >= 0 else name


def _category(full: str) -> str:
    """tensor_get_category(): broad roles by substring, in llama.cpp's order."""
    if full == "output.weight":
        return "output"
    if full in ("token_embd.weight", "per_layer_token_embd.weight"):
        return "token_embd"
    for key, category in (("attn_qkv.weight", "attn_qkv"), ("attn_kv_b.weight", "attn_kv_b"),
                          ("attn_v.weight", "attn_v"), ("attn_k.weight", "attn_k"), ("attn_q.weight", "attn_q"),
                          ("attn_output.weight", "attn_output"), ("ffn_up", "ffn_up"), ("ffn_gate", "ffn_gate"),
                          ("ffn_down", "ffn_down")):
        if key in full:
            return category
    return "other"


def _is_attn_v_like(category: str) -> bool:
    return category in ("attn_v", "attn_qkv", "attn_kv_b")


def _use_more_bits(i_layer: int, n_layers: int) -> bool:
    return i_layer < n_layers // 8 or i_layer >= 7 * n_layers // 8 or (i_layer - n_layers // 8) % 3 == 2


def gqa_ratio(arch: Architecture) -> float:
    """hparams.n_gqa(): query heads per KV head of the first attention layer (1 without one).

    ``flops_per_pair / (2 * kv_elements_per_token)`` = n_head / n_head_kv for any head sizes. MLA
    layers come out large (tens), as in llama.cpp, which converts MLA to MQA (one KV head); the
    recipe only compares the ratio with 4.
    """
    for layer in arch.attention:
        if layer.kind in ("full", "sliding", "mla") and layer.kv_elements_per_token and layer.flops_per_pair:
            return layer.flops_per_pair / (2 * layer.kv_elements_per_token)
    return 1.0


@dataclass
class _GgufState:
    """quantize_state_impl: the counters llama_tensor_get_type_impl advances tensor by tensor."""

    ftype: str
    n_attention_wv: int
    n_layer: int
    n_expert: int
    gqa: float
    tied: bool
    falcon: bool
    is_70b: bool
    imatrix: bool
    i_attention_wv: int = 0
    i_ffn_down: int = 0
    i_ffn_gate: int = 0
    i_ffn_up: int = 0


def _layer_info(qs: _GgufState, counter: int, t: Tensor) -> tuple[int, int]:
    """layer_info(): MoE models read the layer from the name, others count tensors."""
    return (t.layer if qs.n_expert > 1 else counter), qs.n_layer


def _gguf_choice(qs: _GgufState, new_type: str, t: Tensor, category: str) -> str:
    """llama_tensor_get_type_impl(), branch for branch (src/llama-quant.cpp, commit 007dbbf3)."""
    ftype, gqa, n_expert = qs.ftype, qs.gqa, qs.n_expert
    if category == "output" or (qs.tied and category == "token_embd"):
        if ftype == "MXFP4_MOE":
            return "q8_0"
        if qs.falcon or t.cols % storage(new_type).block:
            return "q8_0"
        if ftype in ("IQ2_XXS", "IQ2_XS", "IQ3_XXS", "IQ1_S", "IQ2_S", "IQ2_M", "IQ1_M"):
            return "q5_K"
        return "q6_K" if new_type != "q8_0" else new_type
    if ftype == "MXFP4_MOE":
        # Expert tensors (ne[2] > 1) -> MXFP4, everything else -> Q8_0.
        return "mxfp4" if t.experts > 1 else "q8_0"
    if category == "token_embd":
        if ftype in ("IQ2_XXS", "IQ2_XS", "IQ1_S", "IQ1_M"):
            return "q2_K"
        if ftype in ("IQ2_S", "IQ2_M", "IQ3_XXS"):
            return "iq3_s"
        if ftype in ("TQ1_0", "TQ2_0", "Q2_0"):
            return "q4_K"
        return new_type
    if ftype in _IQ2_FTYPES:
        iq2s = ftype in ("IQ2_S", "IQ2_M")
        if _is_attn_v_like(category):
            qs.i_attention_wv += 1
            if gqa >= 4 or n_expert >= 4:
                return "q4_K"
            return "iq3_s" if iq2s else "q2_K"
        if n_expert == 8 and category == "attn_k":
            return "q4_K"
        if category == "ffn_down":
            chosen = new_type
            if qs.i_ffn_down < qs.n_layer // 8:
                chosen = "iq3_s" if iq2s else "q2_K"
            qs.i_ffn_down += 1
            return chosen
        if category == "attn_output":
            if n_expert == 8:
                return "q5_K"
            if ftype in ("IQ1_S", "IQ1_M"):
                return "iq2_xxs"
            if iq2s:
                return "iq3_s"
        return new_type
    if _is_attn_v_like(category):
        return _attn_v_type(qs, new_type)
    if category == "attn_k":
        if n_expert == 8:
            return "q8_0"
        if ftype == "IQ3_XS":
            return "iq3_xxs"
        if ftype == "IQ3_XXS":
            return "iq2_s"
        return new_type
    if category == "attn_q":
        if ftype == "IQ3_XS":
            return "iq3_xxs"
        if ftype == "IQ3_XXS":
            return "iq2_s"
        return new_type
    if category == "ffn_down":
        i_layer, n_layer = _layer_info(qs, qs.i_ffn_down, t)
        qs.i_ffn_down += 1
        return _ffn_down_type(qs, new_type, i_layer, n_layer)
    if category == "attn_output":
        return _attn_output_type(qs, new_type)
    # llama.cpp's own ATTENTION_QKV branch never runs: attn_qkv is attn_v-like and taken above.
    if category in ("ffn_gate", "ffn_up"):
        if category == "ffn_gate":
            i_layer, n_layer = _layer_info(qs, qs.i_ffn_gate, t)
            qs.i_ffn_gate += 1
        else:
            i_layer, n_layer = _layer_info(qs, qs.i_ffn_up, t)
            qs.i_ffn_up += 1
        if ftype == "IQ3_XS" and n_layer // 8 <= i_layer < 7 * n_layer // 8:
            return "iq3_xxs"
        return new_type
    return new_type


def _attn_v_type(qs: _GgufState, new_type: str) -> str:
    ftype, gqa = qs.ftype, qs.gqa
    i, n = qs.i_attention_wv, qs.n_attention_wv
    if ftype == "Q2_K":
        new_type = "q4_K" if gqa >= 4 else "q3_K"
    elif ftype == "Q2_K_S" and gqa >= 4:
        new_type = "q4_K"
    elif ftype == "IQ3_XXS":
        new_type = "q4_K" if gqa >= 4 else ("iq3_s" if not qs.imatrix else "iq3_xxs")
    elif ftype in ("IQ3_XS", "IQ3_S") and gqa >= 4:
        new_type = "q4_K"
    elif ftype == "IQ3_M":
        new_type = "q4_K"
    elif ftype == "Q3_K_M":
        new_type = "q5_K" if i < 2 else "q4_K"
    elif ftype == "Q3_K_L":
        new_type = "q5_K"
    elif ftype in ("IQ4_NL", "IQ4_XS") and gqa >= 4:
        new_type = "q5_K"
    elif ftype in ("Q4_K_M", "Q5_K_M") and _use_more_bits(i, n):
        new_type = "q6_K"
    elif ftype == "Q4_K_S" and i < 4:
        new_type = "q5_K"
    if qs.is_70b and new_type in ("q3_K", "q4_K"):
        # 8 heads share one attn_v in the 70B: more bits for nearly no size.
        new_type = "q5_K"
    if qs.n_expert == 8:
        new_type = "q8_0"
    qs.i_attention_wv += 1
    return new_type


def _ffn_down_type(qs: _GgufState, new_type: str, i_layer: int, n_layer: int) -> str:
    ftype = qs.ftype
    if ftype == "Q2_K":
        return "q3_K"
    if ftype == "Q2_K_S":
        return "q4_K" if i_layer < n_layer // 8 else new_type
    if ftype == "IQ3_XXS" and not qs.imatrix:
        return "q4_K" if i_layer < n_layer // 8 else "q3_K"
    if ftype == "Q3_K_M":
        if i_layer < n_layer // 16:
            return "q5_K"
        return "q4_K" if not qs.falcon or _use_more_bits(i_layer, n_layer) else "q3_K"
    if ftype == "IQ3_M" and (i_layer < n_layer // 8 or (qs.n_expert == 8 and _use_more_bits(i_layer, n_layer))):
        return "q4_K"
    if ftype == "Q3_K_L":
        return "q4_K" if qs.falcon else "q5_K"
    if ftype == "Q4_K_M":
        if qs.falcon:
            if i_layer < n_layer // 16:
                return "q6_K"
            return "q5_K" if _use_more_bits(i_layer, n_layer) else "q4_K"
        return "q6_K" if _use_more_bits(i_layer, n_layer) else new_type
    if i_layer < n_layer // 8 and ftype in ("IQ4_NL", "IQ4_XS") and not qs.imatrix:
        return "q5_K"
    if ftype == "Q5_K_M" and _use_more_bits(i_layer, n_layer):
        return "q6_K"
    if ftype == "Q4_K_S" and not qs.falcon and i_layer < n_layer // 8:
        return "q5_K"
    if ftype in ("Q4_0", "Q5_0") and qs.imatrix and i_layer < n_layer // 8:
        return "q4_1" if ftype == "Q4_0" else "q5_1"
    return new_type


def _attn_output_type(qs: _GgufState, new_type: str) -> str:
    ftype = qs.ftype
    if qs.falcon:
        return "q4_K" if ftype == "Q3_K_L" else new_type
    if qs.n_expert == 8:
        if ftype in ("Q2_K", "IQ3_XS", "IQ3_XXS", "Q3_K_S", "Q3_K_M", "IQ4_NL", "Q4_K_S", "Q4_K_M", "IQ3_S",
                     "IQ3_M", "IQ4_XS"):
            return "q5_K"
        return new_type
    return {"Q2_K": "q3_K", "IQ3_XXS": "iq3_s", "Q3_K_M": "q4_K", "Q3_K_L": "q5_K", "IQ3_M": "q4_K"}.get(ftype, new_type)


def _allows_quantization(t: Tensor, full: str) -> bool:
    """tensor_allows_quantization(): 2-D+ ``*weight`` tensors that are not norms, routers, convs ..."""
    if _is_vector(t) or not full.endswith("weight") or "_norm.weight" in full:
        return False
    return not any(key in full for key in _NOT_QUANTIZED)


def _fallback(type_name: str, cols: int) -> str:
    """tensor_type_fallback(): a compatible type when ``cols`` is not a multiple of the block.

    Where llama.cpp has no fallback (it aborts) we use F16, the type it picks when the fallback
    does not fit either.
    """
    if cols % storage(type_name).block == 0:
        return type_name
    fallback = _FALLBACK.get(type_name, "f16")
    return fallback if cols % storage(fallback).block == 0 else "f16"


def _source_type(t: Tensor, full: str, ftype: str) -> str:
    """Type of a tensor llama-quantize copies unchanged: what convert_hf_to_gguf.py wrote.

    1-D tensors, norms, routers, SSM convolutions and names without ``.weight`` are F32; other
    tensors keep the float type of the conversion (BF16, the usual source for quantising).
    """
    base = t.name.removesuffix(".weight")
    if _is_vector(t) or not full.endswith(".weight") or full.endswith("_norm.weight") or base in _F32_IN_SOURCE:
        return "f32"
    return {"F32": "f32", "F16": "f16"}.get(ftype, "bf16")


def _is_70b(arch: Architecture, gqa: float) -> bool:
    """LLM_TYPE_70B (src/llama-model.cpp): 80-layer Llama with GQA, 80-layer Qwen2."""
    if arch.layers != 80:
        return False
    return (arch.model_type in _LLAMA_ARCH and gqa > 1) or arch.model_type == "qwen2"


def llama_cpp_types(
    arch: Architecture,
    ftype: str,
    *,
    imatrix: bool = True,
    pure: bool = False,
    token_embedding_type: str = "",
    output_tensor_type: str = "",
) -> tuple[str, ...]:
    """The type llama-quantize gives each of ``arch.tensors`` for file type ``ftype`` ("Q4_K_M").

    ``imatrix``: quantised with an importance matrix, as bartowski's and Unsloth's files are; it
    changes a few choices (Q4_0/Q5_0 first ffn_down layers, IQ3_XXS/IQ4 fallbacks).
    ``pure``: --pure, every quantisable tensor in the file type's default type.
    ``token_embedding_type`` / ``output_tensor_type``: --token-embedding-type / --output-tensor-type.
    """
    default = FTYPE_DEFAULT_TYPE[ftype]
    fulls = [gguf_name(t) for t in arch.tensors]
    categories = [_category(full) for full in fulls]
    gqa = gqa_ratio(arch)
    qs = _GgufState(
        ftype=ftype,
        n_attention_wv=sum(1 for c in categories if _is_attn_v_like(c)),
        n_layer=max((t.layer for t in arch.tensors), default=-1) + 1,
        n_expert=arch.n_experts,
        gqa=gqa,
        tied="output.weight" not in fulls,
        falcon=arch.model_type == "falcon",
        is_70b=_is_70b(arch, gqa),
        imatrix=imatrix,
    )
    types = [""] * len(fulls)
    # llama_model_loader's weights_map orders tensors by block number, then by name; the
    # counters (i_attention_wv ...) advance in that order.
    for index in sorted(range(len(fulls)), key=lambda i: (arch.tensors[i].layer, fulls[i])):
        t, full = arch.tensors[index], fulls[index]
        if not _allows_quantization(t, full):
            chosen = _source_type(t, full, ftype)
        elif token_embedding_type and categories[index] == "token_embd":
            chosen = token_embedding_type
        elif output_tensor_type and (categories[index] == "output" or (qs.tied and categories[index] == "token_embd")):
            chosen = output_tensor_type
        elif not storage(default).quantized:
            chosen = default
        elif pure:
            chosen = _fallback(default, t.cols)
        else:
            chosen = _fallback(_gguf_choice(qs, default, t, categories[index]), t.cols)
        types[index] = chosen
    if arch.model_type == "gpt_oss":
        # gpt-oss ships its experts as MXFP4 and the published GGUFs keep them so whatever the
        # file type (data/quants.toml, MXFP4 notes): llama-quantize's choice applies to the rest.
        types = ["mxfp4" if t.is_routed_expert and _is_matrix_weight(t) else ty for t, ty in zip(arch.tensors, types)]
    return tuple(types)


def has_linear_attention(arch: Architecture) -> bool:
    """Some blocks use linear attention (gated DeltaNet: Qwen3-Next, Qwen3.5/3.6) instead of softmax."""
    return any(layer.kind == "linear" for layer in arch.attention)


def unsloth_dynamic_types(
    arch: Architecture, base_ftype: str, upgrade_type: str, hybrid_upgrade_type: str, dense_hybrid_upgrade_type: str = ""
) -> tuple[str, ...]:
    """Unsloth Dynamic ("UD-") GGUFs: a llama.cpp recipe with the sensitive tensors raised.

    Unsloth picks types per model and publishes no per-tensor table; its documentation says
    attention, SSM and shared-expert tensors are kept at higher precision, "especially for hybrid
    architectures" (its Qwen3.5 study). Modelled on top of ``base_ftype``, never lowering a type:
    MoE linear-attention hybrids raise attention, SSM and shared-expert tensors to
    ``hybrid_upgrade_type``; other MoE models (Mamba hybrids included) raise them to
    ``upgrade_type``; dense models, hybrids included, raise the token embedding and output head
    to ``upgrade_type``: in a dense model the attention and SSM tensors are a third of the
    weights, and Qwen3.6-27B's UD-Q4_K_XL file (17.6 GB) is only 0.8 GB above its Q4_K_M, which
    the embedding and head at Q8_0 account for. Where a level does raise them in dense hybrids
    too (``dense_hybrid_upgrade_type``: UD-Q8_K_XL, 33.3 GiB for Qwen3.6-27B in llama-bench),
    they go to that type. The errors against published file sizes are in data/quants.toml.
    """
    hybrid = has_linear_attention(arch)
    if arch.is_moe:
        target, sensitive = (hybrid_upgrade_type if hybrid else upgrade_type), _is_attention_or_shared
    elif hybrid and dense_hybrid_upgrade_type:
        target, sensitive = dense_hybrid_upgrade_type, _is_attention_or_shared
    else:
        target, sensitive = upgrade_type, _is_embedding_or_head
    out = []
    for t, chosen in zip(arch.tensors, llama_cpp_types(arch, base_ftype)):
        if sensitive(t) and storage(chosen).quantized and _bits(target) > _bits(chosen) and _fits(t, target):
            chosen = target
        out.append(chosen)
    return tuple(out)


def _is_attention_or_shared(t: Tensor) -> bool:
    return _is_attention(t) or _is_shared_expert(t)


def _is_embedding_or_head(t: Tensor) -> bool:
    return t.name in ("token_embd", "output")


# --------------------------------------------------------------------------------------------
# Recipes of the other formats
# --------------------------------------------------------------------------------------------

#: dtype non-GGUF formats keep unquantised tensors in (the checkpoints' bf16).
DENSE = "bf16"


def mlx_types(arch: Architecture, weight_type: str) -> tuple[str, ...]:
    """mlx-lm / mlx-vlm ``convert -q``: nn.quantize() every Linear and Embedding whose input
    dimension divides by the group size; MoE routers at 8-bit affine, group 64, through the
    models' quant_predicate (mlx_lm/utils.py quantize_model; models/qwen3_moe.py ...)."""
    out = []
    for t in arch.tensors:
        if not _is_matrix_weight(t):
            out.append(DENSE)
        elif t.name in ROUTERS:
            out.append("mlx8-g64" if _fits(t, "mlx8-g64") else DENSE)
        else:
            out.append(weight_type if _fits(t, weight_type) else DENSE)
    return tuple(out)


#: Ollama's GetTensorQuantization promotes these projections to 8 bits in int4 mode.
_OLLAMA_SENSITIVE = frozenset({"attn_k", "attn_v", "ffn_down", "ffn_down_exps", "ffn_down_shexp"})


def ollama_mlx_types(arch: Architecture, weight_type: str) -> tuple[str, ...]:
    """Ollama's MLX engine ``int4`` (x/create/create.go GetTensorQuantization; x/create/qwen35.go).

    Default policy: embeddings, norms, routers and tensors under 1024 elements stay BF16; k, v and
    down projections go to int8 (group 64); every other aligned weight, the head included, to int4.
    Qwen3.5 / Qwen3-Next imports use their own policy: every aligned 2-D weight of 1024+ elements,
    embeddings and routers included, at int4.
    """
    qwen35 = arch.model_type.startswith(("qwen3_5", "qwen3_next"))
    out = []
    for t in arch.tensors:
        if not _is_matrix_weight(t) or t.rows * t.cols * t.experts < 1024 or not _fits(t, weight_type):
            out.append(DENSE)
        elif qwen35:
            out.append(weight_type)
        elif t.name in EMBEDDINGS or t.name in ROUTERS:
            out.append(DENSE)
        elif t.name in _OLLAMA_SENSITIVE and _fits(t, "mlx8-g64"):
            out.append("mlx8-g64")
        else:
            out.append(weight_type)
    return tuple(out)


def linear_types(arch: Architecture, weight_type: str) -> tuple[str, ...]:
    """Checkpoints quantised layer by layer (FP8, NVFP4, AWQ, GPTQ, AutoRound, compressed-tensors):
    every Linear weight in the blocks; the embeddings, the output head, MoE routers and the
    gated-DeltaNet alpha/beta gates stay BF16 (the ignore lists of llm-compressor, AutoAWQ,
    ModelOpt and Ollama's NVFP4 import)."""
    keep = EMBEDDINGS | ROUTERS | LINEAR_ATTENTION_GATES | {"output"}
    out = []
    for t in arch.tensors:
        if not _is_matrix_weight(t) or t.name in keep or not _fits(t, weight_type):
            out.append(DENSE)
        else:
            out.append(weight_type)
    return tuple(out)


#: exllamav3 convert.py: the output head's bits (-hb/--head_bits, default 6).
EXL3_HEAD_BITS = 6


def exl3_types(arch: Architecture, weight_type: str) -> tuple[str, ...]:
    """exllamav3: every Linear layer of the blocks at the target bits, the head at 6 bits, the
    embeddings, norms and routers in FP16 (doc/convert.md)."""
    out = []
    for t in arch.tensors:
        if t.name == "output":
            out.append(f"exl3-{EXL3_HEAD_BITS}")
        elif not _is_matrix_weight(t) or t.name in EMBEDDINGS or t.name in ROUTERS:
            out.append("f16")
        else:
            out.append(weight_type)
    return tuple(out)


def qat_mixed_types(arch: Architecture, weight_type: str) -> tuple[str, ...]:
    """Google's mobile QAT schema for Gemma 4: 2-bit channel-wise feed-forward weights, 4-bit
    attention and other projections, 8-bit embeddings and head (see data/quants.toml notes: the
    split is our reading of the announcement, not a published table)."""
    out = []
    for t in arch.tensors:
        if not _is_matrix_weight(t):
            out.append(DENSE)
        elif t.name in EMBEDDINGS or t.name == "output":
            out.append("int8-channel")
        elif t.name.startswith("ffn_") and t.name not in ROUTERS:
            out.append(weight_type)
        else:
            out.append("int4-channel")
    return tuple(out)


RECIPES = {
    "llama.cpp": None,  # these three need the file type and are dispatched in tensor_types
    "llama.cpp-pure": None,
    "unsloth-dynamic": None,
    "mlx": mlx_types,
    "ollama-mlx": ollama_mlx_types,
    "linear": linear_types,
    "exl3": exl3_types,
    "qat-mixed": qat_mixed_types,
}

# --------------------------------------------------------------------------------------------
# The catalog: data/quants.toml
# --------------------------------------------------------------------------------------------

KINDS = ("gguf", "mlx", "fp8", "nvfp4", "awq", "gptq", "exl3", "int", "dense")
COMPUTE_FORMATS = ("fp16", "int8", "fp8", "fp4")
ENGINES = ("llama.cpp", "ik_llama.cpp", "ollama", "mlx-lm", "mlx-vlm", "vllm", "vllm-mlx", "omlx", "exllamav3", "other")

SCHEMA = (
    Field("name", str, required=True),
    Field("kind", str, required=True, choices=KINDS),
    Field("bits_per_weight", float, required=True, lo=1.0, hi=32.0),
    Field("compute_format", str, required=True, choices=COMPUTE_FORMATS),
    Field("engines", list, required=True),
    Field("recipe", str, required=True, choices=tuple(RECIPES)),
    Field("weight_type", str, required=True),
    Field("llama_ftype", str, choices=tuple(FTYPE_DEFAULT_TYPE)),
    Field("upgrade_type", str, choices=tuple(GGML_TYPES)),
    Field("hybrid_upgrade_type", str, choices=tuple(GGML_TYPES)),
    Field("dense_hybrid_upgrade_type", str, choices=tuple(GGML_TYPES)),
    Field("token_embedding_type", str, choices=tuple(GGML_TYPES)),
    Field("output_tensor_type", str, choices=tuple(GGML_TYPES)),
    Field("imatrix", bool),
    Field("aliases", list, required=True),
    Field("source", str, required=True),
    Field("sources", dict),
    Field("notes", str),
)


@dataclass(frozen=True)
class QuantFormat:
    """One weight format of data/quants.toml (or a parametric EXL3 name derived from one)."""

    id: str
    name: str
    kind: str
    bits_per_weight: float
    compute_format: str
    engines: tuple[str, ...]
    recipe: str
    weight_type: str
    aliases: tuple[str, ...]
    source: str
    llama_ftype: str = ""
    upgrade_type: str = ""
    hybrid_upgrade_type: str = ""
    dense_hybrid_upgrade_type: str = ""
    token_embedding_type: str = ""
    output_tensor_type: str = ""
    imatrix: bool = True
    notes: str = ""
    sources: dict = field(default_factory=dict, compare=False, hash=False)

    def summary(self) -> dict:
        return {"id": self.id, "name": self.name, "bits_per_weight": self.bits_per_weight}


def _check_entry(entry_id: str, raw: dict) -> None:
    """Cross-field rules: the stated bpw is the weight type's, recipes get what they need."""
    where = f"quant {entry_id!r}"
    bad = sorted(set(raw["engines"]) - set(ENGINES))
    if bad or not raw["engines"]:
        raise CatalogError(f"{where}: engines must be some of {', '.join(ENGINES)} (got {bad or 'none'})")
    try:
        bits = _bits(raw["weight_type"])
    except KeyError as exc:
        raise CatalogError(f"{where}: {exc.args[0]}") from exc
    if abs(bits - raw["bits_per_weight"]) > 1e-9:
        raise CatalogError(f"{where}: bits_per_weight {raw['bits_per_weight']} but {raw['weight_type']} has {bits:g}")
    recipe = raw["recipe"]
    ftype = raw.get("llama_ftype")
    if recipe in ("llama.cpp", "llama.cpp-pure", "unsloth-dynamic"):
        if ftype is None:
            raise CatalogError(f"{where}: recipe {recipe} needs llama_ftype")
        if FTYPE_DEFAULT_TYPE[ftype] != raw["weight_type"]:
            raise CatalogError(f"{where}: llama_ftype {ftype} stores {FTYPE_DEFAULT_TYPE[ftype]}, not {raw['weight_type']}")
    else:
        for key in ("llama_ftype", "token_embedding_type", "output_tensor_type", "imatrix"):
            if key in raw:
                raise CatalogError(f"{where}: {key} only applies to llama.cpp recipes")
    for key in ("upgrade_type", "hybrid_upgrade_type"):
        if (recipe == "unsloth-dynamic") != (key in raw):
            raise CatalogError(f"{where}: {key} is required by, and only by, the unsloth-dynamic recipe")
    if "dense_hybrid_upgrade_type" in raw and recipe != "unsloth-dynamic":
        raise CatalogError(f"{where}: dense_hybrid_upgrade_type only applies to the unsloth-dynamic recipe")


def read_quants(text: str, origin: str = "quants.toml") -> dict[str, QuantFormat]:
    """Parse and validate a quants catalog (the text of a TOML file), keyed by id."""
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise CatalogError(f"{origin}: {exc}") from exc
    quants: dict[str, QuantFormat] = {}
    for entry_id, raw in document.items():
        if not isinstance(raw, dict):
            raise CatalogError(f"{origin}: top-level key {entry_id!r} must be a table (one format)")
        validate_entry("quant", entry_id, raw, SCHEMA)
        _check_entry(entry_id, raw)
        fields = {k: v for k, v in raw.items() if k not in ("engines", "aliases", "sources")}
        quants[entry_id] = QuantFormat(
            id=entry_id,
            engines=tuple(raw["engines"]),
            aliases=tuple(raw["aliases"]),
            sources=dict(raw.get("sources", {})),
            **fields,
        )
    return quants


@cache
def load_quants() -> dict[str, QuantFormat]:
    """Every weight format of ``data/quants.toml``, keyed by id."""
    return read_quants((DATA_DIR / "quants.toml").read_text(encoding="utf-8"))


def build_index(quants: dict[str, QuantFormat]) -> AliasIndex:
    """Normalised ids, names and aliases -> id; a name claimed by two formats is a CatalogError."""
    index = AliasIndex("quant")
    for quant in quants.values():
        for name in (quant.id, quant.name, *quant.aliases):
            index.add(name, quant.id)
    return index


@cache
def quant_index() -> AliasIndex:
    """Every name of every format of the catalog -> id."""
    return build_index(load_quants())


#: "EXL3-4.25bpw", "exl3 6.0 bpw", "EXL3-4bpw-h8" (the head bits suffix is accepted and ignored).
EXL3_NAME = re.compile(r"^exl3[\s_-]*(\d+(?:\.\d+)?)[\s_-]*bpw\b", re.IGNORECASE)
#: exllamav3 quantises linear layers at 1 to 8 bits per weight (convert.md: --bits, --head_bits).
EXL3_BITS_RANGE = (1.0, 8.0)


def _exl3_format(bits: float, text: str) -> QuantFormat:
    if not EXL3_BITS_RANGE[0] <= bits <= EXL3_BITS_RANGE[1]:
        raise EngineInputError(f"quant {text!r}: EXL3 bits per weight must be 1 to 8", field="quant")
    family = load_quants()["exl3"]
    label = f"{bits:.2f}".rstrip("0").rstrip(".") if bits != int(bits) else f"{bits:.1f}"
    return replace(
        family,
        id=f"exl3-{label}bpw",
        name=f"EXL3-{label}bpw",
        bits_per_weight=bits,
        weight_type=f"exl3-{bits:g}",
        aliases=(),
    )


def parse_quant(name: str) -> QuantFormat:
    """The format ``name`` names: an id, a name or an alias (compared normalised), or a
    parametric ``EXL3-<x>bpw``. Unknown names raise EngineInputError(field="quant") listing the
    closest names."""
    if not isinstance(name, str):
        raise EngineInputError(f"quant must be a name such as Q4_K_M, got {name!r}", field="quant")
    return _parse_quant_name(name)


@lru_cache(maxsize=512)
def _parse_quant_name(name: str) -> QuantFormat:
    match = EXL3_NAME.match(name.strip())
    if match:
        return _exl3_format(float(match.group(1)), name)
    quants = load_quants()
    entry_id = resolve(quant_index(), name, field="quant", display={q.id: q.name for q in quants.values()})
    return quants[entry_id]


# --------------------------------------------------------------------------------------------
# Bytes of a model in a format
# --------------------------------------------------------------------------------------------


@lru_cache(maxsize=1024)
def tensor_types(arch: Architecture, quant: QuantFormat) -> tuple[str, ...]:
    """The storage type of each of ``arch.tensors`` in format ``quant`` ("q6_K", "f32", "mlx4-g64" ...).

    Cached per (architecture, format): architectures hash by identity, formats by value. The
    calibration fit asks for a few hundred pairs thousands of times; 1024 of them are kept.
    """
    if quant.recipe in ("llama.cpp", "llama.cpp-pure"):
        return llama_cpp_types(
            arch,
            quant.llama_ftype,
            imatrix=quant.imatrix,
            pure=quant.recipe == "llama.cpp-pure",
            token_embedding_type=quant.token_embedding_type,
            output_tensor_type=quant.output_tensor_type,
        )
    if quant.recipe == "unsloth-dynamic":
        return unsloth_dynamic_types(
            arch, quant.llama_ftype, quant.upgrade_type, quant.hybrid_upgrade_type, quant.dense_hybrid_upgrade_type
        )
    return RECIPES[quant.recipe](arch, quant.weight_type)


@lru_cache(maxsize=1024)
def tensor_bytes(arch: Architecture, quant: QuantFormat) -> tuple[float, ...]:
    """Bytes of each of ``arch.tensors`` in format ``quant``."""
    return tuple(tensor_size(t, ty) for t, ty in zip(arch.tensors, tensor_types(arch, quant)))


@lru_cache(maxsize=16384)
def weight_bytes(arch: Architecture, quant: QuantFormat, include_mtp: bool = True) -> float:
    """Bytes of all weights (GB = this / 1e9), multi-token-prediction layers optional."""
    return sum(size for t, size in zip(arch.tensors, tensor_bytes(arch, quant)) if include_mtp or not t.mtp)


def average_bits_per_weight(arch: Architecture, quant: QuantFormat, include_mtp: bool = True) -> float:
    """Average bits per parameter over the whole model, scales and unquantised tensors included."""
    params = arch.params_total if include_mtp else arch.params_main
    return weight_bytes(arch, quant, include_mtp) * 8 / params


# --------------------------------------------------------------------------------------------
# KV cache element formats
# --------------------------------------------------------------------------------------------

#: Bytes per cached K or V element: llama.cpp -ctk/-ctv types (ggml block sizes above; flash
#: attention is required for the quantised ones), vLLM's --kv-cache-dtype fp8 (one byte, a
#: per-tensor scale) and MLX's quantised caches.
KV_BYTES = {
    "f32": 4.0,
    "f16": 2.0,
    "bf16": 2.0,
    "q8_0": 34 / 32,
    "q5_1": 24 / 32,
    "q5_0": 22 / 32,
    "q4_1": 20 / 32,
    "q4_0": 18 / 32,
    "iq4_nl": 18 / 32,
    "fp8": 1.0,
    # mlx-lm --kv-bits N (affine, groups of 64, an fp16 scale and bias per group: N + 0.5 bits).
    "mlx-8bit": 8.5 / 8,
    "mlx-4bit": 4.5 / 8,
    "mlx-2bit": 2.5 / 8,
    # TurboQuant KV compression at 3.5 and 4 bits per element (Google Research, 2025), as run by
    # mlx-lm forks in the calibration data ("tq3.5bit", "tq4bit"); the per-vector norm (16 bits
    # per 128-256 elements) is left out.
    "tq3.5": 3.5 / 8,
    "tq4": 4 / 8,
}
KV_TYPES = tuple(KV_BYTES)
#: KV types whose codes index a codebook rather than scale an integer (decode.py, kv_codebook_ops).
KV_CODEBOOK_TYPES = frozenset({"tq3.5", "tq4"})
_KV_ALIASES = {"fp16": "f16", "fp32": "f32", "fp8_e4m3": "fp8", "fp8_e5m2": "fp8"}


def kv_bytes_per_element(kv_type: str) -> float:
    """Bytes per cached element of K or V in ``kv_type`` (q8_0 = 34/32)."""
    key = kv_type.strip().lower() if isinstance(kv_type, str) else ""
    key = _KV_ALIASES.get(key, key)
    if key not in KV_BYTES:
        raise EngineInputError(
            f"unknown KV cache type {kv_type!r}; known: {', '.join(KV_TYPES)}", field="kv_quant", suggestions=KV_TYPES
        )
    return KV_BYTES[key]

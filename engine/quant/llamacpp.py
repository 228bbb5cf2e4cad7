"""llama.cpp's llama_tensor_get_type, ported: the type llama-quantize gives each tensor of a model
for a file type such as Q4_K_M (src/llama-quant.cpp, llama.cpp commit 007dbbf3)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from ..arch import Architecture, Tensor
from .roles import is_matrix_weight, is_vector
from .storage import storage

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
    # ik_llama.cpp file types (its own llama_tensor_get_type is modelled by the mainline rules
    # with these default types; data/quants.toml says so per format).
    "IQ2_K": "iq2_k", "IQ3_K": "iq3_k", "IQ4_K": "iq4_k", "IQ5_K": "iq5_k", "IQ6_K": "iq6_k",
    "IQ2_KS": "iq2_ks", "IQ4_KS": "iq4_ks", "IQ2_KT": "iq2_kt", "IQ3_KT": "iq3_kt", "IQ4_KT": "iq4_kt",
    "IQ2_BN": "iq2_bn", "Q8_K_R8": "q8_k_r8",
}

#: tensor_type_fallback: the type used when a row is not a whole number of blocks.
_FALLBACK = {
    "iq1_s": "iq4_nl", "iq1_m": "iq4_nl", "iq2_xxs": "iq4_nl", "iq2_xs": "iq4_nl", "iq2_s": "iq4_nl",
    "iq3_xxs": "iq4_nl", "iq3_s": "iq4_nl", "iq4_xs": "iq4_nl",
    "q2_0": "q4_0", "q2_K": "q4_0", "q3_K": "q4_0", "tq1_0": "q4_0", "tq2_0": "q4_0",
    "q4_K": "q5_0", "q5_K": "q5_1", "q6_K": "q8_0",
    "iq2_k": "q5_0", "iq3_k": "q5_0", "iq4_k": "iq4_nl", "iq5_k": "q5_1", "iq6_k": "q8_0",
    "iq2_ks": "iq4_nl", "iq4_ks": "iq4_nl", "iq2_kt": "iq4_nl", "iq3_kt": "iq4_nl", "iq4_kt": "iq4_nl", "iq2_bn": "q4_0", "q8_k_r8": "q8_0",
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
    if is_vector(t) or not full.endswith("weight") or "_norm.weight" in full:
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


def _f32_in_source(t: Tensor, full: str) -> bool:
    """Whether convert_hf_to_gguf.py wrote this tensor as F32, which llama-quantize then copies
    unchanged: 1-D tensors, norms, routers, SSM convolutions and names without ``.weight``."""
    base = t.name.removesuffix(".weight")
    return is_vector(t) or not full.endswith(".weight") or full.endswith("_norm.weight") or base in _F32_IN_SOURCE


def _float_source_type(ftype: str) -> str:
    """The float type of the conversion that other copied tensors keep (BF16, the usual source
    for quantising; F32 or F16 files are converted to that type)."""
    return {"F32": "f32", "F16": "f16"}.get(ftype, "bf16")


def _is_70b(arch: Architecture, gqa: float) -> bool:
    """LLM_TYPE_70B (src/llama-model.cpp): 80-layer Llama with GQA, 80-layer Qwen2."""
    if arch.layers != 80:
        return False
    return (arch.model_type in _LLAMA_ARCH and gqa > 1) or arch.model_type == "qwen2"


@dataclass(frozen=True)
class _GgufPlan:
    """What llama_cpp_types() derives from the architecture alone, whatever the file type: the
    tensors in llama.cpp's order with their GGUF names and categories, which ones llama-quantize
    may quantise, and the counters' totals. Computed once per architecture (most of the time of a
    new (model, format) pair went into these string tests, repeated for every format)."""

    #: (index into arch.tensors, tensor, category, quantisable, "f32" for a tensor copied as F32
    #: (_f32_in_source), "" for one copied in the conversion's float type), in weights_map order.
    order: tuple[tuple[int, Tensor, str, bool, str], ...]
    n_attention_wv: int
    n_layer: int
    gqa: float
    tied: bool
    falcon: bool
    is_70b: bool
    #: Indices of routed-expert matrices (gpt-oss keeps them MXFP4).
    expert_matrices: tuple[int, ...]


@lru_cache(maxsize=512)
def _gguf_plan(arch: Architecture) -> _GgufPlan:
    # A tensor's GGUF name is "blk.<n>." + its name in a block, its name alone outside. The
    # category, quantisable and F32-source tests match nothing in the "blk.<n>." prefix, so each
    # is decided once per (name, in a block, 1-D) of a model instead of once per tensor.
    roles: dict[tuple[str, bool, bool], tuple[str, str, bool, str]] = {}
    per_tensor = []
    for t in arch.tensors:
        key = (t.name, t.layer >= 0, is_vector(t))
        role = roles.get(key)
        if role is None:
            full = gguf_name(t)
            quantisable = _allows_quantization(t, full)
            source = "f32" if not quantisable and _f32_in_source(t, full) else ""
            # The name the order compares within a block (the common prefix decides nothing).
            within = full.split(".", 2)[2] if t.layer >= 0 else full
            role = roles[key] = (within, _category(full), quantisable, source)
        per_tensor.append(role)
    gqa = gqa_ratio(arch)
    # llama_model_loader's weights_map orders tensors by block number, then by name; the
    # counters (i_attention_wv ...) advance in that order.
    order = tuple(
        (index, arch.tensors[index], *per_tensor[index][1:])
        for index in sorted(range(len(per_tensor)), key=lambda i: (arch.tensors[i].layer, per_tensor[i][0]))
    )
    categories = [role[1] for role in per_tensor]
    return _GgufPlan(
        order=order,
        n_attention_wv=sum(1 for c in categories if _is_attn_v_like(c)),
        n_layer=max((t.layer for t in arch.tensors), default=-1) + 1,
        gqa=gqa,
        tied=not any(t.layer < 0 and role[0] == "output.weight" for t, role in zip(arch.tensors, per_tensor)),
        falcon=arch.model_type == "falcon",
        is_70b=_is_70b(arch, gqa),
        expert_matrices=tuple(i for i, t in enumerate(arch.tensors) if t.is_routed_expert and is_matrix_weight(t)),
    )


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
    plan = _gguf_plan(arch)
    qs = _GgufState(
        ftype=ftype,
        n_attention_wv=plan.n_attention_wv,
        n_layer=plan.n_layer,
        n_expert=arch.n_experts,
        gqa=plan.gqa,
        tied=plan.tied,
        falcon=plan.falcon,
        is_70b=plan.is_70b,
        imatrix=imatrix,
    )
    float_source = _float_source_type(ftype)
    default_quantized = storage(default).quantized
    types = [""] * len(arch.tensors)
    for index, t, category, quantisable, source in plan.order:
        if not quantisable:
            chosen = source or float_source
        elif token_embedding_type and category == "token_embd":
            chosen = token_embedding_type
        elif output_tensor_type and (category == "output" or (qs.tied and category == "token_embd")):
            chosen = output_tensor_type
        elif not default_quantized:
            chosen = default
        elif pure:
            chosen = _fallback(default, t.cols)
        else:
            chosen = _fallback(_gguf_choice(qs, default, t, category), t.cols)
        types[index] = chosen
    if arch.model_type == "gpt_oss":
        # gpt-oss ships its experts as MXFP4 and the published GGUFs keep them so whatever the
        # file type (data/quants.toml, MXFP4 notes): llama-quantize's choice applies to the rest.
        for index in plan.expert_matrices:
            types[index] = "mxfp4"
    return tuple(types)

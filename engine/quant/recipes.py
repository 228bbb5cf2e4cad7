"""Recipes: the storage type each tensor of a model gets in a weight format (llama.cpp's own, Unsloth
Dynamic on top of it, MLX, Ollama's MLX engine, layer-by-layer checkpoints, EXL3, QAT)."""

from __future__ import annotations

from ..arch import Architecture
from .llamacpp import llama_cpp_types
from .roles import (
    EMBEDDINGS,
    LINEAR_ATTENTION_GATES,
    ROUTERS,
    has_linear_attention,
    is_attention_or_shared,
    is_embedding_or_head,
    is_matrix_weight,
)
from .storage import fits, storage, type_bits


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
        target, sensitive = (hybrid_upgrade_type if hybrid else upgrade_type), is_attention_or_shared
    elif hybrid and dense_hybrid_upgrade_type:
        target, sensitive = dense_hybrid_upgrade_type, is_attention_or_shared
    else:
        target, sensitive = upgrade_type, is_embedding_or_head
    out = []
    for t, chosen in zip(arch.tensors, llama_cpp_types(arch, base_ftype)):
        if sensitive(t) and storage(chosen).quantized and type_bits(target) > type_bits(chosen) and fits(t, target):
            chosen = target
        out.append(chosen)
    return tuple(out)


#: dtype non-GGUF formats keep unquantised tensors in (the checkpoints' bf16).
DENSE = "bf16"


#: mlx-vlm's Gemma 4 ``quant_predicate`` from PR 901 (commit 43b9b207, merged 2026-04-03,
#: https://github.com/Blaizzy/mlx-vlm/pull/901) until PR 1288 (commit 9c788e45, 2026-06-05,
#: https://github.com/Blaizzy/mlx-vlm/pull/1288) returned ``{"group_size": 64, "bits": 8}`` for
#: every path ending in mlp.gate_proj / mlp.up_proj / mlp.down_proj (the dense feed-forward, not
#: the MoE experts' switch_glu), and MLX's nn.quantize passes such a dict to to_quantized
#: without the run's mode (mlx python/mlx/nn/layers/quantized.py, v0.31), so the dense MLP came
#: out 8-bit affine group 64 whatever --q-mode said. mlx-community's Gemma 4 E2B/E4B MXFP4 and
#: NVFP4 repositories carry it (the files the Apple harness ran,
#: https://github.com/AlexHiesch/apple-silicon-llm-bench, results/bench_20260404_145629.csv,
#: _145919, _150055: 7,413 / 7,540 MB resident against the 4-bit file's 5,965, and
#: NVFP4 - MXFP4 = 127 MB = 0.25 bit on ~4.1B weights, the E4B's weights less its 3.30B MLP ones;
#: repository sizes, as a third-party app's catalog of them lists them, E4B 4bit 5.25 / mxfp4
#: 6.77 GB, E2B 3.61 / 4.30 GB: the MLP at 8.5 instead of
#: 4.25 bits is +1.75 / +0.83 GB), while their 4-bit files and the 26B-A4B / 31B FP4 repositories
#: keep the 4-bit MLP (sizes; the harness decodes those at the 4-bit file's rate): presumably
#: converted before PR 901, e.g. with the 0.4.3 release code tagged 2026-04-02 (upload dates not
#: read here).
GEMMA4_PLE_FP4_MLP_TYPE = "mlx8-g64"
_MLX_FP4_TYPES = frozenset({"mlx-mxfp4-g32", "mlx-nvfp4-g16"})
_DENSE_MLP = frozenset({"ffn_gate", "ffn_up", "ffn_down"})


def gemma4_ple_fp4(arch: Architecture, weight_type: str) -> bool:
    """mlx-community's Gemma 4 E2B/E4B (per-layer embeddings) MXFP4/NVFP4 files: dense MLP at
    8-bit affine (:data:`GEMMA4_PLE_FP4_MLP_TYPE`)."""
    return (
        weight_type in _MLX_FP4_TYPES
        and arch.model_type.startswith("gemma4")
        and any(t.name == "per_layer_token_embd" for t in arch.tensors)
    )


def mlx_types(arch: Architecture, weight_type: str) -> tuple[str, ...]:
    """mlx-lm / mlx-vlm ``convert -q``: nn.quantize() every Linear and Embedding whose input
    dimension divides by the group size; MoE routers at 8-bit affine, group 64, through the
    models' quant_predicate (mlx_lm/utils.py quantize_model; models/qwen3_moe.py ...); the
    published Gemma 4 E2B/E4B FP4 files' dense MLP at 8-bit (:data:`GEMMA4_PLE_FP4_MLP_TYPE`)."""
    ple_fp4 = gemma4_ple_fp4(arch, weight_type)
    out = []
    for t in arch.tensors:
        if not is_matrix_weight(t):
            out.append(DENSE)
        elif t.name in ROUTERS:
            out.append("mlx8-g64" if fits(t, "mlx8-g64") else DENSE)
        elif ple_fp4 and t.name in _DENSE_MLP and fits(t, GEMMA4_PLE_FP4_MLP_TYPE):
            out.append(GEMMA4_PLE_FP4_MLP_TYPE)
        else:
            out.append(weight_type if fits(t, weight_type) else DENSE)
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
        if not is_matrix_weight(t) or t.rows * t.cols * t.experts < 1024 or not fits(t, weight_type):
            out.append(DENSE)
        elif qwen35:
            out.append(weight_type)
        elif t.name in EMBEDDINGS or t.name in ROUTERS:
            out.append(DENSE)
        elif t.name in _OLLAMA_SENSITIVE and fits(t, "mlx8-g64"):
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
        if not is_matrix_weight(t) or t.name in keep or not fits(t, weight_type):
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
        elif not is_matrix_weight(t) or t.name in EMBEDDINGS or t.name in ROUTERS:
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
        if not is_matrix_weight(t):
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

"""Weight formats (engine/quant/, data/quants.toml): block sizes, llama.cpp recipes, published sizes."""

from __future__ import annotations

import pytest

from engine.arch import Architecture, LayerAttention, Tensor
from engine.catalog import CatalogError, normalise_name
from engine.errors import EngineInputError
from engine.models import load_models
from engine.quant import (
    GGML_TYPES,
    KV_TYPES,
    average_bits_per_weight,
    gguf_name,
    kv_bytes_per_element,
    load_quants,
    parse_quant,
    quant_index,
    read_quants,
    storage,
    tensor_bytes,
    tensor_types,
    weight_bytes,
)
from engine.quant.recipes import gemma4_ple_fp4
from engine.weights import weight_profile

GB = 1e9

# --------------------------------------------------------------------------------------------
# Storage types
# --------------------------------------------------------------------------------------------

#: (elements per block, bytes per block) from the static_asserts on ggml's block structs,
#: ggml/src/ggml-common.h (llama.cpp commit 01243c58), written out by hand here so that a typo
#: in engine/quant/storage.py's layout arithmetic fails.
GGML_BLOCKS = {
    "f32": (1, 4), "f16": (1, 2), "bf16": (1, 2),
    "q4_0": (32, 18), "q4_1": (32, 20), "q5_0": (32, 22), "q5_1": (32, 24), "q8_0": (32, 34), "q8_1": (32, 36),
    "q2_K": (256, 84), "q3_K": (256, 110), "q4_K": (256, 144), "q5_K": (256, 176), "q6_K": (256, 210),
    "q8_K": (256, 292),
    "iq1_s": (256, 50), "iq1_m": (256, 56), "iq2_xxs": (256, 66), "iq2_xs": (256, 74), "iq2_s": (256, 82),
    "iq3_xxs": (256, 98), "iq3_s": (256, 110), "iq4_nl": (32, 18), "iq4_xs": (256, 136),
    "tq1_0": (256, 54), "tq2_0": (256, 66),
    "mxfp4": (32, 17), "nvfp4": (64, 36), "q1_0": (128, 18), "q2_0": (64, 18),
}


@pytest.mark.parametrize("type_name", sorted(GGML_BLOCKS))
def test_ggml_block_sizes(type_name):
    block, block_bytes = GGML_BLOCKS[type_name]
    assert (storage(type_name).block, storage(type_name).block_bytes) == (block, block_bytes)


def test_every_ggml_type_is_checked():
    assert set(GGML_TYPES) == set(GGML_BLOCKS)


@pytest.mark.parametrize(
    "name, bits",
    [("Q4_K_M", 4.5), ("Q8_0", 8.5), ("Q6_K", 6.5625), ("Q2_K", 2.625), ("IQ4_XS", 4.25), ("MXFP4", 4.25),
     ("MLX-4bit", 4.5), ("MLX-6bit", 6.5), ("MLX-8bit", 8.5), ("MLX-MXFP4", 4.25), ("NVFP4", 4.5), ("AWQ-4bit", 4.15625), ("F16", 16)],
)
def test_nominal_bits_per_weight(name, bits):
    assert parse_quant(name).bits_per_weight == bits


def test_mlx_affine_6bit_packs_a_bf16_scale_and_bias_per_64():
    # mx.quantize affine, bits 6, group 64: 48 bytes of codes + 2 + 2 per group (6.5 bpw).
    assert storage("mlx6-g64").matrix_size(1, 64) == 52


def test_matrix_size_counts_scales_and_extras():
    # GPTQ: 128 x 256 matrix = 2 groups per row of 66.5 bytes, plus an int32 g_idx per input column.
    assert storage("gptq4-g128").matrix_size(128, 256) == 128 * 2 * 66.5 + 256 * 4
    # NVFP4 checkpoints carry two FP32 per-matrix scales.
    assert storage("nvfp4-g16").matrix_size(16, 16) == 16 * 9 + 8


# --------------------------------------------------------------------------------------------
# llama.cpp recipes on Llama 3.1 8B
# --------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def llama8b() -> Architecture:
    return load_models()["llama-3.1-8b"].arch


def _types_by_name(arch, quant_name):
    return {gguf_name(t): ty for t, ty in zip(arch.tensors, tensor_types(arch, parse_quant(quant_name)))}


def test_q4_k_m_tensor_choices(llama8b):
    types = _types_by_name(llama8b, "Q4_K_M")
    assert types["output.weight"] == "q6_K"
    assert types["token_embd.weight"] == "q4_K"  # untied: the default type
    assert types["output_norm.weight"] == "f32"
    assert types["blk.0.attn_norm.weight"] == "f32"
    # use_more_bits over 32 layers: layers 0-3 and 28-31, and every third from 6 (6, 9, ..., 27).
    for layer, expected in ((0, "q6_K"), (3, "q6_K"), (4, "q4_K"), (5, "q4_K"), (6, "q6_K"), (27, "q6_K"), (28, "q6_K")):
        assert types[f"blk.{layer}.attn_v.weight"] == expected
        assert types[f"blk.{layer}.ffn_down.weight"] == expected
    assert types["blk.5.attn_q.weight"] == types["blk.5.ffn_up.weight"] == "q4_K"


def test_lattice_codebook_types_are_the_iq1_to_iq3_families():
    """ggml-common.h gives these types grid tables (iq1s_grid, iq2xxs_grid, iq2xs_grid, iq2s_grid,
    iq3xxs_grid, iq3s_grid); IQ4_NL/IQ4_XS use a 16-value table a shuffle unpacks, like nibbles."""
    coded = {name for name, kind in GGML_TYPES.items() if kind.codebook}
    assert coded == {"iq1_s", "iq1_m", "iq2_xxs", "iq2_xs", "iq2_s", "iq3_xxs", "iq3_s"}


@pytest.mark.parametrize("quant_name", ["IQ2_M", "IQ3_XXS", "Q4_K_M", "IQ4_XS"])
def test_codebook_weights_are_counted_per_tensor(llama8b, quant_name):
    """The decode cost of codebook unpacking applies to the weights stored in those types only:
    IQ2_M keeps attention V and the head in K-quants, so not every weight is coded."""
    quant = parse_quant(quant_name)
    profile = weight_profile(llama8b, quant)
    expected = sum(
        t.params
        for t, ty in zip(llama8b.tensors, tensor_types(llama8b, quant))
        if storage(ty).codebook and t.name not in ("token_embd", "per_layer_token_embd")
    )
    assert profile.dense_codebook_params == expected
    if quant_name.startswith(("IQ2", "IQ3")):
        assert 0.5 * profile.dense_read_params < expected < profile.dense_read_params
    else:
        assert expected == 0


def test_q4_k_m_is_about_4_9_bits_per_weight(llama8b):
    assert 4.8 <= average_bits_per_weight(llama8b, parse_quant("Q4_K_M")) <= 5.0


#: Published Llama 3.1 8B Instruct GGUF sizes, GB. bartowski (imatrix):
#: https://huggingface.co/bartowski/Meta-Llama-3.1-8B-Instruct-GGUF ; mradermacher imatrix ("i1"):
#: https://huggingface.co/mradermacher/Meta-Llama-3.1-8B-Instruct-i1-GGUF ; static quants:
#: https://huggingface.co/second-state/Meta-Llama-3.1-8B-Instruct-GGUF and
#: https://huggingface.co/QuantFactory/Meta-Llama-3.1-8B-GGUF (same shapes as Instruct).
LLAMA_31_8B_GGUF_GB = {
    "Q4_K_M": 4.92, "Q8_0": 8.54, "F32": 32.13, "Q6_K_L": 6.85, "Q5_K_L": 6.06,  # bartowski
    "IQ1_S": 2.02, "IQ1_M": 2.16, "IQ2_XXS": 2.40, "IQ2_XS": 2.61, "IQ2_S": 2.76, "IQ2_M": 2.95,  # i1
    "IQ3_XXS": 3.27, "IQ3_XS": 3.52, "IQ3_S": 3.68, "IQ3_M": 3.78, "IQ4_XS": 4.45, "Q4_0": 4.68,  # i1
    "Q2_K": 3.18, "Q3_K_S": 3.66, "Q3_K_M": 4.02, "Q3_K_L": 4.32, "Q4_K_S": 4.69, "Q4_1": 5.13,  # static
    "Q5_K_S": 5.60, "Q5_K_M": 5.73, "Q6_K": 6.60, "F16": 16.1,  # static
}


@pytest.mark.parametrize("quant_name", sorted(LLAMA_31_8B_GGUF_GB))
def test_llama_31_8b_published_gguf_sizes(llama8b, quant_name):
    # The rest of a file is metadata (vocabulary, merges: ~10 MB), well inside 2%.
    published = LLAMA_31_8B_GGUF_GB[quant_name]
    assert weight_bytes(llama8b, parse_quant(quant_name)) / GB == pytest.approx(published, rel=0.02)


#: Other formats of Llama 3.1 8B Instruct, GB (Hugging Face file listings):
#: mlx-community/Meta-Llama-3.1-8B-Instruct-4bit model.safetensors 4.52 GB;
#: hugging-quants/Meta-Llama-3.1-8B-Instruct-AWQ-INT4 4.68 + 1.05 GB.
LLAMA_31_8B_OTHER_GB = {"MLX-4bit": 4.52, "AWQ-4bit": 5.73}


@pytest.mark.parametrize("quant_name", sorted(LLAMA_31_8B_OTHER_GB))
def test_llama_31_8b_other_formats(llama8b, quant_name):
    published = LLAMA_31_8B_OTHER_GB[quant_name]
    assert weight_bytes(llama8b, parse_quant(quant_name)) / GB == pytest.approx(published, rel=0.02)


def test_awq_keeps_embeddings_and_head_unquantised(llama8b):
    types = _types_by_name(llama8b, "AWQ-4bit")
    assert types["token_embd.weight"] == types["output.weight"] == "bf16"
    assert types["blk.0.attn_q.weight"] == "awq4-g128"


# --------------------------------------------------------------------------------------------
# Every catalog model with published GGUF sizes
# --------------------------------------------------------------------------------------------

#: Tolerances: llama.cpp's own recipes are ported exactly, so only metadata and rounding differ.
#: Unsloth Dynamic files choose types per model; data/quants.toml lists the measured errors
#: (largest: Nemotron-3-Super UD-Q4_K_XL +6.4%, MiniMax-M2.7 UD-Q3_K_S +5.8%).
PLAIN_TOLERANCE = 0.03
UNSLOTH_TOLERANCE = 0.07

#: Known mismatches that are not the recipe's fault (reported to the catalog owners): the deviation
#: ours / published - 1 they cause, pinned to a percentage point, so a change to either side shows.
KNOWN_DEVIATIONS = {
    ("qwen3-1.7b", "Q4_K_M"): (-0.14, "the GGUF stores output.weight although config.json ties it"),
    ("qwen3-1.7b", "Q8_0"): (-0.157, "the GGUF stores output.weight although config.json ties it"),
    ("qwen3-1.7b", "F16"): (-0.154, "the GGUF stores output.weight although config.json ties it"),
    ("minimax-m2.7", "UD-IQ4_XS"): (+0.137, "Unsloth stores these experts below IQ4_XS (~3.9 bpw)"),
}


def _published_sizes():
    for model_id, model in sorted(load_models().items()):
        for quant_name, size_gb in sorted((model.gguf_sizes_gb or {}).items()):
            yield pytest.param(model_id, quant_name, size_gb, id=f"{model_id}-{quant_name}")


@pytest.mark.parametrize("model_id, quant_name, size_gb", _published_sizes())
def test_catalog_published_gguf_sizes(model_id, quant_name, size_gb):
    quant = parse_quant(quant_name)  # a catalog size under a name we cannot resolve is an error too
    tolerance = UNSLOTH_TOLERANCE if quant.recipe == "unsloth-dynamic" else PLAIN_TOLERANCE
    # Published GGUFs of MTP models (Qwen3.5/3.6, GLM) leave the MTP layers out.
    ours = weight_bytes(load_models()[model_id].arch, quant, include_mtp=False) / GB
    known = KNOWN_DEVIATIONS.get((model_id, quant_name))
    if known:
        deviation, reason = known
        assert ours / size_gb - 1 == pytest.approx(deviation, abs=0.01), reason
    else:
        assert ours == pytest.approx(size_gb, rel=tolerance)


def test_every_known_deviation_is_a_catalog_size():
    published = {(m.id, q) for m in load_models().values() for q in (m.gguf_sizes_gb or {})}
    assert set(KNOWN_DEVIATIONS) <= published


#: llama-bench's "size" (GiB of tensor data) of Unsloth files, from the logs of
#: https://github.com/kyuz0/amd-strix-halo-toolboxes/tree/d1a34be/benchmark/results
UNSLOTH_LLAMA_BENCH_GIB = [
    ("qwen3.6-35b-a3b", "UD-Q4_K_XL", 21.27),
    ("qwen3.6-35b-a3b", "UD-Q8_K_XL", 35.80),
    ("qwen3.6-35b-a3b", "BF16", 64.60),
    ("qwen3.6-27b", "UD-Q8_K_XL", 33.31),
    ("qwen3.5-122b-a10b", "UD-Q5_K_XL", 85.60),
]


@pytest.mark.parametrize("model_id, quant_name, size_gib", UNSLOTH_LLAMA_BENCH_GIB)
def test_unsloth_sizes_of_linear_attention_hybrids(model_id, quant_name, size_gib):
    models = load_models()
    if model_id not in models:
        pytest.skip(f"{model_id} is not in the model catalog")
    ours = weight_bytes(models[model_id].arch, parse_quant(quant_name), include_mtp=False) / 2**30
    assert ours == pytest.approx(size_gib, rel=0.02)


# --------------------------------------------------------------------------------------------
# Monotonicity: more bits never means fewer bytes
# --------------------------------------------------------------------------------------------

#: Within one bit level the S/M/L recipes only ever raise types.
SIZE_LADDERS = (("Q3_K_S", "Q3_K_M", "Q3_K_L"), ("Q4_K_S", "Q4_K_M"), ("Q5_K_S", "Q5_K_M"),
                ("Q4_K_M", "UD-Q4_K_XL"), ("Q8_0", "UD-Q8_K_XL"), ("Q4_0", "Q4_1"), ("Q5_0", "Q5_1"))
#: Across bit levels. llama.cpp itself breaks these when rows are not whole 256-blocks: the
#: fallbacks (Q2_K/Q3_K -> Q4_0, Q4_K -> Q5_0, Q6_K -> Q8_0) can make Q2_K outgrow Q3_K_S (Gemma 3
#: 1B, gpt-oss), Q4_K_M outgrow Q5_K_S (Nemotron 3 Nano) and Q2_K_S outgrow Q2_K (GLM-4.5-Air),
#: so they are checked where no tensor falls back.
LEVEL_LADDERS = (
    ("Q2_K_S", "Q2_K", "Q3_K_S", "Q3_K_M", "Q3_K_L", "Q4_K_S", "Q4_K_M", "Q5_K_S", "Q5_K_M", "Q6_K", "Q8_0", "F16"),
    ("Q4_0", "Q5_0", "Q8_0"),
    ("IQ1_S", "IQ1_M", "IQ2_XXS", "IQ2_XS", "IQ2_S", "IQ2_M", "IQ3_XXS", "IQ3_XS", "IQ3_S", "IQ3_M", "IQ4_XS", "IQ4_NL"),
    ("UD-Q2_K_XL", "UD-Q4_K_XL", "UD-Q5_K_XL", "UD-Q6_K_XL", "UD-Q8_K_XL", "BF16"),
    ("MLX-MXFP4", "MLX-4bit", "MLX-8bit", "BF16"),
    ("EXL3-2.5bpw", "EXL3-4.0bpw", "EXL3-6.0bpw", "EXL3-8.0bpw"),
)


def _assert_ladder(model_id, arch, ladder):
    sizes = [weight_bytes(arch, parse_quant(name)) for name in ladder]
    for (low, small), (high, big) in zip(zip(ladder, sizes), zip(ladder[1:], sizes[1:])):
        assert small <= big, f"{model_id}: {low} ({small / GB:.3f} GB) > {high} ({big / GB:.3f} GB)"


def _has_k_quant_fallbacks(arch) -> bool:
    q2 = tensor_types(arch, parse_quant("Q2_K"))
    return any(ty in ("q4_0", "q5_0", "q5_1", "iq4_nl") for ty in q2)


@pytest.mark.parametrize("model_id", sorted(load_models()))
def test_more_bits_never_fewer_bytes(model_id):
    arch = load_models()[model_id].arch
    for ladder in SIZE_LADDERS:
        _assert_ladder(model_id, arch, ladder)
    if not _has_k_quant_fallbacks(arch):
        for ladder in LEVEL_LADDERS:
            if ladder[0] == "MLX-MXFP4" and gemma4_ple_fp4(arch, "mlx-mxfp4-g32"):
                # mlx-community's Gemma 4 E2B/E4B MXFP4 files keep an 8-bit MLP and outgrow their
                # 4-bit files (E4B 6.77 against 5.25 GB; engine/quant/recipes.py).
                continue
            _assert_ladder(model_id, arch, ladder)


# --------------------------------------------------------------------------------------------
# Shapes llama.cpp's recipe has rules for
# --------------------------------------------------------------------------------------------


def _toy_arch(*, model_type="llama", hidden=256, inter=512, layers=8, experts=0, tied=False) -> Architecture:
    tensors = [Tensor("token_embd", -1, 1000, hidden)]
    for layer in range(layers):
        tensors += [
            Tensor("attn_norm", layer, 1, hidden),
            Tensor("attn_q", layer, hidden, hidden),
            Tensor("attn_k", layer, hidden // 4, hidden),
            Tensor("attn_v", layer, hidden // 4, hidden),
            Tensor("attn_output", layer, hidden, hidden),
        ]
        if experts:
            tensors += [
                Tensor("ffn_gate_inp", layer, experts, hidden),
                Tensor("ffn_gate_exps", layer, inter, hidden, experts),
                Tensor("ffn_up_exps", layer, inter, hidden, experts),
                Tensor("ffn_down_exps", layer, hidden, inter, experts),
            ]
        else:
            tensors += [Tensor("ffn_up", layer, inter, hidden), Tensor("ffn_down", layer, hidden, inter)]
    tensors.append(Tensor("output_norm", -1, 1, hidden))
    if not tied:
        tensors.append(Tensor("output", -1, 1000, hidden))
    attention = tuple(LayerAttention("full", 2 * (hidden // 4), flops_per_pair=2 * 2 * hidden) for _ in range(layers))
    return Architecture(model_type, layers, hidden, 1000, tied, experts, 2 if experts else 0, 4096, tuple(tensors), attention)


def test_tied_embeddings_take_the_output_rule():
    types = _types_by_name(_toy_arch(tied=True), "Q4_K_M")
    assert types["token_embd.weight"] == "q6_K"
    assert "output.weight" not in types


def test_rows_not_a_multiple_of_the_block_fall_back():
    # gpt-oss-like 2880-wide rows: Q4_K -> Q5_0, Q6_K -> Q8_0 (tensor_type_fallback); the head
    # takes Q8_0 directly when its rows do not fit Q4_K's 256-blocks.
    types = _types_by_name(_toy_arch(hidden=2880, inter=2880), "Q4_K_M")
    assert types["blk.4.attn_q.weight"] == "q5_0"
    assert types["blk.0.attn_v.weight"] == "q8_0"
    assert types["output.weight"] == "q8_0"


def test_mxfp4_moe_puts_experts_in_mxfp4_and_the_rest_in_q8_0():
    types = _types_by_name(_toy_arch(experts=8), "MXFP4")
    assert types["blk.0.ffn_down_exps.weight"] == types["blk.0.ffn_up_exps.weight"] == "mxfp4"
    assert types["blk.0.attn_q.weight"] == types["output.weight"] == types["token_embd.weight"] == "q8_0"
    assert types["blk.0.ffn_gate_inp.weight"] == "f32"  # routers are never quantised


def test_eight_expert_models_get_q8_0_attention_v():
    # Mixtral rule: with 8 experts attn_v and attn_k go to Q8_0 whatever the file type.
    types = _types_by_name(_toy_arch(experts=8), "Q4_K_M")
    assert types["blk.3.attn_v.weight"] == types["blk.3.attn_k.weight"] == "q8_0"


def test_mlx_keeps_routers_at_8_bits():
    types = _types_by_name(_toy_arch(experts=8), "MLX-4bit")
    assert types["blk.0.ffn_gate_inp.weight"] == "mlx8-g64"
    assert types["blk.0.ffn_up_exps.weight"] == types["token_embd.weight"] == "mlx4-g64"
    assert types["blk.0.attn_norm.weight"] == "bf16"


def test_tensor_bytes_are_cached_and_aligned(llama8b):
    quant = parse_quant("Q4_K_M")
    sizes = tensor_bytes(llama8b, quant)
    assert sizes is tensor_bytes(llama8b, quant)
    assert len(sizes) == len(llama8b.tensors)
    assert sum(sizes) == weight_bytes(llama8b, quant)


# --------------------------------------------------------------------------------------------
# Names
# --------------------------------------------------------------------------------------------

#: The distinct quant names of /work/shared/measured/calibration.csv's `quant` column except
#: "unknown" (copied here: the project does not read ../shared at test time).
CALIBRATION_QUANTS = (
    "AWQ-4bit", "AutoRound-4bit", "BF16", "EXL3-4.0bpw", "EXL3-6.0bpw", "F16", "FP8", "INT4", "INT4-W4A16",
    "INT8-W8A8", "IQ2_M", "IQ2_XS", "IQ2_XXS", "IQ3_S", "IQ3_XXS", "IQ4_NL", "IQ4_XS", "MLX-4bit", "MLX-8bit",
    "MLX-MXFP4", "MLX-NVFP4", "MXFP4", "NVFP4", "Q2_K", "Q2_K_S", "Q3_K_S", "Q4_0", "Q4_K_M", "Q4_K_S", "Q5_0",
    "Q5_K_S", "Q6_K", "Q8_0", "QAT-mixed-INT2/4/8", "UD-Q2_K_XL", "UD-Q3_K_S", "UD-Q4_K_M", "UD-Q4_K_XL",
    "UD-Q5_K_XL", "UD-Q6_K_XL", "UD-Q8_K_XL",
)


@pytest.mark.parametrize("name", CALIBRATION_QUANTS)
def test_calibration_names_resolve_to_themselves(name):
    assert parse_quant(name).name == name


@pytest.mark.parametrize(
    "spelling, quant_id",
    [("q4_k_m", "q4-k-m"), ("Q4_K - Medium", "q4-k-m"), ("MXFP4 MoE", "mxfp4"), ("mlx 4-bit", "mlx-4bit"),
     ("IQ3_S mix - 3.66 bpw", "iq3-m"), ("fp16", "f16")],
)
def test_aliases(spelling, quant_id):
    assert parse_quant(spelling).id == quant_id


def test_exl3_names_are_parametric(llama8b):
    quant = parse_quant("EXL3-4.25bpw")
    assert (quant.id, quant.name, quant.bits_per_weight, quant.kind) == ("exl3-4.25bpw", "EXL3-4.25bpw", 4.25, "exl3")
    types = _types_by_name(llama8b, "EXL3-4.25bpw")
    assert types["blk.0.ffn_up.weight"] == "exl3-4.25"
    assert types["output.weight"] == "exl3-6"  # --head_bits default
    assert types["token_embd.weight"] == "f16"
    with pytest.raises(EngineInputError):
        parse_quant("EXL3-9bpw")


def test_unknown_quant_names_suggest_close_ones():
    with pytest.raises(EngineInputError) as info:
        parse_quant("Q4_K_MM")
    assert info.value.field == "quant"
    assert "Q4_K_M" in info.value.suggestions


def test_catalog_and_index_load():
    quants = load_quants()
    assert len(quants) >= 50
    index = quant_index()
    for quant in quants.values():
        assert index.names[normalise_name(quant.name)] == quant.id


# --------------------------------------------------------------------------------------------
# Loader strictness
# --------------------------------------------------------------------------------------------

GOOD_ENTRY = """
[q4-0]
name = "Q4_0"
kind = "gguf"
bits_per_weight = 4.5
compute_format = "int8"
engines = ["llama.cpp"]
recipe = "llama.cpp"
weight_type = "q4_0"
llama_ftype = "Q4_0"
aliases = []
source = "https://github.com/ggml-org/llama.cpp"
"""


def test_a_valid_entry_loads():
    assert read_quants(GOOD_ENTRY)["q4-0"].bits_per_weight == 4.5


@pytest.mark.parametrize(
    "change",
    [
        ('bits_per_weight = 4.5', 'bits_per_weight = 4.0'),  # disagrees with the block layout
        ('engines = ["llama.cpp"]', 'engines = ["llama.cpp", "lmstudio"]'),  # not an engine we know
        ('weight_type = "q4_0"', 'weight_type = "q4_9"'),  # no such storage type
        ('llama_ftype = "Q4_0"', 'llama_ftype = "Q4_K_M"'),  # file type stores another type
        ('source = "https://github.com/ggml-org/llama.cpp"', 'source = ""'),  # no source
        ('aliases = []', 'aliases = []\ncolour = "red"'),  # unknown key
        ('recipe = "llama.cpp"', 'recipe = "llama.cpp"\nupgrade_type = "q8_0"'),  # UD-only key
    ],
)
def test_invalid_entries_are_rejected(change):
    with pytest.raises(CatalogError):
        read_quants(GOOD_ENTRY.replace(*change))


def test_an_alias_naming_two_formats_is_rejected():
    from engine.quant import build_index

    second = GOOD_ENTRY.replace("[q4-0]", "[q4-0-copy]").replace('aliases = []', 'aliases = ["Q4_0"]')
    with pytest.raises(CatalogError):
        build_index(read_quants(GOOD_ENTRY + second))


# --------------------------------------------------------------------------------------------
# KV cache
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "kv_type, nbytes",
    [("f16", 2), ("bf16", 2), ("f32", 4), ("q8_0", 34 / 32), ("q4_0", 18 / 32), ("q4_1", 20 / 32),
     ("q5_0", 22 / 32), ("q5_1", 24 / 32), ("iq4_nl", 18 / 32), ("fp8", 1), ("FP16", 2)],
)
def test_kv_bytes_per_element(kv_type, nbytes):
    assert kv_bytes_per_element(kv_type) == nbytes


def test_kv_types_match_ggml_blocks():
    for kv_type in KV_TYPES:
        if kv_type in GGML_BLOCKS:
            block, block_bytes = GGML_BLOCKS[kv_type]
            assert kv_bytes_per_element(kv_type) == block_bytes / block


def test_unknown_kv_type():
    with pytest.raises(EngineInputError) as info:
        kv_bytes_per_element("q3_k")
    assert info.value.field == "kv_quant"


def test_unsloth_q4_k_xl_of_a_dense_hybrid_raises_only_embedding_and_head():
    """Qwen3.6-27B (dense, 3 of 4 blocks gated DeltaNet): huggingface.co/unsloth/Qwen3.6-27B-GGUF
    lists UD-Q4_K_XL at ~17.6 GB against Q4_K_M's ~16.8 GB. Raising its attention and SSM
    tensors to bf16 (as the MoE hybrids' rule would) gives ~27 GB; UD-Q8_K_XL does keep them at
    bf16 (llama-bench 33.31 GiB, test above)."""
    arch = load_models()["qwen3.6-27b"].arch
    xl = weight_bytes(arch, parse_quant("UD-Q4_K_XL"), include_mtp=False) / GB
    plain = weight_bytes(arch, parse_quant("Q4_K_M"), include_mtp=False) / GB
    assert xl == pytest.approx(17.6, rel=0.03)
    assert 1.02 * plain <= xl <= 1.1 * plain

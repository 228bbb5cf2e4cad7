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

from .formats import (
    COMPUTE_FORMATS,
    ENGINES,
    KINDS,
    SCHEMA,
    QuantFormat,
    build_index,
    load_quants,
    quant_index,
    read_quants,
)
from .kv import (
    KV_BYTES,
    KV_CODEBOOK_TYPES,
    KV_TYPES,
    kv_bytes_per_element,
)
from .llamacpp import (
    FTYPE_DEFAULT_TYPE,
    gguf_name,
    gqa_ratio,
    llama_cpp_types,
)
from .names import (
    EXL3_BITS_RANGE,
    EXL3_NAME,
    parse_quant,
)
from .recipes import (
    DENSE,
    EXL3_HEAD_BITS,
    RECIPES,
    exl3_types,
    linear_types,
    mlx_types,
    ollama_mlx_types,
    qat_mixed_types,
    unsloth_dynamic_types,
)
from .roles import (
    EMBEDDINGS,
    LINEAR_ATTENTION_GATES,
    NON_LINEAR,
    ROUTERS,
    has_linear_attention,
    is_attention,
    is_attention_or_shared,
    is_bias,
    is_embedding_or_head,
    is_matrix_weight,
    is_shared_expert,
    is_vector,
)
from .sizes import average_bits_per_weight, tensor_bytes, tensor_types, weight_bytes
from .storage import (
    EXL3_TYPE,
    FORK_TYPES,
    GGML_TYPES,
    OTHER_TYPES,
    Storage,
    fits,
    storage,
    tensor_size,
    type_bits,
)

__all__ = [
    "COMPUTE_FORMATS",
    "DENSE",
    "EMBEDDINGS",
    "ENGINES",
    "EXL3_BITS_RANGE",
    "EXL3_HEAD_BITS",
    "EXL3_NAME",
    "EXL3_TYPE",
    "FORK_TYPES",
    "FTYPE_DEFAULT_TYPE",
    "GGML_TYPES",
    "KINDS",
    "KV_BYTES",
    "KV_CODEBOOK_TYPES",
    "KV_TYPES",
    "LINEAR_ATTENTION_GATES",
    "NON_LINEAR",
    "OTHER_TYPES",
    "QuantFormat",
    "RECIPES",
    "ROUTERS",
    "SCHEMA",
    "Storage",
    "average_bits_per_weight",
    "build_index",
    "exl3_types",
    "fits",
    "gguf_name",
    "gqa_ratio",
    "has_linear_attention",
    "is_attention",
    "is_attention_or_shared",
    "is_bias",
    "is_embedding_or_head",
    "is_matrix_weight",
    "is_shared_expert",
    "is_vector",
    "kv_bytes_per_element",
    "linear_types",
    "llama_cpp_types",
    "load_quants",
    "mlx_types",
    "ollama_mlx_types",
    "parse_quant",
    "qat_mixed_types",
    "quant_index",
    "read_quants",
    "storage",
    "tensor_bytes",
    "tensor_size",
    "tensor_types",
    "type_bits",
    "unsloth_dynamic_types",
    "weight_bytes",
]

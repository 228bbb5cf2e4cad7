"""Bytes of a model in a weight format: each tensor's storage type by the format's recipe, then its
size, cached per (architecture, format)."""

from __future__ import annotations

from functools import lru_cache

from ..arch import Architecture
from .formats import QuantFormat
from .llamacpp import llama_cpp_types
from .recipes import RECIPES, unsloth_dynamic_types
from .storage import tensor_size


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
    # Every block repeats the same shapes: each (shape, type) is sized once.
    sized: dict[tuple[int, int, int, str], float] = {}
    out = []
    for t, ty in zip(arch.tensors, tensor_types(arch, quant)):
        key = (t.rows, t.cols, t.experts, ty)
        size = sized.get(key)
        if size is None:
            size = sized[key] = tensor_size(t, ty)
        out.append(size)
    return tuple(out)


@lru_cache(maxsize=16384)
def weight_bytes(arch: Architecture, quant: QuantFormat, include_mtp: bool = True) -> float:
    """Bytes of all weights (GB = this / 1e9), multi-token-prediction layers optional."""
    return sum(size for t, size in zip(arch.tensors, tensor_bytes(arch, quant)) if include_mtp or not t.mtp)


def average_bits_per_weight(arch: Architecture, quant: QuantFormat, include_mtp: bool = True) -> float:
    """Average bits per parameter over the whole model, scales and unquantised tensors included."""
    params = arch.params_total if include_mtp else arch.params_main
    return weight_bytes(arch, quant, include_mtp) * 8 / params

"""KV-cache element formats: bytes per cached K or V element."""

from __future__ import annotations

from ..errors import EngineInputError

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

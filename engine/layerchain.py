"""The per-layer kernel chain of a decode step: how many small kernels an engine runs per layer,
the unit the fixed per-layer costs (``t_layer_s``, ``t_moe_layer_decode_s``,
``t_recurrent_layer_s``) are fitted in.

A single-token step is a chain of dependent kernels per layer; with the step captured in a CUDA
graph (llama.cpp, vLLM) each one costs about its own short run, so the chain's time is its length
in kernels times a per-kernel latency (decode.py scales it with the GPU clock). The calibration
rows come almost all from llama.cpp, so the fitted costs are llama.cpp's chain of
``DENSE_LAYER_KERNELS``; an engine whose graph fuses more of the layer into fewer kernels
(engines.toml ``decode_layer_kernels``) pays its own length at the same per-kernel latency.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .system import System

#: Kernels of a dense layer's decode chain, the unit t_layer_s pays for (docs/calibration.md, "What
#: would move the decode figure": ~21 per layer in llama.cpp's graph).
DENSE_LAYER_KERNELS = 21
#: Ollama's recurrent state is F32 (model/models/qwen3next/deltanet.go: the delta state's zeros are DTypeF32).
STATE_BYTES_PER_ELEMENT = 4


def layer_chain_factor(system: System) -> float:
    """The engine's per-layer decode chain in units of llama.cpp's (1 where engines.toml states no
    ``decode_layer_kernels``: llama.cpp and the engines that run its graph)."""
    kernels = system.engine.decode_layer_kernels
    return kernels / DENSE_LAYER_KERNELS if kernels else 1.0


def unfused_recurrent(system: System) -> tuple[float, float]:
    """(state bytes, kernels) an engine's unfused gated-DeltaNet decode adds per sequence and step
    over a fused kernel's (engines.toml ``recurrent_state_passes``, ``recurrent_extra_kernels``)."""
    engine = system.engine
    linear = [layer for layer in system.arch.attention if layer.kind == "linear"]
    if not linear or not (engine.recurrent_state_passes or engine.recurrent_extra_kernels):
        return 0.0, 0.0
    state = sum(layer.state_elements for layer in linear) * STATE_BYTES_PER_ELEMENT
    return engine.recurrent_state_passes * state, engine.recurrent_extra_kernels * len(linear)


def vlm_sync_s(system: System, batch: int = 1) -> float:
    """Seconds a decode step of a vision-language model spends in the engine's per-layer host
    synchronisations (engines.toml ``vlm_layer_sync_s``: oMLX before PR 688 read each layer's
    cache offset back to the CPU): a host latency, so no GPU clock. Only a single sequence's step
    took that path (several went through mlx-lm's batched model); text-only models and custom
    configs (no vision tower stated) pay nothing."""
    catalog = system.model.catalog
    if batch != 1 or not system.engine.vlm_layer_sync_s or catalog is None or not catalog.vision_language:
        return 0.0
    return system.engine.vlm_layer_sync_s * system.arch.layers


#: First llama.cpp build whose ROCm backend replays a single-token step as a HIP graph by default.
#: HIP graphs came in off by default ("ggml: use HIP graph, experimental, slow", PR 11362,
#: https://github.com/ggml-org/llama.cpp/pull/11362, January 2025) and were switched on by PR 22254
#: ("HIP: flip GGML_HIP_GRAPHS to on", https://github.com/ggml-org/llama.cpp/pull/22254, merged
#: 2026-04-23; ggml's sync dc1b3775). Approximate: the merge falls between b8670 (2026-04-06) and
#: b9039 (ggml sync of 2026-05-01); the calibration's ROCm rows are b7423 (the R9700: kyuz0's
#: toolboxes never pass -DGGML_HIP_GRAPHS) and b9187-9193 (the Ryzen AI Max+ 395), so any
#: boundary between them scores the same.
HIP_GRAPHS_BUILD = 8800


def hip_graphs_off(system: System) -> bool:
    """Whether a single-token decode step launches every kernel from the host: llama.cpp's ROCm
    backend at a stated build before HIP_GRAPHS_BUILD (unset: a current release, which replays a
    graph). It then pays the host launch cost a batched step pays (``t_layer_batched_s`` per
    layer), which CUDA's values, fitted on graph-replayed steps, do not hold."""
    build = system.options.llama_cpp_build
    return system.backend == "rocm" and build is not None and build < HIP_GRAPHS_BUILD

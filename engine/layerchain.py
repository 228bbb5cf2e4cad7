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

from .moe import mmf_moe_available, routed_expert_weights
from .quant import storage

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
#: ggml-cuda's graph rules (ggml-cuda.cu ``ggml_cuda_graph_check_compability`` and the arch gate,
#: ggml-org/ggml history); the builds are approximate (merge dates between releases' dates that
#: downstream bumps state: b8156 2026-02-25, b9986 2026-07-14, b10472 2026-08-17), and no
#: calibration row's build falls near one:
#: - a step of several tokens captured nothing ("disabling CUDA graphs due to batch size > 1", the
#:   GGML_OP_ADD check of PR 6766) until PR 19645 ("cuda : enable CUDA graphs for MMID 1 <= BS <= 4",
#:   https://github.com/ggml-org/llama.cpp/pull/19645, merged 2026-02-17, ggml 23c1635e; between b7948
#:   and b8156): the DGX Spark's batched rows (b6989, b7941) come before it.
CUDA_GRAPHS_BATCHED_BUILD = 8060
#: - a step with MUL_MAT_ID captured nothing at all until PR 13014 ("CUDA: noncont MMVQ + batched bs1
#:   MUL_MAT_ID", https://github.com/ggml-org/llama.cpp/pull/13014, merged 2025-04-22, ggml 658de8ce:
#:   ``node->ne[2] != 1``); between b4806 (2025-03-03) and b6451 (2025-09-13), before every mainline MoE row.
CUDA_GRAPHS_MMID_BUILD = 5170
#: - from PR 19645 a step with MUL_MAT_ID replays a graph only where the matmul needs no stream
#:   sync: quantized experts at up to MMVQ_MMID_MAX_BATCH_SIZE tokens (4, mmvq.cuh at 23c1635e), so
#:   16-bit experts launch every step's kernels, a single token's too. PR 20905 ("Optimize MOE GEMV
#:   kernel for BS > 1", https://github.com/ggml-org/llama.cpp/pull/20905, merged 2026-03-29, ggml
#:   e79ce97d, ~b8560) raised the limit per type and card (mmvq.cu get_mmvq_mmid_max_batch: 8 on
#:   Turing and newer for most types, 4-6 on older cards and AMD, kept at 4 here); PR 26802 ("CUDA:
#:   only disable CUDA graphs when mul_mat_id actually needs a stream sync",
#:   https://github.com/ggml-org/llama.cpp/pull/26802, merged 2026-08-11, ggml e661b3d4, ~b10390)
#:   keeps the graph wherever MMVQ, MMQ or mmf runs the experts: quantized experts at any batch,
#:   16-bit ones on AMD up to MMVQ_MAX_BATCH_SIZE (8) or in mmf (moe.mmf_moe_available).
MMVQ_MMID_MAX_BATCH = 4
MMVQ_MAX_BATCH = 8
CUDA_GRAPHS_MMID_TYPED_BUILD = 8560
CUDA_GRAPHS_MMID_SYNC_BUILD = 10390
#: Not modelled (measured, not kept; docs/calibration.md, Changes): cards below compute capability
#: 7.0 never capture a graph (``disable_due_to_gpu_arch``; Volta and Turing from PR 25749,
#: https://github.com/ggml-org/llama.cpp/pull/25749), and ik_llama.cpp captured no MoE step until
#: its PR 689 (https://github.com/ikawrakow/ik_llama.cpp/pull/689). Both are in the sources, but
#: charged to the P100's and the 16-card ik_llama.cpp rig's rows they moved llama.cpp's CUDA
#: per-layer values so that the engines borrowing them (ExLlamaV3 on the RTX 3090) predicted worse
#: held out (decode rows beyond 35% 374 -> 380): their fitted per-layer costs hold those launches.


def hip_graphs_off(system: System) -> bool:
    """Whether a single-token decode step launches every kernel from the host: llama.cpp's ROCm
    backend at a stated build before HIP_GRAPHS_BUILD (unset: a current release, which replays a
    graph). It then pays the host launch cost a batched step pays (``t_layer_batched_s`` per
    layer), which CUDA's values, fitted on graph-replayed steps, do not hold."""
    build = system.options.llama_cpp_build
    return system.backend == "rocm" and build is not None and build < HIP_GRAPHS_BUILD


def _experts_quantized(system: System) -> bool:
    """ggml_is_quantized of every routed-expert tensor (quant/storage.py ``Storage.quantized``)."""
    return all(storage(type_name).quantized for _, type_name in routed_expert_weights(system.arch, system.quant))


def _mmid_needs_sync(system: System, tokens: int, build: int | None) -> bool:
    """Whether llama.cpp's MUL_MAT_ID of a ``tokens``-token step stops the graph (the rules above)."""
    if build is not None and build < CUDA_GRAPHS_MMID_BUILD:
        return True
    if build is not None and build < CUDA_GRAPHS_BATCHED_BUILD:
        return tokens > 1
    quantized = _experts_quantized(system)
    if build is not None and build < CUDA_GRAPHS_MMID_SYNC_BUILD:
        typed = build >= CUDA_GRAPHS_MMID_TYPED_BUILD and system.backend == "cuda" and (system.device.cuda_compute_capability or 0) >= 7.5
        return not quantized or tokens > (MMVQ_MAX_BATCH if typed else MMVQ_MMID_MAX_BATCH)
    if quantized:
        return False
    return not ((system.backend == "rocm" and tokens <= MMVQ_MAX_BATCH) or mmf_moe_available(system))


def graphs_off(system: System, tokens: int = 1) -> bool:
    """Whether a decode step of ``tokens`` tokens (sequences x tokens each) launches every kernel
    from the host instead of replaying a captured graph, and so pays ``t_layer_batched_s`` a layer.
    ggml-cuda (CUDA, and ROCm through HIP) in llama.cpp and the engines that run its kernels: the
    eras above, by the set-up's stated build (unset: a current release). Every other engine and
    backend (ik_llama.cpp's included), and llama.cpp before mid-2024 (fitted apart): a step of
    several tokens launches, a single token replays (or its fitted per-layer costs hold its
    launches)."""
    if not (system.backend in ("cuda", "rocm") and system.engine.runs_mainline_ggml(with_legacy=False)):
        return tokens > 1
    build = system.options.llama_cpp_build
    if hip_graphs_off(system):
        return True
    if tokens > 1 and build is not None and build < CUDA_GRAPHS_BATCHED_BUILD:
        return True
    return system.arch.is_moe and _mmid_needs_sync(system, tokens, build)

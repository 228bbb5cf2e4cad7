"""Several identical GPUs: what splitting a model costs per decode step.

- Layer (pipeline) split, llama.cpp's default: the cards run one after the other; each reads its
  own layers, so a step reads the same bytes at the same rate as one card, plus a hand-off of the
  activations at each card boundary. Capacity grows, single-stream speed does not.
- Row split (llama.cpp ``-sm row``) and tensor parallelism (vLLM ``-tp``, exllamav3 ``--mode
  tp``): every card reads 1/N of each layer in parallel, then the partial results are combined
  over the interconnect: twice per layer for tensor parallelism (after attention and after the
  MLP, Megatron-LM's scheme), after every split matrix multiplication for llama.cpp's row split.
  Each combine costs a latency plus the activations over the link, which is why two cards give
  1.2-1.6x, not 2x (docs/physics.md section 6).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from .catalog import GB
from .hardware import PCIE_GBS_PER_LANE
from .moe import host_routed

if TYPE_CHECKING:
    from .system import System

#: Latency of one small all-reduce / hand-off between cards, seconds. NCCL's all-reduce of a few
#: KB takes ~10-30 us over PCIe and ~5-10 us over NVLink (NVIDIA nccl-tests figures); llama.cpp's
#: own copies between cards go through the host and are slower. These are priors; the fit may
#: refine them per split mode.
SYNC_LATENCY_PCIE_S = 30e-6
SYNC_LATENCY_NVLINK_S = 8e-6
#: Hand-off between pipeline stages (copy of one activation vector, then a stream sync).
LAYER_SPLIT_HOP_S = 60e-6

#: Combines per layer by split mode (see module docstring): tensor parallelism all-reduces after
#: attention and after the MLP; llama.cpp's row split gathers after each of its split matmuls
#: (q, k, v, o, gate, up, down).
SYNCS_PER_LAYER = {"tensor": 2, "row": 7}

#: Activations are exchanged in 16-bit floats.
ACTIVATION_BYTES = 2

#: Bandwidth of the one CPU thread that sums a host-staged all-reduce (engines.toml
#: ``tp_allreduce_via_host``), bytes/s: the CPU backends' single-core prior (params.py
#: ``core_bw_gbs``, 25 GB/s: line-fill buffers hold one core to ~20-60 GB/s).
HOST_REDUCE_CORE_BYTES_S = 25 * GB
#: PCIe transfers reach about 80% of the link's rate (offload.PCIE_EFFICIENCY).
HOST_REDUCE_PCIE_EFFICIENCY = 0.8
#: Bytes of one stage of exllamav3's host-staged all-reduce (CPUREDUCE_CHUNK_SIZE = NUM_THREADS
#: x 64 = 1024 x 64 in exllamav3/exllamav3_ext/parallel/all_reduce_cpu_avx2.h, v1.0.0).
HOST_REDUCE_STAGE_BYTES = 64 * 1024


def host_allreduce_s_per_byte(system: System) -> float:
    """Seconds per byte of message of one all-reduce staged through host memory, as exllamav3's
    default ("native") tensor-parallel backend runs it: every GPU writes its partial sum as BF16
    into pinned host memory over its own PCIe link, one CPU thread copies the first and adds the
    others (AVX2), and every GPU reads the sum back over its link. The three steps run in 64 KB
    stages in lockstep (a two-block cooperative kernel per GPU, grid.sync() between stages; the
    CPU polls the GPUs' stage flags and the GPUs poll its), so their times add: 2 link crossings
    plus the CPU's pass over N contributions and one sum at one core's bandwidth.
    https://github.com/turboderp-org/exllamav3/blob/v1.0.0/exllamav3/model/model_tp_backend.py
    (TPBackendNative: "all_reduce() currently routes through pg_all_reduce_cpu() ... at the cost of
    PCIe traffic and CPU work"; tp_backend="native" is the default in model.py),
    exllamav3/exllamav3_ext/parallel/all_reduce_cpu.cu and all_reduce_cpu_avx2.cpp
    (CPUREDUCE_CHUNK_SIZE = 64 KB, perform_cpu_reduce_avx2). The link is the card's own PCIe
    link, never NVLink: the data goes through the host."""
    link_bytes_s = pcie_link(system)[2] * HOST_REDUCE_PCIE_EFFICIENCY
    return 2 / link_bytes_s + (system.gpus + 1) / HOST_REDUCE_CORE_BYTES_S


#: A card whose PCIe link is not stated is taken as PCIe 4.0 x16.
DEFAULT_PCIE_GEN = 4
DEFAULT_PCIE_LANES = 16


def pcie_link(system: System) -> tuple[int, int, float]:
    """(generation, lanes, bytes/s per direction) of each card's host link: the card's own PCIe
    link, narrowed by the slots or risers it sits in when the request states them (a x16 card in
    a x4 riser runs x4; a gen-4 card in a gen-3 board runs gen 3)."""
    device, options = system.device, system.options
    gen = min(device.pcie_gen or DEFAULT_PCIE_GEN, options.slot_pcie_gen or 99)
    lanes = min(device.pcie_lanes or DEFAULT_PCIE_LANES, options.slot_pcie_lanes or 99)
    return gen, lanes, PCIE_GBS_PER_LANE[gen] * lanes * GB


def uses_nvlink(system: System) -> bool:
    """Whether the cards' collectives run over NVLink. Built-in links (SXM modules on an NVSwitch
    board) always do, up to the domain's size. Bridges are accessories: they count only when the
    request says they are fitted, and they join pairs (4 on H200 NVL), so with more cards than a
    bridge joins the ring crosses PCIe and the slowest hop sets the pace."""
    device = system.device
    if not device.nvlink_gbs or system.gpus > (device.nvlink_cards or 0):
        return False
    return bool(system.options.nvlink) if device.nvlink_bridge else system.options.nvlink is not False


def link(system: System) -> tuple[str, float, float]:
    """(name, bandwidth bytes/s, latency s) of the link the cards exchange activations over."""
    if uses_nvlink(system):
        return "NVLink", system.device.nvlink_gbs / 2 * GB, SYNC_LATENCY_NVLINK_S
    gen, lanes, bandwidth = pcie_link(system)
    return f"PCIe {gen}.0 x{lanes}", bandwidth, SYNC_LATENCY_PCIE_S


def parallel_cards(system: System) -> int:
    """Cards that read a step's weights at the same time: all of them under a row or tensor
    split, one at a time under a layer split."""
    return system.gpus if system.options.split != "layer" else 1


def split_sync_parts(system: System, tokens: int) -> tuple[float, float]:
    """(latency, data) seconds added to one forward pass over ``tokens`` tokens (a decode step of
    a batch, or a prefill micro-batch) by splitting across ``system.gpus`` cards, at the priors.
    Engines scale the two apart (``sync_factor``, ``sync_data_factor``): a decode step's syncs are
    latency (a few KB each), a prefill micro-batch's are data (MBs each), and an implementation
    can be poor at one and not the other (2023 llama.cpp row splits: slow prefill, fast decode)."""
    cards = system.gpus
    if cards <= 1:
        return 0.0, 0.0
    mode = system.options.split
    if mode == "layer":
        return (cards - 1) * LAYER_SPLIT_HOP_S, 0.0
    _name, bandwidth, latency = link(system)
    message = tokens * system.arch.hidden_size * ACTIVATION_BYTES
    # Small all-reduces run as a tree (log2 N latencies); the data term is a ring's 2 (N-1)/N of
    # the message through each card's link.
    syncs = SYNCS_PER_LAYER[mode] * system.arch.layers
    if mode == "tensor" and system.engine.tp_allreduce_via_host:
        # The first 64 KB stage is one exchange through the host, the latency; every further
        # stage adds its bytes' time (a decode step's few KB fit in one stage).
        # It crosses PCIe whatever bridge the cards have.
        staged = max(message - HOST_REDUCE_STAGE_BYTES, 0.0)
        return syncs * SYNC_LATENCY_PCIE_S * math.log2(cards), syncs * staged * host_allreduce_s_per_byte(system)
    return syncs * latency * math.log2(cards), syncs * 2 * (cards - 1) / cards * message / bandwidth


def pipeline_overlap(system: System) -> tuple[bool, str]:
    """Whether a layer split overlaps the micro-batches of one logical batch across its cards
    (llama.cpp's pipeline parallelism), and why: (overlap, reason).

    llama.cpp turns it on only when several devices share a layer split with every layer and the
    KV cache on them and no tensor overrides (src/llama-context.cpp: ``pipeline_parallel =
    n_devices > 1 && n_gpu_layers > n_layer && split_mode == LAYER && offload_kqv &&
    !has_tensor_overrides()``; the same test in ik_llama.cpp src/llama.cpp). Turned on, it gives
    the scheduler GGML_SCHED_MAX_COPIES (4) copies of the graph's inputs so that one host thread
    can queue micro-batch k+1 on the first card while the others still run micro-batch k. That
    overlap is lost whenever the host thread itself waits for a card: a mixture-of-experts layer
    whose expert matmul copies the router's choices to the host and synchronises the stream
    (``ggml_cuda_mul_mat_id``: ``cudaMemcpyAsync(ids_host ...); cudaStreamSynchronize(stream)``)
    makes the host wait at every MoE layer, so the cards run one micro-batch after the other.
    Where that happens is moe.host_routed's rule. Measured: 16 RTX 3090s with DeepSeek-R1 on ik_llama.cpp
    prefill at a rate set by -ub alone, the same with 1 or 8 micro-batches per batch
    (ik_llama.cpp discussion 266). ``options.pipeline`` overrides the rule.
    """
    options = system.options
    if system.gpus <= 1 or options.split != "layer":
        return False, "one card or no layer split"
    if options.pipeline is not None:
        return options.pipeline, "as stated"
    placement = system.placement
    if placement.offloaded or options.tensor_overrides or options.n_cpu_moe or options.expert_offload:
        return False, "weights in system RAM or tensor overrides: llama.cpp turns pipeline parallelism off"
    loop = host_routed(system)
    if loop == "ik":
        return False, "ik_llama.cpp's MoE matmuls wait for the router on the host at every MoE layer"
    if loop:
        return False, "MoE matmuls outside llama.cpp's MMQ kernels wait for the router on the host at every MoE layer"
    return True, "llama.cpp's default with every layer on the cards"

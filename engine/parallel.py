"""Several identical GPUs: what splitting a model costs per decode step.

- Layer (pipeline) split, llama.cpp's default: the cards run one after the other; each reads its
  own layers, so a step reads the same bytes at the same rate as one card, plus a hand-off of the
  activations at each card boundary. Capacity grows, single-stream speed does not.
- Row split (llama.cpp ``-sm row``) and tensor parallelism (vLLM ``-tp``, exllamav3 ``--mode
  tp``): every card reads 1/N of each layer in parallel, then the partial results are combined
  over the interconnect: twice per layer for tensor parallelism (after attention and after the
  MLP, Megatron-LM's scheme), after every split matrix multiplication for llama.cpp's row split.
  Each combine costs a latency plus the activations over the link, which is why two cards give
  1.2-1.6x, not 2x (physics.md section 6).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

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


def link(system: System) -> tuple[str, float, float]:
    """(name, bandwidth bytes/s, latency s) of the link between the cards."""
    device = system.device
    if device.nvlink_gbs:
        return "NVLink", device.nvlink_gbs / 2 * 1e9, SYNC_LATENCY_NVLINK_S
    pcie = device.pcie_gbs or 16 * 1.969  # PCIe 4.0 x16 when unknown
    return f"PCIe {device.pcie_gen or 4}.0", pcie * 1e9, SYNC_LATENCY_PCIE_S


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
    return syncs * latency * math.log2(cards), syncs * 2 * (cards - 1) / cards * message / bandwidth

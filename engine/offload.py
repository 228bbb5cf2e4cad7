"""Where the weights sit: on the accelerator(s), or partly in system RAM.

llama.cpp's ``-ngl N`` keeps the last N blocks on the GPU and the rest (with the embedding and,
unless every block is offloaded, the output head) in system RAM; ``--n-cpu-moe`` / ``-ot
exps=CPU`` keeps only the routed experts in RAM. Per token the two parts run one after the other,
so the slow part dominates (docs/physics.md section 5).
"""

from __future__ import annotations

from dataclasses import dataclass

from .weights import WeightProfile


@dataclass(frozen=True)
class Placement:
    """Bytes of weights per location, and what decode reads where."""

    #: Fraction of blocks on the accelerator(s).
    gpu_layer_fraction: float
    #: Routed experts kept in system RAM (``--n-cpu-moe`` for every layer).
    experts_on_host: bool
    #: Weight bytes stored on the accelerator(s) and in system RAM.
    gpu_bytes: float
    host_bytes: float

    @property
    def offloaded(self) -> bool:
        return self.host_bytes > 0


def place_layers(profile: WeightProfile, gpu_layer_fraction: float) -> Placement:
    """Blocks split by ``gpu_layer_fraction``; outside-block tensors go with the GPU only when
    every block does (llama.cpp offloads the output layer last)."""
    layers = len(profile.per_layer)
    on_gpu = round(gpu_layer_fraction * layers)
    gpu_blocks = sum(profile.per_layer[layers - on_gpu :]) if on_gpu else 0.0
    host_blocks = sum(profile.per_layer[: layers - on_gpu])
    if on_gpu == layers:
        return Placement(1.0, False, gpu_blocks + profile.outside_layers, 0.0)
    return Placement(on_gpu / layers, False, gpu_blocks, host_blocks + profile.outside_layers)


def place_experts_on_host(profile: WeightProfile) -> Placement:
    """Attention, shared weights and head on the GPU; routed experts in system RAM."""
    return Placement(1.0, True, profile.total - profile.experts, profile.experts)

"""Decode: the time of one generation step, and runs of many steps as the context grows.

One step for ``batch`` sequences at ``context`` cached tokens (physics.md sections 1, 2, 5-7):

    t = max(memory time, compute time) + t_token + t_layer * layers   [+ host part] [+ sync]
    memory time  = weights read / (BW * eta_bw) + KV read * kv_read_factor / (BW * eta_bw)
    compute time = (2 * active params + attention FLOPs) * batch / (vector FLOPS * eta_decode_compute)

Weights read grow with the batch only for MoE (more distinct experts); KV reads grow with the
batch and the context. Offloaded weights are read from system RAM at the host's bandwidth, one
part after the other. Several GPUs: a layer split runs the cards one after another (each reads
its share, so no faster than one card); a row/tensor split reads 1/N per card in parallel but
synchronises over the interconnect twice per layer (parallel.py).

The work is split in two: :func:`step_features` gathers what a step moves and computes (bytes,
FLOPs, the device's rates), which depends only on the set-up; :func:`step_time_from` turns
features into seconds with an engine's parameters. The calibration fit evaluates the second part
thousands of times on features it computed once.
"""

from __future__ import annotations

from dataclasses import dataclass

from .kvcache import decode_attention_flops, kv_elements, kv_elements_mean, state_bytes
from .params import BackendParams
from .parallel import split_sync_seconds
from .roofline import bandwidth_bytes_s, thread_limited_bandwidth, thread_limited_flops, vector_flops
from .system import System
from .weights import distinct_expert_fraction


@dataclass(frozen=True)
class StepFeatures:
    """What one decode step moves and computes, and at which peak rates (no efficiencies)."""

    device_weight_bytes: float
    device_kv_bytes: float
    device_flops: float
    bandwidth: float  # bytes/s, summed over cards that read in parallel
    flops_rate: float  # FLOP/s of matrix-vector work, summed over parallel cards
    layers: int
    host_weight_bytes: float
    host_kv_bytes: float
    host_flops: float
    host_bandwidth: float
    host_flops_rate: float
    sync_s: float
    weight_bytes: float  # all weights read per step (device + host)
    kv_bytes: float  # all KV read per step
    #: Per-core bandwidth limit of a CPU backend: cores in use (0 = not a CPU backend).
    cpu_threads: int = 0


@dataclass(frozen=True)
class StepTime:
    """One decode step, seconds by cause, and the bytes it read."""

    weights_s: float
    kv_s: float
    compute_s: float
    fixed_s: float
    host_s: float
    sync_s: float
    weight_bytes: float
    kv_bytes: float

    @property
    def total_s(self) -> float:
        return max(self.weights_s + self.kv_s, self.compute_s) + self.fixed_s + self.host_s + self.sync_s

    @property
    def memory_bound(self) -> bool:
        return self.weights_s + self.kv_s >= self.compute_s


def step_features(system: System, kv_context_elements: float, batch: int, attention_context: float) -> StepFeatures:
    """Features of a step with ``kv_context_elements`` cached KV elements per sequence."""
    profile = system.profile
    arch = system.arch
    placement = system.placement
    fraction = distinct_expert_fraction(arch, batch)

    weights_read = profile.dense_read + profile.lookup_row * batch + profile.experts_read(fraction)
    kv_read = batch * (kv_context_elements * system.kv_bytes_per_element + state_bytes(arch))
    flops = batch * (2 * arch.params_active + decode_attention_flops(arch, attention_context))

    host_weights = host_kv = host_flops = 0.0
    if placement.experts_on_host:
        host_weights = profile.experts_read(fraction)
        host_flops = batch * 2 * arch.params_active * (host_weights / max(weights_read, 1.0))
    elif placement.offloaded:
        host_share = 1 - placement.gpu_layer_fraction
        host_weights = weights_read * host_share
        host_kv = kv_read * host_share
        host_flops = flops * host_share

    parallel_cards = system.gpus if system.options.split != "layer" else 1
    device, backend = system.device, system.backend
    threads = system.cpu_threads if backend == "cpu" else 0
    bandwidth = bandwidth_bytes_s(device, backend)
    flops_rate = vector_flops(device)
    if threads:
        flops_rate = thread_limited_flops(device, threads)
    host_bandwidth = host_flops_rate = 0.0
    if system.host is not None and (host_weights or host_kv):
        host_bandwidth = bandwidth_bytes_s(system.host, "cpu")
        host_flops_rate = vector_flops(system.host)
    return StepFeatures(
        device_weight_bytes=weights_read - host_weights,
        device_kv_bytes=kv_read - host_kv,
        device_flops=flops - host_flops,
        bandwidth=bandwidth * parallel_cards,
        flops_rate=flops_rate * parallel_cards,
        layers=arch.layers,
        host_weight_bytes=host_weights,
        host_kv_bytes=host_kv,
        host_flops=host_flops,
        host_bandwidth=host_bandwidth,
        host_flops_rate=host_flops_rate,
        sync_s=split_sync_seconds(system, batch),
        weight_bytes=weights_read,
        kv_bytes=kv_read,
        cpu_threads=threads,
    )


def step_time_from(f: StepFeatures, p: BackendParams, host: BackendParams | None = None) -> StepTime:
    """Seconds of a step with features ``f`` under parameters ``p`` (``host`` for the CPU part)."""
    bandwidth = f.bandwidth * p.eta_bw
    if f.cpu_threads:
        bandwidth = thread_limited_bandwidth(bandwidth, f.cpu_threads, p.core_bw_gbs)
    weights_s = f.device_weight_bytes / bandwidth
    kv_s = f.device_kv_bytes * p.kv_read_factor / bandwidth
    compute_s = f.device_flops / (f.flops_rate * p.eta_decode_compute)
    fixed_s = p.t_token_s + p.t_layer_s * f.layers
    host_s = 0.0
    if f.host_bandwidth:
        hp = host or p
        host_mem = (f.host_weight_bytes + f.host_kv_bytes * hp.kv_read_factor) / (f.host_bandwidth * hp.eta_bw)
        host_compute = f.host_flops / (f.host_flops_rate * hp.eta_decode_compute)
        host_s = max(host_mem, host_compute)
    return StepTime(weights_s, kv_s, compute_s, fixed_s, host_s, f.sync_s, f.weight_bytes, f.kv_bytes)


def step_time(system: System, kv_context_elements: float, batch: int, attention_context: float) -> StepTime:
    features = step_features(system, kv_context_elements, batch, attention_context)
    return step_time_from(features, system.params.params, system.host_params.params)


def step_at(system: System, context: int, batch: int = 1) -> StepTime:
    """A decode step after ``context`` tokens."""
    return step_time(system, kv_elements(system.arch, context), batch, context)


def run_features(system: System, start: int, count: int, batch: int = 1) -> StepFeatures:
    """Features of the mean step of generating ``count`` tokens after ``start`` cached tokens.

    Step time is affine in the KV cache read, so the mean step is the step at the mean cache
    (exact for memory-bound steps); tg-N at depth d is then 1 / mean step.
    """
    mean_elements = kv_elements_mean(system.arch, start, count)
    return step_features(system, mean_elements, batch, start + (count - 1) / 2)


def run_mean_step(system: System, start: int, count: int, batch: int = 1) -> StepTime:
    return step_time_from(run_features(system, start, count, batch), system.params.params, system.host_params.params)


def ceiling_tps(system: System) -> float:
    """The bandwidth ceiling of physics.md section 1: all weights read at the peak bandwidth,
    nothing else (no KV, no overhead). What the seeds call 'the formula'."""
    bandwidth = bandwidth_bytes_s(system.device, system.backend)
    return bandwidth / system.profile.read_per_token(distinct_expert_fraction(system.arch, 1))

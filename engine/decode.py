"""Decode: the time of one generation step, and runs of many steps as the context grows.

One step for ``batch`` sequences at ``context`` cached tokens (docs/physics.md sections 1, 2, 5-7):

    t = max(weights / (BW * eta_bw) + (weights read * dequant_ops + codebook weights * codebook_ops) / FLOPS,
            2 * active params * batch / (FLOPS * eta_decode_compute))
      + max(KV read * kv_read_factor / (BW * eta_bw),
            (attention FLOPs / eta_attn_decode + codebook KV elements * kv_codebook_ops) / FLOPS)
      + t_token + (t_layer * layers + t_moe_layer_decode * MoE layers
                   + t_recurrent_layer * recurrent layers) * (1500 MHz / GPU clock)
      + [no graph replayed] t_layer_batched * layers   [+ host part] [+ interconnect]   [+ B = 1: vlm_layer_sync * layers]
      [+ t_sync_thread * layers * threads on a CPU backend]
      [+ BF16 experts on llama.cpp's Vulkan backend: padded tile FLOPs / (shader FLOPS * eta_pp), vulkan_experts.py]
    (on Metal the unpacking term moves into the second argument of the first max: unpacking.py)

Per layer the matrix-vector products (streaming the weights) and the attention over the cache
(streaming the KV) run one after the other, each bound by whichever of memory and arithmetic is
slower: GQA attention is memory bound, MLA attention (many heads over one latent) turns compute
bound at long contexts, CPUs and big batches make the matmuls compute bound. Quantised weights
must be unpacked on the way in (``dequant_ops`` per weight, on the vector units): time added to
the memory stream, except on Apple GPUs, whose kernels run it with the multiply-adds alongside the
stream (the longer of the two counts; engine/unpacking.py), and dp4a CUDA cards (no separate pass).
Weights stored as indices into a lattice codebook (IQ1-IQ3) cost ``codebook_ops`` more each: the
unpacking gathers grid entries and applies sign bits, which SIMD CPU kernels do element by
element (ik_llama.cpp discussion 164: on a Ryzen 7950X and an M2 Max CPU IQ3_S decodes slower
than Q8_0, which reads twice its bytes). A KV cache coded the same way (TurboQuant: rotated
coordinates, each an index into a Lloyd-Max codebook) pays ``kv_codebook_ops`` per cached element
on the attention side: the Apple harness measured its 3.5-bit cache only 1.15x faster than f16
at 128k context (Gemma 4 E4B, mlx-vlm), where its bytes alone would make it ~2x.
The per-layer overhead is a chain of tiny kernels whose duration is latency, i.e. GPU cycles, so
it scales with the device's clock (1.5 GHz is the reference of ``t_layer_s``). A layer with
routed experts runs more of them (router matmul, softmax and top-k, the expert gather, the
weighted sum): ``t_moe_layer_decode_s``. Without it the fit charges MoE models' extra kernels to
every dense layer and small dense models come out too slow (Apple harness rows: dense 0.87,
MoE 1.11 predicted/measured before it existed). A recurrent layer (gated DeltaNet in Qwen3.5/3.6
and Qwen3-Next, Mamba in Nemotron-H) updates its state with a chain of small kernels of its own
(llama.cpp src/models/delta-net-base.cpp): ``t_recurrent_layer_s``, a sourced prior, not fitted.
Without it the hybrids' extra kernels, all in MoE models, were charged to ``t_moe_layer_decode_s``
(~50 us a layer at 1.5 GHz on CUDA) and attention-only MoE models came out slow: an RTX 4090
decoded Qwen3-30B-A3B at 1.08x Llama 3.1 8B, where reports say ~1.3-1.5x (196 against ~130-150
tok/s). A step with several tokens (batched decode, speculative verification) pays
``t_layer_batched_s`` per layer on top where no captured graph is replayed (layerchain.graphs_off: llama.cpp
before PR 19645 for any step of several tokens, 16-bit MoE experts in some builds, ROCm before HIP
graphs were on by default; other engines for any step of several tokens). Launching is the
host's latency, so it does not shrink with the GPU's clock. Its prior comes from a published pair
(llama.cpp PR 15802, RTX 3090, llama 8B Q4_0: a two-token step takes 0.76 ms more than a
one-token step, 24 us a layer); not fitted (batched rows come from one device per backend). Fitted
on the DGX Spark alone it had reached ~180 us a layer: an RTX 4090 served two requests at 1.09x
the total of one, where measured batched curves on fast cards nearly double it.

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

from . import intel_matvec
from .matvec_batch import matvec_alu_adds, metal_dense_passes, metal_expert_slot_reads, mmvq_rate_factor
from .kvcache import decode_attention_flops, kv_elements_mean, kv_read_elements, state_bytes
from .fa_kernels import unfused_attention_factor
from .layerchain import DENSE_LAYER_KERNELS, graphs_off, layer_chain_factor, unfused_recurrent, vlm_sync_s
from .offload import PCIE_EFFICIENCY, op_offload
from .params import BackendParams
from .parallel import parallel_cards, pcie_link, split_sync_parts
from .quant import KV_CODEBOOK_TYPES, storage
from .roofline import (
    bandwidth_bytes_s, clock_factor, cpu_attention_rate, cpu_isa, cpu_bandwidth, cpu_kernel, latency_bound_sms, realised_bandwidth,
    soc_memory, thread_limited_flops, vector_flops,
)
from .repack import REPACK_ROWS, repacked_share, repacked_types
from .system import System
from .unpacking import unpacking_hidden, unpacking_overlaps
from .vulkan_experts import expert_tiles
from .weights import distinct_expert_fraction, expert_fraction


@dataclass(frozen=True)
class StepFeatures:
    """What one decode step moves and computes, and at which peak rates (no efficiencies).

    Routed-expert bytes are kept apart (``*_expert_bytes`` = all experts held there) because the
    share a batch touches depends on the routing parameter of the fit.
    """

    device_dense_bytes: float  # read in full every step on the device(s)
    device_expert_bytes: float  # all routed experts held on the device(s)
    device_dense_params: float  # weights behind device_dense_bytes
    device_expert_params: float  # weights behind device_expert_bytes
    device_kv_bytes: float
    device_matmul_flops: float
    device_attention_flops: float
    bandwidth: float  # bytes/s, summed over cards that read in parallel
    flops_rate: float  # FLOP/s of matrix-vector work, summed over parallel cards
    layers: int
    host_dense_bytes: float
    host_expert_bytes: float
    host_kv_bytes: float
    host_flops: float
    host_bandwidth: float
    host_flops_rate: float
    sync_latency_s: float  # split synchronisation at the priors: latency part ...
    sync_data_s: float  # ... and data part (engines scale them by sync_factor, sync_data_factor)
    kv_bytes: float  # all KV read per step
    batch: int = 1
    expert_share: float = 1.0  # experts per token / experts (1 for dense models)
    quantized: bool = False  # weights are unpacked on the way into the matmuls
    alu_adds: bool = False  # the matmuls' ALU work adds to the weight stream (matvec_batch.py)
    clock_factor: float = 1.0  # reference clock / the GPU's clock
    unified_memory: bool = False  # an SoC's LPDDR shared with the CPU, not a card's GDDR/HBM
    #: Per-core bandwidth limit of a CPU backend: threads in use (0 = not a CPU backend), the
    #: CPU's physical cores and core chiplets (0 = monolithic) (roofline.cpu_bandwidth).
    cpu_threads: int = 0
    cpu_cores: int = 0
    cpu_ccds: int = 0
    #: Threads that meet at every graph node's barrier (CPU backends; 0 otherwise).
    sync_threads: int = 0
    #: The attention kernel's rate relative to flops_rate (a CPU's int8 path for a quantised cache).
    attention_rate_factor: float = 1.0
    #: The matmul kernel's multiply-accumulate rate relative to flops_rate (CPU int8/BF16 paths).
    matmul_rate_factor: float = 1.0
    #: Share of the quantised weights repacked into interleaved rows (repack.py): dequant_ops / REPACK_ROWS.
    repacked_share: float = 0.0
    #: Layers with routed experts (each runs the routing kernels).
    moe_layers: int = 0
    #: Weights among device_dense_params / device_expert_params in a lattice-codebook type.
    device_codebook_dense_params: float = 0.0
    device_codebook_expert_params: float = 0.0
    #: KV-cache elements read on the device from a codebook-coded cache (TurboQuant), else 0.
    device_kv_codebook_elements: float = 0.0
    #: Layers whose token mixer is a recurrence (gated DeltaNet, Mamba) instead of attention.
    recurrent_layers: int = 0
    #: An engine's unfused gated-DeltaNet update (unfused_recurrent): state bytes it moves and
    #: kernels it launches per step beyond a fused kernel's.
    unfused_state_bytes: float = 0.0
    unfused_state_kernels: float = 0.0
    #: Host synchronisations per step of an engine's vision-language path (layerchain.vlm_sync_s), seconds.
    vlm_sync_s: float = 0.0
    #: Seconds of PCIe copies of weights held in system RAM, for a step of op-offload size
    #: (offload.OP_OFFLOAD_MIN_BATCH tokens or more; a prior, not fitted).
    transfer_s: float = 0.0
    #: SMs per second of memory latency (roofline.latency_bound_sms, summed over parallel cards);
    #: times the engine's bytes in flight per SM it bounds the streaming rate (0 = no bound).
    sms_per_latency: float = 0.0
    weight_stream_factor: float = 1.0  # weight-stream time over the float mat-vec's (intel_matvec)
    #: The engine's per-layer kernel chain in units of llama.cpp's (layerchain.py).
    layer_chain: float = 1.0
    #: Operations per weight to decode a trellis code (quant/storage.py ``decode_ops``), never hidden.
    weight_decode_ops: float = 0.0
    #: Unpacking runs alongside the weight stream (unpacking.unpacking_overlaps: Apple GPUs).
    unpack_overlaps: bool = False
    #: The step launches every kernel from the host, no graph replayed (layerchain.graphs_off).
    launches_every_kernel: bool = False
    expert_slot_reads: bool = False  # experts read per (token, slot) pair (matvec_batch.metal_expert_slot_reads)
    dense_passes: float = 1.0  # times the non-expert weights are streamed (matvec_batch.metal_dense_passes)
    #: Padded FLOPs and peak rate of experts in Vulkan's matrix-matrix shader (vulkan_experts.py; rate x eta_pp).
    expert_tile_flops: float = 0.0
    expert_tile_rate: float = 0.0

    def weight_bytes(self, exponent: float) -> tuple[float, float, float, float]:
        """(device bytes, host bytes, device weights, device codebook weights) a step reads at routing ``exponent``."""
        # Metal's mul_mv_id reads an expert per (token, slot); mul_mv_ext streams dense weights per column group.
        touched = self.batch * self.expert_share if self.expert_slot_reads else expert_fraction(self.expert_share, self.batch, exponent)
        return (
            self.device_dense_bytes * self.dense_passes + self.device_expert_bytes * touched,
            self.host_dense_bytes + self.host_expert_bytes * touched,
            self.device_dense_params * self.dense_passes + self.device_expert_params * touched,
            self.device_codebook_dense_params * self.dense_passes + self.device_codebook_expert_params * touched,
        )


@dataclass(frozen=True)
class StepTime:
    """One decode step, seconds by cause, and the bytes it read."""

    weights_s: float
    matmul_s: float
    kv_s: float
    attention_s: float
    fixed_s: float
    host_s: float
    sync_s: float
    weight_bytes: float
    kv_bytes: float
    #: The part of weights_s spent unpacking quantised weights (dequant_ops, codebook_ops).
    unpack_s: float = 0.0
    #: The part of fixed_s a step with several tokens pays for launching its kernels one by one.
    batched_s: float = 0.0
    #: The part of fixed_s the recurrent layers' state updates cost (t_recurrent_layer_s).
    recurrent_s: float = 0.0
    #: PCIe copies of host-resident weights for a step that op offload moves to the GPU.
    transfer_s: float = 0.0
    #: The unpacking joins the multiply-adds' ALU stream, which overlaps the memory stream
    #: (unpacking.py), instead of adding to the memory stream.
    unpack_overlaps: bool = False
    alu_adds: bool = False
    expert_tile_s: float = 0.0  # Vulkan's matrix-matrix BF16 experts, after the weight stream (vulkan_experts.py)

    def _streams(self) -> tuple[float, float]:
        """(memory-side, ALU-side) seconds of the weight matmuls."""
        if self.alu_adds:
            return self.weights_s + self.matmul_s, 0.0
        if self.unpack_overlaps:
            return self.weights_s - self.unpack_s, self.matmul_s + self.unpack_s
        return self.weights_s, self.matmul_s

    @property
    def total_s(self) -> float:
        return (max(self._streams()) + self.expert_tile_s + max(self.kv_s, self.attention_s) + self.fixed_s + self.host_s + self.sync_s
                + self.transfer_s)

    @property
    def memory_bound(self) -> bool:
        memory, alu = self._streams()
        return memory >= alu


def step_features(
    system: System, kv_context_elements: float, batch: int, attention_context: float, tokens_per_sequence: int = 1
) -> StepFeatures:
    """Features of a step with ``kv_context_elements`` cached KV elements per sequence.

    ``tokens_per_sequence`` > 1 is a verification pass of speculative decoding: several new
    tokens of the same sequence in one forward pass (one read of its cache, more matmul work).
    """
    profile = system.profile
    arch = system.arch
    placement = system.placement
    tokens = batch * tokens_per_sequence
    alu_adds = matvec_alu_adds(system, tokens)  # matvec_batch.py

    dense = profile.dense_read + profile.lookup_row * tokens
    experts = profile.experts
    dense_params, expert_params = float(profile.dense_read_params), float(profile.expert_params)
    codebook_dense, codebook_experts = float(profile.dense_codebook_params), float(profile.expert_codebook_params)
    kv_read = batch * (kv_context_elements * system.kv_bytes_per_element + state_bytes(arch))
    matmul_flops = tokens * 2 * arch.params_active
    attention_flops = tokens * decode_attention_flops(arch, attention_context)

    host_dense = host_experts = host_kv = host_flops = transfer_s = 0.0
    if placement.offloaded:
        # Blocks in RAM (-ngl) bring their KV cache and attention along (llama.cpp keeps a layer's
        # cache with the layer); tensors sent to RAM on their own (--n-cpu-moe, -ot) only their
        # matmuls.
        host_share = 1 - placement.gpu_layer_fraction
        host_kv = kv_read * host_share
        if op_offload(placement, tokens):
            # From llama.cpp's op-offload batch (32 tokens in the step: batched sequences,
            # speculative verification) the matmuls of weights in system RAM run on the GPU after
            # a PCIe copy of those weights (the experts the step routes to); attention stays with
            # the cache (offload.OP_OFFLOAD_MIN_BATCH).
            copy = placement.copy_bytes(distinct_expert_fraction(arch, tokens))
            transfer_s = copy / (pcie_link(system)[2] * PCIE_EFFICIENCY)
            host_flops = attention_flops * host_share
            attention_flops *= 1 - host_share
        else:
            # Below it the host's cores run those matmuls, reading the weights at system-RAM
            # bandwidth (docs/physics.md section 5).
            host_dense, host_experts = placement.host_dense_bytes, placement.host_expert_bytes
            one_token = distinct_expert_fraction(arch, 1)
            host_read = host_dense + host_experts * one_token
            matmul_host_share = min(1.0, host_read / max(profile.read_per_token(one_token) - profile.lookup_row, 1.0))
            host_flops = matmul_flops * matmul_host_share + attention_flops * host_share
            matmul_flops *= 1 - matmul_host_share
            attention_flops *= 1 - host_share
            dense_on_device = 1 - min(1.0, host_dense / max(profile.dense_read, 1.0))
            experts_on_device = 1 - min(1.0, host_experts / max(profile.experts, 1.0)) if profile.experts else 1.0
            dense_params *= dense_on_device
            codebook_dense *= dense_on_device
            expert_params *= experts_on_device
            codebook_experts *= experts_on_device

    cards = parallel_cards(system)
    device, backend = system.device, system.backend
    device_kv = kv_read - host_kv
    unfused = unfused_attention_factor(system, attention_context)
    if unfused != 1.0:
        cache = batch * kv_context_elements * system.kv_bytes_per_element * (device_kv / kv_read if kv_read else 0.0)
        device_kv += cache * (unfused - 1)
    threads = system.cpu_threads if backend == "cpu" else 0
    flops_rate = thread_limited_flops(device, threads) if threads else vector_flops(device, backend)
    host_bandwidth = host_flops_rate = 0.0
    if system.host is not None and (host_dense or host_experts or host_kv):
        host_bandwidth = bandwidth_bytes_s(system.host, "cpu")
        host_flops_rate = vector_flops(system.host, "cpu")
    sync_latency_s, sync_data_s = split_sync_parts(system, tokens)
    unfused_bytes, unfused_kernels = unfused_recurrent(system)
    tile_flops, tile_rate = expert_tiles(system, tokens, expert_params)
    return StepFeatures(
        device_dense_bytes=dense - host_dense,
        device_expert_bytes=experts - host_experts,
        device_dense_params=dense_params,
        device_expert_params=expert_params,
        device_kv_bytes=device_kv,
        device_matmul_flops=matmul_flops,
        device_attention_flops=attention_flops,
        bandwidth=bandwidth_bytes_s(device, backend) * cards,
        flops_rate=flops_rate * cards,
        layers=arch.layers,
        host_dense_bytes=host_dense,
        host_expert_bytes=host_experts,
        host_kv_bytes=host_kv,
        host_flops=host_flops,
        host_bandwidth=host_bandwidth,
        host_flops_rate=host_flops_rate,
        sync_latency_s=sync_latency_s,
        sync_data_s=sync_data_s,
        kv_bytes=kv_read,
        batch=tokens,
        expert_share=arch.experts_per_token / arch.n_experts if arch.is_moe else 1.0,
        quantized=system.quant.kind != "dense" and not unpacking_hidden(device, backend),
        clock_factor=clock_factor(device) if backend != "cpu" else 1.0,
        unified_memory=soc_memory(device),
        # A measured bandwidth already is what the machine's cores draw: no per-core limit on top.
        cpu_threads=0 if device.bandwidth_measured else threads,
        cpu_cores=(device.cpu_cores or threads) if threads else 0,
        cpu_ccds=(device.cpu_ccds or 0) if threads else 0,
        sync_threads=threads,
        attention_rate_factor=cpu_attention_rate(device, system.options.kv_quant) if threads else 1.0,
        matmul_rate_factor=cpu_kernel(device, system.quant, tokens).factor if threads else mmvq_rate_factor(alu_adds),
        moe_layers=system.profile.expert_layers,
        repacked_share=repacked_share(
            arch, system.quant, repacked_types(cpu_isa(device), system.engine.lineage(), system.options.llama_cpp_build)
        ) if threads else 0.0,
        recurrent_layers=sum(1 for layer in arch.attention if layer.kind in ("linear", "ssm")),
        unfused_state_bytes=unfused_bytes * tokens,
        unfused_state_kernels=unfused_kernels,
        vlm_sync_s=vlm_sync_s(system, batch),
        device_codebook_dense_params=codebook_dense,
        device_codebook_expert_params=codebook_experts,
        device_kv_codebook_elements=(
            batch * kv_context_elements * placement.gpu_layer_fraction if system.options.kv_quant in KV_CODEBOOK_TYPES else 0.0
        ),
        transfer_s=transfer_s,
        sms_per_latency=latency_bound_sms(device, backend) * cards,
        weight_stream_factor=intel_matvec.stream_factor(system),
        layer_chain=layer_chain_factor(system),
        weight_decode_ops=storage(system.quant.weight_type).decode_ops,
        unpack_overlaps=unpacking_overlaps(backend),
        alu_adds=alu_adds,
        launches_every_kernel=graphs_off(system, tokens),
        expert_slot_reads=metal_expert_slot_reads(system, tokens),
        dense_passes=metal_dense_passes(system, tokens),
        expert_tile_flops=tile_flops,
        expert_tile_rate=tile_rate,
    )


def step_time_from(f: StepFeatures, p: BackendParams, host: BackendParams | None = None) -> StepTime:
    """Seconds of a step with features ``f`` under parameters ``p`` (``host`` for the CPU part)."""
    device_bytes, host_bytes, device_params, codebook_params = f.weight_bytes(p.moe_batch_exponent)
    bandwidth = realised_bandwidth(f.bandwidth, p, f.unified_memory)
    if f.sms_per_latency:
        # Little's law: no faster than the bytes the SMs keep in flight per latency.
        bandwidth = min(bandwidth, f.sms_per_latency * p.inflight_kib_per_sm * 1024)
    if f.cpu_threads:
        bandwidth = cpu_bandwidth(bandwidth, f.cpu_threads, f.cpu_cores, f.cpu_ccds, p.core_bw_gbs, p.ccd_bw_gbs)
    dequant_ops = p.dequant_ops * (1 - f.repacked_share * (1 - 1 / REPACK_ROWS))
    unpack_s = (device_params * dequant_ops + codebook_params * p.codebook_ops) / f.flops_rate if f.quantized else 0.0
    unpack_s += device_params * f.weight_decode_ops / f.flops_rate
    weights_s = device_bytes * f.weight_stream_factor / bandwidth + unpack_s
    matmul_s = f.device_matmul_flops / (f.flops_rate * f.matmul_rate_factor * p.eta_decode_compute)
    # A GPU streams each sequence's cache past an L2 the weights have flushed: no faster than the
    # memory's peak (docs/physics.md section 1). CPU backends (sync_threads > 0) keep the fitted factor.
    kv_s = f.device_kv_bytes * max(p.kv_read_factor / bandwidth, 0.0 if f.sync_threads else 1 / f.bandwidth)
    attention_s = (
        f.device_attention_flops / (p.eta_attn_decode * f.attention_rate_factor) + f.device_kv_codebook_elements * p.kv_codebook_ops
    ) / f.flops_rate
    # Launching a batched step's kernels one by one is host (CPU and driver) latency: no GPU clock.
    batched_s = p.t_layer_batched_s * f.layers if f.launches_every_kernel else 0.0
    chain = f.clock_factor * f.layer_chain  # per-kernel latency is GPU cycles; the chain's length is the engine's
    recurrent_s = p.t_recurrent_layer_s * f.recurrent_layers * chain
    recurrent_s += f.unfused_state_kernels * p.t_layer_s / DENSE_LAYER_KERNELS * f.clock_factor + f.unfused_state_bytes / bandwidth
    fixed_s = p.t_token_s + f.vlm_sync_s + (p.t_layer_s * f.layers + p.t_moe_layer_decode_s * f.moe_layers) * chain + recurrent_s + batched_s
    # CPU threads meet at a barrier after every graph node: a cost per layer that grows with them.
    fixed_s += p.t_sync_thread_s * f.layers * f.sync_threads
    host_s = 0.0
    if f.host_bandwidth:
        hp = host or p
        host_mem = (host_bytes + f.host_kv_bytes * hp.kv_read_factor) / (f.host_bandwidth * hp.eta_bw)
        host_compute = f.host_flops / (f.host_flops_rate * hp.eta_decode_compute)
        host_s = max(host_mem, host_compute)
    sync_s = f.sync_latency_s * p.sync_factor + f.sync_data_s * p.sync_data_factor
    tile_s = f.expert_tile_flops / (f.expert_tile_rate * p.eta_pp) if f.expert_tile_flops else 0.0
    return StepTime(
        weights_s, matmul_s, kv_s, attention_s, fixed_s, host_s, sync_s, device_bytes + host_bytes, f.kv_bytes, unpack_s, batched_s, recurrent_s,
        f.transfer_s, f.unpack_overlaps, f.alu_adds, tile_s,
    )


def step_time(system: System, kv_context_elements: float, batch: int, attention_context: float) -> StepTime:
    features = step_features(system, kv_context_elements, batch, attention_context)
    return step_time_from(features, system.params.params, system.host_params.params)


def step_at(system: System, context: int, batch: int = 1) -> StepTime:
    """A decode step after ``context`` tokens."""
    return step_time(system, kv_read_elements(system.arch, context), batch, context)


def run_features(system: System, start: int, count: int, batch: int = 1) -> StepFeatures:
    """Features of the mean step of generating ``count`` tokens after ``start`` cached tokens.

    Step time is affine in the KV cache read, so the mean step is the step at the mean cache
    (exact for memory-bound steps); tg-N at depth d is then 1 / mean step.
    """
    mean_elements = kv_elements_mean(system.arch, start, count)
    return step_features(system, mean_elements, batch, start + (count - 1) / 2)


def run_mean_step(system: System, start: int, count: int, batch: int = 1) -> StepTime:
    return step_time_from(run_features(system, start, count, batch), system.params.params, system.host_params.params)


def latency_bound(system: System, p: BackendParams) -> float:
    """The Little's-law bound on the weights' streaming rate, bytes/s, where it is below the
    realised bandwidth (the explain panel names it); 0 where it does not bind."""
    cards = parallel_cards(system)
    bound = latency_bound_sms(system.device, system.backend) * cards * p.inflight_kib_per_sm * 1024
    realised = realised_bandwidth(bandwidth_bytes_s(system.device, system.backend) * cards, p, soc_memory(system.device))
    return bound if 0 < bound < realised else 0.0


def ceiling_tps(system: System) -> float:
    """The bandwidth ceiling of docs/physics.md section 1: all weights read at the peak bandwidth,
    nothing else (no KV, no overhead). What article 000 calls 'the formula'. Row and tensor splits
    read every layer on all cards at once, so their ceiling is the cards' summed bandwidth."""
    bandwidth = bandwidth_bytes_s(system.device, system.backend) * parallel_cards(system)
    return bandwidth / system.profile.read_per_token(distinct_expert_fraction(system.arch, 1))

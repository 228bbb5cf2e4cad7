"""The engine's one entry point, :func:`estimate`: a request dict in, a result dict out.

Everything here is plain data (numbers, strings, lists, dicts), so the same call serves the CLI,
the tests and, through the page layer (engine/page), the page's Web Worker.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from .catalog import GB
from . import intel_matvec
from .decode import ceiling_tps, latency_bound, run_mean_step, step_at
from .errors import EngineInputError
from .layerchain import graphs_off, hip_graphs_off, vlm_sync_s
from .measured import find, measured_kinds
from .parallel import link, pipeline_overlap
from .memory import MemoryNeed
from .blas import blas_share
from .fa_kernels import attention_slowdown, unfused_attention_factor
from .prefill import gemm_slowdown, prefill_time
from .roofline import bandwidth_bytes_s, cpu_bandwidth, cpu_kernel, matmul_flops
from .speculative import check_draft, plan
from .stream import stream_schedule
from .system import System, build_system


def _memory(system: System, extra_bytes: float = 0.0) -> tuple[MemoryNeed, str, dict]:
    """Memory need and verdict; ``extra_bytes`` (a draft model or MTP head) sit on the
    accelerator too (a draft's are already in the system's reserve)."""
    need = MemoryNeed(system.weight_bytes + extra_bytes, system.kv_bytes, system.compute_bytes, system.runtime_bytes)
    placement = system.placement
    gpu_need = system.gpu_need(placement) + (0.0 if system.reserve_bytes else extra_bytes)
    host_need = placement.host_bytes + system.kv_bytes * (1 - placement.gpu_layer_fraction)
    short_of = None
    if gpu_need > system.usable_bytes:
        verdict, short_of = "no", "device"
    elif placement.offloaded:
        verdict, short_of = ("offload", None) if host_need <= system.host_usable_bytes else ("no", "system_ram")
    else:
        verdict = "fits"
    report = {
        "weights_gb": need.weights / GB,
        "draft_gb": extra_bytes / GB,
        "kv_gb": need.kv / GB,
        "compute_buffer_gb": need.compute / GB,
        "runtime_gb": need.runtime / GB,
        "overhead_gb": need.overhead / GB,
        "total_gb": need.total / GB,
        "usable_gb": system.usable_bytes / GB,
        "device_need_gb": gpu_need / GB,
        "short_of": short_of,
        "device_memory_gb": system.device.memory_bytes * system.gpus / GB,
        "gpu_weights_gb": placement.gpu_bytes / GB,
        "host_weights_gb": placement.host_bytes / GB,
        "host_need_gb": host_need / GB,
        "host_usable_gb": system.host_usable_bytes / GB,
        "system_ram_gib": system.host.memory_gib if system.host else None,
        "gpu_layer_fraction": placement.gpu_layer_fraction,
        "experts_on_host": placement.experts_on_host,
        # The llama.cpp flags the placement was stated with (empty: the engine's automatic split).
        "placement_flags": system.placement_flags,
        "host_expert_weights_gb": placement.host_expert_bytes / GB,
        # llama.cpp's input layer (the embedding tables), in system RAM beside a discrete GPU.
        "host_embedding_gb": placement.host_lookup_bytes / GB,
        # The -ngl that states the layer split (commands, explain panel); None: every layer.
        "n_gpu_layers": system.n_gpu_layers,
        # What the KV cache holds room for, and the weight file's stated size (explain panel).
        "context_tokens": system.context_tokens,
        "context_allocated": bool(system.options.context_size and system.options.context_size >= system.context_tokens),
        "file_gb": system.options.file_gb,
    }
    return need, verdict, report


def _build_with_draft(request: dict) -> tuple[System, System | None]:
    """The target system and, for speculative decoding with a draft model, the draft's, with the
    target's weights placed around the draft (both sit on the accelerator)."""
    system = build_system(request)
    o = system.options
    if not o.draft:
        return system, None
    draft_request = {k: v for k, v in request.items() if k not in ("draft", "mtp", "acceptance", "schedule")}
    draft = build_system({**draft_request, "model": o.draft})
    check_draft(system, draft)
    return build_system(request, reserve_bytes=draft.weight_bytes + draft.kv_bytes), draft


def _generation_s(system: System, draft: System | None, start: int, steps: int) -> float:
    """Seconds to generate ``steps`` tokens after ``start`` cached tokens: steps at the mean
    cache (a step is affine in the cache it reads, so this is the sum of the stream's steps), or
    speculative cycles at the middle of the run."""
    if steps <= 0:
        return 0.0
    o = system.options
    if o.draft or o.mtp:
        return steps / plan(system, draft, start + steps // 2).tps
    return steps * run_mean_step(system, start, steps, o.batch).total_s


def _waits(system: System, draft: System | None, ttft_s: float) -> tuple[float, float]:
    """(seconds to the first visible token, seconds to the last token): the first token comes
    after the TTFT; a reasoning model then thinks for its hidden tokens before the answer shows
    (the wait people feel), and the answer's remaining tokens follow (stream.py's schedule)."""
    o = system.options
    start = o.depth + o.prompt_tokens + 1
    visible = ttft_s + _generation_s(system, draft, start, o.reasoning_tokens)
    return visible, visible + _generation_s(system, draft, start + o.reasoning_tokens, o.gen_tokens - 1)


def _tier(system: System, measured: dict) -> tuple[str, str]:
    """measured: a benchmark of this very set-up exists; calibrated: this engine/backend was
    fitted on measurements of this kind of weight format (GGUF, AWQ, MLX ...: each kind runs its own
    kernels); projected: neither (borrowed parameters, priors, or a fit made on other kernels)."""
    if measured.get("decode") or measured.get("prefill"):
        return "measured", ""
    if not system.params.own_fit:
        return "projected", (f"there are no measurements of {system.engine.name} on {system.backend} yet, so this is the "
                             f"physics with efficiencies borrowed from {system.params.key}")
    kinds = measured_kinds(system.engine.id, system.backend)
    if system.quant.kind not in kinds:
        return "projected", (f"{system.engine.name} on {system.backend} was fitted on {', '.join(sorted(kinds)).upper()} "
                             f"weights only; none of those measurements ran {system.quant.kind.upper()} ({system.quant.name}), "
                             f"whose kernels differ, so this borrows that fit's efficiencies")
    return "calibrated", ""


def _measured(system: System, run_start: int) -> dict:
    """Measured points matching this set-up (display only; see engine/measured.py)."""
    o = system.options
    if system.device.id == "custom" or system.model.catalog is None or o.draft or o.mtp:
        return {}
    found = {
        "decode": find(system, "tg", o.gen_tokens, run_start),
        "prefill": find(system, "pp", o.prompt_tokens, o.depth),
    }
    return {k: v for k, v in found.items() if v}


def estimate(request: dict) -> dict:
    """Predict decode and prefill speed, TTFT and memory fit for one set-up.

    Raises :class:`EngineInputError` for input it cannot use. Every number returned is finite.
    """
    result, schedule = estimate_then_schedule(request)
    if schedule is not None:
        result["schedule"] = schedule()
    return result


def estimate_then_schedule(request: dict) -> tuple[dict, Callable[[], dict] | None]:
    """:func:`estimate` in two parts, for a page that shows the numbers before it streams: the
    result without its ``schedule``, and (when the request asks for one) a function that computes
    that schedule from the same built system. estimate() is the two, joined."""
    system, draft = _build_with_draft(request)
    o = system.options
    speculative = bool(o.draft or o.mtp)

    cached = o.prefix_cached
    prefill = prefill_time(system, o.prompt_tokens - cached, o.depth + cached, o.batch)
    prompt_context = o.depth + o.prompt_tokens
    first_step = step_at(system, prompt_context, o.batch)
    ttft_s = prefill.total_s + first_step.total_s

    run_start = prompt_context + o.reasoning_tokens
    mean_step = run_mean_step(system, run_start, o.gen_tokens, o.batch)
    plain_decode = 1.0 / mean_step.total_s
    decode = plain_decode
    spec_plan = None
    if speculative:
        spec_plan = plan(system, draft, run_start + o.gen_tokens // 2)
        decode = spec_plan.tps
    visible_ttft_s, total_s = _waits(system, draft, ttft_s)
    # An MTP head is part of the model's weights (System.weight_bytes); a draft model is extra.
    draft_bytes = spec_plan.draft_memory_bytes if spec_plan and spec_plan.method == "draft" else 0.0
    _need, verdict, memory = _memory(system, draft_bytes)
    empty_step = step_at(system, 0, 1)
    measured = _measured(system, run_start)
    matrix_rate = matmul_flops(system.device, system.quant, system.backend)
    sixteen_bit_share = blas_share(system)
    tier, tier_reason = _tier(system, measured)
    prefill_tps = (o.prompt_tokens - cached) * o.batch / prefill.total_s if prefill.total_s else 0.0
    params = system.params
    result = {
        "decode_tps": decode,
        "decode_tps_low": decode * params.ratio_p10,
        "decode_tps_high": decode * params.ratio_p90,
        "decode_ceiling_tps": ceiling_tps(system),
        "decode_tps_plain": plain_decode,
        "aggregate_tps": decode * o.batch,
        "prefill_tps": prefill_tps,
        "ttft_s": ttft_s,
        "visible_ttft_s": visible_ttft_s,
        "total_s": total_s,
        "fit": verdict,
        "memory": memory,
        "tier": tier,
        #: Why a projection is one (empty for the other tiers): the page says it under the tier.
        "tier_reason": tier_reason,
        "measured": measured,
        "hardware": system.device.summary() | {"gpus": system.gpus},
        "model": {
            "id": system.model.id,
            "name": system.model.name,
            "params_b": system.model.params_b,
            "active_params_b": system.model.active_params_b,
            "layers": system.arch.layers,
        },
        "quant": system.quant.name,
        "engine": system.engine.name,
        "backend": system.backend,
        "flash_attn": system.flash_attn,
        "calibration": params.key,
        "breakdown": {
            "bandwidth_gbs": system.device.bandwidth_gbs,
            "eta_bw": params.params.eta_bw,
            # Little's law: the SMs' bytes in flight over the memory latency, where that is lower.
            "latency_bound_gbs": latency_bound(system, params.params) / GB or None,
            "memory_latency_ns": system.device.memory_latency_ns,
            "inflight_kib_per_sm": params.params.inflight_kib_per_sm,
            "weights_read_gb": mean_step.weight_bytes / GB,
            "kv_read_gb": mean_step.kv_bytes / GB,
            "weights_s": mean_step.weights_s,
            "unpack_s": mean_step.unpack_s,
            # Intel under Vulkan (integer-dot mat-vec), BF16 on SYCL before PR 21580 (intel_matvec).
            "weight_stream_factor": intel_matvec.stream_factor(system),
            "weight_stream_kernel": intel_matvec.stream_kernel(system),
            "weight_stream_fixed_build": intel_matvec.SYCL_BF16_DMMV_BUILD,
            # Apple GPUs unpack alongside the weight stream (engine/unpacking.py): the longer counts.
            "unpack_overlaps": mean_step.unpack_overlaps,
            "codebook_weights": bool(system.profile.dense_codebook_params or system.profile.expert_codebook_params),
            "kv_s": mean_step.kv_s,
            # Without flash attention (CUDA, ROCm) the attention reads the cache this many times.
            "kv_unfused_factor": unfused_attention_factor(system, run_start + (o.gen_tokens - 1) / 2),
            "matmul_s": mean_step.matmul_s,
            # Vulkan's BF16 routed experts in the matrix-matrix shader, after the weight stream (vulkan_experts.py).
            "expert_tile_s": mean_step.expert_tile_s,
            "attention_s": mean_step.attention_s,
            "fixed_s": mean_step.fixed_s,
            "batched_s": mean_step.batched_s,
            # A ROCm build from before HIP graphs were on by default: single-token steps pay batched_s too.
            "hip_graphs_off": hip_graphs_off(system),
            # Any step that replays no graph (layerchain.graphs_off: build, MoE experts, batch).
            "graphs_off": graphs_off(system, o.batch),
            "recurrent_s": mean_step.recurrent_s,
            # oMLX before PR 688: a host sync per layer on a vision-language model's path (in fixed_s).
            "vlm_sync_s": vlm_sync_s(system, o.batch),
            "host_s": mean_step.host_s,
            # From 32 tokens a step (llama.cpp's op offload) the host-resident weights cross PCIe.
            "transfer_s": mean_step.transfer_s,
            "sync_s": mean_step.sync_s,
            "interconnect": link(system)[0] if system.gpus > 1 else None,
            "cpu_threads": system.cpu_threads if system.backend == "cpu" else None,
            **_cpu_breakdown(system),
            "step_s": mean_step.total_s,
            "memory_bound": mean_step.memory_bound,
            "empty_context_tps": 1.0 / empty_step.total_s,
            "prefill_s": prefill.total_s,
            "prefill_compute_s": prefill.compute_s,
            "prefill_memory_s": prefill.memory_s,
            "prefill_transfer_s": prefill.transfer_s,
            "prefill_attention_slowdown": attention_slowdown(system, matrix_rate),
            # ROCm on Radeon: the attention layers on HIP's tile flash-attention kernel (fa_kernels.rocm_tile_layer).
            "prefill_attention_tile_s": prefill.tile_attention_s,
            # The BLAS library's slowdown where it multiplies something: 16-bit weights, or a
            # quantised file's 16-bit tensors (blas_share).
            "prefill_gemm_slowdown": gemm_slowdown(system, matrix_rate) if system.quant.kind == "dense" or sixteen_bit_share else 1.0,
            "prefill_blas_share": sixteen_bit_share,
            "prefill_experts_s": prefill.experts_s,
            # A layer split: whether prompt micro-batches overlap across the cards, and why.
            "prefill_pipeline": _pipeline_text(system),
            "prefill_dispatch_s": prefill.dispatch_s,
            "prefill_host_loop_s": prefill.host_loop_s,
            "prefill_cold_s": prefill.cold_s,
            # llama.cpp before mid-2024 on CUDA: each micro-batch converts the weights for cuBLAS (cublas_prefill.py).
            "prefill_dequant_s": prefill.dequant_s,
            # llama.cpp -ub / -b (System.ubatch): the prompt's micro-batches and their size.
            "prefill_micro_batches": prefill.micro_batches,
            "prefill_micro_batch_tokens": system.ubatch,
            "prefill_flops": prefill.matmul_flops + prefill.attention_flops,
            "first_step_s": first_step.total_s,
        },
    }
    if spec_plan is not None:
        result["speculative"] = spec_plan.as_dict(plain_decode)
    _check_finite(result)
    if not o.schedule:
        return result, None

    def schedule() -> dict:
        answer = stream_schedule(system, ttft_s, draft if speculative else None)
        _check_finite(answer, "result.schedule")
        return answer

    return result, schedule


def _pipeline_text(system) -> str | None:
    """What a layer split of several cards does with the prompt's micro-batches (None: one card
    or another split)."""
    if system.gpus <= 1 or system.options.split != "layer":
        return None
    overlap, reason = pipeline_overlap(system)
    return f"micro-batches {'overlap (pipeline parallelism)' if overlap else 'run one card after the other'}: {reason}"


def _cpu_breakdown(system) -> dict:
    """What a CPU backend runs on: the kernel path of the weight format on this ISA, and the
    bandwidth the chosen threads can draw (before the fitted efficiency)."""
    if system.backend != "cpu":
        return {"cpu_kernel": None, "cpu_bandwidth_gbs": None, "bandwidth_measured": None}
    device, threads = system.device, system.cpu_threads
    peak = bandwidth_bytes_s(device, "cpu")
    if device.bandwidth_measured:
        drawn = peak
    else:
        p = system.params.params
        drawn = cpu_bandwidth(peak, threads, device.cpu_cores or threads, device.cpu_ccds or 0, p.core_bw_gbs, p.ccd_bw_gbs)
    return {
        "cpu_kernel": cpu_kernel(device, system.quant).name,
        "cpu_bandwidth_gbs": drawn / 1e9,
        "bandwidth_measured": device.bandwidth_measured,
    }


def _check_finite(value, path: str = "result") -> None:
    """Guard: a NaN or infinity must never leave the engine (it would show as "NaN" on a page)."""
    if isinstance(value, float) and not math.isfinite(value):
        raise EngineInputError(f"the estimate is not finite at {path}; the inputs are outside what the model covers")
    if isinstance(value, dict):
        for key, item in value.items():
            _check_finite(item, f"{path}.{key}")
    elif isinstance(value, list):
        for index, item in enumerate(value[:4]):
            _check_finite(item, f"{path}[{index}]")

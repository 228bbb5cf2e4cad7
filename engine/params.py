"""The free parameters of the physics, per engine and backend, and where they come from.

``python -m engine calibrate`` fits them on ``data/calibration/measurements.csv`` and writes
``data/calibration/fit.json``. An engine/backend pair without a fit of its own borrows the fit of
its base engine on the same backend (Ollama -> llama.cpp), else the backend's population (each
parameter's median over that backend's fitted keys, or the prior below where none exists);
such estimates carry the tier ``projected``. The range around an estimate is the spread of its
key's leave-one-device-out errors.

Each parameter is physical, with a unit, and the same for every device of a backend: no
per-device fudge factors.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, fields, replace
from functools import cache

from .catalog import DATA_DIR
from .unpacking import DP4A_FALLBACK_OPS


@dataclass(frozen=True)
class BackendParams:
    """Efficiencies and overheads of one engine on one backend."""

    #: Fraction of the peak memory bandwidth that weight streaming realises during decode.
    eta_bw: float = 0.75
    #: Realised bandwidth of a system-on-chip's shared LPDDR relative to a card's GDDR/HBM
    #: (more agents on the bus, lower per-channel efficiency); 1 where a backend only has one kind.
    soc_bw_factor: float = 1.0
    #: Fixed cost per decode step (sampling, synchronisation, host round trip), seconds.
    t_token_s: float = 0.002
    #: Bytes a GPU backend's decode kernels keep in flight per SM (streaming multiprocessor), KiB.
    #: By Little's law the SMs then stream at most SMs x this / memory latency
    #: (roofline.latency_bound_bandwidth), which binds on cards with many bytes/s per SM and a
    #: slow memory path (A100: 108 SMs, 2 TB/s, 405 ns). Prior 4 KiB: about 1,000 resident threads
    #: per SM with one 4-byte load each outstanding (llama.cpp's matrix-vector kernels read a
    #: half2 or a 32-bit word of packed weights per thread per step; a pointer-chase-free streaming
    #: read on an H100 PCIe reaches ~700 GB/s with 4 KiB in flight per SM and 1.26 TB/s with 8,
    #: https://github.com/te42kyfo/gpu-benches README, gpu-stream "read").
    inflight_kib_per_sm: float = 4.0
    #: Extra cost per layer per decode step (kernel launches and their gaps), seconds.
    t_layer_s: float = 0.00003
    #: Further cost per layer when a decode step carries several tokens (llama.cpp's CUDA backend
    #: replays a captured graph only for single-token steps; batched steps launch every kernel).
    #: Host latency (CPU and driver), so not scaled by the GPU clock.
    t_layer_batched_s: float = 0.00001
    #: Extra cost per layer with routed experts per decode step (router, top-k, the expert
    #: gather and weighted sum: more kernels in the chain), seconds.
    t_moe_layer_decode_s: float = 0.00003
    #: Extra cost per recurrent layer (gated DeltaNet, Mamba) per decode step, at 1.5 GHz: its
    #: state update is a chain of small kernels of its own. Not fitted (its rows come from few
    #: devices per backend); the prior is the default layer chain (t_layer_s), since llama.cpp's
    #: single-token gated DeltaNet update alone is a dozen element-wise kernels (exp, mul,
    #: sum_rows, sub, repeat, add ...: build_delta_net_autoregressive in
    #: https://github.com/ggml-org/llama.cpp/blob/master/src/models/delta-net-base.cpp),
    #: besides the convolution, gates and norms.
    t_recurrent_layer_s: float = 0.00003
    #: KV-cache reads cost this many times their bytes at the weight-streaming rate (attention
    #: kernels read the cache less efficiently than matrix-vector products read weights).
    kv_read_factor: float = 1.5
    #: Fraction of the peak matrix throughput prompt processing realises on big batches.
    eta_pp: float = 0.4
    #: Attention FLOPs in prefill cost this many times matmul FLOPs (softmax, masking, lower
    #: occupancy), with flash attention ...
    attn_cost_fa: float = 2.0
    #: ... and without it (the score matrix goes through memory).
    attn_cost_nofa: float = 4.0
    #: Fraction of peak compute a decode step (matrix-vector work, dequantisation) realises; only
    #: matters where compute, not memory, is the bottleneck (CPUs, big batches).
    eta_decode_compute: float = 0.3
    #: Quantised weights cost this many times the matmul time of 16-bit ones in prefill
    #: (dequantisation into the tensor-core tiles; physics.md section 3).
    pp_quant_cost: float = 1.2
    #: Vector operations to unpack one quantised weight in a decode step (scales, nibble
    #: shuffles, IQ4/MXFP4's 16-value table), not overlapped with the memory stream.
    dequant_ops: float = 4.0
    #: Further vector operations per weight stored as lattice-codebook indices (IQ1-IQ3: grid
    #: look-ups and sign bits on top of the scale arithmetic). The prior says a look-up costs
    #: about what the arithmetic does; only CPU rows identify it (no GPU row uses these types).
    codebook_ops: float = 4.0
    #: Vector operations per element read from a codebook-coded KV cache (TurboQuant: a
    #: rotation and a Lloyd-Max codebook per coordinate), on top of reading its bytes. The prior
    #: is a guess; the MLX engines' TurboQuant rows replace it (mlx-lm ~16, mlx-vlm ~160).
    kv_codebook_ops: float = 20.0
    #: Routing correlation of batched MoE decode: B sequences touch the experts B^exponent
    #: independent tokens would (1 = independent routing; weights.distinct_expert_fraction).
    moe_batch_exponent: float = 1.0
    #: Fraction of peak compute decode attention realises (what bounds MLA at long contexts).
    eta_attn_decode: float = 0.1
    #: Fixed cost per prompt-processing micro-batch (graph build, launches), seconds.
    t_ubatch_s: float = 0.01
    #: One-time cost of a process's first large batch on CUDA, seconds: the first prompt of a
    #: fresh process finds and loads the kernels of its batch size (the 1-2 token warm-up that
    #: llama.cpp's ./main runs, common.cpp since PR 1824, takes the matrix-vector ones), and on
    #: pre-mid-2024 builds initialises cuBLAS's GEMMs and grows the memory pool.
    #: "On CUDA the time it takes to find and load the pre-compiled kernels is not negligible
    #: when compared to the time for computing a batch" (ikawrakow, an 8B model,
    #: https://github.com/ikawrakow/ik_llama.cpp/pull/374; PR 375 adds a batch-sized warm-up to
    #: sweep-bench for it). llama-bench times warm runs (a warm-up run of the test's own prompt,
    #: then the mean of repetitions): it never pays it. Prior 0.05 s, a guess the fit replaces.
    t_cold_batch_s: float = 0.05
    #: CPU backends: a routed expert's matmul FLOPs in prefill cost this many times a dense
    #: matmul's (same weight format, same ISA). An expert multiplies only tokens x top-k /
    #: experts columns of a micro-batch (16 for DeepSeek-R1, 32 for Qwen3-30B-A3B at -ub 512)
    #: where a dense matmul gets all 512, so every block of weights the kernel unpacks and loads
    #: serves a few column tiles instead of dozens, and the expert's rows are gathered and its
    #: activations requantised per expert: ik_llama.cpp's MoE path runs its GEMM kernels per
    #: expert on the expert's own columns (ggml/src/iqk/iqk_mul_mat.cpp, iqk_mul_mat_moe; below
    #: 32 tokens per expert its fused up+gate op needs a GEMM kernel of its own, ik_llama.cpp
    #: issue 626), mainline ggml multiplies an expert's columns one by one with vec_dot
    #: (ggml/src/ggml-cpu/ggml-cpu.c, ggml_compute_forward_mul_mat_id_one_chunk). Prior 2, a
    #: guess the fit replaces (ik_llama.cpp/cpu: 3.3). It replaces a fixed cost per MoE layer
    #: and micro-batch (t_moe_layer_s, fitted to 25 ms), which did not scale with the CPU's
    #: speed: a Xeon 8480 ran Qwen3-30B-A3B prefill at 2x the rate that cost allowed.
    expert_pp_cost: float = 2.0
    #: Multiplier on the latency part of the interconnect time of row/tensor splits (parallel.py's
    #: priors): an engine's split implementation can be better or worse than NCCL all-reduces.
    sync_factor: float = 1.0
    #: The same for the data part of those exchanges (prefill's MB-sized activations), where
    #: the latency part dominates a decode step's (parallel.split_sync_parts).
    sync_data_factor: float = 1.0
    #: CPU backends: bandwidth one core can pull, GB/s (line-fill buffers limit a core to a
    #: fraction of the socket's peak; measured single-core bandwidth on Zen 4 / Apple M is ~20-60).
    core_bw_gbs: float = 25.0
    #: CPU backends on chiplet CPUs: bandwidth one core chiplet (AMD CCD) can read over its link
    #: to the I/O die, GB/s. Prior: Zen 4's GMI link reads 32 bytes per fabric clock, 64 GB/s at
    #: FCLK 2 GHz (https://chipsandcheese.com/p/amds-zen-4-part-2-memory-subsystem-and-conclusion).
    ccd_bw_gbs: float = 64.0
    #: CPU backends: synchronisation cost of a decode step per layer per thread, seconds. ggml
    #: ends every graph node (~20 per layer) with a barrier at which each thread increments one
    #: shared counter: its cache line visits the threads one after another, ~20 core-to-core
    #: transfers per thread and layer. Prior: 20 x ~100 ns (Intel MLC "L2->L2 HITM" latency
    #: 80-180 ns on a Xeon 6980P, https://github.com/ikawrakow/ik_llama.cpp/discussions/201) = 2 us.
    #: It is why a small model decodes slower with more threads (Ryzen 9 7950X, Llama 3.2 1B Q8_0:
    #: 46.4 tok/s at 4 threads, 44.4 at 8, ik_llama.cpp discussion 164 rows).
    t_sync_thread_s: float = 0.000002

    @classmethod
    def from_dict(cls, data: dict) -> BackendParams:
        names = {f.name for f in fields(cls)}
        return cls(**{k: float(v) for k, v in data.items() if k in names})

    def as_dict(self) -> dict:
        return asdict(self)


#: Priors by backend: starting points of the fit and the values for backends without data.
#: They encode what is generally known (CUDA realises more of its bandwidth than Vulkan; CPUs
#: realise little of their peak FLOPS), not fitted numbers.
PRIORS = {
    # t_layer_batched_s: llama.cpp PR 15802 (https://github.com/ggml-org/llama.cpp/pull/15802), RTX 3090,
    # llama 8B Q4_0, llama-bench pp512 with -ub 1 / -ub 2: 156.56 / 279.89 t/s, i.e. 6.39 ms for a
    # one-token step and 7.15 ms for a two-token step: 0.76 ms more over 32 layers, 24 us a layer
    # (an upper bound: it includes the second token's own arithmetic).
    "cuda": BackendParams(eta_bw=0.8, eta_pp=0.35, t_token_s=0.0015, t_layer_batched_s=0.000024),
    "metal": BackendParams(eta_bw=0.75, eta_pp=0.5, t_token_s=0.003),
    # t_layer_batched_s: llama.cpp PR 22254 (https://github.com/ggml-org/llama.cpp/pull/22254), llama-bench
    # tg64 with HIP graphs off and on, 1 / t_off - 1 / t_on over the model's layers: gfx1100 gemma4
    # 26B-A4B Q6_K 26.8 / 28.0 us (depth 0 / 8192), qwen2 14B Q8_0 12.2 / 17.6, qwen35 27B Q4_K_M
    # 17.9 / 15.3; gfx908 gemma4 41.7 / 38.4, gpt-oss 20B 2.8: median 18 us a layer launched from the host.
    # attn_cost_fa 2.0: llama.cpp PR 28102 (https://github.com/ggml-org/llama.cpp/pull/28102), JohannesGaessler's
    # table, RX 9060 XT (gfx1200, RDNA4: flash attention on the WMMA kernel), llama 8B Q4_0, -ub 512, "t/s
    # master" pp1024 @ d4096 / d32768: 2009.40 / 674.64 tok/s, i.e. 34.3 ns more per prompt token per cached
    # token; at eta_pp 0.3 the engine reproduces that slope with attn_cost_fa 2.02 (attention at 0.15 of
    # the WMMA peak; the PR's own kernel, 2019.50 / 783.05, needs 1.60). Measured, not kept (docs/calibration.md,
    # "ROCm prefill priors from published figures"): pp_quant_cost 0.69, which the same table's intercept
    # (0.67) and PR 26284's RX 7900 XTX llama 8B Q4_K_M pp2048 3226.54 / @d4096 2693.13 (0.68) give;
    # it puts 76 instead of 43 ROCm prefill rows beyond 60% held out, so the unsourced 1.2 stays.
    "rocm": BackendParams(eta_bw=0.7, eta_pp=0.3, t_token_s=0.002, t_layer_batched_s=0.000018, attn_cost_fa=2.0),
    "vulkan": BackendParams(eta_bw=0.7, eta_pp=0.25, t_token_s=0.002),
    "sycl": BackendParams(eta_bw=0.6, eta_pp=0.25, t_token_s=0.003),
    "cpu": BackendParams(
        eta_bw=0.6, eta_pp=0.5, t_token_s=0.001, t_layer_s=0.00001, t_moe_layer_decode_s=0.00001, eta_decode_compute=0.4
    ),
}
#: Priors of an engine family's own kernels on a backend, by (the family's root engine, backend):
#: they replace the backend's values (prior or population) where no key of the family is fitted,
#: as when the one device of a family's only fitted key is held out (issue 12). MLX on Metal
#: (mlx-lm and the engines built on it: mlx-vlm, oMLX, vLLM-MLX, Ollama's MLX runner):
#: - eta_bw 0.93: MLX's quantised matrix-vector kernel on an M3 Max (40 cores, 400 GB/s), weights
#:   read from DRAM (a fresh weight per repetition): a 5120 x 17408 4-bit layer, 47 MB, in 0.126
#:   ms, 373 GB/s (https://github.com/ml-explore/mlx/issues/3852, mlx 0.32.0). llama.cpp's Metal
#:   keys fit their own (a different kernel and block format).
#: - t_layer_s 55 us at 1.5 GHz: a dense layer's decode in mlx-lm is 17 kernels (rms_norm, q/k/v
#:   projections, two RoPEs, two cache slice updates, attention, output projection, residual add,
#:   rms_norm, gate/up projections, SwiGLU, down projection, add: mlx_lm/models/llama.py), each
#:   ~2.3 us on the GPU in a dependent chain, and MLX commits a command buffer about once a layer
#:   (its 50 MB per buffer rule trips on tens-of-MB weights) at ~20 us each: an M3 Ultra (mlx
#:   0.32.2) ran 3,200 tiny dependent kernels in 8.8 ms at 50 per buffer, 7.7 at 200
#:   (https://github.com/ml-explore/mlx/issues/4521). 17 x 2.3 + 20 = 59 us at the M3 GPU's 1398
#:   MHz, 55 us at the reference clock.
#: The host's per-token work is not given a value of its own: mlx-lm's generate_step submits the
#: next token's graph (mx.async_eval) before it reads the current token back
#: (https://github.com/ml-explore/mlx-lm/blob/main/mlx_lm/generate.py), so it overlaps the GPU;
#: the backend's t_token_s stands (a floor there made the held-out M3 Max 1.2x too fast).
FAMILY_PRIORS: dict[tuple[str, str], dict[str, float]] = {
    ("mlx-lm", "metal"): {"eta_bw": 0.93, "t_layer_s": 0.000055},
}


def family_prior(engine_lineage: tuple[str, ...], backend: str, params: BackendParams) -> BackendParams:
    """``params`` with the family priors of the engine's family (its lineage's root) on ``backend``."""
    return replace(params, **FAMILY_PRIORS.get((engine_lineage[-1], backend), {})) if engine_lineage else params


#: AMD's AMDVLK driver runs llama.cpp's Vulkan backend: the same shaders (ggml/src/ggml-vulkan/
#: vulkan-shaders) at the same shader FP32 rate (prefill.SHADER_RATE_BACKENDS), so it starts from
#: RADV's priors; what the driver's compiler changes is the fit's to find (tools/borrowing.BASE_BACKEND).
PRIORS["vulkan-amdvlk"] = PRIORS["vulkan"]

#: Sourced values a backend's parameter takes where none of its units' rows identify it, in place
#: of the PRIORS value the fit starts from (tools/borrowing.population; the page's last fallback).
#: - CUDA's ``dequant_ops``: on CUDA only cards without __dp4a pay it (unpacking.unpacking_hidden),
#:   so it is their MMVQ kernels' work per weight, the generic unpacking plus ggml's dp4a stand-in
#:   (CUDA_NO_DP4A_DEQUANT_OPS, 13.5). Only the P100's rows identify it (18.4 in sample);
#:   with them held out the generic 4 made the P100 decode 1.2-2.4x too fast (issue 12). Not the
#:   fit's start: which values a unit frees is decided by moving each one at the start (calibrate
#:   fit_unit's 1% test), and with CUDA's unpacking starting at 13.5 one P100 row no longer frees
#:   ``sync_factor`` in the RTX 3090's fold, whose split latency the 16-card ik_llama.cpp rig's
#:   held-out rows borrow (docs/calibration.md, Changes).
#: On CUDA only cards without dp4a pay ``dequant_ops`` (unpacking.unpacking_hidden), so its value
#: there is the generic unpacking (the prior, 4) plus ggml's dp4a stand-in (9.5): 13.5.
CUDA_NO_DP4A_DEQUANT_OPS = BackendParams().dequant_ops + DP4A_FALLBACK_OPS
UNIDENTIFIED: dict[str, dict[str, float]] = {"cuda": {"dequant_ops": CUDA_NO_DP4A_DEQUANT_OPS}}


def unidentified_prior(backend: str) -> BackendParams:
    """A backend's prior with its :data:`UNIDENTIFIED` values: what a parameter no rows identify gets."""
    return replace(PRIORS.get(backend, BackendParams()), **UNIDENTIFIED.get(backend, {}))


#: Why a fitted value may sit on a bound of engine/tools/calibrate.py's BOUNDS (within 1% in log
#: space): (parameter, "lower" or "upper") -> the argument for where that bound is and what a
#: value on it says. (parameter, side, "engine/backend") would hold a key's own reason; none needs
#: one yet. engine/tools/bounds.py audits fit.json against this table (docs/calibration.md, bench,
#: tests/test_calibration.py). Arguments, not fitted numbers; the bounds themselves stay physical.
_FLOOR_IS_ZERO = (
    "physically >= 0; the fit runs in log space, so zero is unreachable and the floor stands for it. "
    "The floor is below what a row resolves (argument: {what}), so a value on it means the rows see "
    "no such cost beyond the other overhead terms, which absorb it."
)
BOUND_REASONS = {
    ("eta_bw", "upper"): "1 is the memory's peak (bus width x data rate, the spec sheet's number): a kernel cannot "
    "stream weights faster. A value on it means the model charges these rows more bytes or time than they cost "
    "(the other overheads on the same key sit on their floors too).",
    ("soc_bw_factor", "upper"): "1 by definition: a system on a chip's shared LPDDR (CPU, GPU, display and NPU on one bus) "
    "realises at most the share a card's dedicated memory does. Where every row of a key is an SoC (Metal) it is one "
    "product with eta_bw and the fit leaves the product to eta_bw (docs/calibration.md); where no row is, the rows do "
    "not move it from 1.",
    ("eta_attn_decode", "upper"): "a fraction of the peak compute, at most 1. On it, decode attention is nowhere the "
    "bottleneck on these rows (memory bound), so the rows only say it is not small.",
    ("eta_decode_compute", "upper", "llama-cpp-legacy/metal"): "a fraction of the peak compute, at most 1. Only 5 rows of "
    "one Mac (2023 builds) move it; on it, those rows say the decode arithmetic is nowhere their bottleneck (memory "
    "bound), only that it is not small. It sat at 0.50 until today's llama.cpp Metal prefill values were unfitted "
    "(2026-12-07, calibrate.BY_MIN_DEVICES); unfitting it too (1 device) was part of a batch that lost held out "
    "(docs/calibration.md, Changes) and is left to measure alone.",
    ("moe_batch_exponent", "upper"): "1 is independent routing (weights.distinct_expert_fraction). Above 1 a step's few "
    "sequences would avoid one another's experts; routers are not trained to (load-balancing losses act on the "
    "average over a training batch, not on one decode step), so 1 is the physical ceiling.",
    ("moe_batch_exponent", "lower"): "0.2: five sequences touch the experts of 5^0.2 = 1.4 independent ones, far more "
    "alike than routers route (1 is independent). On it the rows' batched steps are narrower than their stated batch: "
    "vllm-mlx's one batched MoE row (M4 Max, 5 requests) is its continuous-batching benchmark "
    "(https://github.com/waybarrios/vllm-mlx/blob/main/tests/test_continuous_batching.py), whose throughput counts "
    "prompt and completion tokens over the wall time of 5 short prompts answered in at most 50 tokens each, which "
    "finish at different steps.",
    ("kv_read_factor", "lower"): "the cache is read at eta_bw x peak / kv_read_factor, so the physical floor is eta_bw "
    "(reading at the peak); 0.5 is below the eta_bw of nearly every key. On it the model charges these rows more KV bytes "
    "than they read (e.g. short depths kept in cache, or a smaller cache type than assumed).",
    ("pp_quant_cost", "lower"): "0.5: quantised matmuls run at most at the INT8 rate, twice the FP16 one (argument: a DP4A "
    "or INT8 tensor-core instruction does twice the multiply-adds of its FP16 counterpart on every GPU generation the "
    "catalog has), so quantised prefill cannot be more than 2x faster than 16-bit prefill.",
    ("pp_quant_cost", "upper"): "5: dequantising a weight matrix once per micro-batch and running the 16-bit GEMM costs "
    "the GEMM plus one pass over the weights, far below 5x; on it, something other than the weight format slows these "
    "prefill rows and the fit lets this factor carry it.",
    ("attn_cost_nofa", "lower"): "attention FLOPs are matmuls too (QK^T, scores x V) and cannot run faster than the "
    "projection matmuls, so the physical floor is 1; 0.3 is already below it. On it the model overcounts attention "
    "for these rows.",
    ("dequant_ops", "lower"): _FLOOR_IS_ZERO.format(
        what="0.01 vector operations per weight against a GPU's ~100 operations per byte of bandwidth; on GPUs the "
        "unpacking hides under the memory stream"
    ),
    ("t_token_s", "lower"): _FLOOR_IS_ZERO.format(what="10 us is 1% of a step only at 1,000 tok/s"),
    ("t_layer_s", "lower"): _FLOOR_IS_ZERO.format(what="0.1 us x 80 layers is 8 us per step"),
    ("t_layer_batched_s", "lower"): _FLOOR_IS_ZERO.format(what="0.1 us x 80 layers is 8 us per step"),
    ("t_moe_layer_decode_s", "lower"): _FLOOR_IS_ZERO.format(what="0.1 us x 60 MoE layers is 6 us per step"),
    ("t_ubatch_s", "lower"): _FLOOR_IS_ZERO.format(what="10 us per micro-batch of up to 512 tokens"),
    ("t_cold_batch_s", "lower"): _FLOOR_IS_ZERO.format(what="0.1 ms once per cold prompt"),
    ("sync_factor", "lower"): _FLOOR_IS_ZERO.format(
        what="0.05 x the 60 us prior of a layer split's hand-off is 3 us per card boundary, 45 us per decode step on "
        "16 cards against the ~55 ms steps of the only such rows (ik_llama.cpp, 16 RTX 3090s)"
    ),
    ("expert_pp_cost", "lower"): "1: an expert's matmul runs the dense matmul's kernels on fewer columns, so it cannot "
    "cost less per FLOP than a dense one. On it the rows see no extra cost for the experts (mainline llama.cpp's only "
    "CPU MoE rows are F16 DeepSeek-V2-Lite on one device).",
}


@dataclass(frozen=True)
class ResolvedParams:
    params: BackendParams
    #: ``engine/backend`` whose fit is used, or ``prior/<backend>``.
    key: str
    #: True when the fit belongs to this very engine and backend.
    own_fit: bool
    #: Calibration residuals of that key: measured / predicted at the 10th and 90th percentile.
    ratio_p10: float
    ratio_p90: float


@cache
def load_fit() -> dict:
    path = DATA_DIR / "calibration" / "fit.json"
    if not path.exists():
        return {"backends": {}}
    return json.loads(path.read_text(encoding="utf-8"))


#: Spread assumed where no residuals exist: the +-30% peers quote for uncalibrated estimates.
UNCALIBRATED_SPREAD = (0.7, 1.3)


def resolve_params(engine_lineage: tuple[str, ...], backend: str, test: str = "tg", fit: dict | None = None) -> ResolvedParams:
    """The parameters for an engine (with its bases, nearest first) on a backend, from ``fit``
    (default: the committed data/calibration/fit.json)."""
    if fit is None:
        return _committed_params(engine_lineage, backend, test)
    return _resolve_params(engine_lineage, backend, test, fit)


@cache
def _committed_params(engine_lineage: tuple[str, ...], backend: str, test: str) -> ResolvedParams:
    """resolve_params from the committed fit, read once per (engine, backend, test): every
    estimate asks for two (its backend's and the host CPU's)."""
    return _resolve_params(engine_lineage, backend, test, load_fit())


def _resolve_params(engine_lineage: tuple[str, ...], backend: str, test: str, fit: dict) -> ResolvedParams:
    fitted = fit.get("backends", {})
    for position, engine_id in enumerate(engine_lineage):
        key = f"{engine_id}/{backend}"
        if key in fitted:
            entry = fitted[key]
            spread = entry.get("residuals", {}).get(test, {})
            return ResolvedParams(
                params=BackendParams.from_dict(entry["params"]),
                key=key,
                own_fit=position == 0,
                # Leave-one-device-out spread (engine/tools/calibrate.py); the estimate itself
                # stays inside its range even where the held-out errors lean one way.
                ratio_p10=min(float(spread.get("ratio_p10", UNCALIBRATED_SPREAD[0])), 1.0),
                ratio_p90=max(float(spread.get("ratio_p90", UNCALIBRATED_SPREAD[1])), 1.0),
            )
    population = fit.get("population", {}).get(backend)
    if population:
        params = family_prior(engine_lineage, backend, BackendParams.from_dict(population))
        return ResolvedParams(params, f"population/{backend}", False, *UNCALIBRATED_SPREAD)
    params = family_prior(engine_lineage, backend, unidentified_prior(backend))
    return ResolvedParams(params, f"prior/{backend}", False, *UNCALIBRATED_SPREAD)


def with_overrides(params: BackendParams, **overrides: float) -> BackendParams:
    return replace(params, **overrides)

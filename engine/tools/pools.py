"""Pools: keys of one engine family on one backend fitted as one unit, sharing one value of the
parameters whose mechanism is the same across them (issue 12: a value is fitted only where rows of
at least 3 distinct devices identify it; a shared value is identified by the pool's devices).

A unit's fitted values are *slots*: (parameter, the keys that share its value). A slot's label in
fit.json is the parameter's name when every key of the unit shares it, else ``name@key``. A key
not in a pool is a unit of its own, and its labels are plain names, as before pools existed.
"""

from __future__ import annotations

#: calibrate.ALL_PARAMS and TG_PARAMS (not imported: calibrate imports this module).
DECODE_NAMES = (
    "eta_bw", "t_token_s", "t_layer_s", "t_moe_layer_decode_s", "kv_read_factor", "eta_decode_compute", "eta_attn_decode", "core_bw_gbs",
    "moe_batch_exponent", "dequant_ops", "codebook_ops", "kv_codebook_ops", "sync_factor", "sync_data_factor", "soc_bw_factor",
    "inflight_kib_per_sm",
)
ALL_NAMES = DECODE_NAMES + ("eta_pp", "pp_quant_cost", "attn_cost_fa", "attn_cost_nofa", "t_ubatch_s", "t_cold_batch_s", "expert_pp_cost")

#: name -> (keys fitted together, the parameters they share one value of). Each was kept on
#: leave-one-device-out and leave-one-source-out error, GPU and CPU apart (docs/calibration.md,
#: "Changes"); one key of a pool must be a unit (borrowing.KEY_MIN_DEVICES devices), see pooled.
POOLS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    # The 2023 builds on two Macs' CPUs (8 rows) share every value with mainline llama.cpp's
    # CPU rows (the same ggml CPU kernels; 6 devices in the pool). LODO CPU decode 0.117 / 0.349
    # -> 0.116 / 0.347, prefill 0.148 / 0.482 -> 0.149 / 0.456; LOSO CPU decode 0.109 / 0.363 ->
    # 0.108 / 0.355, prefill 0.157 / 0.451 -> 0.159 / 0.441; GPU unchanged.
    "llama-cpp+legacy/cpu": (("llama-cpp/cpu", "llama-cpp-legacy/cpu"), ALL_NAMES),
    # Mesa RADV and AMDVLK run the same llama.cpp Vulkan shaders: one value of each parameter (the
    # Radeon AI PRO R9700, the Ryzen AI Max+ 395 and the Arc Pro B70 identify them). Decode alone
    # first: LODO GPU decode 0.121 / 0.407 unchanged (Vulkan 0.357 -> 0.302, AMDVLK 0.180 ->
    # 0.249). Prefill too once AMDVLK started from RADV's priors (params.PRIORS): exact LODO
    # Vulkan prefill 0.357 / 1.244 -> 0.337 / 0.880 (the Arc Pro B70's fold), AMDVLK unchanged.
    "llama-cpp/vulkan+amdvlk": (("llama-cpp/vulkan", "llama-cpp/vulkan-amdvlk"), ALL_NAMES),
    # Today's llama.cpp on Metal (M3 Max, M2 Ultra) and its 2023 builds (5 Macs) share what is
    # the Mac's and ggml-metal's matrix-vector kernels' (kernel_mul_mv_* in ggml-metal.metal,
    # the block formats unchanged since 2023): the share of the LPDDR bandwidth they stream
    # (eta_bw, soc_bw_factor), the unpacking work per weight, the dispatch cost per layer and per
    # routed-expert layer. Not the per-token cost (today's builds reuse the step's graph, PR 14482
    # https://github.com/ggml-org/llama.cpp/pull/14482, 2025-07), nor attention and KV reads
    # (flash attention on by default since PR 15434, 2025-08), nor batched decode or prefill.
    # A fold that leaves one Mac with today's builds keeps that Mac's rows in the pool
    # (pools.pooled) instead of borrowing the MLX engines' values: exact LODO Metal decode
    # 0.148 / 0.407 -> 0.138 / 0.338 (M2 Ultra 0.353 -> 0.142, M3 Max 0.115 / 0.711 -> 0.107 / 0.454).
    "llama-cpp+legacy/metal": (
        ("llama-cpp/metal", "llama-cpp-legacy/metal"),
        ("eta_bw", "soc_bw_factor", "dequant_ops", "t_layer_s", "t_moe_layer_decode_s"),
    ),
}

Slot = tuple[str, tuple[str, ...]]


def pooled(units: dict[str, list[str]], measured: set[str] | frozenset = frozenset()) -> dict[str, list[str]]:
    """``units`` (key units, borrowing.units_of) with each pool's keys merged into one unit
    ``pool:<name>`` where one key of the pool is a unit and every other has rows (``measured``:
    the keys with rows). A key measured on too few devices to be a unit of its own still lends
    its rows to the pool's shared values (identified by the pool's devices); its own values
    (``name@key``) stay unfitted (calibrate.fit_unit), so it predicts with the shared ones and
    its backend's population for the rest."""
    out = dict(units)
    for name, (keys, _shared) in sorted(POOLS.items()):
        if any(f"key:{k}" in out for k in keys) and all(f"key:{k}" in out or k in measured for k in keys):
            for k in keys:
                out.pop(f"key:{k}", None)
            out[f"pool:{name}"] = sorted(keys)
    return dict(sorted(out.items()))


def shared_names(unit: str) -> tuple[str, ...]:
    return POOLS[unit[len("pool:"):]][1] if unit.startswith("pool:") else ()


def labels_for(unit: str, keys: list[str], names: tuple[str, ...]) -> tuple[str, ...]:
    """Every candidate slot of ``unit``: a shared one per pooled name, else one per key and name."""
    shared = shared_names(unit)
    if len(keys) == 1:
        return tuple(names)
    return tuple(n for n in names if n in shared) + tuple(f"{n}@{k}" for n in names if n not in shared for k in sorted(keys))


def slot(label: str, keys: list[str]) -> Slot:
    """The slot a label names, among ``keys`` (the unit's keys that have rows)."""
    name, _, key = label.partition("@")
    return (name, (key,) if key else tuple(sorted(keys)))


def names_for(key: str, labels, keys: list[str]) -> list[str]:
    """The parameter names of ``key``'s fitted slots."""
    return sorted({name for name, ks in (slot(label, keys) for label in labels) if key in ks})


#: Why a value that rows of fewer than 3 devices identify stays fitted (the measured alternative
#: lost out of sample), by ``name@key``, ``key`` (every such value of the key) or ``name``.
#: The bench prints each such value with its reason (docs/calibration.md, generated).
STAYS: dict[str, str] = {
    "llama-cpp/rocm": (
        "the only ROCm key, 2 devices (Ryzen AI Max+ 395, Radeon AI PRO R9700): no pool of one backend reaches 3; "
        "a 2-device key that fits nothing (borrowing.KEY_MIN_DEVICES 3) lost held out (docs/calibration.md)"
    ),
    "vllm-mlx/metal": (
        "2 devices (M3 Max, M4 Max); the other MLX engines are measured on the M3 Max alone, so no MLX pool reaches 3"
    ),
    "llama-cpp/metal": (
        "2 devices (M3 Max, M2 Ultra): today's builds' own values beside those shared with the 2023 builds (pool "
        "llama-cpp+legacy/metal); shared too (warm folds, before exact refits): every value, LODO GPU decode p90 0.407 -> 0.425 "
        "and prefill 0.220 -> 0.234; decode values only (not eta_bw, t_token_s, t_layer_s), prefill 0.220 -> 0.228 "
        "(Metal 0.102 -> 0.135: dequant_ops and the KV factors move prefill too)"
    ),
    "llama-cpp+legacy/metal": (
        "routed-expert layers are measured only with today's builds (M3 Max, M2 Ultra): the 2023 builds' rows have no MoE "
        "model; the value is shared so that a fold keeping one Mac with today's builds still fits it (pools.pooled)"
    ),
    "soc_bw_factor": (
        "an SoC's bandwidth share at the prior 1: LODO GPU decode 0.121 -> 0.148 (ROCm 0.128 -> 0.192, CUDA 0.090 -> 0.107); "
        "off Metal two SoCs are measured (DGX Spark, Ryzen AI Max+ 395), so no pool reaches 3"
    ),
    "sync_factor": (
        "split latency at the prior: LODO GPU decode 0.121 / 0.407 -> 0.133 / 0.476; shared with the legacy CUDA builds "
        "(with sync_data_factor, eta_decode_compute, dequant_ops, moe_batch_exponent): 0.132 / 0.475"
    ),
    "dequant_ops@llama-cpp/cuda": "at the prior (4): LODO GPU decode 0.121 / 0.407 -> 0.134 / 0.450",
    "moe_batch_exponent@llama-cpp/cuda": "at the prior 1 (independent routing): LOSO GPU decode p90 0.434 -> 0.480",
    "eta_decode_compute": "at the prior: LODO GPU decode median 0.121 -> 0.125 (Metal 0.128 -> 0.142), LOSO 0.129 -> 0.135",
    "t_layer_s": "at the prior: LODO CPU decode 0.117 / 0.349 -> 0.258 / 1.019 (with t_moe_layer_decode_s)",
    "t_moe_layer_decode_s": "at the prior: LODO CPU decode 0.117 / 0.349 -> 0.258 / 1.019 (with t_layer_s)",
    "core_bw_gbs": "per-core bandwidth at the prior: LODO CPU decode p90 0.349 -> 0.423, LOSO 0.363 -> 0.429",
    "t_ubatch_s@llama-cpp-legacy/metal": (
        "at the prior with mainline Metal's: on 9cee0f6, with the kept changes, LODO GPU decode p90 0.402 -> 0.404, "
        "prefill 0.201 -> 0.203, LOSO decode 0.129 / 0.422 -> 0.130 / 0.431"
    ),
    "t_ubatch_s@ik-llama-cpp/cpu": "at the prior (with the Metal keys'): LOSO CPU prefill p90 0.451 -> 0.466",
    "attn_cost_nofa": (
        "at the prior with expert_pp_cost (and the kept CPU codebook and SoC values): LODO CPU prefill p90 0.482 -> 0.501, "
        "LOSO 0.451 -> 0.478"
    ),
}
STAYS["sync_data_factor"] = STAYS["sync_factor"]
STAYS["expert_pp_cost"] = STAYS["attn_cost_nofa"]


def why_fitted(unit: str, label: str) -> str:
    name, _, key = label.partition("@")
    keys = [key] if key else [unit.split(":", 1)[1]]
    for candidate in [f"{name}@{k}" for k in keys] + keys + [name]:
        if candidate in STAYS:
            return STAYS[candidate]
    return "no reason recorded"

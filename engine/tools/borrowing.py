"""Which engine/backend keys fit values of their own, and what the others predict with.

A key fits values only when rows of at least KEY_MIN_DEVICES devices identify them (issue 12);
any other key borrows: its base engine's values, else the backend's population (each
parameter's median over the keys that identified it; a driver variant's falls back to its base
backend's, BASE_BACKEND) with its engine family's own sourced priors (params.FAMILY_PRIORS). A
sibling engine's fit is never lent (see :func:`borrowed`), and the engine-specific parameters
(ENGINE_SPECIFIC) are never taken from another engine.
"""

from __future__ import annotations

import statistics
from dataclasses import fields, replace

from ..engines import load_engines
from ..params import PRIORS, BackendParams, family_prior, unidentified_prior
from .pools import DECODE_NAMES

#: Properties of an engine's implementation rather than of the backend: a key that cannot
#: identify them inherits them from its base engine (Ollama from llama.cpp), never from another
#: engine on the same backend, else keeps the prior. llama.cpp's CUDA backend launches every kernel
#: of a batched step (its graph capture is single-token only); vLLM captures graphs for batches
#: too. sync_factor scales the latency of a split's exchanges (parallel.py's NCCL-based prior):
#: vLLM and ExLlamaV3 all-reduce their tensor-parallel partial sums twice a layer on the GPUs,
#: llama.cpp's row split gathers after every split matmul through copies between the cards
#: (parallel.py), so a median over a backend's engines handed llama.cpp's split latency to an
#: engine measured nowhere else. sync_data_factor (the bytes of those exchanges) too: the same
#: bytes cross the same PCIe link, but llama.cpp's fitted 14-29x is its own path (activations
#: copied through the host, docs/calibration.md), and since vLLM and ExLlamaV3 (one device
#: each) fit no values, the CUDA median handed it to their NCCL all-reduces (2x RTX 3090, vLLM:
#: tensor split 1.18x layer split, where two-card splits measure 1.2-1.6x). kv_read_factor too:
#: it is what the engine's own attention kernel pays to read the cache (ik_llama.cpp's CPU flash
#: attention, ggml/src/iqk/fa/iqk_fa_templates.h, is not ggml's), and the CPU median handed
#: mainline llama.cpp's 6.5 to ik_llama.cpp (its own fit: 0.5) in every fold whose remaining
#: rows could not identify it: the Xeon Gold 6138 held out, its depth sweeps came out at
#: 0.6-0.85x the measured rate (docs/calibration.md Changes).
ENGINE_SPECIFIC = ("t_layer_batched_s", "sync_factor", "sync_data_factor", "kv_read_factor")
#: A key fits values of its own only when its rows come from at least this many devices. With
#: one device its values are that device's factors, and a held-out-device fold never uses them
#: for its own rows (the key vanishes from the fold); with two, each fold still fits the key on
#: the other device, so leave-one-device-out measures how its values transfer. Three (calibrate.MIN_DEVICES,
#: issue 12's rule, for keys and for pools of keys) was measured and lost out of sample: docs/calibration.md.
KEY_MIN_DEVICES = 2

#: A backend that runs another backend's kernels on a different driver, and whose population falls
#: back to that backend's (not to its own bare prior) for every value none of its own keys
#: identifies: llama.cpp's Vulkan backend compiles the same shaders (ggml/src/ggml-vulkan/vulkan-shaders)
#: whichever driver loads them, so RADV's values are the nearest measured ones for AMDVLK (issue 12).
#: llama.cpp's ROCm backend is ggml-cuda's source compiled with HIP (ggml/src/ggml-hip/CMakeLists.txt:
#: ``file(GLOB GGML_SOURCES_ROCM "../ggml-cuda/*.cu")``,
#: https://github.com/ggml-org/llama.cpp/blob/master/ggml/src/ggml-hip/CMakeLists.txt): a decode step
#: runs the same matrix-vector (MMVQ), flash-attention and graph code, so where no ROCm key
#: identifies a decode value (a leave-one-device-out fold keeps one ROCm device, which fits
#: nothing) it takes CUDA's population value, not the bare ROCm prior (eta_bw 0.7, 2 ms a token:
#: both ROCm devices came out 0.80-0.89x held out, docs/calibration.md). Prefill values keep the
#: ROCm prior: its matrix units (WMMA) and BLAS libraries (rocBLAS, hipBLASLt) are not CUDA's.
BASE_BACKEND = {"vulkan-amdvlk": "vulkan", "rocm": "cuda"}
#: The values a backend takes from its BASE_BACKEND's population (others: its own prior).
BASE_NAMES = {"rocm": DECODE_NAMES}


def populations(fits: dict, backends, unit_of_key: dict[str, str] | None = None) -> dict[str, BackendParams]:
    """:func:`population` of every backend in ``backends``, a BASE_BACKEND's first: the others fall
    back to it (BASE_NAMES' values, else all) where their own keys identified nothing."""
    out: dict[str, BackendParams] = {}
    for backend in sorted(backends, key=lambda b: (b in BASE_BACKEND, b)):
        base = out.get(BASE_BACKEND.get(backend, ""))
        if base is not None and backend in BASE_NAMES:
            prior = PRIORS.get(backend, BackendParams())
            base = replace(prior, **{n: getattr(base, n) for n in BASE_NAMES[backend]})
        out[backend] = population(fits, backend, unit_of_key, base)
    return dict(sorted(out.items()))


def superseded(key: str) -> bool:
    """Whether ``key``'s engine is an older build of another (engines.toml ``superseded``): its
    decode values are its era's (the 2023 llama.cpp Metal builds: 0.86 ms a token, attention at
    1% of peak without flash attention) and no current engine borrows them. With the M3 Max held
    out, the only Metal key left measured on two devices was the 2023 builds', whose decode
    values every MLX engine and llama.cpp then borrowed (mlx-vlm at 0.45x measured): at the
    backend's sourced prior instead the M3 Max's decode rows came out at 0.87x-1.17x
    (docs/calibration.md, Changes). Prefill values are still shared: without them the
    M2 Ultra's llama.cpp prefill went from 0.82x to 0.56x measured (the prior's eta_pp)."""
    engine_id = key.split("/")[0]
    engines = load_engines()
    return engine_id in engines and engines[engine_id].superseded


def _lends(key: str, name: str) -> bool:
    """Whether ``key``'s value of ``name`` may be lent to another key (a population, a family)."""
    return name not in DECODE_NAMES or not superseded(key)


def fits_own(device_ids) -> bool:
    """Whether a key measured on ``device_ids`` (any iterable, repeats allowed) has rows of
    enough distinct devices (KEY_MIN_DEVICES) to fit values of its own and lend them."""
    return len(set(device_ids)) >= KEY_MIN_DEVICES


def units_of(devices: dict[str, set]) -> dict[str, list[str]]:
    """Which keys fit values (``devices``: each key's distinct devices): a key that
    :func:`fits_own` is a unit of its own (``key:<key>``). Any other key fits nothing
    and predicts with values it borrows (:func:`borrowed`): its base engine's, else the backend's
    population with its family's priors."""
    return {f"key:{key}": [key] for key in sorted(devices) if fits_own(devices[key])}


def unit_of(units: dict[str, list[str]]) -> dict[str, str]:
    return {key: unit for unit, keys in units.items() for key in keys}


def population(
    fits: dict[str, tuple[BackendParams, tuple[str, ...]]],
    backend: str,
    unit_of_key: dict[str, str] | None = None,
    fallback: BackendParams | None = None,
) -> BackendParams:
    """Each parameter's median over the units of ``backend`` whose data identified it (a pool's
    shared value counts once), else the backend's prior: what an engine's unidentified
    parameters (and an unmeasured engine) get."""
    prior = fallback or unidentified_prior(backend)
    values = {}
    for f in fields(BackendParams):
        seen: dict[str, float] = {}
        for key, (params, free) in sorted(fits.items()):
            if key.endswith(f"/{backend}") and f.name in free and _lends(key, f.name):
                seen.setdefault((unit_of_key or {}).get(key, key), getattr(params, f.name))
        ordered = sorted(seen.values())
        values[f.name] = statistics.median(ordered) if ordered and f.name not in ENGINE_SPECIFIC else getattr(prior, f.name)
    return BackendParams(**values)


def borrowed(
    key: str, fits: dict[str, tuple[BackendParams, tuple[str, ...]]], owner: dict[str, str], populations: dict
) -> BackendParams:
    """The values of a key that fits nothing: its nearest base engine's where that engine fits
    values on the backend (ik_llama.cpp's from llama.cpp's), else the backend's population
    (``populations``, BackendParams by backend) with its family's own priors (params.FAMILY_PRIORS)
    in place of those values.

    Not a sibling's fit: engines built on the same kernels differ in their serving loop (mlx-lm's
    server sends every request through BatchGenerator, vLLM-MLX calls stream_generate, mlx-vlm
    syncs the vision path; docs/calibration.md), and the only fitted MLX key, vLLM-MLX, lent its
    values to mlx-lm, mlx-vlm, oMLX and Ollama's MLX runner on the very M3 Max it was fitted on:
    0.116 / 0.206 / 0.106 (oMLX before 0.3: 0.190) / 0.058 MdAPE, all predicted fast, where the
    family's priors over the population, the values a fold without the M3 Max predicts those
    rows with, give 0.073 / 0.144 / 0.037 (0.123) / 0.045 (issue 12; held out unchanged)."""
    engine_id, backend = key.split("/")
    engines = load_engines()
    lineage = engines[engine_id].lineage() if engine_id in engines else (engine_id,)
    for base in lineage[1:]:
        if f"{base}/{backend}" in fits:
            return fits[f"{base}/{backend}"][0]
    return family_prior(lineage, backend, populations[backend])


def inherited(key: str, fits: dict[str, tuple[BackendParams, tuple[str, ...]]]) -> dict[str, float]:
    """Engine-specific parameters ``key`` cannot identify, from the nearest base engine on the
    same backend that did."""
    engine_id, backend = key.split("/")
    engines = load_engines()
    out = {}
    for name in ENGINE_SPECIFIC:
        for base in engines[engine_id].lineage()[1:] if engine_id in engines else ():
            params, free = fits.get(f"{base}/{backend}", (None, ()))
            if name in free:
                out[name] = getattr(params, name)
                break
    return out

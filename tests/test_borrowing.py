"""What an engine measured on one device predicts with (engine/tools/borrowing.py)."""

from __future__ import annotations

from engine.params import BackendParams
from engine.tools.borrowing import ENGINE_SPECIFIC, borrowed


def test_a_sibling_engines_fit_is_not_lent():
    """mlx-lm borrows neither vLLM-MLX's fit (a sibling on the same MLX kernels, another serving
    loop) nor llama.cpp's: the backend's population with the MLX family's sourced priors, which is
    what a fold without the M3 Max predicts its MLX rows with. vLLM-MLX's values, lent on the very
    M3 Max they were fitted on, read mlx-lm 0.116 and mlx-vlm 0.206 MdAPE, all fast; the
    population with the family's priors 0.073 and 0.144 (docs/calibration.md, Changes)."""
    from dataclasses import replace

    from engine.params import FAMILY_PRIORS

    family_key = BackendParams(t_token_s=1e-5, dequant_ops=3.4, eta_bw=1.0, t_layer_s=6e-5)
    llama_cpp = BackendParams(t_token_s=0.0042, dequant_ops=17.4, eta_bw=1.0, t_layer_s=4e-5)
    fits = {
        "vllm-mlx/metal": (family_key, ("eta_bw", "t_layer_s")),
        "llama-cpp/metal": (llama_cpp, ("eta_bw", "t_layer_s", "t_token_s", "dequant_ops")),
    }
    population = BackendParams(t_token_s=0.002, dequant_ops=7.5, eta_bw=0.95, t_layer_s=8e-5)
    expected = replace(population, **FAMILY_PRIORS[("mlx-lm", "metal")])
    for key in ("mlx-lm/metal", "mlx-vlm/metal", "omlx/metal", "ollama-mlx/metal"):
        assert borrowed(key, fits, {}, {"metal": population}) == expected, key
    # A base engine's fit is still lent: Ollama's GGUF runner is llama.cpp.
    assert borrowed("ollama/metal", fits, {}, {"metal": population}) == llama_cpp


def test_an_engine_without_a_fitted_family_borrows_the_backend_population():
    """... except the values its family has priors of its own for (params.FAMILY_PRIORS: MLX's
    kernels on Metal are not llama.cpp's)."""
    from dataclasses import replace

    from engine.params import FAMILY_PRIORS

    population = BackendParams(t_token_s=0.002)
    fits = {"llama-cpp/metal": (BackendParams(), ("eta_bw",))}
    expected = replace(population, **FAMILY_PRIORS[("mlx-lm", "metal")])
    assert borrowed("mlx-lm/metal", fits, {}, {"metal": population}) == expected
    assert borrowed("other/metal", fits, {}, {"metal": population}) == population


def test_the_kv_read_cost_is_the_engines_own_attention_kernel():
    """kv_read_factor is engine-specific (borrowing.ENGINE_SPECIFIC): a CPU engine whose rows
    cannot identify it keeps the prior, not mainline llama.cpp's CPU value (6.5, and its legacy
    builds' 12.5). With the median, ik_llama.cpp's fold without the Xeon Gold 6138 took 6.5
    (its own fit: 0.5) and predicted the 6138's depth sweeps at 0.6-0.85x."""
    from engine.params import PRIORS
    from engine.tools.borrowing import population

    fits = {
        "llama-cpp/cpu": (BackendParams(kv_read_factor=6.48), ("kv_read_factor",)),
        "llama-cpp-legacy/cpu": (BackendParams(kv_read_factor=12.5), ("kv_read_factor",)),
        "ik-llama-cpp/cpu": (BackendParams(kv_read_factor=0.5), ("eta_bw",)),
    }
    assert "kv_read_factor" in ENGINE_SPECIFIC
    assert population(fits, "cpu").kv_read_factor == PRIORS["cpu"].kv_read_factor


def test_a_driver_variant_without_a_fit_borrows_its_base_backends_values():
    """AMDVLK runs the same ggml-vulkan shaders as RADV (borrowing.BASE_BACKEND): with one AMDVLK
    device left (the other held out) its key fits nothing and predicts with RADV's values, not with
    its bare prior (which held out put AMDVLK prefill at 2.2-2.7x measured, docs/calibration.md);
    where its own keys identified a value, that value stands."""
    from engine.tools.borrowing import BASE_BACKEND, populations

    assert BASE_BACKEND["vulkan-amdvlk"] == "vulkan"
    radv = BackendParams(eta_pp=0.66, eta_bw=0.85, t_ubatch_s=0.18)
    fits = {"llama-cpp/vulkan": (radv, ("eta_pp", "eta_bw", "t_ubatch_s"))}
    common = populations(fits, ["vulkan", "vulkan-amdvlk", "rocm"])
    assert common["vulkan-amdvlk"] == common["vulkan"]
    assert borrowed("llama-cpp/vulkan-amdvlk", fits, {}, common).eta_pp == 0.66
    own = BackendParams(eta_pp=0.3, eta_bw=0.85, t_ubatch_s=0.18)
    fits["llama-cpp/vulkan-amdvlk"] = (own, ("eta_pp",))
    common = populations(fits, ["vulkan", "vulkan-amdvlk"])
    assert common["vulkan-amdvlk"].eta_pp == 0.3 and common["vulkan-amdvlk"].t_ubatch_s == 0.18
    # ROCm's base backend is CUDA, not Vulkan: without a CUDA population, its prior.
    assert populations(fits, ["rocm"])["rocm"].eta_pp != 0.66


def test_rocm_without_a_fit_decodes_with_cudas_values_and_prefills_with_its_prior():
    """llama.cpp's ROCm backend compiles ggml-cuda's sources with HIP (ggml/src/ggml-hip/
    CMakeLists.txt globs ../ggml-cuda/*.cu): a fold that keeps one ROCm device fits no ROCm value,
    and its decode values are CUDA's population's; prefill (WMMA, rocBLAS/hipBLASLt) keeps the
    ROCm prior. Where the ROCm key identified a value, that value stands."""
    from engine.params import PRIORS
    from engine.tools.borrowing import BASE_BACKEND, BASE_NAMES, populations
    from engine.tools.pools import DECODE_NAMES

    assert BASE_BACKEND["rocm"] == "cuda" and BASE_NAMES["rocm"] == DECODE_NAMES
    cuda = BackendParams(eta_bw=0.97, t_token_s=1.3e-4, t_layer_s=9e-5, eta_pp=0.37, t_ubatch_s=0.008)
    fits = {"llama-cpp/cuda": (cuda, ("eta_bw", "t_token_s", "t_layer_s", "eta_pp", "t_ubatch_s"))}
    rocm = populations(fits, ["cuda", "rocm"])["rocm"]
    assert (rocm.eta_bw, rocm.t_token_s, rocm.t_layer_s) == (0.97, 1.3e-4, 9e-5)
    assert (rocm.eta_pp, rocm.t_ubatch_s) == (PRIORS["rocm"].eta_pp, PRIORS["rocm"].t_ubatch_s)
    fits["llama-cpp/rocm"] = (BackendParams(eta_bw=0.9, t_token_s=1e-3), ("t_token_s",))
    rocm = populations(fits, ["cuda", "rocm"])["rocm"]
    assert rocm.t_token_s == 1e-3 and rocm.eta_bw == 0.97


def test_a_held_out_rocm_device_reads_its_dense_weights_at_cudas_share():
    """Dense BF16 decode is the weight stream: with the ROCm prior (eta_bw 0.7) the R9700's
    Ministral-3-14B BF16 rows (kyuz0 toolboxes, b7423, 16k deep: 19.7-20.3 tok/s) came out at
    0.72x held out; with the committed fit's CUDA population within 15% of the rows."""
    import csv
    import json
    import statistics
    from pathlib import Path

    from engine.tools.score import load_cases, predict

    root = Path(__file__).resolve().parents[1]
    fit = json.loads((root / "data" / "calibration" / "fit.json").read_text())
    from dataclasses import fields

    from engine.params import PRIORS
    from engine.tools.borrowing import populations

    cuda = BackendParams.from_dict(fit["population"]["cuda"])
    rocm = populations({"llama-cpp/cuda": (cuda, tuple(f.name for f in fields(BackendParams)))}, ["cuda", "rocm"])["rocm"]
    assert rocm.eta_bw == cuda.eta_bw and rocm.eta_pp == PRIORS["rocm"].eta_pp
    path = root / "data" / "calibration" / "measurements.csv"
    with path.open() as f:
        rows = [r for r in csv.DictReader(f) if "R9700" in r["hardware"] and r["backend"] == "rocm"
                and r["model"] == "Ministral-3-14B" and r["quant"] == "BF16" and r["test"] == "tg"]
    assert len(rows) >= 10
    cases = [c for c in load_cases(str(path)) if c.resolved and c.key == "llama-cpp/rocm"
             and "r9700" in c.system.device.id and c.row.get("model") == "Ministral-3-14B"
             and c.row.get("quant") == "BF16" and c.test == "tg"]
    ratio = statistics.median(predict(c, rocm) / c.measured for c in cases)
    assert 0.85 < ratio < 1.15


def test_no_current_engine_borrows_a_superseded_builds_decode_values():
    """With the M3 Max held out, the 2023 llama.cpp builds' Metal key (5 Macs) was the only Metal
    key left on two devices, and every MLX engine and current llama.cpp decoded with its values
    (0.86 ms a token, attention at 1% of peak): mlx-vlm at 0.45x measured. A superseded build
    (engines.toml ``superseded``) lends no decode value to the population nor to its family;
    its prefill values still count (the M2 Ultra's llama.cpp prefill at the prior's eta_pp: 0.56x)."""
    from engine.engines import load_engines
    from engine.params import PRIORS
    from engine.tools.borrowing import population, superseded

    assert load_engines()["llama-cpp-legacy"].superseded and load_engines()["omlx-legacy"].superseded
    assert not load_engines()["llama-cpp"].superseded and superseded("llama-cpp-legacy/metal")
    legacy = BackendParams(t_token_s=0.00086, eta_attn_decode=0.0116, eta_pp=0.75)
    fits = {"llama-cpp-legacy/metal": (legacy, ("t_token_s", "eta_attn_decode", "eta_pp"))}
    common = population(fits, "metal")
    assert common.t_token_s == PRIORS["metal"].t_token_s and common.eta_attn_decode == PRIORS["metal"].eta_attn_decode
    assert common.eta_pp == 0.75
    # llama.cpp's own family: the superseded build lends it prefill values only.
    params = borrowed("llama-cpp/metal", fits, {}, {"metal": common})
    assert params.t_token_s == PRIORS["metal"].t_token_s and params.eta_pp == 0.75
    # With a current key measured, its decode values are the family's.
    current = BackendParams(t_token_s=1e-5, eta_pp=0.69)
    fits["llama-cpp/metal"] = (current, ("t_token_s", "eta_pp"))
    assert borrowed("ollama/metal", fits, {}, {"metal": population(fits, "metal")}).t_token_s == 1e-5

"""What an engine measured on one device predicts with (engine/tools/borrowing.py)."""

from __future__ import annotations

from engine.params import BackendParams
from engine.tools.borrowing import ENGINE_SPECIFIC, borrowed


def test_a_family_member_borrows_the_values_its_family_predicts_with():
    """mlx-lm borrows from vLLM-MLX (same engine family on Metal) every value vLLM-MLX predicts
    with, including those its rows left unidentified: not llama.cpp's Metal values from the
    backend's population. With the M3 Max held out, vLLM-MLX's M4 Max rows leave t_token_s and
    dequant_ops unidentified, and the population's (legacy llama.cpp's 4.2 ms per token) made
    mlx-lm decode at 0.69x measured."""
    family_key = BackendParams(t_token_s=1e-5, dequant_ops=3.4, eta_bw=0.9, t_layer_s=6e-5)
    llama_cpp = BackendParams(t_token_s=0.0042, dequant_ops=17.4, eta_bw=1.0, t_layer_s=4e-5)
    fits = {
        "vllm-mlx/metal": (family_key, ("eta_bw", "t_layer_s")),
        "llama-cpp/metal": (llama_cpp, ("eta_bw", "t_layer_s", "t_token_s", "dequant_ops")),
    }
    populations = {"metal": llama_cpp}
    params = borrowed("mlx-lm/metal", fits, {}, populations)
    assert params.t_token_s == 1e-5 and params.dequant_ops == 3.4
    assert params.eta_bw == 0.9 and params.t_layer_s == 6e-5
    # The engine-specific values are never another engine's: the population's (prior) ones.
    for name in ENGINE_SPECIFIC:
        assert getattr(params, name) == getattr(llama_cpp, name)


def test_an_engine_without_a_fitted_family_borrows_the_backend_population():
    population = BackendParams(t_token_s=0.002)
    fits = {"llama-cpp/metal": (BackendParams(), ("eta_bw",))}
    assert borrowed("mlx-lm/metal", fits, {}, {"metal": population}) == population


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

    assert BASE_BACKEND == {"vulkan-amdvlk": "vulkan"}
    radv = BackendParams(eta_pp=0.66, eta_bw=0.85, t_ubatch_s=0.18)
    fits = {"llama-cpp/vulkan": (radv, ("eta_pp", "eta_bw", "t_ubatch_s"))}
    common = populations(fits, ["vulkan", "vulkan-amdvlk", "rocm"])
    assert common["vulkan-amdvlk"] == common["vulkan"]
    assert borrowed("llama-cpp/vulkan-amdvlk", fits, {}, common).eta_pp == 0.66
    own = BackendParams(eta_pp=0.3, eta_bw=0.85, t_ubatch_s=0.18)
    fits["llama-cpp/vulkan-amdvlk"] = (own, ("eta_pp",))
    common = populations(fits, ["vulkan", "vulkan-amdvlk"])
    assert common["vulkan-amdvlk"].eta_pp == 0.3 and common["vulkan-amdvlk"].t_ubatch_s == 0.18
    # ROCm has no base backend: its prior, not another backend's values.
    assert populations(fits, ["rocm"])["rocm"].eta_pp != 0.66


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

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

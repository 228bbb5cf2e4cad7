"""Engine-specific decode kernels on CUDA, each pinned to its source and to calibration rows
(data/calibration/measurements.csv, LottoLottoLotto/4x3090-llm-benchmarks: RTX 3090s at 220 W).

- vLLM replays its step as CUDA graphs of a layer fused into 10 kernels, where llama.cpp's chain
  (the unit the fitted per-layer costs are in) has ~21 (engine/layerchain.py).
- exllamav3's EXL3 weights are trellis codes its kernels decode with ~5 integer instructions per
  weight, which nothing hides (engine/quant/storage.py, EXL3_DECODE_OPS).
"""

from __future__ import annotations

import pytest

from engine import estimate
from engine.decode import run_features, step_time_from
from engine.engines import load_engines
from engine.layerchain import DENSE_LAYER_KERNELS, layer_chain_factor
from engine.quant import storage
from engine.quant.storage import EXL3_DECODE_OPS, EXL3_DQ_INSTRUCTIONS_PER_8, exl3_decode_ops
from engine.roofline import vector_flops
from engine.system import build_system

RTX_3090 = {"hardware": "RTX 3090"}


def test_vllm_runs_ten_kernels_a_layer_where_llama_cpp_runs_21():
    """vllm/model_executor/models/llama.py (LlamaDecoderLayer): fused add + RMSNorm, QKV GEMM,
    rotary, KV-cache write, attention, O GEMM, fused add + RMSNorm, gate+up GEMM, SiluAndMul, down
    GEMM; llama.cpp and the engines running its graph keep its chain."""
    engines = load_engines()
    assert engines["vllm"].decode_layer_kernels == 10
    assert DENSE_LAYER_KERNELS == 21
    base = {**RTX_3090, "model": "Qwen3.5-4B", "quant": "INT4-W4A16"}
    assert layer_chain_factor(build_system({**base, "engine": "vllm"})) == pytest.approx(10 / 21)
    for engine in ("llama.cpp", "ollama", "ik_llama.cpp"):
        assert layer_chain_factor(build_system({**RTX_3090, "model": "Llama-3.1-8B", "quant": "Q4_K_M", "engine": engine})) == 1.0


def test_the_vllm_chain_scales_the_per_layer_costs_only():
    """The per-token cost (sampling, host round trip) is not a layer chain; the per-layer,
    per-MoE-layer and per-recurrent-layer costs are, at the same per-kernel latency."""
    system = build_system({**RTX_3090, "model": "Qwen3.6-35B-A3B", "quant": "AWQ-4bit", "engine": "vllm"})
    features = run_features(system, 0, 128)
    params = system.params.params
    chain = features.clock_factor * features.layer_chain
    step = step_time_from(features, params)
    expected = params.t_token_s + (
        params.t_layer_s * features.layers + params.t_moe_layer_decode_s * features.moe_layers
        + params.t_recurrent_layer_s * features.recurrent_layers
    ) * chain
    assert step.fixed_s == pytest.approx(expected)


@pytest.mark.parametrize(
    ("setup", "measured"),
    [
        # run_id=.../vllm ... Qwen3.5-4B INT4-W4A16 tp1: 251.9 and 257.2 tok/s (before the chain: 131).
        ({"model": "Qwen3.5-4B", "quant": "INT4-W4A16"}, 254.5),
        # Qwen3.6-27B AWQ-4bit tp4, 512-token context: 75.3 tok/s (before: 51).
        ({"model": "Qwen3.6-27B", "quant": "AWQ-4bit", "gpus": 4, "split": "tensor", "depth": 512}, 75.3),
        # Qwen3.5-122B-A10B AWQ-4bit tp4: 90.2-93.3 tok/s (before: 68).
        ({"model": "Qwen3.5-122B-A10B", "quant": "AWQ-4bit", "gpus": 4, "split": "tensor"}, 92.0),
    ],
)
def test_vllm_on_rtx_3090s_decodes_near_the_measured_rates(setup, measured):
    predicted = estimate({**RTX_3090, **setup, "engine": "vllm", "prompt_tokens": 32})["decode_tps"]
    assert 0.65 <= predicted / measured <= 1.25


def test_exl3_decode_costs_its_trellis_instructions_at_the_fp32_rate():
    """EXL3_DECODE_OPS: ~5 integer instructions per weight at 4 bpw (dq_dispatch<4, mul1> compiled
    for sm_86: 38 SASS instructions per 8 weights), each two of a GeForce SM's FP32 lane slots of 2
    FLOPs; GGUF types cost nothing extra on cards with dp4a."""
    assert EXL3_DECODE_OPS == 19.0
    assert storage("exl3-4").decode_ops == EXL3_DECODE_OPS
    assert storage("q4_K").decode_ops == 0.0
    system = build_system({**RTX_3090, "model": "Qwen3.6-27B", "quant": "EXL3-4.0bpw", "engine": "exllamav3"})
    features = run_features(system, 0, 128)
    step = step_time_from(features, system.params.params)
    _, _, weights, _ = features.weight_bytes(system.params.params.moe_batch_exponent)
    assert step.unpack_s == pytest.approx(weights * EXL3_DECODE_OPS / vector_flops(system.device, "cuda"))
    gguf = build_system({**RTX_3090, "model": "Qwen3.6-27B", "quant": "Q4_K_M", "engine": "llama.cpp"})
    assert step_time_from(run_features(gguf, 0, 128), gguf.params.params).unpack_s == 0.0


def test_exl3_decode_instructions_follow_dq_dispatch_by_bitrate():
    """exl3_dq.cuh dq_dispatch (v0.0.43 = v1.0.0): 1, 2 and 4 bits cut eight weights from one
    32-bit word (4 bits: 38 SASS instructions per 8 weights, sm_86, nvcc 13.0); 5, 6 and 8 bits
    shift a 64-bit window per four weights (6 bits: 43.5), 7 bits one per two (48.5). A fractional
    bitrate mixes the two whole ones."""
    assert EXL3_DQ_INSTRUCTIONS_PER_8[4] == 38.0 and EXL3_DQ_INSTRUCTIONS_PER_8[6] == 43.5
    assert storage("exl3-6").decode_ops == pytest.approx(43.5 / 8 * 4)
    assert storage("exl3-4").decode_ops < storage("exl3-6").decode_ops < storage("exl3-7").decode_ops
    assert exl3_decode_ops(4.5) == pytest.approx((exl3_decode_ops(4) + exl3_decode_ops(5)) / 2)
    # The measured single-card ratio (LottoLottoLotto/4x3090-llm-benchmarks, exllamav3 1.0.0 with
    # EXL3_INT8_GEMV=0, both on the regular kernel: 22.81 tok/s at 4.0 bpw, 17.80 at 6.0 bpw) is
    # 1.28x; the predicted ratio grows toward it with the 6-bit window's extra instructions.
    rates = {q: estimate({**RTX_3090, "model": "Qwen3.6-27B", "quant": q, "engine": "exllamav3", "depth": 2048,
                          "kv_quant": "q8_0", "prompt_tokens": 32})["decode_tps"] for q in ("EXL3-4.0bpw", "EXL3-6.0bpw")}
    assert 1.1 < rates["EXL3-4.0bpw"] / rates["EXL3-6.0bpw"] < 22.81 / 17.80


@pytest.mark.parametrize(
    ("quant", "measured"),
    [
        # exllamav3 1.0.0 and 0.0.43, one RTX 3090, 2048-token context, q8 cache: 28.35 and 21.25
        # tok/s at 4.0 bpw (before the decode cost: 43.9), 17.12 and 16.09 at 6.0 bpw (before: 33.7).
        ("EXL3-4.0bpw", (21.25, 28.35)),
        ("EXL3-6.0bpw", (16.09, 17.12)),
    ],
)
def test_exllamav3_on_one_rtx_3090_decodes_near_the_measured_rates(quant, measured):
    predicted = estimate({**RTX_3090, "model": "Qwen3.6-27B", "quant": quant, "engine": "exllamav3", "depth": 2048,
                          "kv_quant": "q8_0", "prompt_tokens": 32})["decode_tps"]
    assert 0.9 * min(measured) <= predicted <= 1.45 * max(measured)

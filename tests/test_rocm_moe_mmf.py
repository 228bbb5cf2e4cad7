"""16-bit mixture-of-experts prefill on llama.cpp's CUDA/HIP backend (issue 12): which expert
projections run on the card in the mmf kernel and which in the generic per-expert host loop
(moe.looped_share, mmf.cu ``ggml_cuda_should_use_mmf``), and what a looped expert GEMM costs on
ROCm (moe.HIP_LOOP_GEMM_S, from PR 16835's published RDNA4 timings of that loop)."""

from __future__ import annotations

import csv

from engine.catalog import DATA_DIR
from engine.moe import HIP_LOOP_GEMM_S, host_routed, looped_share, mmf_moe_takes
from engine.prefill import prefill_time
from engine.system import build_system
from engine.tools.score import row_request


def _row(model: str, quant: str, toolbox: str = "rocm-7_2_3") -> dict:
    with open(DATA_DIR / "calibration" / "measurements.csv", newline="", encoding="utf-8") as handle:
        return next(
            r for r in csv.DictReader(handle)
            if r["backend"] == "rocm" and r["test"] == "pp" and r["model"] == model and r["quant"] == quant
            and r["depth"] == "0" and f"toolbox={toolbox};" in r["notes"] and "Ryzen AI Max" in r["hardware"]
        )


def _rate(row: dict) -> float:
    return 512 / prefill_time(build_system(row_request(row)), 512, 0).total_s


def test_pr16835_loop_cost_per_expert():
    # MUL_MAT_ID f16, 128 experts, top-8, m=768, k=2048 on the generic path (RX 9070 XT):
    # 1376.16 us at 4 tokens, 4024.50 us at 32; touched experts 128 x (1 - (120/128)^n).
    touched = [128 * (1 - (120 / 128) ** n) for n in (4, 32)]
    slope = (4024.50 - 1376.16) / (touched[1] - touched[0]) * 1e-6
    assert abs(slope - 32.0e-6) < 0.2e-6
    weights_s = 768 * 2048 * 2 / 640e9  # that GEMM's own weight read at the card's peak
    assert abs(HIP_LOOP_GEMM_S - (slope - weights_s)) < 0.3e-6


def test_mmf_size_rule_by_projection():
    assert mmf_moe_takes(768, 512) and not mmf_moe_takes(2048, 512) and mmf_moe_takes(2048, 128)
    strix = {"hardware": "Ryzen AI Max+ 395", "backend": "rocm", "quant": "BF16"}
    coder = build_system({**strix, "model": "Qwen3-Coder-30B-A3B"})
    glm = build_system({**strix, "model": "GLM-4.7-Flash"})
    assert looped_share(coder, 512) == (1 / 3, 1)  # gate, up (768 rows) in mmf; down (2048) looped
    assert looped_share(glm, 512) == (1.0, 3)  # 1536-row gate and up: all three looped
    assert host_routed(coder) == "generic"
    small = build_system({**strix, "model": "Qwen3-Coder-30B-A3B", "ubatch": 128})
    assert looped_share(small, 128) == (0.0, 0) and host_routed(small) is None
    # Quantised experts stay in MMQ; an older build loops all three projections.
    assert host_routed(build_system({**strix, "model": "Qwen3-Coder-30B-A3B", "quant": "Q4_K_M"})) is None
    old = build_system({**strix, "model": "Qwen3-Coder-30B-A3B", "llama_cpp_build": 7000})
    assert looped_share(old, 512) == (1.0, 3)


def test_strix_halo_bf16_moe_slower_than_q8():
    # kyuz0 Strix Halo toolboxes (b9187, rocm-7_2_3): GLM-4.7-Flash BF16 pp512 422.28 t/s vs
    # UD-Q8_K_XL 913.36 t/s; before the loop cost the BF16 file was predicted ~1.25x the Q8 one.
    bf16, q8 = _row("GLM-4.7-Flash", "BF16"), _row("GLM-4.7-Flash", "UD-Q8_K_XL")
    assert float(bf16["tokens_per_s"]) == 422.28 and float(q8["tokens_per_s"]) == 913.36
    assert _rate(bf16) / _rate(q8) < 0.9

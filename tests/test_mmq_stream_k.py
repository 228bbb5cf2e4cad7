"""CUDA prefill details read in llama.cpp's and ik_llama.cpp's sources (issue 12): the micro-batch
is capped at the logical batch, and the routed experts' MMQ kernels (stream-k, one block per SM)
load their weights and multiply in turn, so the two times add (engine/moe.py STREAM_K_CC)."""

from __future__ import annotations

import csv
import dataclasses
from pathlib import Path

import pytest

from engine.moe import STREAM_K_CC
from engine.params import BackendParams
from engine.prefill import prefill_features, prefill_time, prefill_time_from
from engine.roofline import realised_bandwidth
from engine.system import build_system

ROWS = Path(__file__).resolve().parents[1] / "data" / "calibration" / "measurements.csv"


def test_stream_k_from_volta():
    # mmq.cuh launch_mul_mat_q: use_stream_k = cc >= CC_VOLTA (700), ik_llama.cpp dcdfad29 and mainline.
    assert STREAM_K_CC == 7.0


def test_micro_batch_capped_at_logical_batch():
    # llama_context: cparams.n_ubatch = std::min(cparams.n_batch, params.n_ubatch).
    base = {"hardware": "RTX 3090", "model": "Qwen3-30B-A3B", "quant": "Q4_K_M", "engine": "llama.cpp", "backend": "cuda"}
    capped = prefill_time(build_system(base | {"ubatch": 4096, "nbatch": 2048}), 4096, 0).total_s
    assert capped == pytest.approx(prefill_time(build_system(base | {"ubatch": 2048, "nbatch": 2048}), 4096, 0).total_s)
    assert capped != pytest.approx(prefill_time(build_system(base | {"ubatch": 4096, "nbatch": 4096}), 4096, 0).total_s)


def test_the_16x3090_rows_show_the_cap():
    # ik_llama.cpp discussion 266: pp4096 at -ub 4096 runs 346 tok/s with -b 4096 and 327-328 with
    # -b 2048, the rate of -ub 2048 (-b 2048 or 4096: 327-328).
    rates = {}
    for row in csv.DictReader(ROWS.open(encoding="utf-8")):
        if "discussions/266" in row["notes"] and row["test"] == "pp" and row["n_tokens"] == "4096" and "amb=1024" in row["notes"]:
            notes = row["notes"]
            ub = int(notes.split("n_ubatch=")[1].split()[0])
            nb = int(notes.split("n_batch=")[1].split()[0])
            rates[(ub, nb)] = float(row["tokens_per_s"])
    assert rates[(4096, 2048)] == pytest.approx(rates[(2048, 2048)], rel=0.01)
    assert rates[(4096, 4096)] > 1.04 * rates[(4096, 2048)]


@pytest.mark.parametrize(
    "hardware, model, quant, engine, serial",
    [
        ("RTX 3090", "Qwen3-30B-A3B", "Q4_K_M", "llama.cpp", False),  # one mul_mat_id launch for all experts
        ("RTX 3090", "Qwen3-30B-A3B", "Q4_K_M", "ik_llama.cpp", True),  # its per-expert MMQ calls
        ("RTX 3090", "Qwen3-30B-A3B", "BF16", "llama.cpp", False),  # 16-bit: cuBLAS, not MMQ
        ("Tesla P100 16GB", "Qwen3-30B-A3B", "Q4_K_M", "llama.cpp", False),  # cc 6.0: no MMQ
        ("RTX 3090", "Llama-3.1-8B", "Q4_K_M", "llama.cpp", False),  # no routed experts
        ("Radeon AI PRO R9700", "Qwen3-30B-A3B", "Q4_K_M", "llama.cpp", False),  # HIP: conventional tiling
    ],
)
def test_serial_experts_only_on_stream_k_mmq(hardware, model, quant, engine, serial):
    backend = "rocm" if "Radeon" in hardware else "cuda"
    system = build_system({"hardware": hardware, "model": model, "quant": quant, "engine": engine, "backend": backend})
    assert prefill_features(system, 512, 0).experts_serial is serial


def test_serial_experts_add_the_load_to_the_multiply():
    system = build_system({"hardware": "RTX 3090", "model": "Qwen3-30B-A3B", "quant": "Q4_K_M", "engine": "ik_llama.cpp", "backend": "cuda"})
    f = prefill_features(system, 512, 0)
    p = BackendParams()
    serial = prefill_time_from(f, p).experts_s
    overlapped = prefill_time_from(dataclasses.replace(f, experts_serial=False), p).experts_s
    mma = f.experts.padded_flops * p.pp_quant_cost / (f.matmul_rate * p.eta_pp) + f.expert_tile_load_s
    load = f.experts.weight_bytes / realised_bandwidth(f.bandwidth, p, f.unified_memory)
    work = f.experts
    assert serial == pytest.approx(max(mma + load + work.stream_s, work.host_loop_s))
    assert overlapped == pytest.approx(max(max(mma, load) + work.stream_s, work.host_loop_s))
    # On the 16x RTX 3090 rig (ik_llama.cpp discussion 266, DeepSeek-R1) the per-expert kernels
    # outlast the host's launches, so the load shows.
    rig = build_system({"hardware": "RTX 3090", "gpus": 16, "model": "DeepSeek-R1", "quant": "Q8_0", "engine": "ik_llama.cpp",
                        "backend": "cuda", "file_gb": 307.2 * 2**30 / 1e9})
    g = prefill_features(rig, 512, 0)
    assert g.experts_serial
    assert prefill_time_from(g, p).experts_s > prefill_time_from(dataclasses.replace(g, experts_serial=False), p).experts_s

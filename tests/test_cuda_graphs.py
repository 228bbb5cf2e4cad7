"""When llama.cpp's CUDA backend replays a decode step as a captured graph (engine/layerchain.py
graphs_off): a step that launches every kernel from the host pays ``t_layer_batched_s`` a layer.

Pinned to PR 19645 (https://github.com/ggml-org/llama.cpp/pull/19645, DGX Spark, deepseek2
30B.A3B Q8_0 = GLM-4.7-Flash, llama-bench pp512 at microbatch 1-3 with graphs off for several
tokens, PR 19644, and on, the PR: 52.58 / 52.23, 68.96 / 78.45, 83.68 / 92.96 t/s), to the
ggml-cuda rules' boundaries (ggml-org/ggml 23c1635e, 658de8ce, e79ce97d, e661b3d4) and to the calibration rows' builds.
"""

from __future__ import annotations

import csv
from dataclasses import replace

import pytest

from engine import estimate
from engine.decode import run_features, step_time_from
from engine.layerchain import (
    CUDA_GRAPHS_BATCHED_BUILD, CUDA_GRAPHS_MMID_SYNC_BUILD, HIP_GRAPHS_BUILD, graphs_off,
)
from engine.system import build_system
from engine.tools.calibrate import MEASUREMENTS
from engine.tools.score import llama_cpp_build

BEFORE, AFTER = 7941, 8156  # the Spark's newer rows; the release of 2026-02-25 (after PR 19645)
SPARK = {"hardware": "dgx-spark", "model": "glm-4.7-flash", "quant": "Q8_0"}


def _pp_rate(system, tokens: int) -> float:
    """llama-bench pp512 at microbatch ``tokens``: 512 / tokens steps of ``tokens`` tokens each."""
    step = step_time_from(run_features(system, 0, 512 // tokens, tokens), system.params.params)
    return tokens / step.total_s


@pytest.mark.parametrize(("tokens", "off_tps", "on_tps"), [(1, 52.58, 52.23), (2, 68.96, 78.45), (3, 83.68, 92.96)])
def test_pr_19645_graphs_speed_up_a_few_tokens_a_step(tokens, off_tps, on_tps):
    """PR 19645's DGX Spark table, GLM-4.7-Flash Q8_0, llama-bench pp512 at microbatch 1-3: with the
    graph replayed (the PR) the engine is within 10% of the PR's rates (77.5 / 98.4 against 78.45 /
    92.96 at two and three tokens); a single token is unchanged (the PR: 0.99x). The gain of the
    graph is a third of the PR's: 1.04x / 1.04x against 1.14x / 1.11x. The launch cost is the dense
    prior (PR 15802: 24 us a layer, an x86 host); the PR's pairs give 3.5 ms a step, ~75 us for
    each of GLM-4.7-Flash's 47 MLA + MoE layers on the Spark's Arm host (docs/calibration.md,
    Changes): more kernels a layer and a slower host, which one device cannot fit apart. Asserted:
    the gain has the published sign and is at least a quarter of it, and never more."""
    on, off = (build_system({**SPARK, "llama_cpp_build": build}) for build in (AFTER, BEFORE))
    assert abs(_pp_rate(on, tokens) / on_tps - 1) < 0.10
    gain = _pp_rate(on, tokens) / _pp_rate(off, tokens) - 1
    published = on_tps / off_tps - 1
    if tokens == 1:
        assert gain == 0 and abs(published) < 0.01
    else:
        assert 0.25 * published < gain < published


def test_batched_steps_replay_a_graph_from_pr_19645():
    dense = {"hardware": "rtx-4090", "model": "llama-3.1-8b", "quant": "Q4_K_M"}
    assert graphs_off(build_system({**dense, "llama_cpp_build": CUDA_GRAPHS_BATCHED_BUILD - 1}), 2)
    assert not graphs_off(build_system({**dense, "llama_cpp_build": CUDA_GRAPHS_BATCHED_BUILD}), 2)
    assert not graphs_off(build_system(dense), 64)  # a current release: dense steps at any batch
    assert not graphs_off(build_system(dense), 1)
    moe = build_system({**SPARK, "llama_cpp_build": AFTER})
    # MMVQ_MMID_MAX_BATCH_SIZE 4 (mmvq.cuh at 23c1635e): a fifth token needs the synchronising path.
    assert not graphs_off(moe, 4) and graphs_off(moe, 5)
    assert not graphs_off(build_system(SPARK), 16)  # PR 26802: quantized experts in MMQ need no sync


def test_16_bit_experts_launch_every_kernel_between_pr_19645_and_pr_26802():
    """PR 19645 stops the graph for any MUL_MAT_ID whose experts are not quantized, a single
    token's too; PR 26802 keeps it where the matmul needs no sync (AMD: up to 8 tokens)."""
    strix = {"hardware": "ryzen-ai-max-plus-395-128gb", "model": "glm-4.7-flash", "quant": "BF16", "backend": "rocm"}
    assert graphs_off(build_system({**strix, "llama_cpp_build": 9187}), 1)
    assert not graphs_off(build_system({**SPARK, "quant": "BF16", "llama_cpp_build": BEFORE}), 1)  # ne[2] == 1 then
    assert graphs_off(build_system({**SPARK, "quant": "BF16", "llama_cpp_build": AFTER}), 1)
    assert not graphs_off(build_system({**strix, "llama_cpp_build": CUDA_GRAPHS_MMID_SYNC_BUILD}), 1)
    assert not graphs_off(build_system({**strix, "backend": "rocm", "quant": "Q8_0", "llama_cpp_build": 9187}), 1)


def test_a_host_launched_step_costs_what_pr_27721_measured_on_pascal():
    """PR 27721 (https://github.com/ggml-org/llama.cpp/pull/27721, open): a GTX 1080 decodes a dense
    9B Q5_K_M at 26.3 tok/s with graphs off, 28.0 on (+6.4%; 25.3 / 27.2 again, +7.5%). The P40
    (the same GP102 generation, cc 6.1) with the graph's step against the host-launched one: within
    a few percent of that. (Which cards launch from the host is not modelled by architecture:
    layerchain.py says why; this pins the cost of a host-launched step.)"""
    system = build_system({"hardware": "tesla-p40", "model": "qwen3.5-9b", "quant": "Q5_K_M", "prompt_tokens": 512})
    features = run_features(system, 512, 256)
    off = step_time_from(replace(features, launches_every_kernel=True), system.params.params).total_s
    on = step_time_from(replace(features, launches_every_kernel=False), system.params.params).total_s
    assert 1.02 < off / on < 1.12


def test_ik_llama_cpp_keeps_the_old_rule():
    """ik_llama.cpp's MoE era before its PR 689 is not modelled (layerchain.py): a single token
    replays, several tokens launch, whatever the model."""
    rig = {"hardware": "rtx-3090", "model": "deepseek-r1", "quant": "Q8_0", "engine": "ik_llama.cpp", "gpus": 16}
    assert not graphs_off(build_system(rig), 1) and graphs_off(build_system(rig), 2)
    assert not graphs_off(build_system({**rig, "model": "llama-3.1-8b", "gpus": 1}), 1)


def test_the_calibration_rows_fall_on_the_stated_sides():
    """The Spark's batched rows (b6989, b7941) predate PR 19645; the P100's (b9234) and the Ryzen AI
    Max+ 395's ROCm rows (b9187-9193) fall after it, after HIP graphs and before PR 26802."""
    builds: dict[tuple[str, str], set[int]] = {}
    with open(MEASUREMENTS, encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            if row["engine"] == "llama.cpp" and row["backend"] in ("cuda", "rocm"):
                builds.setdefault((row["hardware"], row["batch"] != "1"), set()).add(llama_cpp_build(row))
    spark = builds[("NVIDIA DGX Spark", True)]
    assert max(spark) < CUDA_GRAPHS_BATCHED_BUILD
    strix = next(v for (k, batched), v in builds.items() if "Max+ 395" in k and not batched)
    assert HIP_GRAPHS_BUILD <= min(strix) and max(strix) < CUDA_GRAPHS_MMID_SYNC_BUILD
    assert CUDA_GRAPHS_BATCHED_BUILD < min(builds[("NVIDIA Tesla P100 16GB", False)])


def test_the_explain_panel_says_the_step_launches_from_the_host():
    old = estimate({**SPARK, "batch": 2, "llama_cpp_build": BEFORE})["breakdown"]
    assert old["graphs_off"] and old["batched_s"] > 0 and not old["hip_graphs_off"]
    new = estimate({"hardware": "rtx-4090", "model": "llama-3.1-8b", "quant": "Q4_K_M", "batch": 2})["breakdown"]
    assert not new["graphs_off"] and new["batched_s"] == 0

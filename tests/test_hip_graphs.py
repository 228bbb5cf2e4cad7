"""llama.cpp's ROCm builds before HIP graphs were on by default (engine/layerchain.py hip_graphs_off).

Single-token decode steps of such a build launch every kernel from the host and pay the launch
cost a batched step pays (``t_layer_batched_s`` a layer; the ROCm prior is PR 22254's own
median, engine/params.py). Pinned to PR 22254 (https://github.com/ggml-org/llama.cpp/pull/22254),
whose llama-bench tg64 with graphs on over off is 1.03-1.07x on a gfx1100 (RX 7900 XTX class) and
1.01-1.11x on a gfx908 (MI100), and to the calibration rows' builds.
"""

from __future__ import annotations

import csv

import pytest

from engine import estimate
from engine.decode import run_features, step_time_from
from engine.layerchain import HIP_GRAPHS_BUILD, hip_graphs_off
from engine.params import PRIORS
from engine.system import build_system
from engine.tools.calibrate import MEASUREMENTS
from engine.tools.score import llama_cpp_build

OLD = 7423  # the R9700 rows' build (kyuz0/amd-r9700-ai-toolboxes, no -DGGML_HIP_GRAPHS)


@pytest.mark.parametrize(
    ("hardware", "model", "quant", "published"),
    [
        ("rx-7900-xtx", "gemma-4-26b-a4b", "Q6_K", 91.82 / 85.50),
        ("rx-7900-xtx", "qwen2.5-14b", "Q8_0", 48.51 / 47.17),
        ("rx-7900-xtx", "qwen3.5-27b", "Q4_K_M", 29.13 / 28.19),
        ("mi100", "gemma-4-26b-a4b", "Q6_K", None),
    ],
)
def test_hip_graphs_speed_up_decode_as_pr_22254_measures(hardware, model, quant, published):
    """Graphs on (a current release) over graphs off (a stated older build): a few percent, within
    PR 22254's published spread (1.01-1.11x); on the gfx1100 (RDNA3, the consumer cards' kind)
    within 0.02 of the PR's own pair. The gfx908's launches cost about twice the median (gemma4
    1.11x there, the engine 1.05x): one per-layer prior for every AMD GPU."""
    request = {"hardware": hardware, "model": model, "quant": quant, "backend": "rocm", "gen_tokens": 64, "prompt_tokens": 16}
    ratio = estimate(request)["decode_tps"] / estimate({**request, "llama_cpp_build": OLD})["decode_tps"]
    assert 1.01 <= ratio <= 1.11
    if published is not None:
        assert abs(ratio - published) < 0.02


def test_the_host_launch_cost_is_pr_22254s_median_per_layer():
    """The ROCm prior of t_layer_batched_s: 1 / t_off - 1 / t_on over the layers of PR 22254's
    gfx1100 and gfx908 pairs (gemma4 26B-A4B 30 layers, qwen2 14B 48, qwen35 27B 64, gpt-oss
    20B 24), the median of nine: ~18 us."""
    pairs = [(85.50, 91.82, 30), (79.98, 85.75, 30), (47.17, 48.51, 48), (41.25, 42.74, 48), (28.19, 29.13, 64),
             (27.47, 28.23, 64), (82.25, 91.69, 30), (77.00, 84.50, 30), (146.28, 147.72, 24)]
    per_layer = sorted((1 / off - 1 / on) / layers for off, on, layers in pairs)
    assert PRIORS["rocm"].t_layer_batched_s == pytest.approx(per_layer[len(per_layer) // 2], rel=0.02)


def test_only_rocm_builds_before_the_flip_launch_every_kernel():
    base = {"model": "gemma-3-4b", "quant": "Q4_K_M"}
    r9700 = {**base, "hardware": "radeon-ai-pro-r9700"}
    assert hip_graphs_off(build_system({**r9700, "llama_cpp_build": OLD}))
    assert not hip_graphs_off(build_system(r9700))  # unset: a current release
    assert not hip_graphs_off(build_system({**r9700, "llama_cpp_build": HIP_GRAPHS_BUILD}))
    # CUDA replays graphs since PR 6766 whatever the build (Pascal's gate is not this rule); Vulkan has none to turn on.
    assert not hip_graphs_off(build_system({**base, "hardware": "rtx-4090", "llama_cpp_build": OLD}))
    assert not hip_graphs_off(build_system({**r9700, "backend": "vulkan", "llama_cpp_build": OLD}))
    old = estimate({**r9700, "llama_cpp_build": OLD})["breakdown"]
    assert old["hip_graphs_off"] and old["batched_s"] > 0
    assert estimate(r9700)["breakdown"]["batched_s"] == 0


def test_a_batched_step_pays_the_launch_cost_once():
    """A step of several sequences at the old build pays the launch cost once, as its single-token
    step does; a current release replays both (PR 19645 lifted the batch-size rule)."""
    request = {"hardware": "radeon-ai-pro-r9700", "model": "gemma-3-4b", "quant": "Q4_K_M"}
    old, new = build_system({**request, "llama_cpp_build": OLD}), build_system(request)
    batched = [step_time_from(run_features(old, 0, 64, tokens), old.params.params).batched_s for tokens in (1, 4)]
    assert batched[0] == batched[1] > 0
    assert step_time_from(run_features(new, 0, 64, 4), new.params.params).batched_s == 0


def test_the_calibration_rows_builds_straddle_the_flip():
    """The R9700's ROCm rows (b7423) predate PR 22254, the Ryzen AI Max+ 395's (b9187-9193) follow
    it: any boundary between them scores the same (layerchain.HIP_GRAPHS_BUILD is approximate)."""
    builds: dict[str, set[int]] = {}
    with open(MEASUREMENTS, encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            if row["backend"] == "rocm" and row["engine"] == "llama.cpp":
                builds.setdefault(row["hardware"], set()).add(llama_cpp_build(row))
    r9700 = next(v for k, v in builds.items() if "R9700" in k)
    strix = next(v for k, v in builds.items() if "Max+ 395" in k)
    assert max(r9700) < HIP_GRAPHS_BUILD <= min(strix)

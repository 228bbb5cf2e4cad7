"""CUDA cards without the __dp4a instruction (compute capability below 6.1: the P100's GP100,
Maxwell) decode quantised weights through ggml's software stand-in (engine/unpacking.py).

On CUDA only those cards pay ``dequant_ops`` (the dp4a cards' MMVQ kernels hide the unpacking), so
CUDA's prior of it is their per-weight work counted in the sources: the generic unpacking (4) plus
the stand-in's 8 byte sign-extensions and 4 multiply-adds of 32-bit ints (3 XMADs each on
compute capability 5.x/6.x) where dp4a issues one instruction: (20 - 1) / 4 x 2 = 9.5 FP32-FLOP
units a weight, 13.5 in all. A fit without the P100's rows (leave-one-device-out) has no other
row that identifies it and takes this value (params.UNIDENTIFIED); at the generic 4 the P100 came out 1.65x
too fast on gpt-oss-20b. Pinned to kyuz0's published P100 row (github.com/kyuz0/nvidia-p100-ai-toolboxes,
benchmark/results_llamacpp/gpt-oss-20b-mxfp4__p100__fa1__single.log: tg128 68.64 tok/s).
"""

from __future__ import annotations

import csv
from dataclasses import replace

import pytest

from engine.decode import run_features, step_time_from
from engine.hardware import load_hardware
from engine.params import PRIORS, BackendParams, unidentified_prior
from engine.system import build_system
from engine.tools.borrowing import population
from engine.tools.calibrate import MEASUREMENTS
from engine.tools.score import case_from_row, predict
from engine.params import CUDA_NO_DP4A_DEQUANT_OPS
from engine.unpacking import DP4A_FALLBACK_OPS, MIN_CC_DP4A, unpacking_hidden

PUBLISHED_TG128 = 68.64  # kyuz0 P100 toolboxes, gpt-oss-20b MXFP4, one card, llama-bench tg128


def test_the_stand_in_is_counted_from_ggml_cuda_dp4a():
    # 8 sign-extended bytes + 4 x 3 XMADs for 4 weights, against one dp4a; 2 FLOP units a lane-instruction.
    assert DP4A_FALLBACK_OPS == pytest.approx((8 + 4 * 3 - 1) / 4 * 2) == pytest.approx(9.5)
    assert CUDA_NO_DP4A_DEQUANT_OPS == pytest.approx(BackendParams().dequant_ops + 9.5) == pytest.approx(13.5)
    # What a CUDA unit without rows that identify it gets (a fit without the P100's rows); the fit
    # still starts from the generic 4 (params.UNIDENTIFIED says why), and other backends keep it.
    assert unidentified_prior("cuda").dequant_ops == CUDA_NO_DP4A_DEQUANT_OPS
    assert PRIORS["cuda"].dequant_ops == BackendParams().dequant_ops
    assert unidentified_prior("rocm").dequant_ops == unidentified_prior("vulkan").dequant_ops == BackendParams().dequant_ops
    # A fit's population, with no unit freeing dequant_ops on CUDA, takes the sourced count.
    assert population({}, "cuda").dequant_ops == CUDA_NO_DP4A_DEQUANT_OPS


@pytest.mark.parametrize(
    ("hardware", "hidden"),
    [("p100-pcie-16gb", False), ("p100-pcie-12gb", False), ("jetson-nano", False), ("tesla-p40", True), ("rtx-3090", True)],
)
def test_the_rule_reads_the_catalogs_compute_capability(hardware, hidden):
    device = load_hardware()[hardware]
    assert unpacking_hidden(device, "cuda") is hidden
    cc = device.cuda_compute_capability
    assert (cc is None or cc >= MIN_CC_DP4A) is hidden


def _p100_row() -> dict:
    with open(MEASUREMENTS, newline="", encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            if (row.get("source_id") == "kyuz0_p100_toolboxes" and row["model"] == "gpt-oss-20b" and row["test"] == "tg"
                    and row["n_tokens"] == "128" and row["depth"] == "0" and row["n_devices"] == "1"):
                return row
    raise AssertionError("the P100 gpt-oss-20b tg128 row is gone from measurements.csv")


def test_the_sourced_prior_brings_the_p100_near_its_published_rate():
    """With the fitted llama.cpp CUDA values and dequant_ops at a prior (what a fit without the
    P100's rows uses): the generic 4 predicts >1.5x the published 68.64 tok/s, the sourced 13.5
    within 20% of it."""
    row = _p100_row()
    assert float(row["tokens_per_s"]) == PUBLISHED_TG128
    case = case_from_row(row)
    fitted = case.system.params.params
    at = {ops: predict(case, replace(fitted, dequant_ops=ops)) / PUBLISHED_TG128 for ops in (4.0, CUDA_NO_DP4A_DEQUANT_OPS)}
    assert at[4.0] > 1.5
    assert 0.95 < at[CUDA_NO_DP4A_DEQUANT_OPS] < 1.2


def test_a_p40_decodes_without_the_stand_in():
    """The P40 (6.1) has dp4a: its decode does not depend on dequant_ops; the P100's does."""
    request = {"model": "llama-3.1-8b", "quant": "Q4_K_M", "prompt_tokens": 16, "gen_tokens": 64}
    for hardware, moves in (("tesla-p40", False), ("p100-pcie-16gb", True)):
        system = build_system({**request, "hardware": hardware})
        step = run_features(system, 0, 64, 1)
        low, high = (step_time_from(step, replace(system.params.params, dequant_ops=ops)).total_s for ops in (4.0, 13.5))
        assert (high > low * 1.05) is moves

"""llama.cpp's micro-batch (-ub) and logical batch (-b) as inputs (issue 12): the prompt runs in
micro-batches of min(-ub, -b) tokens (System.ubatch), each reading the weights once and copying
weights held in system RAM to the GPU once; the compute buffer grows with it."""

from __future__ import annotations

import csv
import statistics
import subprocess
import sys
from pathlib import Path

import pytest

from engine import EngineInputError, estimate
from engine.page.commands import check_commands
from engine.system import build_system

ROOT = Path(__file__).resolve().parents[1]
ROWS = ROOT / "data" / "calibration" / "measurements.csv"
RTX_4090_MOE = {"hardware": "RTX 4090", "model": "Qwen3-30B-A3B", "quant": "Q4_K_M"}


def prefill_tps(request: dict) -> float:
    return estimate(request)["prefill_tps"]


def test_the_micro_batch_is_capped_at_the_logical_batch():
    assert build_system(RTX_4090_MOE).ubatch == 512  # llama.cpp's defaults: -ub 512, -b 2048
    assert build_system(RTX_4090_MOE | {"ubatch": 4096}).ubatch == 2048
    assert build_system(RTX_4090_MOE | {"ubatch": 4096, "nbatch": 8192}).ubatch == 4096
    assert build_system(RTX_4090_MOE | {"nbatch": 256}).ubatch == 256


def test_the_breakdown_counts_the_micro_batches():
    b = estimate(RTX_4090_MOE | {"prompt_tokens": 5000, "ubatch": 2048})["breakdown"]
    assert (b["prefill_micro_batches"], b["prefill_micro_batch_tokens"]) == (3, 2048)
    b = estimate(RTX_4090_MOE | {"prompt_tokens": 5000, "batch": 2})["breakdown"]
    assert b["prefill_micro_batches"] == 20  # both sequences' prompts, 512 tokens at a time


def test_a_larger_micro_batch_grows_the_compute_buffer():
    small = estimate(RTX_4090_MOE)["memory"]
    large = estimate(RTX_4090_MOE | {"ubatch": 2048})["memory"]
    assert large["weights_gb"] == small["weights_gb"]
    assert large["total_gb"] > small["total_gb"] + 0.3  # logits and activations of 4x the tokens


def test_the_16x3090_rig_speeds_up_as_published():
    """ik_llama.cpp discussion 266 (16x RTX 3090, DeepSeek-R1 Q8_0, pp2048, -b 2048): -ub 1024 and
    -ub 2048 run 1.32x and 1.55x the rate of -ub 512 (medians of the amb/fmoe sweep in
    data/calibration/measurements.csv). Fewer micro-batches give each expert more tokens per read
    of its weights; the engine gets the ratios from that, not from a fitted value."""
    measured = {}
    for row in csv.DictReader(ROWS.open(encoding="utf-8")):
        notes = row["notes"]
        if "discussions/266" in notes and row["test"] == "pp" and row["n_tokens"] == "2048" and "n_batch=2048" in notes:
            measured.setdefault(int(notes.split("n_ubatch=")[1].split()[0]), []).append(float(row["tokens_per_s"]))
    rig = {"hardware": "RTX 3090", "gpus": 16, "model": "DeepSeek-R1", "quant": "Q8_0", "engine": "ik_llama.cpp",
           "file_gb": 307.2 * 2**30 / 1e9, "prompt_tokens": 2048}
    base_measured = statistics.median(measured[512])
    base_predicted = prefill_tps(rig | {"ubatch": 512})
    for ub in (1024, 2048):
        ratio_measured = statistics.median(measured[ub]) / base_measured
        ratio_predicted = prefill_tps(rig | {"ubatch": ub}) / base_predicted
        assert ratio_predicted == pytest.approx(ratio_measured, rel=0.10), ub


def test_offloaded_experts_cross_pcie_once_per_micro_batch():
    """oobabooga/textgen issue 7309: GLM-4.5-Air Q4 with most experts in system RAM beside a 32 GB
    card, -b 2048: prompt processing ~175 tok/s at -ub 512 and ~535 at -ub 2048, about 3x. llama.cpp
    copies the host-resident experts to the GPU for each micro-batch (op offload), so four times
    fewer micro-batches copy them four times less often."""
    setup = {"hardware": "RTX 5090", "model": "GLM-4.5-Air", "quant": "Q4_K_M", "expert_offload": True, "system_ram_gib": 128,
             "prompt_tokens": 2048, "depth": 12000}
    small, large = estimate(setup), estimate(setup | {"ubatch": 2048})
    assert large["breakdown"]["prefill_transfer_s"] == pytest.approx(small["breakdown"]["prefill_transfer_s"] / 4)
    assert 2.4 < large["prefill_tps"] / small["prefill_tps"] < 3.7


def test_the_check_commands_carry_the_batch_flags():
    request = RTX_4090_MOE | {"prompt_tokens": 512, "gen_tokens": 128, "ubatch": 2048, "nbatch": 4096}
    for command in check_commands(request, estimate(request))[:2]:
        assert "-b 4096" in command["command"] and "-ub 2048" in command["command"], command


@pytest.mark.parametrize("flags, key, value", [(["-ub", "1024"], "ubatch", 1024), (["--batch-size", "4096"], "nbatch", 4096)])
def test_the_cli_takes_llama_cpps_spellings(flags, key, value):
    out = subprocess.run([sys.executable, "-m", "engine", "estimate", "--hardware", "RTX 4090", "--model", "Qwen3-30B-A3B",
                          "--quant", "Q4_K_M", *flags, "--json"], capture_output=True, text=True, cwd=ROOT, check=True).stdout
    assert f'"prefill_micro_batch_tokens": {min(value, 2048) if key == "ubatch" else 512}' in out


def test_a_micro_batch_of_nothing_is_refused():
    with pytest.raises(EngineInputError) as caught:
        estimate(RTX_4090_MOE | {"ubatch": 0})
    assert caught.value.field == "ubatch"

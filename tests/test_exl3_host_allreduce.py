"""ExLlamaV3's tensor-parallel all-reduce through host memory (engine/parallel.py
host_allreduce_s_per_byte), pinned to published runs.

exllamav3's default ("native") tensor-parallel backend sums the cards' partial results on the CPU:
every card writes its BF16 partial sum into pinned host memory, one CPU thread adds them, every card
reads the sum back, in 64 KB stages in lockstep (exllamav3 v1.0.0, model_tp_backend.py
TPBackendNative, exllamav3_ext/parallel/all_reduce_cpu.cu). A prompt's activations (2 all-reduces
a layer of tokens x hidden x 2 bytes) therefore cross PCIe twice and a CPU core once, where an NCCL
ring moves 2 (N-1)/N of them GPU to GPU. Measured (LottoLottoLotto/4x3090-llm-benchmarks,
campaign exl3-ab, 4x RTX 3090 on PCIe 3.0 x16 at 220 W, Qwen3.6-27B): tensor parallelism over
four cards prefills at the single card's rate, 722.5 tok/s at TP=4 against 723.5 on one card
(EXL3 6.0 bpw, 2,048 tokens, exllamav3 0.0.43) and 740.3 against 750.6 (4.0 bpw).
"""

from __future__ import annotations

import csv

import pytest

from engine.catalog import DATA_DIR, GB
from engine.hardware import PCIE_GBS_PER_LANE
from engine.parallel import (
    HOST_REDUCE_CORE_BYTES_S,
    HOST_REDUCE_STAGE_BYTES,
    host_allreduce_s_per_byte,
    split_sync_parts,
)
from engine.prefill import prefill_time
from engine.system import build_system
from engine.tools.score import row_request

SOURCE = "lotto_4x3090_archive"


def _row(run_id: str, test: str) -> dict:
    with open(DATA_DIR / "calibration" / "measurements.csv", newline="", encoding="utf-8") as handle:
        rows = [r for r in csv.DictReader(handle) if r["source_id"] == SOURCE and r["engine"] == "exllamav3"]
    return next(r for r in rows if f"run_id={run_id};" in r["notes"] and r["test"] == test)


def _prefill_rate(row: dict) -> float:
    tokens = int(row["n_tokens"])
    return tokens / prefill_time(build_system(row_request(row)), tokens, 0).total_s


def test_host_allreduce_costs_two_link_crossings_and_a_cpu_pass():
    """Per byte of message: the card's own PCIe link twice (write, read back; never NVLink, the
    data goes through the host) at 80% of its rate, plus one CPU core reading N partials and
    writing one sum at the single-core prior."""
    system = build_system(row_request(_row("exl3-ab/exllamav3-0.0.43/043_tp_ctx2048", "pp")))
    assert system.gpus == 4 and system.engine.tp_allreduce_via_host
    link = PCIE_GBS_PER_LANE[3] * 16 * GB * 0.8  # the rig's PCIe 3.0 x16 slots
    expected = 2 / link + 5 / HOST_REDUCE_CORE_BYTES_S
    assert host_allreduce_s_per_byte(system) == pytest.approx(expected)
    # A 2,048-token chunk of Qwen3.6-27B (hidden 5120): 128 all-reduces of 20 MB, ~1 s through the host.
    _latency, data = split_sync_parts(system, 2048)
    message = 2048 * system.arch.hidden_size * 2
    assert data == pytest.approx(2 * system.arch.layers * (message - HOST_REDUCE_STAGE_BYTES) * expected)
    assert 0.8 < data < 1.2


def test_decode_step_fits_in_one_stage():
    """A decode step's all-reduce (one token, 10 KB) is one 64 KB stage: the exchange's latency, no
    bytes term on top."""
    system = build_system(row_request(_row("exl3-ab/exllamav3-1.0.0/100_tp_ctx2048", "tg")))
    latency, data = split_sync_parts(system, 1)
    assert data == 0.0 and latency > 0.0


@pytest.mark.parametrize(
    "single, tp",
    [
        ("exl3-ab/exllamav3-0.0.43/043_single_ctx2048", "exl3-ab/exllamav3-0.0.43/043_tp_ctx2048"),
        ("exl3-ab/exllamav3-0.0.43/q4_043_single_ctx2048", "exl3-ab/exllamav3-0.0.43/q4_043_tp_ctx2048"),
    ],
)
def test_four_card_tensor_parallel_prefill_gains_little_over_one_card(single, tp):
    """Measured TP=4 / one card: 722.5 / 723.5 = 1.00x (6.0 bpw), 740.3 / 750.6 = 0.99x (4.0 bpw).
    With NCCL's ring over the link the model gave 3.1x; through the host it gives ~2x (the host
    path's stage latencies and the CPU's AVX2 conversion are not in the prior, docs/calibration.md)."""
    one, four = _row(single, "pp"), _row(tp, "pp")
    measured = float(four["tokens_per_s"]) / float(one["tokens_per_s"])
    assert 0.95 < measured < 1.02
    predicted = _prefill_rate(four) / _prefill_rate(one)
    assert 1.5 < predicted < 2.5


def test_exllamav3_prefills_in_its_own_chunks():
    """The generator's max_chunk_size (2048) sets the forward passes, not llama.cpp's -ub 512."""
    system = build_system(row_request(_row("exl3-ab/exllamav3-1.0.0/100_single_ctx8192", "pp")))
    assert system.ubatch == 2048
    assert prefill_time(system, 8192, 0).micro_batches == 4

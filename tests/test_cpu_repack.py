"""Mainline llama.cpp's online repacking of Q4_0 and IQ4_NL into interleaved rows on Arm NEON with
the dot product (engine/repack.py; ggml-cpu/repack.cpp ``ggml_repack_get_optimal_repack_type``,
llama.cpp PRs 9921, 10446, 10541): the repacked GEMV pays the per-weight unpacking once per 4
interleaved rows. Pinned to its sources (which engine, build, ISA and type) and to the M2 Max
rows of ik_llama.cpp discussion 164 (mainline build 4384, 4 threads: Q4_0 23.89 and IQ4_NL 23.45
tok/s against Q4_K_S 17.55, the same bytes per weight)."""

import csv

import pytest

from engine import estimate
from engine.decode import step_features
from engine.repack import FIRST_REPACK_BUILD, REPACK_ROWS, repacked_types
from engine.system import build_system
from engine.tools.calibrate import MEASUREMENTS
from engine.tools.score import row_request

MAINLINE = ("llama-cpp",)


def test_which_engine_build_isa_and_type_repack():
    # Arm with sdot (Apple M2, Graviton): Q4_0 -> Q4_0_4x4/4x8/8x8 and IQ4_NL -> IQ4_NL_4x4.
    assert repacked_types(("neon", "dotprod", "i8mm"), MAINLINE, 4384) == ("q4_0", "iq4_nl")
    assert repacked_types(("neon", "dotprod"), ("ollama", "llama-cpp"), None) == ("q4_0", "iq4_nl")
    # x86: PR 9921 kept the AVX2 path off for "bad gemv performance"; PR 10446's Q4_0_8_8 is no
    # faster in decode (PR 9921's 7600X: 14.90 -> 14.88 tok/s at 6 threads).
    assert repacked_types(("avx2", "avx512", "avx512-vnni"), MAINLINE, 4384) == ()
    # Plain NEON without sdot, builds before the online flow, ik_llama.cpp and the legacy builds.
    assert repacked_types(("neon",), MAINLINE, 4384) == ()
    assert repacked_types(("neon", "dotprod"), MAINLINE, FIRST_REPACK_BUILD - 1) == ()
    assert repacked_types(("neon", "dotprod"), ("ik-llama-cpp", "llama-cpp"), None) == ()
    assert repacked_types(("neon", "dotprod"), ("llama-cpp-legacy", "llama-cpp"), None) == ()
    assert REPACK_ROWS == 4  # block_q4_0x4 / block_iq4_nlx4


@pytest.mark.parametrize(
    ("request_", "share"),
    [
        ({"hardware": "Apple M2 Max", "quant": "Q4_0", "llama_cpp_build": 4384}, (0.85, 1.0)),
        ({"hardware": "Apple M2 Max", "quant": "IQ4_NL", "llama_cpp_build": 4384}, (0.85, 1.0)),
        ({"hardware": "Apple M2 Max", "quant": "Q4_K_S", "llama_cpp_build": 4384}, (0.0, 0.0)),
        ({"hardware": "Apple M2 Max", "quant": "Q4_0", "engine": "ik_llama.cpp"}, (0.0, 0.0)),
        ({"hardware": "AMD Ryzen 9 7950X", "quant": "Q4_0", "llama_cpp_build": 4384}, (0.0, 0.0)),
        ({"hardware": "AMD Ryzen 9 7950X", "quant": "IQ4_NL", "llama_cpp_build": 4384}, (0.0, 0.0)),
    ],
)
def test_the_repacked_share_of_a_token_s_weights(request_, share):
    system = build_system({"model": "Llama-3.1-8B", "backend": "cpu", "threads": 4, **request_})
    assert share[0] <= step_features(system, 0, 1, 0).repacked_share <= share[1]


def _m2_rows():
    with open(MEASUREMENTS, newline="") as handle:
        return {
            (r["engine"], r["quant"]): r
            for r in csv.DictReader(handle)
            if r["hardware"] == "Apple M2 Max" and r["backend"] == "cpu" and r["test"] == "tg"
            and "discussions/164" in r["notes"] and r["quant"] in ("Q4_0", "IQ4_NL", "Q4_K_S")
        }


@pytest.mark.parametrize("quant", ["Q4_0", "IQ4_NL"])
def test_the_m2_max_mainline_rows_decode_repacked_types_faster(quant):
    rows = _m2_rows()
    fast, slow = rows[("llama.cpp", quant)], rows[("llama.cpp", "Q4_K_S")]
    measured = float(fast["tokens_per_s"]) / float(slow["tokens_per_s"])
    assert measured == pytest.approx(1.35, abs=0.05)
    predicted = estimate(row_request(fast))["decode_tps"] / estimate(row_request(slow))["decode_tps"]
    assert 1.2 < predicted < 1.6
    # ik_llama.cpp (no online repack of mainline's kind in these rows) decodes them alike.
    ik = estimate(row_request(rows[("ik_llama.cpp", quant)]))["decode_tps"]
    assert ik == pytest.approx(estimate(row_request(rows[("ik_llama.cpp", "Q4_K_S")]))["decode_tps"], rel=0.05)

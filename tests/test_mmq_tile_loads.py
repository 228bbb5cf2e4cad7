"""The routed experts' MMQ tile loads where ik_llama.cpp runs an MMQ call per expert (issue 12;
engine/mmq_tiles.py expert_tile_load_s): instructions a weight counted from the compiled
load_tiles kernels (docs/measure/mmq_tile_count.*), and a custom mix's experts counted at the type
its stated file size leaves them."""

from __future__ import annotations

import pytest

from engine.mmq_tiles import LOAD_INSTRUCTIONS_IK, LOAD_INSTRUCTIONS_MAINLINE, OPS_PER_INSTRUCTION, nearest_mix_type
from engine.prefill import prefill_features
from engine.system import build_system

#: ik_llama.cpp discussion 266's rig: DeepSeek-R1 in a 307.20 GiB "Q8_0" mix on 16 RTX 3090s.
RIG = {"hardware": "RTX 3090", "gpus": 16, "model": "DeepSeek-R1", "quant": "Q8_0", "engine": "ik_llama.cpp",
       "backend": "cuda", "file_gb": 307.2 * 2**30 / 1e9}


def test_counts_follow_the_loaders():
    # Q8_0 copies bytes; the grid-coded IQ3_S looks groups up in iq3s_grid and applies signs; ik_llama.cpp's
    # IQ4_XS loader at dcdfad29 predates llama.cpp's byte-permute lookup (about twice the work).
    for table in (LOAD_INSTRUCTIONS_IK, LOAD_INSTRUCTIONS_MAINLINE):
        assert table["q8_0"] < table["q5_K"] < table["iq3_s"]
    assert LOAD_INSTRUCTIONS_IK["iq4_xs"] > 1.8 * LOAD_INSTRUCTIONS_MAINLINE["iq4_xs"]
    assert OPS_PER_INSTRUCTION == 2


def test_the_rigs_experts_read_as_iq3_s():
    # Discussion 266's table: routed up/gate iq3_s and down iq4_xs in layers 9-60 (3.71 bits a weight
    # on average), iq4_xs / q5_K in layers 3-8. The 307.20 GiB file leaves the experts 3.8 bits a weight.
    assert nearest_mix_type(3.81) == "iq3_s"
    assert nearest_mix_type(8.5) == "q8_0"
    assert nearest_mix_type(4.4) == "q4_K"


def test_only_the_per_expert_calls_pay_it():
    rig = prefill_features(build_system(RIG), 512, 0)
    assert rig.expert_tile_load_s > 0
    label = prefill_features(build_system({k: v for k, v in RIG.items() if k != "file_gb"}), 512, 0)
    # Q8_0 experts at the label's recipe: 2.3x the weights' bytes, a third of the unpacking per weight.
    assert label.expert_tile_load_s == pytest.approx(rig.expert_tile_load_s * LOAD_INSTRUCTIONS_IK["q8_0"] / LOAD_INSTRUCTIONS_IK["iq3_s"])
    base = {"hardware": "RTX 3090", "model": "Qwen3-30B-A3B", "quant": "Q4_K_M", "backend": "cuda"}
    assert prefill_features(build_system(base | {"engine": "llama.cpp"}), 512, 0).expert_tile_load_s == 0
    assert prefill_features(build_system(base | {"engine": "ik_llama.cpp"}), 512, 0).expert_tile_load_s > 0
    assert prefill_features(build_system(base | {"engine": "ik_llama.cpp", "model": "Llama-3.1-8B"}), 512, 0).expert_tile_load_s == 0


def test_the_rig_at_pp512_within_its_published_rate():
    # Discussion 266: pp512 at -ub 512, 216.01 t/s (amb 1024) to 239.69 (amb 64); with the tile loads the
    # 307 GiB mix's micro-batch of 512 tokens spends ~0.13 s unpacking IQ3_S experts the Q8_0 label
    # would not (653e9 expert weights x (4.96 - 1.45) x 2 / 35.6e12 FLOP/s).
    from engine.prefill import prefill_time

    rate = 512 / prefill_time(build_system(RIG), 512, 0).total_s
    assert 216.01 / 1.15 < rate < 239.69 * 1.15

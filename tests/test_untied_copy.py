"""A tied model's GGUF that holds the embedding table twice (token_embd and a separate output.weight)
reads one copy per token, not the whole file (engine/weights.py ``_untied_copy``).

ikawrakow's Llama 3.2 files (ik_llama.cpp discussion 63, Ryzen 9 7950X): the 1B is 2.79 GiB in BF16,
1.50B weights for a 1.24B-weight model, i.e. the model plus a second 128256 x 2048 table. His machine
has "64 GB/s theoretical memory bandwidth, but 60 GB/s is the best one gets in practice for TG"
(ik_llama.cpp PR 232, https://github.com/ikawrakow/ik_llama.cpp/pull/232).
"""

from __future__ import annotations

import pytest

from engine.system import build_system
from engine.tools.score import row_request
from engine.weights import distinct_expert_fraction

GIB = 2**30
#: ikawrakow's stated peak for his Ryzen 9 7950X (PR 232), GB/s.
STATED_PEAK_GBS = 64.0


def _row(quant: str, size_gib: float, threads: int, model: str = "Llama-3.2-1B") -> dict:
    return {"hardware": "AMD Ryzen 9 7950X", "model": model, "quant": quant, "engine": "ik_llama.cpp", "backend": "cpu",
            "n_devices": "1", "notes": f"llama-bench tg128; size={size_gib} GiB; threads={threads}"}


def _read_gb(system) -> float:
    return system.profile.read_per_token(distinct_expert_fraction(system.arch, 1)) / 1e9


@pytest.mark.parametrize("quant, size_gib", [("BF16", 2.79), ("Q8_0", 1.48)])
def test_the_second_table_is_stored_not_read(quant, size_gib):
    request = row_request(_row(quant, size_gib, 2))
    system, recipe = build_system(request), build_system({**request, "file_gb": None})
    assert recipe.profile.tied and not system.profile.tied
    assert system.weight_bytes == pytest.approx(size_gib * GIB, rel=1e-9)  # the file fits in memory whole
    assert sum(system.profile.per_layer) + system.profile.outside_layers == pytest.approx(system.profile.total, rel=1e-9)
    assert _read_gb(system) == pytest.approx(_read_gb(recipe), rel=0.01)  # one copy, at the recipe's bytes


@pytest.mark.parametrize("quant, size_gib, tok_s", [("Q8_0", 1.48, 46.86), ("BF16", 2.79, 22.97)])
def test_the_rows_read_no_faster_than_the_machine_can(quant, size_gib, tok_s):
    """Discussion 63's 2-thread rows: reading the whole file would take 74.5 / 71.6 GB/s from a
    machine its owner puts at 64 GB/s peak; one copy of the table is 61 / 57 GB/s, under it."""
    system = build_system(row_request(_row(quant, size_gib, 2)))
    assert tok_s * size_gib * GIB / 1e9 > STATED_PEAK_GBS
    assert 0.85 * STATED_PEAK_GBS < tok_s * _read_gb(system) < STATED_PEAK_GBS


def test_a_small_excess_of_a_tied_file_scales_every_tensor():
    """Gemma GGUFs are always tied (llama.cpp convert_hf_to_gguf.py, Gemma3Model): a file a few per
    cent over its recipe (the R9700 rows' Gemma 3 12B UD-Q8_K_XL) is a recipe mismatch, read in full (7% over at Q4_K_M is 0.63 of its head)."""
    request = {"hardware": "Radeon AI PRO R9700", "model": "gemma-3-12b", "quant": "Q4_K_M"}
    recipe = build_system(request)
    scaled = build_system({**request, "file_gb": recipe.weight_bytes * 1.07 / 1e9})
    assert recipe.profile.tied and scaled.profile.tied
    assert _read_gb(scaled) == pytest.approx(_read_gb(recipe) * 1.07, rel=1e-6)

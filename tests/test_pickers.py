"""Issue 14, the engine side of the pickers: the order formats are offered in, the rules of what
runs where (formats, KV cache types, engines) and the engine's reading of a shared format name.
The page gets all of this as data (tests/test_page_pickers.py checks it in the browser)."""

from __future__ import annotations

import pytest

from engine import EngineInputError, estimate
from engine.catalog import CatalogError
from engine.engines import load_engines
from engine.listing import list_catalog
from engine.quant import load_quants
from engine.quant.order import ordered

CARD = {"hardware": "rtx-3090", "model": "llama-3.1-8b"}


def test_formats_are_listed_in_the_order_people_use_them():
    names = [q["name"] for q in list_catalog("quants")]
    assert names[:5] == ["Q4_K_M", "Q5_K_M", "Q6_K", "Q8_0", "MXFP4"]
    # Unsloth's dynamic quants next, every one of them, before the MLX and the rarer GGUF formats.
    ud = [i for i, name in enumerate(names) if name.startswith("UD-")]
    assert names[5] == "UD-Q4_K_XL" and ud == list(range(5, 5 + len(ud)))
    assert names.index("MLX-4bit") < names.index("IQ2_XS") < names.index("Q4_K_R4")
    assert sorted(names) == sorted(q.name for q in load_quants().values())  # none lost, none twice


def test_the_order_list_cannot_go_stale():
    quants = list(load_quants().values())
    with pytest.raises(CatalogError, match="Q9_K"):
        ordered(quants, ["Q4_K_M", "Q9_K"])
    # A name a wildcard after it covers may be missing (a format the catalog adds later).
    assert ordered(quants, ["UD-Q3_K_XL", "UD-*"])[0].name.startswith("UD-")


def test_vllm_loads_gguf_within_its_kernels():
    """docs.vllm.ai GGUF: single-file GGUFs load; its kernels (gguf.py) have no ternary types."""
    result = estimate({**CARD, "quant": "Q4_K_M", "engine": "vllm"})
    assert result["engine"] == "vLLM" and result["decode_tps"] > 0
    with pytest.raises(EngineInputError, match="no GGUF kernels for tq1_0") as info:
        estimate({**CARD, "quant": "TQ1_0", "engine": "vllm"})
    assert info.value.field == "quant"


def test_int4_means_what_the_engine_means_by_it():
    assert estimate({**CARD, "quant": "INT4", "engine": "vllm"})["quant"] == "INT4-W4A16"
    mac = {"hardware": "apple-m3-max-40c-64gb", "model": "llama-3.1-8b", "quant": "INT4", "engine": "ollama"}
    assert estimate(mac)["quant"] == "INT4"  # Ollama's MLX int4 tag
    with pytest.raises(EngineInputError, match="run only on metal"):
        estimate({**CARD, "quant": "INT4"})  # llama.cpp's context: Ollama's MLX tag, Metal only


@pytest.mark.parametrize(
    ("request_", "kv", "message"),
    [
        ({**CARD, "quant": "Q4_K_M"}, "mlx-2bit", "llama.cpp has no mlx-2bit KV cache"),
        ({**CARD, "quant": "Q4_K_M"}, "tq3.5", "llama.cpp has no tq3.5 KV cache"),
        ({**CARD, "quant": "Q4_K_M", "engine": "ollama"}, "q5_1", "Ollama has no q5_1 KV cache"),
        ({**CARD, "quant": "AWQ-4bit", "engine": "vllm"}, "q8_0", "vLLM has no q8_0 KV cache"),
    ],
)
def test_a_kv_cache_type_the_engine_lacks_is_refused(request_, kv, message):
    with pytest.raises(EngineInputError, match=message) as info:
        estimate({**request_, "kv_quant": kv})
    assert info.value.field == "kv_quant"


def test_kv_cache_types_the_engines_offer():
    engines = load_engines()
    assert estimate({**CARD, "quant": "AWQ-4bit", "engine": "vllm", "kv_quant": "fp8"})["decode_tps"] > 0
    mac = {"hardware": "apple-m3-max-40c-64gb", "model": "qwen3-8b", "quant": "MLX-4bit"}
    for engine in ("mlx-lm", "mlx-vlm", "omlx", "vllm-mlx"):
        assert estimate({**mac, "engine": engine, "kv_quant": "tq3.5"})["decode_tps"] > 0
    assert "q8_0" in engines["ik-llama-cpp"].kv_cache_types()  # its base's list
    assert set(engines["other"].kv_cache_types()) >= {"q8_0", "mlx-4bit", "fp8"}  # the catch-all

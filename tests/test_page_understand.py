"""Understand: every number explains itself (the breakdown, memory against capacity, the tier,
the commands that check it), the four charts hold the engine's sweeps, and the use-case
verdicts and suggestions are the engine's, with a working Apply."""

from __future__ import annotations

import re
import shlex

import pytest

from engine.page.view import estimate_view
from pagekit import call_engine, page_view, query, settle, show, value

pytestmark = pytest.mark.browser


def numbers_in(text: str) -> list[float]:
    return [float(n.replace(",", "")) for n in re.findall(r"\d[\d,]*\.?\d*", text)]


def test_breakdown_explains_every_headline_number(app):
    page, _log, _console = app
    view = show(page, query(hw="rtx-3090", prompt=2000, depth=4000))
    result = estimate_view(view)
    e = result["estimate"]
    decode_text = page.inner_text('.results [data-testid="decode-tps"]')
    decode_rows = page.inner_text('[data-testid="breakdown-decode"]')
    for term in ("Weights read per token", "Bandwidth", "KV cache read per token", "Fixed overhead per token", "One decode step"):
        assert term in decode_rows
    assert f"→ {decode_text} tok/s" in decode_rows
    prefill_rows = page.inner_text('[data-testid="breakdown-prefill"]')
    assert "TFLOP" in prefill_rows and page.inner_text('.results [data-testid="prefill-tps"]') in prefill_rows
    assert page.inner_text('.results [data-testid="ttft"]') in prefill_rows
    # The weights figure shown is the engine's, to its displayed precision.
    weights_gb = numbers_in(decode_rows.split("Weights read per token")[1])[0]
    assert weights_gb == pytest.approx(e["breakdown"]["weights_read_gb"], rel=0.01)
    # Memory against capacity: one bar part per term, and the usable limit.
    assert page.locator('[data-testid="memory-stack"] .stack-part').count() == 4
    assert page.locator('[data-testid="memory-stack"] .stack-limit').count() == 1
    # The range and the tier.
    assert e["tier"] in page.inner_text('[data-testid="tier"]').lower()
    assert e["tier"] in page.inner_text('[data-testid="tier-note"]').lower()
    # A llama-bench command for exactly this prompt and depth.
    bench = shlex.split(page.inner_text('[data-testid="commands"] [data-tool="llama-bench"] pre'))
    assert bench[bench.index("-p") + 1] == "2000" and bench[bench.index("-d") + 1] == "4000"
    for anchor in page.eval_on_selector_all(".how", "els => els.map(e => e.getAttribute('href'))"):
        assert page.locator(anchor).count() == 1


def test_breakdown_names_the_batched_step_and_recurrent_layer_costs(app):
    """engine/layerchain.py graphs_off: a step carrying several sequences launched its kernels one
    by one on llama.cpp's CUDA backend before PR 19645 (b8060); the explain panel says what that
    costs (breakdown.batched_s), and says nothing for a current release's batched step, which
    replays its graph, nor for one sequence."""
    page, _log, _console = app
    show(page, query(hw="rtx-4090", batch=2, build=7941))
    assert "Batched step" in page.inner_text('[data-testid="breakdown-decode"]')
    show(page, query(hw="rtx-4090", batch=2))
    assert "Batched step" not in page.inner_text('[data-testid="breakdown-decode"]')
    show(page, query(hw="rtx-4090", batch=1))
    assert "Batched step" not in page.inner_text('[data-testid="breakdown-decode"]')
    assert "Recurrent layers" not in page.inner_text('[data-testid="breakdown-decode"]')
    # A hybrid's gated-DeltaNet layers carry their own kernel chain (breakdown.recurrent_s).
    show(page, query(hw="rtx-4090", model="qwen3.6-35b-a3b"))
    assert "Recurrent layers" in page.inner_text('[data-testid="breakdown-decode"]')


def test_breakdown_names_the_old_omlx_vision_language_path(app):
    """engine/layerchain.py vlm_sync_s: oMLX 0.3.4 synchronised the GPU once per layer on a
    vision-language model (jundot/omlx issue 687); the explain panel says so, and not for a
    text-only model or today's oMLX."""
    page, _log, _console = app
    mac = {"hw": "apple-m3-max-40c-64gb", "quant": "MLX-4bit"}
    show(page, query(**mac, model="qwen3.5-35b-a3b", engine="omlx-legacy"))
    assert "Vision-language path" in page.inner_text('[data-testid="breakdown-decode"]')
    show(page, query(**mac, model="qwen3.5-35b-a3b", engine="omlx"))
    assert "Vision-language path" not in page.inner_text('[data-testid="breakdown-decode"]')
    show(page, query(**mac, model="qwen3-coder-next", engine="omlx-legacy"))
    assert "Vision-language path" not in page.inner_text('[data-testid="breakdown-decode"]')


def test_breakdown_names_flash_attention_off(app):
    """engine/kvcache.py unfused_kv_read_factor: with flash attention off a CUDA card's decode
    attention reads the GQA cache once per query head; the explain panel says so, with the factor,
    and llama-bench's command carries -fa 0."""
    page, _log, _console = app
    view = show(page, query(hw="rtx-4090", depth=8000, fa="off"))
    factor = estimate_view(view)["estimate"]["breakdown"]["kv_unfused_factor"]
    rows = page.inner_text('[data-testid="breakdown-decode"]')
    assert "Flash attention off" in rows
    assert numbers_in(rows.split("Flash attention off")[1])[0] == pytest.approx(factor, abs=0.05)
    bench = shlex.split(page.inner_text('[data-testid="commands"] [data-tool="llama-bench"] pre'))
    assert bench[bench.index("-fa") + 1] == "0"
    show(page, query(hw="rtx-4090", depth=8000))
    assert "Flash attention off" not in page.inner_text('[data-testid="breakdown-decode"]')


@pytest.mark.parametrize("kind", ["context", "models", "hardware", "batch"])
def test_charts_hold_the_engines_sweeps(app, kind):
    page, _log, _console = app
    view = show(page, query(hw="rtx-4090", model="qwen3-14b"))
    page.wait_for_selector(f'[data-testid="chart"][data-kind="{kind}"][data-state="ready"]', timeout=30_000)
    expected = call_engine(f"sweep_{kind}", {"view": view})["points"]
    figure = page.locator(f'[data-testid="chart"][data-kind="{kind}"]')
    assert int(figure.get_attribute("data-points")) == len(expected)
    # The chart drew something (not a blank canvas) ...
    blank = figure.locator("canvas").evaluate("c => { const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data; return !d.some(v => v !== 0); }")
    assert not blank
    # ... and its data table has the engine's numbers, to the precision shown.
    rows = figure.locator("tbody tr")
    assert rows.count() == len(expected)
    column = 2 if kind == "models" else 1
    cells = [rows.nth(i).locator("th, td").all_text_contents() for i in range(rows.count())]
    table_values = sorted(float(c[column].replace(",", "")) for c in cells if c[column] != "—")
    key = "decode_tps"
    engine_values = sorted(p[key] for p in expected if p["ok"])
    assert table_values == pytest.approx(engine_values, rel=0.006, abs=0.006)


def test_verdicts_and_suggestions_are_the_engines_and_apply_works(app):
    page, _log, _console = app
    view = show(page, query(hw="rtx-3060", model="qwen3-14b", quant="Q8_0"))
    advice = call_engine("advice", {"view": view})
    page.wait_for_selector('[data-testid="verdicts"] li')
    levels = dict(page.eval_on_selector_all('[data-testid="verdicts"] li', "els => els.map(e => [e.dataset.case, e.dataset.level])"))
    assert levels == {v["id"]: v["level"] for v in advice["verdicts"] + advice["waits"]}
    suggestions = page.locator('[data-testid="suggestions"] li')
    assert suggestions.count() == len(advice["suggestions"]) >= 1
    first = advice["suggestions"][0]
    suggestions.first.locator("button").click()
    page.wait_for_function("(patch) => Object.entries(patch).every(([k, v]) => window.__tokfeel.current()?.view[k] === v)", arg=first["patch"])
    settle(page)
    assert all(page_view(page)[k] == v for k, v in first["patch"].items())
    assert value(page, '.results [data-testid="decode-tps"]') == pytest.approx(first["decode_tps"], rel=1e-6)

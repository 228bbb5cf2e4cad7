"""Advanced › System RAM holds › "as llama.cpp flags say": -ngl, --n-cpu-moe and -ot typed on the
page reach the engine, the URL, the explain panel's Placement row and the check commands."""

from __future__ import annotations

import shlex

import pytest

from engine.offload import ngl_for_fraction
from engine.page.view import estimate_view
from pagekit import page_view, query, settle, show, value

pytestmark = pytest.mark.browser

MOE_VIEW = {"hw": "rx-7900-xt", "model": "gpt-oss-20b", "quant": "MXFP4"}


def open_advanced(page):
    page.evaluate("() => { document.querySelector('#advanced').open = true; }")


def bench_flags(page) -> list[str]:
    return shlex.split(page.inner_text('[data-testid="commands"] [data-tool="llama-bench"] pre'))


def test_placement_flags_on_the_page(app):
    page, _log, _console = app
    show(page, query(**MOE_VIEW))
    open_advanced(page)
    # The flag fields show only for offload=flags.
    assert page.locator('[data-testid="ncmoe-input"]').is_hidden()
    before = value(page, '.results [data-testid="decode-tps"]')
    assert "Placement" not in page.inner_text('[data-testid="breakdown-memory"]')

    page.select_option('[data-testid="offload-select"]', "flags")
    page.fill('[data-testid="ncmoe-input"]', "12")
    page.fill('[data-testid="ot-input"]', r"blk\.(0|1)\.attn_.*=CPU")
    page.dispatch_event('[data-testid="ot-input"]', "change")
    page.wait_for_function("() => location.search.includes('ncmoe=12') && location.search.includes('ot=')")
    settle(page)
    view = page_view(page)
    assert (view["offload"], view["ncmoe"], view["ot"]) == ("flags", 12, r"blk\.(0|1)\.attn_.*=CPU")
    expected = estimate_view(view)
    assert expected["request"]["n_cpu_moe"] == 12
    # The engine's numbers, slower than with everything on the card.
    after = value(page, '.results [data-testid="decode-tps"]')
    assert after == pytest.approx(expected["estimate"]["decode_tps"], rel=1e-9) and after < before
    # The explain panel names the placement as stated.
    memory_rows = page.inner_text('[data-testid="breakdown-memory"]')
    assert "Placement" in memory_rows and r"--n-cpu-moe 12 -ot blk\.(0|1)\.attn_.*=CPU" in memory_rows
    # The check commands and the CLI line carry the flags.
    bench = bench_flags(page)
    assert bench[bench.index("-ncmoe") + 1] == "12" and bench[bench.index("-ot") + 1] == r"blk\.(0|1)\.attn_.*=CPU"
    cli = shlex.split(page.inner_text('[data-testid="cli-line"]'))
    assert cli[cli.index("--n-cpu-moe") + 1] == "12" and cli[cli.index("--override-tensor") + 1] == r"blk\.(0|1)\.attn_.*=CPU"

    # -ngl: the last N blocks on the card.
    page.fill('[data-testid="ngl-input"]', "10")
    page.wait_for_function("() => location.search.includes('ngl=10')")
    settle(page)
    assert bench_flags(page)[bench_flags(page).index("-ngl") + 1] == "10"
    assert "-ngl 10" in page.inner_text('[data-testid="breakdown-memory"]')

    # A pattern the page cannot read as llama.cpp does is refused with the engine's reason.
    page.fill('[data-testid="ot-input"]', "(?i)EXPS=CPU")
    page.dispatch_event('[data-testid="ot-input"]', "change")
    page.wait_for_function("() => document.body.innerText.includes('std::regex')")
    show(page)


def test_share_of_layers_is_the_ngl_the_page_prints(app):
    """The GPU-layers share (offload=layers) is llama.cpp -ngl round(share x layers) in the
    engine's placement, the check commands, the explain panel and the CLI line alike (one
    conversion, engine/offload.py ngl_for_fraction); the token embedding llama.cpp keeps in
    system RAM is named, not counted as an offload."""
    page, _log, _console = app
    show(page, query(hw="rtx-4090", model="gemma-3-27b", quant="Q4_K_M", offload="layers", gpu_pct=40))
    view = page_view(page)
    expected = estimate_view(view)["estimate"]
    layers = expected["model"]["layers"]
    ngl = ngl_for_fraction(layers, 0.4)
    assert ngl == round(0.4 * layers) == expected["memory"]["n_gpu_layers"]
    assert value(page, '.results [data-testid="decode-tps"]') == pytest.approx(expected["decode_tps"], rel=1e-9)
    bench = bench_flags(page)
    assert bench[bench.index("-ngl") + 1] == str(ngl)
    server = shlex.split(page.inner_text('[data-testid="commands"] [data-tool="llama-server"] pre'))
    assert server[server.index("-ngl") + 1] == str(ngl)
    memory_rows = page.inner_text('[data-testid="breakdown-memory"]')
    assert f"(-ngl {ngl})" in memory_rows and "token embedding" in memory_rows
    cli = shlex.split(page.inner_text('[data-testid="cli-line"]'))
    assert float(cli[cli.index("--gpu-layers") + 1]) == 0.4
    # Everything on the card: only the embedding is in system RAM, and the page says so.
    show(page, query(hw="rtx-4090", model="gemma-3-27b", quant="Q4_K_M"))
    memory_rows = page.inner_text('[data-testid="breakdown-memory"]')
    assert "the token embedding" in memory_rows and "-ngl" not in memory_rows
    assert bench_flags(page)[bench_flags(page).index("-ngl") + 1] == "99"


def test_the_micro_batch_on_the_page(app):
    """Advanced › Micro-batch (llama.cpp -ub) and Logical batch (-b): with the experts in system
    RAM, -ub 2048 copies them to the card a quarter as often, so prefill is faster; the URL, the
    explain panel's Micro-batches row, the check commands and the CLI line carry them."""
    page, _log, _console = app
    show(page, query(**MOE_VIEW, offload="experts", prompt=4096))
    open_advanced(page)
    before = value(page, '.results [data-testid="prefill-tps"]')
    assert "8 of up to 512 tokens" in page.inner_text('[data-testid="breakdown-prefill"]')

    page.fill('[data-testid="nb-input"]', "4096")
    page.press('[data-testid="nb-input"]', "Tab")
    page.fill('[data-testid="ub-input"]', "2048")
    page.press('[data-testid="ub-input"]', "Tab")
    page.wait_for_function("() => location.search.includes('ub=2048') && location.search.includes('nb=4096')")
    settle(page)
    view = page_view(page)
    expected = estimate_view(view)
    assert (expected["request"]["ubatch"], expected["request"]["nbatch"]) == (2048, 4096)
    after = value(page, '.results [data-testid="prefill-tps"]')
    assert after == pytest.approx(expected["estimate"]["prefill_tps"], rel=1e-9) and after > 2 * before
    assert "2 of up to 2,048 tokens" in page.inner_text('[data-testid="breakdown-prefill"]')
    bench = bench_flags(page)
    assert bench[bench.index("-ub") + 1] == "2048" and bench[bench.index("-b") + 1] == "4096"
    cli = shlex.split(page.inner_text('[data-testid="cli-line"]'))
    assert cli[cli.index("--ubatch-size") + 1] == "2048" and cli[cli.index("--batch-size") + 1] == "4096"

    # Out of range: the field's own message, not a stale number.
    page.fill('[data-testid="ub-input"]', "0")
    page.press('[data-testid="ub-input"]', "Tab")
    page.wait_for_function("() => document.querySelector('#form-error').innerText.includes('micro-batch')")
    show(page)

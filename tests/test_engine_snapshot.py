"""The engine's memory snapshot (site/js/snapshot.js): a first visit keeps the booted engine's
memory, a second visit restores it instead of booting CPython and importing the engine, and the
restored engine gives the CLI's numbers. A snapshot that cannot be restored is dropped and the
engine boots as on a first visit. (How much faster that is: scripts/bench_page.py.)"""

from __future__ import annotations

import pytest

from conftest import BOOT_TIMEOUT_MS
from engine.page.query import view_from_query
from engine.page.view import estimate_view
from pagekit import settle

pytestmark = pytest.mark.browser

FIRST = "?hw=rtx-3090&prompt=2000"
#: A view the first visit never computed (another device, model and format), so the restored
#: engine loads nothing from the snapshot's caches for it.
OTHER = "?hw=apple-m4-max-40c-128gb&model=qwen3-30b-a3b&quant=Q8_0&prompt=12000"
CACHE = "tokfeel.snapshots"


def diagnostics(page) -> dict:
    workers = [w for w in page.workers if w.url.endswith("/worker.js")]
    assert len(workers) == 1, [w.url for w in page.workers]
    return workers[0].evaluate("() => self.__tokfeelDiagnostics()")


def visit(context, url: str):
    page = context.new_page()
    page.goto(url)
    page.wait_for_selector('[data-testid="engine-status"][data-state="ready"]', timeout=BOOT_TIMEOUT_MS)
    settle(page)
    return page


def decode_shown(page) -> float:
    return float(page.get_attribute('.results [data-testid="decode-tps"]', "data-value"))


def expected_decode(query: str) -> float:
    return estimate_view(view_from_query(query))["estimate"]["decode_tps"]


def wait_until_kept(page) -> None:
    for _ in range(240):
        if diagnostics(page)["snapshot"] == "kept":
            return
        page.wait_for_timeout(250)
    raise AssertionError(f"no snapshot kept: {diagnostics(page)}")


def test_a_second_visit_restores_the_booted_engine_and_computes_like_the_cli(browser, site_url):
    context = browser.new_context()
    try:
        first = visit(context, site_url + FIRST)
        assert diagnostics(first)["snapshot"] in ("none", "kept")
        wait_until_kept(first)
        # The heap had grown past the runtime's initial memory before the snapshot (the catalogs
        # are loaded by then): the case that failed with "offset is out of bounds".
        assert diagnostics(first)["wasmHeapBytes"] > 31_457_280
        assert decode_shown(first) == pytest.approx(expected_decode(FIRST), rel=1e-9)
        first.close()

        second = visit(context, site_url + FIRST)
        state = diagnostics(second)
        assert state["snapshot"] == "restored", state
        assert decode_shown(second) == pytest.approx(expected_decode(FIRST), rel=1e-9)
        # Another set-up, computed by the restored engine.
        second.evaluate("(q) => { history.pushState(null, '', q); dispatchEvent(new PopStateEvent('popstate')); }", OTHER)
        settle(second)
        assert decode_shown(second) == pytest.approx(expected_decode(OTHER), rel=1e-9)
        second.close()

        # A snapshot that cannot be restored (damaged bytes under the same key) is dropped: the
        # engine boots afresh, computes, and keeps a good snapshot again.
        probe = context.new_page()
        probe.goto(site_url + "favicon.svg")
        damaged = probe.evaluate(
            """async (name) => { const cache = await caches.open(name); const keys = await cache.keys();
                 for (const k of keys) await cache.put(k, new Response(new Uint8Array(4096).fill(7)));
                 return keys.length; }""",
            CACHE,
        )
        assert damaged == 1
        probe.close()
        third = visit(context, site_url + OTHER)
        assert diagnostics(third)["snapshot"] in ("none", "kept")
        assert decode_shown(third) == pytest.approx(expected_decode(OTHER), rel=1e-9)
        wait_until_kept(third)
    finally:
        context.close()

"""A soak in the browser (issue 16): picker changes, streams and races in one page retain nothing
per interaction. Measured after a forced garbage collection, with the DevTools protocol: the DOM
nodes and JS event listeners the page holds (Memory.getDOMCounters), the detached DOM nodes and
the JS heap's objects apart from compiled code (HeapProfiler's heap snapshot; V8 keeps adding
optimised machine code as functions get hot, which is no leak and is why the page's raw JS heap
still grows a little over a long session: README "Speed").

The probe is checked too: a page that keeps every lane it replaces (the leak a race would have
if something held its old lanes) must fail the same bounds."""

from __future__ import annotations

import pytest

from conftest import BOOT_TIMEOUT_MS
from pagekit import heap_counts, settle

pytestmark = pytest.mark.browser

#: Picker changes cycled through (as scripts/bench_page.py's soak).
CHANGES = ["?hw=rtx-3090", "?hw=rtx-3090&prompt=2000", "?hw=apple-m4-max-40c-128gb&model=qwen3-32b", "?model=qwen3-30b-a3b&quant=Q8_0", "?answer=document", "?batch=8"]
LANES = "&lane1=rtx-3090****&lane2=apple-m4-max-40c-128gb****"
SHOW = "(url) => { history.pushState(null, '', url); dispatchEvent(new PopStateEvent('popstate')); }"
#: Growth allowed between the warmed-up page and after the rounds.
BOUND = 0.10
#: Detached DOM nodes allowed to appear (a node or two may be held by a pending frame).
DETACHED_SLACK = 40


def one_round(page, base: str, races: int = 1, streams: int = 2) -> None:
    """Every picker change once, `streams` streams of the main answer, `races` races of three lanes."""
    for i, change in enumerate(CHANGES):
        page.evaluate(SHOW, base + change)
        settle(page)
        if i < streams:
            page.click('[data-testid="run"]')
            page.wait_for_timeout(400)
    for _ in range(races):
        page.evaluate(SHOW, base + "?hw=rtx-5090" + LANES)
        settle(page)
        page.click('[data-testid="race-run"]')
        page.wait_for_timeout(600)
    page.evaluate(SHOW, base + "?hw=rtx-3090")
    settle(page)
    page.wait_for_timeout(300)


def problems(before: dict, after: dict) -> list[str]:
    out = []
    for key in ("nodes", "listeners", "js_bytes"):
        if after[key] > before[key] * (1 + BOUND):
            out.append(f"{key} {before[key]} -> {after[key]}")
    if after["detached"] > before["detached"] + DETACHED_SLACK:
        out.append(f"detached DOM nodes {before['detached']} -> {after['detached']} ({after['detached_kinds']})")
    return out


def test_streams_races_and_picker_changes_retain_nothing_per_interaction(browser, site_url):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        page = context.new_page()
        page.goto(site_url)
        page.wait_for_selector('[data-testid="engine-status"][data-state="ready"]', timeout=BOOT_TIMEOUT_MS)
        settle(page)
        cdp = context.new_cdp_session(page)
        one_round(page, site_url)  # every code path has run once (libraries loaded, charts made)
        before = heap_counts(cdp)
        for _ in range(2):
            one_round(page, site_url)
        after = heap_counts(cdp)
        assert not problems(before, after), (before, after)

        # The probe catches a leak: keep every race lane the page replaces from here on.
        page.evaluate("""() => { window.__kept = [];
          new MutationObserver((records) => { for (const r of records) for (const n of r.removedNodes) window.__kept.push(n); })
            .observe(document.getElementById('lanes'), {childList: true}); }""")
        for _ in range(2):
            one_round(page, site_url, races=3, streams=0)
        leaking = heap_counts(cdp)
        assert problems(after, leaking), (after, leaking)
    finally:
        context.close()

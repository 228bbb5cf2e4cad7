"""Share and polish: the whole state in the URL (a fresh browser reproduces the view), the
copy-link button, dark mode, the phone layout, keyboard use, and an axe-core accessibility scan
with no serious or critical violations."""

from __future__ import annotations

import pytest

from conftest import BOOT_TIMEOUT_MS
from engine.page.lanes import lane_views
from engine.page.view import estimate_view
from pagekit import SHOW_URL, axe_violations, page_view, query, settle, show, value

pytestmark = pytest.mark.browser

#: A view that sets a little of everything.
SHARED = query(hw="rtx-3090", model="qwen3-8b", quant="Q5_K_M", prompt=2000, answer="code", depth=4000, kv="q8_0", batch=2, think=300, lane1="apple-m4-max-40c-128gb****")


def open_page(browser, site_url, q="", **context_options):
    context = browser.new_context(**context_options)
    page = context.new_page()
    errors = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on("console", lambda message: message.type == "error" and errors.append(message.text))
    page.goto(site_url + q)
    page.wait_for_selector('[data-testid="engine-status"][data-state="ready"]', timeout=BOOT_TIMEOUT_MS)
    return context, page, errors


def test_a_shared_link_reproduces_the_view_on_a_phone(browser, site_url):
    """A fresh browser (390 px wide, dark) opens the link: same controls, same numbers, the race
    lane, no horizontal scrolling, and no serious accessibility violations."""
    context, page, errors = open_page(browser, site_url, SHARED, viewport={"width": 390, "height": 844}, color_scheme="dark", is_mobile=True, has_touch=True)
    try:
        settle(page)
        view = page_view(page)
        expected = estimate_view(view)["estimate"]
        assert page.input_value('[data-testid="hardware-select"]') == "rtx-3090"
        assert page.input_value('[data-testid="quant-select"]') == "Q5_K_M"
        assert page.input_value('[data-testid="prompt-tokens"]') == "2000"
        assert page.input_value('[data-testid="depth-tokens"]') == "4000"
        assert page.get_attribute("#advanced", "open") is not None
        assert value(page, '.results [data-testid="decode-tps"]') == pytest.approx(expected["decode_tps"], rel=1e-9)
        assert value(page, '.results [data-testid="ttft"]') == pytest.approx(expected["ttft_s"], rel=1e-9)
        assert page.locator('[data-testid="lane"]').count() == len(lane_views(view)) == 2
        assert page.evaluate("() => document.documentElement.scrollWidth") <= 390
        assert page.evaluate("() => getComputedStyle(document.body).backgroundColor") != "rgb(255, 255, 255)"
        assert axe_violations(page) == []
        assert errors == []
    finally:
        context.close()


def test_a_bad_link_is_reported_and_defaults_are_used(app):
    page, _log, _console = app
    show(page, query(hw="rtx-3090"))
    page.evaluate(SHOW_URL, page.url.split("?")[0] + "?hw=no-such-card&prompt=-5&zzz=1")
    page.wait_for_selector("#url-notice:not([hidden])")
    settle(page)
    notice = page.inner_text("#url-notice")
    assert "hw (unknown)" in notice and "prompt" in notice and "zzz (unknown setting)" in notice
    assert page.input_value('[data-testid="hardware-select"]') == "rtx-4090"
    show(page)


def test_copy_link_puts_the_view_on_the_clipboard(app, site_url):
    page, _log, _console = app
    show(page, query(hw="rtx-5090", prompt=150))
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=site_url.rstrip("/"))
    page.click('[data-testid="copy-link"]')
    page.wait_for_function("() => document.querySelector('[data-testid=\"copy-link\"]').dataset.copied")
    assert page.get_attribute('[data-testid="copy-link"]', "data-copied") == "true"
    assert page.evaluate("() => navigator.clipboard.readText()") == page.url
    show(page)


def test_theme_toggle_switches_between_light_and_dark(app):
    page, _log, _console = app
    show(page)
    toggle = '[data-testid="theme-toggle"]'
    background = "() => getComputedStyle(document.body).backgroundColor"
    seen = {}
    for _ in range(3):
        page.click(toggle)
        seen[page.evaluate("() => document.documentElement.dataset.theme || 'auto'")] = page.evaluate(background)
    assert set(seen) == {"light", "dark", "auto"}
    assert seen["light"] != seen["dark"]
    assert page.evaluate("() => localStorage.getItem('tokfeel-theme')") is None  # back to auto


def test_no_serious_accessibility_violations_light_and_dark(app):
    """axe-core on the full page after an answer and a race have streamed (long text makes
    regions scroll), with every details panel open, in both themes."""
    page, _log, _console = app
    show(page, query(hw="rtx-5090", prompt=20, lane1="rtx-4090****"))
    page.click('.player [data-testid="run"]')
    page.click('[data-testid="race-run"]')
    page.wait_for_function("() => [...document.querySelectorAll('[data-testid=\"stream\"]')].every(e => e.dataset.state === 'done')", timeout=60_000)
    page.evaluate("() => document.querySelectorAll('details').forEach(d => d.open = true)")
    page.wait_for_selector('[data-testid="chart"][data-state="ready"]')
    try:
        for theme in ("light", "dark"):
            page.evaluate("(t) => { document.documentElement.dataset.theme = t; document.dispatchEvent(new CustomEvent('tokfeel:theme')); }", theme)
            assert axe_violations(page) == [], theme
    finally:
        page.evaluate("() => { delete document.documentElement.dataset.theme; document.querySelectorAll('details').forEach(d => d.open = false); }")
        show(page)


def test_keyboard_reaches_and_runs_everything(app):
    page, _log, _console = app
    show(page)
    # The first element in the tab order is the skip link, shown when focused.
    first = page.evaluate("() => [...document.querySelectorAll('a[href], button, input, select, textarea, [tabindex]')].find(e => e.tabIndex >= 0).className")
    assert first == "skip"
    page.focus(".skip")
    assert page.evaluate("() => document.querySelector('.skip').getBoundingClientRect().left") >= 0
    page.keyboard.press("Enter")
    page.wait_for_function("() => location.hash === '#results'")
    # Tabbing from the top reaches the pickers and the Run button, in reading order.
    page.evaluate("() => document.querySelector('#hardware-search').focus()")
    order = []
    for _ in range(60):
        page.keyboard.press("Tab")
        order.append(page.evaluate("() => document.activeElement.dataset.testid || document.activeElement.id"))
        if order[-1] == "run":
            break
    assert order.index("hardware-select") < order.index("model-select") < order.index("quant-select") < order.index("prompt-tokens") < order.index("run")
    page.keyboard.press("Enter")
    page.wait_for_function("() => document.querySelector('.player [data-testid=\"stream\"]').dataset.state !== 'idle'")
    # A select changes with the arrow keys and recomputes.
    page.focus('[data-testid="answer-select"]')
    page.keyboard.press("ArrowDown")
    page.wait_for_function("() => location.search.includes('answer=')")
    settle(page)
    show(page)

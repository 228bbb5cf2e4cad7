"""The feel, first (issue 13): the first screen holds the choice, the numbers and Run; the answer
box follows the newest text unless the reader scrolls up; answers render as Markdown; Run
becomes Stop; a long wait can be skipped and says how long it was; a change before the engine
is ready never shows another set-up's numbers as this one's. Expected values come from the
engine in CPython."""

from __future__ import annotations

import re

import pytest

from conftest import BOOT_TIMEOUT_MS
from engine.page.view import estimate_view
from pagekit import query, show

pytestmark = pytest.mark.browser

STREAM = '.player [data-testid="stream"]'
RUN = '[data-testid="run"]'
#: Where the newest rendered text is against the answer box: its last line's rectangle and the
#: box's visible area, both in viewport pixels.
NEWEST = """() => {
  const box = document.querySelector('.player [data-testid="stream"]');
  const walker = document.createTreeWalker(box, NodeFilter.SHOW_TEXT, (n) => n.textContent.trim() ? NodeFilter.FILTER_ACCEPT : NodeFilter.FILTER_SKIP);
  let last = null;
  while (walker.nextNode()) last = walker.currentNode;
  if (!last) return null;
  const range = document.createRange();
  range.selectNodeContents(last);
  const rects = range.getClientRects();
  const line = rects[rects.length - 1];
  const area = box.getBoundingClientRect();
  return {top: area.top + box.clientTop, bottom: area.top + box.clientTop + box.clientHeight, lineTop: line.top, lineBottom: line.bottom,
          tokens: Number(box.dataset.tokens), scrollTop: box.scrollTop, scrollable: box.scrollHeight > box.clientHeight};
}"""


def tokens_shown(page) -> int:
    return int(page.get_attribute(STREAM, "data-tokens"))


def wait_tokens(page, at_least: int, timeout: int = 60_000) -> None:
    page.wait_for_function(f"(n) => Number(document.querySelector('{STREAM}').dataset.tokens) >= n", arg=at_least, timeout=timeout)


def stop_if_playing(page) -> None:
    if page.get_attribute(RUN, "data-state") == "playing":
        page.click(RUN)


@pytest.mark.parametrize("viewport", [{"width": 390, "height": 844}, {"width": 1440, "height": 900}], ids=["phone", "desktop"])
def test_the_first_screen_holds_the_choice_the_numbers_and_run(browser, site_url, viewport):
    context = browser.new_context(viewport=viewport, is_mobile=viewport["width"] < 500, has_touch=viewport["width"] < 500)
    try:
        page = context.new_page()
        page.goto(site_url)
        # Measured once the engine has answered (and said what it detected of this computer).
        page.wait_for_selector('[data-testid="engine-status"][data-state="ready"]', timeout=BOOT_TIMEOUT_MS)
        page.wait_for_function("() => window.__tokfeel.settled()", timeout=60_000)
        assert page.evaluate("() => scrollY") == 0
        for testid in ("hardware-select", "model-select", "quant-select", "decode-tps", "ttft", "fit", "run"):
            box = page.locator(f'[data-testid="{testid}"]').first.bounding_box()
            assert box and box["y"] >= 0 and box["y"] + box["height"] <= viewport["height"], (testid, box)
            assert box["x"] >= 0 and box["x"] + box["width"] <= viewport["width"], (testid, box)
        assert page.evaluate("() => document.documentElement.scrollWidth") <= viewport["width"]
    finally:
        context.close()


def test_the_answer_box_follows_the_newest_token_until_the_reader_scrolls_up(app):
    page, _log, _console = app
    view = show(page, query(hw="rtx-3090", answer="document", prompt=20))
    total = len(estimate_view(view)["estimate"]["schedule"]["arrival_s"])
    assert total >= 1500
    page.click(RUN)
    try:
        for at in (300, 650, 1000):
            wait_tokens(page, at)
            page.wait_for_timeout(50)
            where = page.evaluate(NEWEST)
            # The newest line is inside the box's visible area (a pixel of rounding allowed).
            assert where["top"] - 1 <= where["lineTop"] and where["lineBottom"] <= where["bottom"] + 1, (at, where)
        assert where["scrollable"], "by now the answer is taller than its box"
        # The reader scrolls up: the box stays where they put it while tokens keep coming.
        page.eval_on_selector(STREAM, "(box) => { box.scrollTop = 0; }")
        before = tokens_shown(page)
        page.wait_for_timeout(800)
        where = page.evaluate(NEWEST)
        assert where["tokens"] > before, "the stream stopped"
        assert where["scrollTop"] == 0
        assert where["lineTop"] > where["bottom"], "the newest text should be below the visible area now"
        assert page.is_visible("#follow")
        # Back at the bottom, it follows again.
        page.eval_on_selector(STREAM, "(box) => { box.scrollTop = box.scrollHeight; }")
        page.wait_for_timeout(600)
        where = page.evaluate(NEWEST)
        assert where["top"] - 1 <= where["lineTop"] and where["lineBottom"] <= where["bottom"] + 1, where
    finally:
        stop_if_playing(page)


def test_answers_render_as_markdown_with_no_literal_markers(app):
    page, _log, _console = app
    show(page, query(hw="rtx-5090", answer="document", prompt=20))
    page.click(RUN)
    try:
        # Mid-stream (an open ** or a # still being written must not show) ...
        for at in (40, 300, 900):
            wait_tokens(page, at)
            text = page.inner_text(STREAM)
            assert "**" not in text, at
            assert not [line for line in text.splitlines() if line.lstrip().startswith("#")], at
        page.wait_for_function(f"() => document.querySelector('{STREAM}').dataset.state === 'done'", timeout=60_000)
    finally:
        stop_if_playing(page)
    # ... and at the end: headings and bold text are elements, and nothing unsafe came through.
    text = page.inner_text(STREAM)
    assert "**" not in text and not re.search(r"(?m)^\s*#", text)
    assert page.locator(f"{STREAM} h1").count() == 1
    assert page.locator(f"{STREAM} h2").count() >= 3
    assert page.locator(f"{STREAM} strong").count() >= 1
    assert page.locator(f"{STREAM} [style], {STREAM} script, {STREAM} img").count() == 0
    assert tokens_shown(page) >= 1500


def test_run_becomes_stop_while_playing_and_stop_ends_the_stream(app):
    page, _log, _console = app
    show(page, query(hw="rtx-3060", answer="document", prompt=20))
    assert page.get_attribute(RUN, "data-state") == "idle"
    assert page.inner_text(RUN) == "Run"
    page.click(RUN)
    assert page.get_attribute(RUN, "data-state") == "playing"
    assert page.inner_text(RUN) == "Stop"
    wait_tokens(page, 20)
    page.click(RUN)
    assert page.get_attribute(RUN, "data-state") == "idle"
    assert page.inner_text(RUN) == "Run"
    assert page.get_attribute(STREAM, "data-state") == "idle"
    stopped = tokens_shown(page)
    page.wait_for_timeout(600)
    assert tokens_shown(page) == stopped, "tokens kept arriving after Stop"
    assert "Stopped after" in page.inner_text("#stream-status")
    # A finished stream gives Run back too.
    show(page, query(hw="rtx-5090", prompt=20))
    page.click(RUN)
    page.wait_for_function(f"() => document.querySelector('{STREAM}').dataset.state === 'done'", timeout=30_000)
    assert page.get_attribute(RUN, "data-state") == "idle"


def test_skip_the_wait_jumps_the_prompt_and_says_how_long_it_was(app):
    page, _log, _console = app
    view = show(page, query(hw="apple-m4-max-40c-128gb", model="llama-3.1-70b", prompt=50000))
    estimate = estimate_view(view)["estimate"]
    assert estimate["ttft_s"] > 30, "pick a set-up with a long wait"
    page.click(RUN)
    try:
        skip = page.locator('[data-testid="skip"]')
        skip.wait_for(state="visible")
        assert "Reading" in page.inner_text("#stream-status")
        # The wait's total is on screen before it is over.
        total = float(page.get_attribute('[data-testid="stream-clock"]', "data-value"))
        assert total < 5
        assert re.search(r"of \d", page.inner_text('[data-testid="stream-clock"]'))
        skip.click()
        wait_tokens(page, 1, timeout=5_000)
        status = page.inner_text("#stream-status")
        assert "Skipped" in status and "reading the prompt" in status
        assert float(page.get_attribute('[data-testid="stream-clock"]', "data-value")) >= estimate["ttft_s"]
        assert page.is_hidden('[data-testid="skip"]')
    finally:
        stop_if_playing(page)


def test_a_link_to_a_section_scrolls_to_it(app):
    page, _log, _console = app
    show(page, query())
    page.evaluate("() => { location.hash = 'measure'; }")
    # Scrolled to it: the section is in view (the last one cannot reach the top of the window).
    page.wait_for_function("() => { const r = document.getElementById('measure').getBoundingClientRect(); return scrollY > 0 && r.top >= -2 && Math.min(r.bottom, innerHeight) - r.top > 200; }")
    page.evaluate("() => { history.replaceState(null, '', location.pathname + location.search); scrollTo(0, 0); }")


def test_a_change_before_the_engine_is_ready_strikes_out_the_built_numbers(browser, site_url):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    # Hold the engine's worker script back: the engine stays "starting" for this test.
    context.route(re.compile(r".*/js/worker\.js$"), lambda route: None)
    try:
        page = context.new_page()
        page.goto(site_url)
        page.wait_for_function("() => document.querySelector('.results [data-testid=\"decode-tps\"]').dataset.value !== ''")
        built = page.inner_text('.results [data-testid="decode-tps"]')
        page.select_option('[data-testid="hardware-select"]', "rtx-3060")
        results = page.locator(".results")
        assert results.get_attribute("data-stale") == "true"
        # The build's number, struck out, with no value behind it; the line names the new choice.
        assert page.inner_text('.results [data-testid="decode-tps"]') == built
        assert page.get_attribute('.results [data-testid="decode-tps"]', "data-value") == ""
        assert page.evaluate("() => getComputedStyle(document.querySelector('.results [data-testid=\"decode-tps\"]')).textDecorationLine") == "line-through"
        assert "RTX 3060" in page.inner_text("#setup-line")
        assert page.inner_text('[data-testid="tier"]') == ""
        assert page.get_attribute("#membar", "data-verdict") == ""
        assert "computing when the engine is ready" in page.inner_text('[data-testid="pending-note"]')
        assert page.is_disabled(RUN)
        page.wait_for_function("() => /\\(([1-9][0-9]*) s so far\\)/.test(document.querySelector('[data-testid=\"pending-note\"]').textContent)", timeout=5_000)
        # Back to the set-up the build computed: its numbers, current again.
        page.select_option('[data-testid="hardware-select"]', "rtx-4090")
        assert results.get_attribute("data-stale") == "false"
        assert page.get_attribute('.results [data-testid="decode-tps"]', "data-value") != ""
        assert page.is_hidden('[data-testid="pending-note"]')
    finally:
        context.close()


def test_the_feel_first_page_boots_and_streams_on_a_phone(browser, site_url):
    """The phone layout is a layout, not a different page: the engine answers and Run plays."""
    context = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
    try:
        page = context.new_page()
        page.goto(site_url + query(prompt=20))
        page.wait_for_selector('[data-testid="engine-status"][data-state="ready"]', timeout=BOOT_TIMEOUT_MS)
        page.wait_for_function("() => window.__tokfeel.settled()", timeout=60_000)
        page.tap(RUN)
        wait_tokens(page, 5)
        assert page.get_attribute(RUN, "data-state") == "playing"
        page.tap(RUN)
    finally:
        context.close()

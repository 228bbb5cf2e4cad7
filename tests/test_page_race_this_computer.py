"""This computer as the reference of the race (issue 19): a lane running this computer's device
(view field me) is labelled so, every lane's lane-ratio is its decode over this computer's, and the
headline says the same; expected values come from the engine in CPython."""

from __future__ import annotations

import pytest

from engine.page.lanes import estimate_lane
from engine.page.view import estimate_view
from pagekit import query, settle, show

pytestmark = pytest.mark.browser

RATIOS_READY = "() => { const r = [...document.querySelectorAll('[data-testid=\"lane\"] [data-testid=\"lane-ratio\"]')]; return r.length > 0 && r.every(n => n.dataset.value !== ''); }"


def ratios(page) -> list[dict]:
    return page.evaluate("""() => [...document.querySelectorAll('[data-testid="lane"]')].map(l => ({
      me: l.dataset.thisComputer, title: l.querySelector('h3').textContent,
      value: l.querySelector('[data-testid="lane-ratio"]').dataset.value, text: l.querySelector('[data-testid="lane-ratio"]').textContent }))""")


def test_a_race_with_a_this_computer_lane_shows_each_candidates_ratio_to_it(app):
    page, _log, _console = app
    lanes = ["rtx-3060*****1", "rtx-5090*****1"]
    q = query(hw="rtx-4090", me="rtx-3060", lane1=lanes[0], lane2=lanes[1])
    try:
        view = show(page, q)
        page.wait_for_function(RATIOS_READY, timeout=60_000)
        settle(page)
        shown = ratios(page)
        base = estimate_lane({"view": view, "lane": lanes[0]})["estimate"]["decode_tps"]
        expected = [estimate_view(view)["estimate"]["decode_tps"] / base, 1.0, estimate_lane({"view": view, "lane": lanes[1]})["estimate"]["decode_tps"] / base]
        assert [float(s["value"]) for s in shown] == pytest.approx(expected, rel=1e-9)
        assert [s["me"] for s in shown] == ["false", "true", "false"]
        assert "this computer" in shown[1]["title"]
        assert shown[2]["text"] == f"{expected[2]:.1f}x this computer" and expected[2] > 1
        headline = page.locator('[data-testid="decode-ratio"]')
        assert float(headline.get_attribute("data-value")) == pytest.approx(expected[0], rel=1e-9)
        assert f"{expected[0]:.1f}x this computer" in headline.inner_text()
        # Without a lane of its own, this computer is still the reference, one click from racing.
        show(page, query(hw="rtx-4090", me="rtx-3060", lane1=lanes[1]))
        page.wait_for_function(RATIOS_READY, timeout=60_000)
        shown = ratios(page)
        assert float(shown[1]["value"]) == pytest.approx(expected[2], rel=1e-9)
        assert page.locator('[data-testid="add-this-computer"]').is_visible()
    finally:
        show(page)
    assert page.locator('[data-testid="decode-ratio"]').is_hidden()


def test_a_rate_measured_on_this_computer_travels_in_the_link(app):
    """me_run (written by Measure your own) shows in the this-computer lane, labelled measured, when
    the lane runs the measured model and weights; lane-decode stays the prediction; a bad rate in a
    link is refused like any bad setting."""
    page, _log, _console = app
    lane = "rtx-3060*****1"
    measured_lane = 'const l = document.querySelectorAll(\'[data-testid="lane"]\')[1]; const m = l.querySelector(\'[data-testid="lane-measured"]\');'
    try:
        view = show(page, query(hw="rtx-4090", me="rtx-3060", lane1=lane, me_run="rtx-3060*llama-3.1-8b*Q4_K_M*41.50"))
        page.wait_for_function(f"() => {{ {measured_lane} return m && !m.hidden; }}", timeout=60_000)
        shown = page.evaluate(f"() => {{ {measured_lane} return {{value: m.dataset.value, text: m.textContent, decode: l.querySelector('[data-testid=\"lane-decode\"]').dataset.value}}; }}")
        assert float(shown["value"]) == 41.5 and "measured 41.5 tok/s" in shown["text"]
        assert float(shown["decode"]) == pytest.approx(estimate_lane({"view": view, "lane": lane})["estimate"]["decode_tps"], rel=1e-9)
        # Measured with another model: nothing to show beside this lane.
        show(page, query(hw="rtx-4090", me="rtx-3060", lane1=lane, me_run="rtx-3060*qwen3-8b*Q4_K_M*41.50"))
        page.wait_for_function(RATIOS_READY, timeout=60_000)
        settle(page)
        assert page.evaluate(f"() => {{ {measured_lane} return m.hidden && m.dataset.value === ''; }}")
        show(page, query(hw="rtx-4090", me="rtx-3060", me_run="rtx-3060*llama-3.1-8b*Q4_K_M*-3"))
        assert "me_run (unknown measured tok/s)" in page.inner_text("#url-notice")
    finally:
        show(page)

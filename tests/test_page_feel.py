"""Feel: the stream plays the engine's per-token schedule (thinking phase, speculative bursts,
KV-cache slowdown), the live tok/s readout with the use-case thresholds, the race, and reduced
motion. Expected values come from the engine in CPython, never from hard-coded numbers."""

from __future__ import annotations

import itertools

import pytest

from engine.page.lanes import lane_views
from engine.page.view import estimate_view
from pagekit import query, settle, show, value
from test_browser_basics import CLICK_RUN, RECORD_STREAM

pytestmark = pytest.mark.browser

#: Records every change of every stream element (main and lanes) with its time.
RECORD_ALL = """() => {
  window.__laneLog = [];
  document.querySelectorAll('[data-testid="stream"]').forEach((el, i) => {
    new MutationObserver(() => window.__laneLog.push([i, performance.now(), el.dataset.state, Number(el.dataset.tokens), Number(el.dataset.thinking || 0)]))
      .observe(el, {attributes: true, attributeFilter: ["data-state", "data-tokens", "data-thinking"]});
  });
}"""


def run_and_record(page, seconds: float) -> tuple[float, list]:
    page.evaluate(RECORD_STREAM)
    clicked = page.evaluate(CLICK_RUN)
    page.wait_for_timeout(int(seconds * 1000))
    return clicked, page.evaluate("() => window.__streamLog")


def test_reasoning_model_thinks_before_the_visible_answer(app):
    page, _log, _console = app
    view = show(page, query(hw="rtx-5090", model="qwen3-8b", think=200, prompt=20))
    schedule = estimate_view(view)["estimate"]["schedule"]
    assert schedule["reasoning_tokens"] == 200
    answer_starts = schedule["arrival_s"][200]
    clicked, log = run_and_record(page, answer_starts + 1.0)
    states = [state for _t, state, _n in log]
    assert "thinking" in states and "streaming" in states
    assert states.index("thinking") < states.index("streaming")
    # No visible token while thinking; the first one on the engine's schedule.
    assert all(n == 0 for _t, state, n in log if state == "thinking")
    first_visible = next(t for t, _s, n in log if n > 0)
    assert (first_visible - clicked) / 1000 == pytest.approx(answer_starts, abs=0.06)
    assert "Thinks for 200 hidden tokens" in page.inner_text('[data-testid="extra-line"]')


def test_speculative_decoding_arrives_in_bursts(app):
    page, _log, _console = app
    view = show(page, query(hw="amd-ryzen-9-7950x-64gb", spec="draft", workload="code", prompt=20))
    estimate = estimate_view(view)["estimate"]
    assert estimate["speculative"]["method"] == "draft"
    bursts = [len(list(group)) for _t, group in itertools.groupby(estimate["schedule"]["arrival_s"])]
    assert max(bursts) >= 2, "the engine's schedule has no bursts"
    _clicked, log = run_and_record(page, estimate["ttft_s"] + 4.0)
    counts = [n for _t, _s, n in log]
    jumps = [b - a for a, b in zip(counts, counts[1:]) if b > a]
    # At about 10 tok/s a frame shows at most one ordinary token; drafted tokens land together.
    assert max(jumps) >= 2, jumps
    assert "Speculative decoding" in page.inner_text('[data-testid="extra-line"]')


def test_stream_schedule_is_the_engines_and_slows_as_the_cache_grows(app):
    page, _log, _console = app
    view = show(page, query(depth=60000, answer="document"))
    expected = estimate_view(view)["estimate"]["schedule"]["arrival_s"]
    shown = page.evaluate("() => window.__tokfeel.current().estimate.schedule.arrival_s")
    assert shown == pytest.approx(expected, abs=1e-6)
    first_gap, last_gap = expected[1] - expected[0], expected[-1] - expected[-2]
    assert last_gap > first_gap


def test_live_rate_readout_and_use_case_marks(app):
    page, _log, _console = app
    view = show(page, query(hw="rtx-3090", answer="document", prompt=20))
    decode = estimate_view(view)["estimate"]["decode_tps"]
    bands = page.eval_on_selector_all(".gauge-band", "els => els.map(e => e.className)")
    assert len(bands) == 5 and any("band-chat" in b for b in bands) and any("band-agentic" in b for b in bands)
    assert page.is_visible("#gauge-predicted")
    page.click('.player [data-testid="run"]')
    page.wait_for_function("() => document.querySelector('.player [data-testid=\"stream\"]').dataset.state === 'streaming'")
    page.wait_for_timeout(1500)
    live = value(page, '[data-testid="live-rate"]')
    assert live == pytest.approx(decode, rel=0.05)
    assert "tok/s now" in page.inner_text('[data-testid="gauge"]')


def test_answer_kinds_have_their_own_token_density(app):
    page, _log, _console = app
    notes = {}
    for kind in ("chat", "code", "document"):
        show(page, query(answer=kind) if kind != "chat" else "")
        notes[kind] = page.inner_text("#answer-note")
        assert "o200k_base" in page.inner_text('[data-testid="tokens-note"]')
    from engine.page.fields import answers

    density = {k: len("".join(a["tokens"])) / len(a["tokens"]) for k, a in answers().items()}
    assert density["code"] != density["chat"]
    for kind, note in notes.items():
        assert f"{len(answers()[kind]['tokens']):,} tokens" in note


def test_race_lanes_stream_side_by_side_and_finish_in_the_engines_order(app):
    page, _log, _console = app
    show(page, query(prompt=20))
    page.click('[data-testid="add-lane"]')
    page.wait_for_function("() => document.querySelectorAll('[data-testid=\"lane\"]').length === 2")
    lane = page.locator('[data-testid="lane"]').nth(1)
    lane.locator("select").first.select_option("rtx-3060")
    settle(page)
    page.wait_for_function("() => [...document.querySelectorAll('[data-testid=\"lane\"] [data-testid=\"finish\"]')].every(e => e.dataset.value)")
    views = lane_views(show(page, page.url[page.url.index("?"):]))
    assert len(views) == 2 and views[1]["hw"] == "rtx-3060"
    expected = [estimate_view(v)["estimate"] for v in views]
    lanes = page.locator('[data-testid="lane"]')
    for i, e in enumerate(expected):
        assert float(lanes.nth(i).locator('[data-testid="decode-tps"]').get_attribute("data-value")) == pytest.approx(e["decode_tps"], rel=1e-9)
        assert float(lanes.nth(i).locator('[data-testid="ttft"]').get_attribute("data-value")) == pytest.approx(e["ttft_s"], rel=1e-9)
        assert float(lanes.nth(i).locator('[data-testid="finish"]').get_attribute("data-value")) == pytest.approx(e["schedule"]["arrival_s"][-1], rel=1e-6)
    page.evaluate(RECORD_ALL)
    page.click('[data-testid="race-run"]')
    longest = max(e["schedule"]["arrival_s"][-1] for e in expected)
    page.wait_for_function("() => [...document.querySelectorAll('[data-testid=\"lane\"] [data-testid=\"stream\"]')].every(e => e.dataset.state === 'done')", timeout=int(longest * 1000) + 10_000)
    log = page.evaluate("() => window.__laneLog")
    stream_index = page.evaluate("() => [...document.querySelectorAll('[data-testid=\"stream\"]')].map(e => e.closest('[data-testid=\"lane\"]') ? Number(e.closest('[data-testid=\"lane\"]').dataset.lane) : -1)")
    done_at = {stream_index[i]: t for i, t, state, _n, _h in log if state == "done"}
    order = sorted(done_at, key=done_at.get)
    assert order == sorted(range(len(expected)), key=lambda i: expected[i]["schedule"]["arrival_s"][-1])
    winner = page.get_attribute('[data-testid="lane"].winner', "data-lane")
    assert int(winner) == order[0]
    # Clean up: no lanes for the tests that follow.
    show(page, "")


def test_reduced_motion_steps_the_text_and_keeps_the_numbers(app):
    page, _log, _console = app
    view = show(page, query(hw="rtx-3090", answer="document", prompt=20))
    schedule = estimate_view(view)["estimate"]["schedule"]
    page.emulate_media(reduced_motion="reduce")
    try:
        clicked, log = run_and_record(page, schedule["ttft_s"] + 3.0)
        assert page.get_attribute('[data-testid="live-rate"]', "data-value")
    finally:
        page.emulate_media(reduced_motion="no-preference")
    changes = [(t, n) for (t, _s, n), (_t0, _s0, n0) in zip(log, [(0, "", 0), *log]) if n > n0]
    times = [t for t, _n in changes]
    gaps = [b - a for a, b in zip(times, times[1:])]
    assert gaps and min(gaps) >= 450, gaps
    # Still on the schedule: what is shown at each step is what is due.
    arrivals = schedule["arrival_s"]
    for t, _s, n in log:
        if n > 0:
            due = sum(1 for a in arrivals if a <= (t - clicked) / 1000 + 0.02)
            assert n <= due
    spinner = page.evaluate("() => getComputedStyle(document.querySelector('.status-dot')).animationName")
    assert spinner in ("none", "pulse")

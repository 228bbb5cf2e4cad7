"""Benchmarks of the built page in Debian's Chromium (numbers, not pass/fail):

- time to the first number (the build-time estimate) and to "engine ready", over cold loads;
- recompute time per interaction in Pyodide (the worker round trip of the main numbers), p50/p95,
  and the time until all background work (charts, marks, advice, race) is done;
- the stream player's rate and TTFT error at 2, 20, 200 and 2000 tok/s.

    python3 scripts/bench_page.py [--loads 3] [--interactions 40]
"""

from __future__ import annotations

import argparse
import functools
import http.server
import statistics
import sys
import tempfile
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

import build  # noqa: E402
from conftest import CHROMIUM, CHROMIUM_ARGS  # noqa: E402

READY = '[data-testid="engine-status"][data-state="ready"]'
#: Interactions cycled through: what a visitor changes most.
INTERACTIONS = [
    "?hw=rtx-3090", "?hw=rtx-3090&prompt=2000", "?hw=apple-m4-max-40c-128gb&prompt=2000", "?hw=apple-m4-max-40c-128gb&model=qwen3-32b",
    "?model=qwen3-30b-a3b", "?model=qwen3-30b-a3b&quant=Q8_0", "?prompt=12000", "?answer=document", "?depth=32000&kv=q8_0", "?batch=8",
]
RATES_TPS = (2, 20, 200, 2000)
TTFT_S = 0.5


def percentile(values, q):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def serve(directory: Path):
    handler = functools.partial(type("H", (build.QuietHandler,), {"log_message": lambda *a: None}), directory=str(directory))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/"


def cold_loads(browser, url, loads):
    first, ready = [], []
    for _ in range(loads):
        context = browser.new_context()
        page = context.new_page()
        page.goto(url)
        page.wait_for_selector(READY, timeout=120_000)
        timings = page.evaluate("() => window.__tokfeel.timings")
        first.append(timings["firstNumberMs"])
        ready.append(timings["engineReadyMs"])
        context.close()
    return first, ready


def interactions(page, base, count):
    background = []
    page.evaluate("() => { window.__tokfeel.timings.recomputeMs.length = 0; }")
    for i in range(count):
        q = INTERACTIONS[i % len(INTERACTIONS)]
        started = page.evaluate(
            "(url) => { const t = performance.now(); history.pushState(null, '', url); dispatchEvent(new PopStateEvent('popstate')); return t; }",
            base + q,
        )
        page.wait_for_function("() => window.__tokfeel.settled()", timeout=120_000, polling=20)
        page.evaluate("() => window.__tokfeel.jobs.idle()")
        background.append(page.evaluate("(t) => performance.now() - t", started))
    return page.evaluate("() => window.__tokfeel.timings.recomputeMs"), background


RECORD = """() => {
  const el = document.querySelector('.player [data-testid="stream"]');
  window.__benchLog = [];
  new MutationObserver(() => window.__benchLog.push([performance.now(), Number(el.dataset.tokens)]))
    .observe(el, {attributes: true, attributeFilter: ["data-tokens"]});
}"""


def stream_error(page, rate):
    """Play TTFT_S then `rate` tok/s for at least 4 s (and 12 tokens); compare what appears."""
    count = max(12, int(rate * 4) + 1)
    arrivals = [TTFT_S + i / rate for i in range(count)]
    page.evaluate(RECORD)
    started = page.evaluate("(a) => { const t = performance.now(); window.__tokfeel.playSchedule(a); return t; }", arrivals)
    page.wait_for_timeout(int((arrivals[-1] + 0.5) * 1000))
    log = [(t, n) for t, n in page.evaluate("() => window.__benchLog") if n > 0]
    ttft_error_ms = log[0][0] - started - TTFT_S * 1000
    (t0, n0), (t1, n1) = log[0], log[-1]
    measured = (n1 - n0) / ((t1 - t0) / 1000)
    scheduled = (n1 - n0) / (arrivals[n1 - 1] - arrivals[n0 - 1])
    return ttft_error_ms, 100 * (measured - scheduled) / scheduled


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--loads", type=int, default=3)
    parser.add_argument("--interactions", type=int, default=40)
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as folder:
        site = build.build(Path(folder) / "dist")
        server, url = serve(site)
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
            first, ready = cold_loads(browser, url, args.loads)
            print(f"first number (build-time estimate): median {statistics.median(first):.0f} ms after navigation ({args.loads} cold loads)")
            print(f"engine ready (Pyodide booted):      median {statistics.median(ready) / 1000:.2f} s after navigation")
            context = browser.new_context()
            page = context.new_page()
            page.goto(url)
            page.wait_for_selector(READY, timeout=120_000)
            page.wait_for_function("() => window.__tokfeel.settled()", timeout=120_000)
            recompute, background = interactions(page, url, args.interactions)
            print(f"recompute per interaction (worker round trip, Pyodide): p50 {percentile(recompute, 0.5):.1f} ms, p95 {percentile(recompute, 0.95):.1f} ms, max {max(recompute):.1f} ms (n={len(recompute)})")
            print(f"everything (charts, marks, advice, race) done:          p50 {percentile(background, 0.5):.0f} ms, p95 {percentile(background, 0.95):.0f} ms")
            for rate in RATES_TPS:
                ttft_ms, rate_pct = stream_error(page, rate)
                print(f"stream at {rate:>4} tok/s: TTFT error {ttft_ms:+.1f} ms, rate error {rate_pct:+.2f}%")
            context.close()
            browser.close()
        server.shutdown()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

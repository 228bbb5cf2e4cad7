"""The runtime failing under the page: the worker script missing, the Python runtime blocked,
WebAssembly disabled, the engine bundle corrupted (integrity mismatch), a slow host, a worker
that crashes or hangs mid-session. Each time the page keeps its numbers, says what failed,
offers Retry, never stays on "loading", and Retry works once the fault is gone.
(test_browser_basics.py checks the first messages of some of these; this goes on to recovery.)"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from conftest import BOOT_TIMEOUT_MS
from engine.page.fields import DEFAULT_VIEW
from engine.page.view import estimate_view
from pagekit import SHOW_URL, settle

pytestmark = pytest.mark.browser

STATUS = '[data-testid="engine-status"]'
DECODE = '.results [data-testid="decode-tps"]'
#: A worker that is the real one, but fails when asked for an agent estimate of 77 turns: an
#: uncaught error (a crash), or a loop that never returns (a hang).
CRASHING_WORKER = """import "./worker.js?real";
self.addEventListener("message", (event) => {
  if (event.data?.type === "call" && event.data.fn === "agent" && event.data.args?.turns === 77) %s
});
"""
CRASH = 'setTimeout(() => { throw new Error("simulated crash"); });'
HANG = "for (;;) {}"
#: A worker without WebAssembly (a browser policy or an extension can remove it).
NO_WASM_WORKER = 'import "./no-webassembly.js";\nimport "./worker.js?real";\n'
MARKER_TURNS = "77"


class Faults:
    """One fault at a time for every request of a browser context (pages and workers)."""

    def __init__(self, context, built_site):
        self.fault = None
        self.held = []
        self.bundle = next(built_site.glob("engine-*.zip")).read_bytes()
        context.route("**/*", self.handle)

    def handle(self, route):
        path = urlsplit(route.request.url).path
        query = urlsplit(route.request.url).query
        if self.fault and self.fault(route, path, query):
            return
        route.fallback()

    # Each fault answers the requests it is about (True) and leaves the rest to the network.

    def worker_missing(self, route, path, query):
        if path.endswith("/js/worker.js"):
            route.fulfill(status=404, body="not found")
            return True
        return False

    def runtime_blocked(self, route, path, query):
        if path.endswith(".wasm"):
            route.abort("blockedbyclient")
            return True
        return False

    def bundle_corrupted(self, route, path, query):
        if re.search(r"/engine-[0-9a-f]+\.zip$", path):
            damaged = bytearray(self.bundle)
            damaged[len(damaged) // 2] ^= 0xFF
            route.fulfill(status=200, body=bytes(damaged), content_type="application/zip")
            return True
        return False

    def webassembly_disabled(self, route, path, query):
        if path.endswith("/js/worker.js") and query != "real":
            route.fulfill(status=200, body=NO_WASM_WORKER, content_type="text/javascript")
            return True
        if path.endswith("/js/no-webassembly.js"):
            route.fulfill(status=200, body="delete self.WebAssembly;\n", content_type="text/javascript")
            return True
        return False

    def runtime_never_answers(self, route, path, query):
        if path.endswith(".wasm"):
            self.held.append(route)  # a host that accepts the request and never answers
            return True
        return False

    def worker_that(self, failure: str):
        def fault(route, path, query):
            if path.endswith("/js/worker.js") and query != "real":
                route.fulfill(status=200, body=CRASHING_WORKER % failure, content_type="text/javascript")
                return True
            return False

        return fault

    def clear(self):
        self.fault = None
        for route in self.held:
            route.abort()
        self.held = []


def status(page) -> tuple[str, str]:
    return page.get_attribute(STATUS, "data-state"), page.inner_text(f"{STATUS} .status-text")


def wait_for_state(page, state: str, timeout: int = BOOT_TIMEOUT_MS) -> str:
    page.wait_for_selector(f'{STATUS}[data-state="{state}"]', timeout=timeout)
    return status(page)[1]


def fast_forward_until_error(page, step_ms: int, steps: int = 4) -> str:
    """Jump the page's clock by `step_ms` until the page reports an error. The call that hangs is
    sent only after the typing debounce and any background call queued before it, which run on
    the same clock: on a loaded machine it may not be in flight at the first jump, and its
    timeout then starts at that jump. Each jump is one call timeout, so the error is still the
    call's own."""
    for _ in range(steps - 1):
        page.clock.fast_forward(step_ms)
        try:
            return wait_for_state(page, "error", timeout=5_000)
        except PlaywrightTimeout:
            continue
    page.clock.fast_forward(step_ms)
    return wait_for_state(page, "error", timeout=10_000)


def assert_numbers_kept(page, decode: float) -> None:
    """The numbers on screen stay, readable, and Retry is offered."""
    assert float(page.get_attribute(DECODE, "data-value")) == pytest.approx(decode, rel=1e-12)
    assert re.fullmatch(r"[0-9][0-9,.]*", page.inner_text(DECODE))
    assert page.is_visible(f"{STATUS} .retry")


@pytest.fixture()
def faulty(browser, site_url, built_site):
    context = browser.new_context(service_workers="block")
    faults = Faults(context, built_site)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    yield page, faults, errors
    faults.clear()
    context.close()


def test_each_boot_fault_is_reported_and_retry_recovers(faulty, site_url):
    page, faults, errors = faulty
    built = estimate_view(DEFAULT_VIEW)["estimate"]["decode_tps"]
    boot_faults = [
        (faults.worker_missing, "engine worker failed"),
        (faults.runtime_blocked, "Python runtime"),
        (faults.webassembly_disabled, "WebAssembly"),
        (faults.bundle_corrupted, "engine bundle"),
    ]
    for index, (fault, what) in enumerate(boot_faults):
        faults.fault = fault
        if index == 0:
            page.goto(site_url)
        else:
            page.click(f"{STATUS} .retry")
        text = wait_for_state(page, "error")
        assert "could not start" in text and what in text, text
        assert "computed when this page was built" in text and "Retry" in text
        assert_numbers_kept(page, built)
        if index == 0:
            # Another set-up while the engine is down: no stale numbers, a reason instead; and
            # back to the build's own set-up, the build's numbers again.
            page.evaluate(SHOW_URL, site_url + "?hw=rtx-3090")
            assert page.inner_text(DECODE) == "—"
            assert "press Retry" in page.inner_text("#decode-range")
            page.evaluate(SHOW_URL, site_url)
            assert_numbers_kept(page, built)
    faults.clear()
    page.click(f"{STATUS} .retry")
    wait_for_state(page, "ready")
    settle(page)
    assert float(page.get_attribute(DECODE, "data-value")) == pytest.approx(built, rel=1e-9)
    assert errors == []


def test_a_worker_crash_mid_session_keeps_the_numbers_and_retry_recovers(faulty, site_url):
    page, faults, errors = faulty
    view = {**DEFAULT_VIEW, "hw": "rtx-3090"}
    faults.fault = faults.worker_that(CRASH)
    page.goto(site_url + "?hw=rtx-3090")
    wait_for_state(page, "ready")
    settle(page)
    computed = float(page.get_attribute(DECODE, "data-value"))
    assert computed == pytest.approx(estimate_view(view)["estimate"]["decode_tps"], rel=1e-9)
    faults.clear()
    page.fill('[data-testid="agent-turns"]', MARKER_TURNS)
    text = wait_for_state(page, "error", timeout=30_000)
    assert "engine stopped" in text and "simulated crash" in text and "last ones computed" in text, text
    assert_numbers_kept(page, computed)
    page.fill('[data-testid="agent-turns"]', "4")
    page.click(f"{STATUS} .retry")
    wait_for_state(page, "ready")
    settle(page)
    assert float(page.get_attribute(DECODE, "data-value")) == pytest.approx(computed, rel=1e-12)
    assert errors == []


def test_a_slow_or_silent_host_never_leaves_the_page_loading(browser, site_url, built_site):
    """With the page's clock under control: a boot still running after 15 s says so; one that
    never finishes fails at the boot timeout with Retry; a call the worker never answers (it
    hangs) fails at the call timeout with Retry; each Retry works once the host answers."""
    context = browser.new_context(service_workers="block")
    faults = Faults(context, built_site)
    page = context.new_page()
    try:
        built = estimate_view(DEFAULT_VIEW)["estimate"]["decode_tps"]
        page.clock.install()
        faults.fault = faults.runtime_never_answers
        page.goto(site_url)
        page.wait_for_function("() => document.querySelector('.status-text').textContent.includes('Python runtime')")
        page.clock.fast_forward(16_000)
        state, text = status(page)
        assert state == "loading" and "taking longer than usual" in text, text
        assert float(page.get_attribute(DECODE, "data-value")) == pytest.approx(built)
        page.clock.fast_forward(50_000)
        text = wait_for_state(page, "error", timeout=10_000)
        assert "took longer than 60 s" in text, text
        assert_numbers_kept(page, built)

        faults.clear()
        faults.fault = faults.worker_that(HANG)
        page.click(f"{STATUS} .retry")
        wait_for_state(page, "ready")
        faults.clear()
        page.fill('[data-testid="agent-turns"]', MARKER_TURNS)
        text = fast_forward_until_error(page, 31_000)
        assert "took longer than 30 s" in text and "engine stopped" in text, text
        assert_numbers_kept(page, built)
        page.fill('[data-testid="agent-turns"]', "4")
        page.click(f"{STATUS} .retry")
        wait_for_state(page, "ready")
    finally:
        faults.clear()
        context.close()

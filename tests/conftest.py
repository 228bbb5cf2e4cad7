"""Shared fixtures: the built site, a static server for it, and one browser whose page boots
Pyodide once per test session (a cold boot costs 5-6 s here)."""

from __future__ import annotations

import functools
import http.server
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

CHROMIUM = "/usr/bin/chromium"
#: Launch flags measured to work here (docs/sources.md, Pyodide and Chromium): no sandbox as root, no GPU, none of
#: Chromium's own background traffic; a dead proxy stops what remains, loopback bypasses it.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
    "--disable-quic",
    "--proxy-server=http://127.0.0.1:9",
]
#: Budget for Pyodide to boot in a test (a cold boot takes 5-6 s on this machine's 2 cores).
BOOT_TIMEOUT_MS = 90_000


def run_cli(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    """``python -m engine ...`` in a subprocess, as a user would run it."""
    return subprocess.run([sys.executable, "-m", "engine", *args], cwd=ROOT, capture_output=True, text=True, timeout=timeout)


#: The calibration tools read all 6,094 calibration rows (score ~1.5 min, a refit ~4 min on this
#: machine's 2 shared cores).
CALIBRATION_TIMEOUT_S = 900


@pytest.fixture(scope="session")
def built_site(tmp_path_factory) -> Path:
    """The site, built once into a temporary folder (never into the working tree)."""
    import build

    out = tmp_path_factory.mktemp("site") / "dist"
    build.build(out)
    return out


class _Handler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):  # keep test output quiet
        pass


@contextmanager
def serving(handler) -> Iterator[http.server.ThreadingHTTPServer]:
    """An HTTP server for ``handler`` on an unused loopback port, in a thread, for the block."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def loopback_url(server: http.server.HTTPServer) -> str:
    return f"http://127.0.0.1:{server.server_address[1]}"


@pytest.fixture(scope="session")
def site_url(built_site) -> str:
    """The built site served on an unused loopback port."""
    import build

    handler = functools.partial(type("H", (_Handler, build.QuietHandler), {}), directory=str(built_site))
    with serving(handler) as server:
        yield loopback_url(server) + "/"


@pytest.fixture(scope="session")
def browser():
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: ./scripts/test installs Debian's chromium")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        yield browser
        browser.close()


class RequestLog:
    """Every request of a browser context (pages and workers), to prove nothing leaves 127.0.0.1."""

    def __init__(self):
        self.urls: list[str] = []

    def record(self, request):
        self.urls.append(request.url)

    def foreign(self) -> list[str]:
        from urllib.parse import urlsplit

        return [u for u in self.urls if urlsplit(u).scheme not in ("data", "blob") and urlsplit(u).hostname != "127.0.0.1"]


@pytest.fixture(scope="session")
def app(browser, site_url):
    """One page of the site with the engine booted, shared by the browser tests that only read
    it or reset what they change. Yields (page, request log, console messages)."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    log = RequestLog()
    context.on("request", log.record)
    page = context.new_page()
    console: list[str] = []
    page.on("console", lambda message: console.append(f"{message.type}: {message.text}"))
    page.on("pageerror", lambda error: console.append(f"pageerror: {error}"))
    page.goto(site_url)
    page.wait_for_selector('[data-testid="engine-status"][data-state="ready"]', timeout=BOOT_TIMEOUT_MS)
    yield page, log, console
    context.close()


def pytest_collection_modifyitems(config, items):
    """A test that drives Chromium must carry the ``browser`` marker (``-m "not browser"`` is how
    the fast run leaves them out): one that reaches the ``browser`` fixture without it is an error."""
    unmarked = [item.nodeid for item in items if "browser" in getattr(item, "fixturenames", ()) and item.get_closest_marker("browser") is None]
    if unmarked:
        raise pytest.UsageError("tests that use Chromium without @pytest.mark.browser: " + ", ".join(unmarked))

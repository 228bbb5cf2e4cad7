"""Offline and updates: after one visit the page works with the network off (its service worker
precached the build: the versioned Python runtime, the content-addressed engine bundle, the
chart library and the page's own files), and a new deployment replaces the old one whole: the
next visit shows the new build's page and scripts, the old build's cached bytes are deleted, and offline it is
the new build that loads, never a mix of the two. Also the service-worker file itself: one
cache name per build content, every file with its integrity."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import shutil
from collections import Counter
from contextlib import contextmanager
from types import SimpleNamespace

import pytest

import build
from conftest import BOOT_TIMEOUT_MS, loopback_url, serving
from engine.page.query import view_from_query
from engine.page.view import estimate_view
from pagekit import settle

pytestmark = pytest.mark.browser

QUERY = "?hw=rtx-3090&prompt=2000"
#: What build B changes: the page's tagline (index.html) and a script's text (the status line's module).
TAGLINE_B = "Build B of tokfeel."
READY_B = "Engine ready, build B ("
#: Collects every Content-Security-Policy violation of each document (init scripts run first).
RECORD_CSP = """document.addEventListener("securitypolicyviolation", (e) => { (window.__cspViolations ||= []).push(`${e.violatedDirective} ${e.blockedURI}`); });"""
#: The active service worker's cache: its name and what it holds (path -> integrity of the bytes).
CACHE_STATE = """async (expected) => {
  const registration = await navigator.serviceWorker.getRegistration();
  const active = registration?.active?.state === "activated";
  const workers = ["installing", "waiting", "active"].map((key) => `${key}: ${registration?.[key]?.state}`).join(", ");
  const names = await caches.keys();
  const held = {};
  // Only the awaited cache is opened: opening one the new service worker is deleting (the
  // previous build's, between keys() and open()) would re-create it.
  for (const name of names.includes(expected) ? [expected] : []) {
    const cache = await caches.open(name);
    for (const request of await cache.keys()) {
      const bytes = await (await cache.match(request)).arrayBuffer();
      const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
      held[`${name} ${new URL(request.url).pathname.slice(1)}`] = "sha256-" + btoa(String.fromCharCode(...digest));
    }
  }
  return { active, workers, names, held };
}"""


def service_worker_manifest(site, precached_only: bool = True) -> tuple[str, dict]:
    """(cache name, {path: integrity}) written into a built site's sw.js: the files it installs
    up front, or with ``precached_only=False`` every file of the build."""
    text = (site / build.SERVICE_WORKER).read_text()
    cache = json.loads(re.search(r"^const CACHE = (.*);$", text, re.M).group(1))
    files = json.loads(re.search(r"^const FILES = (\{.*?\n\});$", text, re.M | re.S).group(1))
    precache = json.loads(re.search(r"^const PRECACHE = (\[.*?\n\]);$", text, re.M | re.S).group(1))
    return cache, {path: files[path] for path in precache} if precached_only else files


def integrity(path) -> str:
    return "sha256-" + base64.b64encode(hashlib.sha256(path.read_bytes()).digest()).decode()


def test_the_service_worker_lists_every_file_of_the_build_with_its_hash(built_site):
    cache, files = service_worker_manifest(built_site, precached_only=False)
    on_disk = {p.relative_to(built_site).as_posix(): integrity(p) for p in built_site.rglob("*") if p.is_file() and p.name != build.SERVICE_WORKER}
    assert files == on_disk
    assert re.fullmatch(r"tokfeel-[0-9a-f]{16}", cache)
    assets = re.search(r'src="(assets/[0-9a-f]+/)js/main\.js"', (built_site / "index.html").read_text()).group(1)
    for must in ("index.html", f"{assets}js/main.js", f"{assets}js/worker.js", f"{assets}css/style.css", f"pyodide/{build.pyodide_version()}/pyodide.asm.wasm"):
        assert must in files, must
    assert any(re.fullmatch(r"engine-[0-9a-f]+\.zip", name) for name in files)
    assert any(name.startswith("vendor/chart.js-") for name in files)
    # The catalog page is cached when a visitor opens it, not installed with the page.
    _cache, precached = service_worker_manifest(built_site)
    assert "catalog.html" in files and "catalog.html" not in precached
    assert set(files) - set(precached) == {path for path in files if path.startswith(build.ON_DEMAND)}


@pytest.fixture()
def build_b(built_site, tmp_path, monkeypatch):
    """A second build whose page and a script differ from the first's (a new deployment). Its
    files are dated after the first build's: the test server revalidates by modification time
    to the second, and two builds can fall within one second."""
    site = tmp_path / "site"
    shutil.copytree(build.SITE, site)
    # The page is made of partial templates and modules: change the ones holding the two texts.
    index = [site / "templates" / "index.html.j2", *sorted((site / "templates" / "panels").glob("*.j2"))]
    template = next(path for path in index if '<p class="tagline">' in path.read_text())
    template.write_text(re.sub(r'(<p class="tagline">)', rf"\1{TAGLINE_B} ", template.read_text(), count=1))
    script = next(path for path in (site / "js").rglob("*.js") if "`Engine ready (" in path.read_text())
    script.write_text(script.read_text().replace("`Engine ready (", f"`{READY_B}", 1))
    monkeypatch.setattr(build, "SITE", site)
    out = build.build(tmp_path / "b")
    later = max(path.stat().st_mtime for path in built_site.rglob("*")) + 2
    for path in out.rglob("*"):
        os.utime(path, (later, later))
    return out


@contextmanager
def switchable_server(root):
    """A static server whose folder (``.root``) can be swapped, like a host receiving a new
    deployment."""
    state = SimpleNamespace(root=root, url="", downloads=[])

    class Handler(build.QuietHandler):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, directory=str(state.root), **kwargs)

        def log_message(self, *args):
            pass

        def log_request(self, code="-", size="-"):
            if str(getattr(code, "value", code)) == "200":
                state.downloads.append(self.path.split("?")[0])

    with serving(Handler) as server:
        server.handle_error = lambda *args: None  # navigations cut downloads short
        state.url = loopback_url(server) + "/"
        yield state


#: Entries in each build cache other than the awaited one (read only once the awaited one is
#: complete). The engine's memory snapshots live apart ("tokfeel.snapshots", one per bundle).
OTHER_CACHES = """async (expected) => Object.fromEntries(await Promise.all((await caches.keys())
  .filter((name) => name.startsWith("CACHE_PREFIX") && name !== expected).map(async (name) => [name, (await (await caches.open(name)).keys()).length])))""".replace("CACHE_PREFIX", build.CACHE_PREFIX)


def wait_for_cache(page, cache: str, files: dict, timeout_s: float = 90) -> dict:
    """Poll until the service worker is active with this build's cache, complete, and no other
    build's bytes. Chromium can keep listing a deleted cache's name, empty, while a document
    still holds a handle to it (this test's own probe of the previous build's cache): a name
    without entries is not the previous build's bytes, so it passes; one with entries fails."""
    expected = {f"{cache} {path}": digest for path, digest in files.items()}
    state, others = {}, {}
    for _ in range(int(timeout_s * 2)):
        state = page.evaluate(CACHE_STATE, cache)
        if state["active"] and state["held"] == expected:
            others = page.evaluate(OTHER_CACHES, cache)
            if not any(others.values()):
                return state
        page.wait_for_timeout(500)
    raise AssertionError(
        f"the service worker's cache did not become {cache} ({len(files)} files) alone: names {state.get('names')}, "
        f"{len(state.get('held', {}))} entries held, other caches {others}, {state.get('workers')}"
    )


def boot_and_check(page, decode: float | None = None) -> float:
    """Wait for the engine and the numbers; no CSP violation happened in this document."""
    page.wait_for_selector('[data-testid="engine-status"][data-state="ready"]', timeout=BOOT_TIMEOUT_MS)
    settle(page)
    shown = float(page.get_attribute('.results [data-testid="decode-tps"]', "data-value"))
    if decode is not None:
        assert shown == pytest.approx(decode, rel=1e-12)
    page.wait_for_selector('[data-testid="chart"][data-state="ready"]', timeout=30_000)
    assert page.evaluate("() => window.__cspViolations || []") == []
    return shown


def test_offline_after_one_visit_then_a_new_deployment_replaces_it_whole(browser, built_site, build_b):
    cache_a, files_a = service_worker_manifest(built_site)
    cache_b, files_b = service_worker_manifest(build_b)
    assert cache_a != cache_b and files_a["index.html"] != files_b["index.html"]
    # Build B's scripts live under another content-addressed folder than build A's.
    assert {f for f in files_b if f.startswith("assets/")}.isdisjoint(files_a)
    with switchable_server(built_site) as server:
        context = browser.new_context()
        context.add_init_script(RECORD_CSP)
        page = context.new_page()
        try:
            # One visit online: numbers, then the service worker fills its cache with build A.
            page.goto(server.url + QUERY)
            decode = boot_and_check(page)
            assert decode == pytest.approx(estimate_view(view_from_query(QUERY))["estimate"]["decode_tps"], rel=1e-9)
            wait_for_cache(page, cache_a, files_a)
            # The service worker took what the page had fetched from the HTTP cache: nothing
            # (the 9.6 MB runtime least of all) was downloaded twice.
            twice = {path: n for path, n in Counter(server.downloads).items() if n > 1}
            assert twice == {}, twice

            # Offline: the same link loads, boots the engine from the cache and computes.
            context.set_offline(True)
            page.reload()
            boot_and_check(page, decode)
            assert page.evaluate("() => location.search") == QUERY
            assert page.evaluate("() => navigator.serviceWorker.controller !== null")

            # The catalog page is not installed up front; opened once online, it is kept.
            context.set_offline(False)
            assert page.evaluate("() => fetch('catalog.html').then((r) => r.ok)")
            kept = f"() => caches.open({json.dumps(cache_a)}).then((c) => c.match('catalog.html')).then((r) => Boolean(r))"
            for _ in range(60):
                if page.evaluate(kept):
                    break
                page.wait_for_timeout(250)
            context.set_offline(True)
            assert 'id="catalog-data"' in page.evaluate("() => fetch('catalog.html').then((r) => r.text())")

            # A new deployment: the next online visit shows build B's page and scripts at once...
            context.set_offline(False)
            server.root = build_b
            page.reload()
            boot_and_check(page, decode)
            assert TAGLINE_B in page.inner_text(".tagline")
            assert READY_B in page.inner_text('[data-testid="engine-status"]')
            # ...and its service worker replaces build A's cache with build B's, byte for byte.
            wait_for_cache(page, cache_b, files_b)

            # Offline again: build B, whole.
            context.set_offline(True)
            page.reload()
            boot_and_check(page, decode)
            assert TAGLINE_B in page.inner_text(".tagline")
            assert READY_B in page.inner_text('[data-testid="engine-status"]')
        finally:
            context.close()


def test_the_cache_name_follows_the_content_and_nothing_else(built_site, tmp_path):
    """The same files name the same cache (the build is reproducible, so do its builds); a
    changed byte anywhere names another."""

    def copy(name: str):
        target = tmp_path / name
        shutil.copytree(built_site, target)
        (target / build.SERVICE_WORKER).unlink()
        return target

    first = build.write_service_worker(copy("a"))
    assert first == service_worker_manifest(built_site)[0] == build.write_service_worker(copy("b"))
    changed = copy("c")
    script = next(changed.glob("assets/*/js/format.js"))
    script.write_text(script.read_text() + "\n")
    assert build.write_service_worker(changed) != first

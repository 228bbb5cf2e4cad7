"""Benchmarks of the built page in Debian's Chromium (numbers, not pass/fail), all in one run so
their ratios hold on a busy machine:

- bare Pyodide boot (a module worker: loadPyodide + importing the standard-library modules the
  engine imports) against "engine ready" on the page, cold (a fresh browser profile) and warm (a
  second visit in the same profile, after the service worker installed);
- the first visit's requests and bytes as the server saw them, with duplicate downloads counted,
  and the bytes before the engine was ready;
- a shared link: its numbers after engine ready;
- recompute time per picker change in Pyodide (the worker round trip of the main numbers),
  p50/p95, and the time until all background work (charts, marks, advice, race) is done;
- the stream player's rate and TTFT error at 2, 20, 200 and 2000 tok/s;
- a soak (picker changes, streams and races in one page): the page's JS heap (raw, and apart from
  V8's compiled code, with DOM nodes, listeners and detached nodes) and the worker's WebAssembly
  heap, after the first 20 interactions and at the end, and recompute p95 per half.
- the TTFT error at the click: a real mouse click on Run until the first token shows, against
  the predicted TTFT, idle and with two CPU-busy processes running (target: within 30 ms).

    python3 scripts/bench_page.py [--loads 3] [--interactions 40] [--soak 200] [--skip-stream] [--baseline REV]

With --baseline, the site of git revision REV is built too (in a temporary worktree) and measured
in the same run, interleaved, so the two columns see the same machine load.
"""

from __future__ import annotations

import argparse
import ast
import functools
import http.server
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

import build  # noqa: E402
from conftest import CHROMIUM, CHROMIUM_ARGS  # noqa: E402
from pagekit import heap_counts  # noqa: E402

READY = '[data-testid="engine-status"][data-state="ready"]'
#: Interactions cycled through: what a visitor changes most.
INTERACTIONS = [
    "?hw=rtx-3090", "?hw=rtx-3090&prompt=2000", "?hw=apple-m4-max-40c-128gb&prompt=2000", "?hw=apple-m4-max-40c-128gb&model=qwen3-32b",
    "?model=qwen3-30b-a3b", "?model=qwen3-30b-a3b&quant=Q8_0", "?prompt=12000", "?answer=document", "?depth=32000&kv=q8_0", "?batch=8",
]
#: A link someone shares: not the build's default view, so its numbers need the engine.
SHARED_LINK = "?hw=apple-m4-max-40c-128gb&model=qwen3-32b&quant=Q4_K_M&prompt=2000"
RACE_LANES = "&lane1=rtx-3090****&lane2=apple-m4-max-40c-128gb****"
RATES_TPS = (2, 20, 200, 2000)
TTFT_S = 0.5


def percentile(values, q):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def engine_stdlib_modules() -> list[str]:
    """The standard-library modules the bundled engine imports (what a bare boot must import too)."""
    names = set()
    for path, _name in build.bundle_files():
        if path.suffix != ".py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names.add(node.module.split(".")[0])
    return sorted(n for n in names if n in sys.stdlib_module_names and n != "__future__")


BARE_HTML = """<!doctype html><meta charset="utf-8"><title>bare</title><script type="module" src="bare.js"></script>"""
BARE_JS = """const worker = new Worker(new URL("bare-worker.js", import.meta.url), { type: "module" });
worker.onmessage = (event) => { window.__bare = { ...event.data, readyMs: performance.now() }; };
worker.postMessage({ indexURL: new URL("../%(index)s", location.href).href, modules: %(modules)s });"""
BARE_WORKER = """self.onmessage = async (event) => {
  const { indexURL, modules } = event.data;
  const { loadPyodide } = await import(indexURL + "pyodide.mjs");
  const pyodide = await loadPyodide({ indexURL, packages: [] });
  pyodide.runPython("import " + modules.join(", "));
  self.postMessage({ ok: true });
};"""


def write_bare_page(site: Path, index_url: str) -> None:
    folder = site / "__bench"
    folder.mkdir()
    (folder / "bare.html").write_text(BARE_HTML)
    (folder / "bare.js").write_text(BARE_JS % {"index": index_url, "modules": json.dumps(engine_stdlib_modules())})
    (folder / "bare-worker.js").write_text(BARE_WORKER)


class Served:
    """The site on a loopback port, logging every response: (time, path, status, body bytes)."""

    def __init__(self, directory: Path):
        records = self.records = []

        class Handler(build.QuietHandler):
            def log_message(self, *args):
                pass

            def send_response(self, code, message=None):
                self._status, self._length = int(code), 0
                super().send_response(code, message)

            def send_header(self, keyword, value):
                if keyword.lower() == "content-length":
                    self._length = int(value)
                super().send_header(keyword, value)

            def end_headers(self):
                # Logged here: send_response logs before the headers name the body's length.
                status = getattr(self, "_status", 0)
                records.append((time.monotonic(), self.path.split("?")[0], status, self._length if status == 200 else 0))
                super().end_headers()

            def log_request(self, code="-", size="-"):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Handler, directory=str(directory)))
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/"

    def since(self, mark: int):
        return self.records[mark:]


def _descendants(root: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            children.setdefault(int(fields[1]), []).append(int(entry))
    out, todo = [], [root]
    while todo:
        pid = todo.pop()
        out.append(pid)
        todo.extend(children.get(pid, []))
    return out


def browser_cpu_s() -> dict[int, float]:
    """CPU seconds (user + system) so far of every process this script started (the browser's)."""
    tick = os.sysconf("SC_CLK_TCK")
    cpu = {}
    for pid in _descendants(os.getpid())[1:]:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            cpu[pid] = (int(fields[11]) + int(fields[12])) / tick
        except OSError:
            pass
    return cpu


def _process_kind(pid: int) -> str:
    """Chromium's process type (renderer, gpu-process, utility ...; "browser" for the main one)."""
    try:
        words = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").split()
    except OSError:
        return "?"
    kind = next((w.split("=", 1)[1] for w in words if w.startswith("--type=")), "browser" if words and "chrom" in words[0] else "other")
    sub = next((w.split("=", 1)[1].rsplit(".", 1)[-1] for w in words if w.startswith("--utility-sub-type=")), "")
    return sub or kind


def browser_cpu_by_thread() -> dict[tuple[int, str], tuple[str, float]]:
    """CPU seconds so far of every thread of the browser's processes: {(pid, tid): ("kind:thread
    name", seconds)}, so a difference between two pages can be told apart (compositor, worker, ...)."""
    tick = os.sysconf("SC_CLK_TCK")
    out = {}
    for pid in _descendants(os.getpid())[1:]:
        kind = _process_kind(pid)
        try:
            tids = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for tid in tids:
            try:
                raw = Path(f"/proc/{pid}/task/{tid}/stat").read_text()
            except OSError:
                continue
            fields = raw.rsplit(")", 1)[1].split()
            out[(pid, tid)] = (f"{kind}:{raw[raw.index('(') + 1 : raw.rindex(')')]}", (int(fields[11]) + int(fields[12])) / tick)
    return out


def threads_since(before) -> Counter:
    """CPU seconds per "process kind:thread name" since ``before`` (browser_cpu_by_thread)."""
    spent = Counter()
    for key, (name, seconds) in browser_cpu_by_thread().items():
        spent[name] += seconds - before.get(key, (name, 0.0))[1]
    return spent


def cpu_since(before: dict[int, float]) -> float:
    """CPU seconds the browser's processes used since ``before`` (a process that exited is lost:
    sample while the context is open)."""
    return sum(v - before.get(pid, 0.0) for pid, v in browser_cpu_s().items())


def engine_ready_ms(page) -> float:
    # Polled the same way as bare_ready_ms (a timer in the page), so neither column pays for a
    # different wait: wait_for_selector's own polling costs the page ~0.1 CPU s over a boot.
    page.wait_for_function(f"() => document.querySelector('{READY}')", timeout=180_000, polling=20)
    return page.evaluate("() => window.__tokfeel.timings.engineReadyMs")


def bare_ready_ms(page) -> float:
    page.wait_for_function("() => window.__bare", timeout=180_000, polling=20)
    return page.evaluate("() => window.__bare.readyMs")


def service_worker_installed(page) -> None:
    page.evaluate("() => navigator.serviceWorker.ready.then(() => true)")


def worker_state(page) -> dict:
    """The engine worker's diagnostics: boot marks (ms since it started), snapshot state."""
    for worker in page.workers:
        if worker.url.endswith("/worker.js"):
            return worker.evaluate("() => self.__tokfeelDiagnostics ? self.__tokfeelDiagnostics() : {}")
    return {}


def first_visit(browser, served: Served):
    """One cold visit: engine ready, then (same profile) a warm visit; the server's log of the first."""
    context = browser.new_context()
    page = context.new_page()
    mark = len(served.records)
    cpu, threads = browser_cpu_s(), browser_cpu_by_thread()
    page.goto(served.url)
    cold = engine_ready_ms(page)
    cold_cpu = cpu_since(cpu)
    cold_threads = threads_since(threads)
    ready_at = time.monotonic()
    cold_state = worker_state(page)
    service_worker_installed(page)
    page.wait_for_function("() => window.__tokfeel.settled()", timeout=180_000, polling=50)
    # The engine's memory snapshot (where the build keeps one) is written once the page is quiet.
    keeps_snapshot = any(w.evaluate("() => 'snapshot' in (self.__tokfeelDiagnostics?.() || {})") for w in page.workers)
    for _ in range(240 if keeps_snapshot else 0):
        if page.evaluate("() => caches.open('tokfeel.snapshots').then((c) => c.keys()).then((k) => k.length)"):
            break
        page.wait_for_timeout(500)
    page.wait_for_timeout(500)
    log = served.since(mark)
    page.close()
    second = context.new_page()
    cpu = browser_cpu_s()
    second.goto(served.url)
    warm = engine_ready_ms(second)
    warm_cpu = cpu_since(cpu)
    warm_state = worker_state(second)
    context.close()
    return cold, warm, log, ready_at, cold_cpu, warm_cpu, (cold_state, warm_state), cold_threads


def bare_visits(browser, url):
    context = browser.new_context()
    page = context.new_page()
    cpu, threads = browser_cpu_s(), browser_cpu_by_thread()
    page.goto(url + "__bench/bare.html")
    cold = bare_ready_ms(page)
    cold_cpu = cpu_since(cpu)
    cold_threads = threads_since(threads)
    page.close()
    page = context.new_page()
    page.goto(url + "__bench/bare.html")
    warm = bare_ready_ms(page)
    context.close()
    return cold, warm, cold_cpu, cold_threads


def shared_link(browser, url):
    """ms from engine ready until the link's own numbers are on screen."""
    context = browser.new_context()
    page = context.new_page()
    page.goto(url + SHARED_LINK)
    ready = engine_ready_ms(page)
    shown = page.wait_for_function(
        """() => { const c = window.__tokfeel.current(); return c && !c.failed && JSON.stringify(c.view) === JSON.stringify(window.__tokfeel.view()) && window.__tokfeel.timings.recomputeMs.length > 0 ? performance.now() : false; }""",
        timeout=180_000, polling=10,
    ).json_value()
    context.close()
    return shown - ready


def show(page, url):
    return page.evaluate(
        "(url) => { const t = performance.now(); history.pushState(null, '', url); dispatchEvent(new PopStateEvent('popstate')); return t; }", url
    )


def settle(page):
    page.wait_for_function("() => window.__tokfeel.settled()", timeout=180_000, polling=20)
    page.evaluate("() => window.__tokfeel.jobs.idle()")


def interactions(page, base, count):
    background = []
    page.evaluate("() => { window.__tokfeel.timings.recomputeMs.length = 0; window.__tokfeel.timings.recomputes?.splice(0); }")
    for i in range(count):
        started = show(page, base + INTERACTIONS[i % len(INTERACTIONS)])
        settle(page)
        background.append(page.evaluate("(t) => performance.now() - t", started))
    return page.evaluate("() => window.__tokfeel.timings.recomputeMs"), background


def recompute_parts(page) -> dict[str, list[float]] | None:
    """The last interactions' recomputes split where the time went (ms), from the page's log
    (sent, reply read, numbers written) and the worker's (each call's arrival, its engine time,
    its reply's departure; absolute times, so the two clocks compare): None for a build without
    them."""
    log = page.evaluate("() => window.__tokfeel.timings.recomputes || null")
    calls = [c for c in worker_state(page).get("calls", []) if c["fn"] == "numbers"]
    if not log or not calls:
        return None
    parts = {"to the worker": [], "engine (JSON + Python)": [], "back to the page": [], "page after the reply": []}
    for entry in log:
        sent, replied = entry["sentAt"], entry["sentAt"] + entry["repliedMs"]
        call = next((c for c in calls if sent - 1 <= c["receivedAt"] <= replied), None)
        if call is None:
            continue
        parts["to the worker"].append(call["receivedAt"] - sent)
        parts["engine (JSON + Python)"].append(call["engineMs"])
        parts["back to the page"].append(replied - call["receivedAt"] - call["engineMs"])
        parts["page after the reply"].append(entry["shownMs"] - entry["repliedMs"])
    return parts


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


def memory(page, cdp):
    """(page JS heap bytes after a forced GC, worker WebAssembly heap bytes, pagekit.heap_counts:
    DOM nodes, listeners, detached nodes, JS bytes apart from V8's compiled code)."""
    cdp.send("HeapProfiler.collectGarbage")
    heap = cdp.send("Runtime.getHeapUsage")["usedSize"]
    wasm = None
    for worker in page.workers:
        value = worker.evaluate("() => self.__tokfeelDiagnostics ? self.__tokfeelDiagnostics() : null")
        if value:
            wasm = value["wasmHeapBytes"]
    return heap, wasm, heap_counts(cdp)


SHOWN = """() => { const c = window.__tokfeel.current();
  return Boolean(c) && JSON.stringify(c.view) === JSON.stringify(window.__tokfeel.view()); }"""
#: The soak waits for all background work (charts, advice, marks) only every this many changes;
#: in between, as a visitor clicking through, the next change comes once the numbers show (the
#: page cancels the previous view's background work), so 200 changes finish in minutes.
SETTLE_EVERY = 10


def soak(browser, url, changes, streams, races):
    context = browser.new_context()
    page = context.new_page()
    page.goto(url)
    page.wait_for_selector(READY, timeout=180_000)
    settle(page)
    cdp = context.new_cdp_session(page)
    page.evaluate("() => { window.__tokfeel.timings.recomputeMs.length = 0; }")
    stream_every = max(1, changes // max(1, streams))
    race_every = max(1, changes // max(1, races))
    baseline = None
    done_streams = done_races = 0
    for i in range(changes):
        query = INTERACTIONS[i % len(INTERACTIONS)]
        racing = done_races < races and i % race_every == race_every - 1
        show(page, url + query + (RACE_LANES if racing else ""))
        if racing or i % SETTLE_EVERY == SETTLE_EVERY - 1 or i == 19:
            settle(page)
        else:
            page.wait_for_function(SHOWN, timeout=180_000, polling=20)
        if racing:
            page.click('[data-testid="race-run"]')
            page.wait_for_timeout(300)
            done_races += 1
        if done_streams < streams and i % stream_every == 0 and page.is_enabled('[data-testid="run"]'):
            page.click('[data-testid="run"]')
            page.wait_for_timeout(300)
            done_streams += 1
        if i == 19:
            baseline = memory(page, cdp)
    settle(page)
    final = memory(page, cdp)
    recompute = page.evaluate("() => window.__tokfeel.timings.recomputeMs")
    context.close()
    return baseline, final, recompute, done_streams, done_races


def growth(before, after):
    return "n/a" if not before or after is None else f"{100 * (after / before - 1):+.1f}%"


def build_revision(revision: str, folder: Path) -> Path:
    """The site as git revision ``revision`` builds it (a detached worktree sharing node_modules)."""
    tree = folder / "baseline-tree"
    subprocess.run(["git", "worktree", "add", "--detach", str(tree), revision], cwd=ROOT, check=True, capture_output=True)
    try:
        (tree / "node_modules").symlink_to(ROOT / "node_modules")
        subprocess.run([sys.executable, "build.py", "--out", str(folder / "baseline")], cwd=tree, check=True, capture_output=True)
    finally:
        subprocess.run(["git", "worktree", "remove", "--force", str(tree)], cwd=ROOT, check=True, capture_output=True)
    return folder / "baseline"


def measure_loads(browser, served, loads, results):
    """Append one bare and one engine (cold, warm) visit pair to ``results``."""
    b_cold, b_warm, b_cpu, b_threads = bare_visits(browser, served.url)
    e_cold, e_warm, log, ready_at, e_cpu, w_cpu, states, e_threads = first_visit(browser, served)
    results.setdefault("bare_threads", []).append(b_threads)
    results.setdefault("cold_threads", []).append(e_threads)
    results.setdefault("states", []).append(states)
    results.setdefault("bare_cpu", []).append(b_cpu)
    results.setdefault("cold_cpu", []).append(e_cpu)
    results.setdefault("warm_cpu", []).append(w_cpu)
    results["bare_cold"].append(b_cold)
    results["bare_warm"].append(b_warm)
    results["cold"].append(e_cold)
    results["warm"].append(e_warm)
    results.setdefault("log", (log, ready_at))


def report_loads(label, r, loads):
    med = statistics.median
    print(f"[{label}] bare Pyodide boot + engine's stdlib imports: cold {med(r['bare_cold']) / 1000:.2f} s, warm {med(r['bare_warm']) / 1000:.2f} s (medians of {loads})")
    print(f"[{label}] engine ready after navigation:               cold {med(r['cold']) / 1000:.2f} s, warm {med(r['warm']) / 1000:.2f} s")
    print(f"[{label}]   ratio cold engine / cold bare: {med(r['cold']) / med(r['bare_cold']):.2f}x;  warm engine / cold engine: {med(r['warm']) / med(r['cold']):.2f}")
    print(f"[{label}] browser CPU seconds until ready (robust to a busy machine): bare cold {med(r['bare_cpu']):.2f}, engine cold {med(r['cold_cpu']):.2f}, "
          f"engine warm {med(r['warm_cpu']):.2f};  ratios {med(r['cold_cpu']) / med(r['bare_cpu']):.2f}x and {med(r['warm_cpu']) / med(r['cold_cpu']):.2f}")
    # Where the engine page's extra CPU went (median per thread group over the loads).
    groups = {name for counts in r["bare_threads"] + r["cold_threads"] for name in counts}
    extra = {g: med([c[g] for c in r["cold_threads"]]) - med([c[g] for c in r["bare_threads"]]) for g in groups}
    shown = sorted(extra.items(), key=lambda kv: -abs(kv[1]))[:6]
    print(f"[{label}]   engine cold minus bare cold, CPU s by process:thread: " + ", ".join(f"{g} {v:+.2f}" for g, v in shown))
    for cold_state, warm_state in r.get("states", []):
        for name, state in (("cold", cold_state), ("warm", warm_state)):
            marks = state.get("marks", {})
            steps = ", ".join(f"{step} {ms} ms" for step, ms in marks.items())
            print(f"[{label}]   worker boot, {name} visit (ms since the worker started): {steps or 'not exposed'}; snapshot: {state.get('snapshot')}")
    log, ready_at = r["log"]
    downloads = [(path, size) for _t, path, status, size in log if status == 200]
    counts = Counter(path for path, _size in downloads)
    duplicates = {path: n for path, n in counts.items() if n > 1}
    before = sum(size for t, _p, status, size in log if status == 200 and t <= ready_at)
    print(f"[{label}] first visit: {len(log)} requests, {len(downloads)} downloads, {sum(s for _p, s in downloads) / 1e6:.2f} MB "
          f"({before / 1e6:.2f} MB before engine ready); downloaded twice or more: "
          + (", ".join(f"{p} x{n}" for p, n in sorted(duplicates.items())) or "none"))
    wasm = [p for p, _s in downloads if p.endswith(".wasm")]
    print(f"[{label}]   copies of pyodide.asm.wasm downloaded: {len(wasm)}; catalog.html downloaded: {counts.get('/catalog.html', 0)}")


def measure_page(browser, url, label, interactions_count, with_stream):
    link = [shared_link(browser, url) for _ in range(2)]
    print(f"[{label}] shared link: its numbers {statistics.median(link):.0f} ms after engine ready (median of {len(link)})")
    context = browser.new_context()
    page = context.new_page()
    page.goto(url)
    page.wait_for_selector(READY, timeout=180_000)
    settle(page)
    recompute, background = interactions(page, url, interactions_count)
    parts = recompute_parts(page)
    # Builds without the recompute log (before 2026-12-06 09:00) stopped the clock at the reply, before
    # writing the numbers; since then it stops once they are written.
    until = "from the change to the numbers written" if parts else "from the change to the engine's reply"
    print(f"[{label}] recompute per picker change ({until}, Pyodide): p50 {percentile(recompute, 0.5):.1f} ms, p95 {percentile(recompute, 0.95):.1f} ms, max {max(recompute):.1f} ms (n={len(recompute)})")
    for name, values in (parts or {}).items():
        print(f"[{label}]   {name}: p50 {percentile(values, 0.5):.1f} ms, p95 {percentile(values, 0.95):.1f} ms (n={len(values)})")
    # The first pass computes every view once; later passes ask for views already asked (the
    # engine keeps the answers of recent views: engine/page PER_VIEW).
    first, again = recompute[: len(INTERACTIONS)], recompute[len(INTERACTIONS):]
    if again:
        print(f"[{label}]   views computed for the first time: p50 {percentile(first, 0.5):.1f} ms, p95 {percentile(first, 0.95):.1f} ms (n={len(first)}); "
              f"asked again: p50 {percentile(again, 0.5):.1f} ms, p95 {percentile(again, 0.95):.1f} ms (n={len(again)})")
    print(f"[{label}] everything (charts, marks, advice, race) done:            p50 {percentile(background, 0.5):.0f} ms, p95 {percentile(background, 0.95):.0f} ms")
    if with_stream:
        for rate in RATES_TPS:
            ttft_ms, rate_pct = stream_error(page, rate)
            print(f"[{label}] stream at {rate:>4} tok/s: TTFT error {ttft_ms:+.1f} ms, rate error {rate_pct:+.2f}%")
        page.goto(url + CLICK_QUERY)
        page.wait_for_selector(READY, timeout=180_000)
        settle(page)
        idle = click_errors(page)
        print(f"[{label}] TTFT error at the click, idle:            median {statistics.median(idle):+.1f} ms, worst {max(idle, key=abs):+.1f} ms (n={len(idle)})")
        spinners = busy_processes(2)
        try:
            busy = click_errors(page)
        finally:
            for process in spinners:
                process.kill()
                process.wait()
        print(f"[{label}] TTFT error at the click, 2 busy processes: median {statistics.median(busy):+.1f} ms, worst {max(busy, key=abs):+.1f} ms (n={len(busy)}; target: within 30 ms)")
    context.close()


#: Clicks Run with the mouse (a trusted input event, as a visitor's) and resolves with the time
#: from the click's own timestamp to the first visible token, in ms.
CLICK_TO_FIRST_TOKEN = """() => { window.__firstToken = new Promise((resolve) => {
  const stream = document.querySelector('.player [data-testid="stream"]');
  const run = document.querySelector('[data-testid="run"]');
  let clicked = null;
  run.addEventListener("click", (event) => { clicked = event.timeStamp; }, {capture: true, once: true});
  new MutationObserver((_records, observer) => {
    if (Number(stream.dataset.tokens) > 0 && clicked !== null) { observer.disconnect(); resolve(performance.now() - clicked); }
  }).observe(stream, {attributes: true, attributeFilter: ["data-tokens"]});
}); }"""
#: The set-up clicked: the page's default view (a 512-token prompt, TTFT about 90 ms).
CLICK_QUERY = ""
CLICKS = 12


def click_errors(page, clicks=CLICKS):
    """TTFT error (shown - predicted, ms) of `clicks` real clicks on Run."""
    errors = []
    for _ in range(clicks):
        page.evaluate(CLICK_TO_FIRST_TOKEN)
        predicted_ms = page.evaluate("() => window.__tokfeel.current().estimate.ttft_s") * 1000
        page.click('[data-testid="run"]')
        shown_ms = page.evaluate("() => window.__firstToken")
        errors.append(shown_ms - predicted_ms)
        page.click('[data-testid="run"]')  # Stop
        page.wait_for_timeout(200)
    return errors


def busy_processes(count=2):
    """`count` processes spinning on the CPU (the machine under load while the visitor clicks)."""
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(count)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--loads", type=int, default=3, help="cold and warm visits of each kind")
    parser.add_argument("--interactions", type=int, default=40)
    parser.add_argument("--soak", type=int, default=200, help="picker changes in the soak (0: no soak)")
    parser.add_argument("--skip-stream", action="store_true", help="leave out the stream timing")
    parser.add_argument("--baseline", metavar="REV", help="also measure the site of this git revision, interleaved")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    load = os.getloadavg()
    print(f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {os.cpu_count()} cores, load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}")
    with tempfile.TemporaryDirectory() as folder:
        sites = {"now": build.build(Path(folder) / "dist")}
        if args.baseline:
            sites[args.baseline] = build_revision(args.baseline, Path(folder))
        served = {}
        for label, site in sites.items():
            write_bare_page(site, f"pyodide/{build.pyodide_version()}/")
            served[label] = Served(site)
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
            results = {label: {"bare_cold": [], "bare_warm": [], "cold": [], "warm": []} for label in sites}
            for _ in range(args.loads):  # interleaved, so every column sees the same load
                for label in sites:
                    measure_loads(browser, served[label], args.loads, results[label])
            for label in sites:
                report_loads(label, results[label], args.loads)
            for label in sites:
                measure_page(browser, served[label].url, label, args.interactions, not args.skip_stream and label == "now")
            if args.soak:
                url = served["now"].url
                baseline, final, soak_recompute, streams, races = soak(browser, url, args.soak, 30, 10)
                half = len(soak_recompute) // 2
                print(f"[now] soak: {args.soak} picker changes, {streams} streams, {races} races in one page")
                if baseline:
                    print(f"[now]   page JS heap after 20: {baseline[0] / 1e6:.1f} MB, at the end {final[0] / 1e6:.1f} MB ({growth(baseline[0], final[0])})")
                    wasm_text = f"{baseline[1] / 1e6:.1f} MB -> {final[1] / 1e6:.1f} MB" if baseline[1] and final[1] else "not exposed"
                    print(f"[now]   worker WebAssembly heap: {wasm_text} ({growth(baseline[1], final[1])})")
                    before, after = baseline[2], final[2]
                    print(f"[now]   JS heap apart from V8's compiled code (heap snapshot): {before['js_bytes'] / 1e6:.2f} MB -> {after['js_bytes'] / 1e6:.2f} MB "
                          f"({growth(before['js_bytes'], after['js_bytes'])}); DOM nodes {before['nodes']} -> {after['nodes']} ({growth(before['nodes'], after['nodes'])}), "
                          f"JS event listeners {before['listeners']} -> {after['listeners']}, detached DOM nodes {before['detached']} -> {after['detached']}")
                print(f"[now]   recompute p95 first half {percentile(soak_recompute[:half], 0.95):.1f} ms, second half {percentile(soak_recompute[half:], 0.95):.1f} ms")
            browser.close()
        for server in served.values():
            server.server.shutdown()
    load = os.getloadavg()
    print(f"load average at the end {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

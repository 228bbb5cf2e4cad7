"""Helpers for the page tests (tests/test_page_*.py): drive the one booted page through its URL
state, wait for the engine's answers, and compute the same thing with the engine in CPython.

The shared page (conftest's ``app``) boots Pyodide once; a test moves it to a view with
``show(page, query)``, which is what the browser's back/forward buttons do (popstate), so no
reload and no second boot is needed.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from urllib.parse import urlencode, urlsplit

ROOT = Path(__file__).resolve().parent.parent

#: The page moves to a URL the way back/forward does.
SHOW_URL = """(url) => { history.pushState(null, "", url); dispatchEvent(new PopStateEvent("popstate")); }"""
#: The view behind the numbers on screen equals the URL's view, and background work is done.
SETTLED = """(expected) => {
  const t = window.__tokfeel;
  const c = t && t.current();
  if (!c || !c.view) return false;
  const v = c.view;
  return Object.entries(expected).every(([k, value]) => v[k] === value);
}"""


def query(**view) -> str:
    return "?" + urlencode(view) if view else ""


def show(page, q: str = "", timeout: int = 30_000) -> dict:
    """Move the page to the view of query string ``q`` and wait until its numbers and its
    background work (charts, marks, advice) are there. Returns the engine's view for it."""
    from engine.page.query import view_from_query

    base = page.url.split("?")[0]
    page.evaluate(SHOW_URL, base + q)
    expected = view_from_query(q)
    page.wait_for_function(SETTLED, arg=expected, timeout=timeout)
    settle(page)
    return expected


def settle(page, timeout: int = 60_000) -> None:
    """Wait until the numbers are for the URL's view and the background work is done."""
    page.wait_for_function("() => window.__tokfeel.settled()", timeout=timeout, polling=50)
    page.evaluate("() => window.__tokfeel.jobs.idle()")
    page.wait_for_function("() => window.__tokfeel.settled()", timeout=timeout, polling=50)


def page_view(page) -> dict:
    """The view in the page's URL, as the engine reads it."""
    from engine.page.query import view_from_query

    return view_from_query(urlsplit(page.url).query)


def value(page, selector: str) -> float:
    return float(page.get_attribute(selector, "data-value"))


def call_engine(fn: str, args) -> dict:
    """engine.page.handle in CPython, exactly as the worker calls it."""
    from engine.page import handle

    answer = json.loads(handle(json.dumps({"fn": fn, "args": args})))
    assert answer["ok"], answer
    return answer["result"]


def axe_violations(page, impacts=("serious", "critical")) -> list[dict]:
    """Run axe-core (from node_modules, injected only in the test) on the page."""
    # The page's CSP allows scripts from its own origin only: serve axe-core from there, for
    # this test alone, through a route (the built site does not contain it).
    url = page.url.split("?")[0].split("#")[0].rsplit("/", 1)[0] + "/__test__/axe.min.js"
    source = (ROOT / "node_modules" / "axe-core" / "axe.min.js").read_text(encoding="utf-8")
    page.route(url, lambda route: route.fulfill(status=200, body=source, content_type="text/javascript"))
    try:
        page.add_script_tag(url=url)
    finally:
        page.unroute(url)
    result = page.evaluate("async () => (await axe.run(document, {resultTypes: ['violations']})).violations")
    return [
        {"id": v["id"], "impact": v["impact"], "help": v["help"], "nodes": [n["target"] for n in v["nodes"]][:5]}
        for v in result
        if v["impact"] in impacts
    ]


def heap_counts(cdp) -> dict:
    """The page's memory after a forced GC, through a CDP session: DOM nodes and JS event listeners
    (Memory.getDOMCounters), detached DOM nodes and the JS heap's bytes apart from compiled code
    (a HeapProfiler snapshot; V8's optimised machine code grows as functions get hot)."""
    cdp.send("HeapProfiler.collectGarbage")
    counters = cdp.send("Memory.getDOMCounters")
    chunks: list[str] = []
    def receive(params):
        chunks.append(params["chunk"])

    cdp.on("HeapProfiler.addHeapSnapshotChunk", receive)
    try:
        cdp.send("HeapProfiler.takeHeapSnapshot", {"reportProgress": False})
    finally:
        cdp.remove_listener("HeapProfiler.addHeapSnapshotChunk", receive)
    snapshot = json.loads("".join(chunks))
    meta = snapshot["snapshot"]["meta"]
    fields, types, strings, nodes = meta["node_fields"], meta["node_types"][0], snapshot["strings"], snapshot["nodes"]
    width, kind, name, size, detached = len(fields), fields.index("type"), fields.index("name"), fields.index("self_size"), fields.index("detachedness")
    js_bytes = 0
    detached_nodes: Counter = Counter()
    for i in range(0, len(nodes), width):
        node_type = types[nodes[i + kind]]
        if node_type not in ("code", "native", "hidden", "synthetic"):
            js_bytes += nodes[i + size]
        if nodes[i + detached] == 2 and node_type in ("native", "object"):
            detached_nodes[strings[nodes[i + name]]] += 1
    return {"nodes": counters["nodes"], "listeners": counters["jsEventListeners"], "detached": sum(detached_nodes.values()), "js_bytes": js_bytes, "detached_kinds": detached_nodes.most_common(5)}

"""The Content Security Policy of every page of the build, read and then tried: scripts only from
the site itself (plus compiling WebAssembly, which Pyodide needs), no inline script, no inline
handler, no eval, connections only to the site and to a server on this computer (for *Measure
your own*), nothing embedded from elsewhere. And the page's scripts never parse markup, so
nothing from a link, a paste or a server can become an element."""

from __future__ import annotations

import http.server
import re
import threading
from html.parser import HTMLParser

import pytest

import build

#: Directives every page must have, exactly.
REQUIRED = {
    "default-src": "'self'",
    "object-src": "'none'",
    "base-uri": "'none'",
    "form-action": "'none'",
    "style-src": "'self'",
}
#: What the main page may add: WebAssembly for Pyodide, its worker, local servers to measure.
MAIN_PAGE = {
    "script-src": "'self' 'wasm-unsafe-eval'",
    "worker-src": "'self'",
    "frame-src": "'none'",
    "connect-src": "'self' http://localhost:* http://127.0.0.1:*",
}
#: Sinks that turn a string into markup or code; the page builds its DOM with createElement and
#: textContent only (dom.js el()).
MARKUP_SINKS = re.compile(r"\.innerHTML\b|\.outerHTML\b|insertAdjacentHTML|document\.write|\beval\s*\(|new Function\s*\(|setTimeout\(\s*[\"'`]|setInterval\(\s*[\"'`]|createContextualFragment|DOMParser")


def policy_of(html: str) -> dict[str, str]:
    match = re.search(r'<meta http-equiv="Content-Security-Policy" content="([^"]+)">', html)
    assert match, "no Content-Security-Policy"
    return dict(part.strip().split(" ", 1) for part in match.group(1).split(";") if part.strip())


class InlineCode(HTMLParser):
    """Inline scripts (other than JSON data islands) and inline event handlers."""

    def __init__(self):
        super().__init__()
        self.found: list[str] = []
        self.script_type = None

    def handle_starttag(self, tag, attrs):
        for name, _value in attrs:
            if name.startswith("on"):
                self.found.append(f"<{tag} {name}>")
            if name in ("href", "src") and (_value or "").strip().lower().startswith("javascript:"):
                self.found.append(f"<{tag} {name}=javascript:>")
        if tag == "script":
            self.script_type = dict(attrs).get("type", "") if "src" not in dict(attrs) else None

    def handle_data(self, data):
        if self.script_type is not None and self.script_type != "application/json" and data.strip():
            self.found.append("inline <script>")

    def handle_endtag(self, tag):
        if tag == "script":
            self.script_type = None


def test_every_page_has_a_strict_policy_and_no_inline_code(built_site):
    pages = sorted(built_site.rglob("*.html"))
    assert pages
    for page in pages:
        html = page.read_text(encoding="utf-8")
        policy = policy_of(html)
        for directive, value in REQUIRED.items():
            assert policy.get(directive) == value, (page.name, directive, policy.get(directive))
        assert policy.get("script-src") in ("'self'", "'self' 'wasm-unsafe-eval'"), page.name
        for value in policy.values():
            assert "unsafe-inline" not in value and "'unsafe-eval'" not in value and "*" not in value.replace(":*", ""), (page.name, value)
            assert not re.search(r"https?://(?!localhost:\*|127\.0\.0\.1:\*)", value), (page.name, value)
        parser = InlineCode()
        parser.feed(html)
        assert parser.found == [], (page.name, parser.found)
    main = policy_of((built_site / "index.html").read_text(encoding="utf-8"))
    for directive, value in MAIN_PAGE.items():
        assert main.get(directive) == value, directive


def test_no_script_of_the_site_turns_text_into_markup_or_code(built_site):
    scripts = sorted(built_site.glob("js/*.js")) + sorted(built_site.glob("assets/*/js/*.js")) + [built_site / build.SERVICE_WORKER]
    assert len(scripts) > 10
    for script in scripts:
        for number, line in enumerate(script.read_text(encoding="utf-8").splitlines(), 1):
            code = line.split("//")[0]
            assert not MARKUP_SINKS.search(code), f"{script.name}:{number}: {line.strip()}"


class LocalServer(http.server.BaseHTTPRequestHandler):
    """A server on this computer that allows the page (as llama-server does)."""

    def log_message(self, *args):
        pass

    def do_GET(self):
        self.send_response(200)
        self.send_header("Access-Control-Allow-Origin", "*")
        self.send_header("Content-Type", "text/plain")
        self.end_headers()
        self.wfile.write(b"local")


#: Each probe tries something the policy must stop (or allow) and reports what happened. It runs
#: as a script of the site (served by a route for this test), because code evaluated through the
#: DevTools protocol is exempt from the eval rules.
PROBES = """window.__probes = (async (localURL) => {
  const seen = [];
  document.addEventListener("securitypolicyviolation", (e) => seen.push(e.violatedDirective.split(" ")[0]));
  const result = {};
  const script = document.createElement("script");
  script.textContent = "window.__inlineRan = true";
  document.body.append(script);
  result.inlineScript = window.__inlineRan === true;
  const div = document.createElement("div");
  div.setAttribute("onclick", "window.__handlerRan = true");
  document.body.append(div);
  div.click();
  result.inlineHandler = window.__handlerRan === true;
  try { eval("1"); result.eval = true; } catch { result.eval = false; }
  try { new Function("return 1")(); result.newFunction = true; } catch { result.newFunction = false; }
  try { await fetch("http://example.com/"); result.foreignFetch = true; } catch { result.foreignFetch = false; }
  try { await fetch("https://cdn.jsdelivr.net/npm/pyodide/pyodide.mjs"); result.cdnFetch = true; } catch { result.cdnFetch = false; }
  try { result.localFetch = await (await fetch(localURL)).text() === "local"; } catch { result.localFetch = false; }
  try { new Worker(URL.createObjectURL(new Blob(["1"], { type: "text/javascript" }))); result.blobWorker = true; } catch { result.blobWorker = false; }
  const frame = document.createElement("iframe");
  frame.src = "favicon.svg";
  document.body.append(frame);
  const image = document.createElement("img");
  image.src = "http://example.com/pixel.png";
  document.body.append(image);
  result.wasm = await WebAssembly.compile(new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0])).then(() => true, () => false);
  await new Promise((resolve) => setTimeout(resolve, 300));
  result.violations = [...new Set(seen)].sort();
  frame.remove(); image.remove(); div.remove(); script.remove();
  return result;
})(document.currentScript.dataset.local);
"""


@pytest.mark.browser
def test_the_policy_holds_in_the_browser(browser, site_url):
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), LocalServer)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    context = browser.new_context(service_workers="block")
    context.route("**/pyodide/**", lambda route: route.abort())  # the engine is not needed here
    page = context.new_page()
    context.route("**/__test__/probes.js", lambda route: route.fulfill(status=200, body=PROBES, content_type="text/javascript"))
    try:
        page.goto(site_url)
        page.evaluate(
            """(local) => new Promise((resolve, reject) => {
                const script = Object.assign(document.createElement("script"), { src: "__test__/probes.js" });
                script.dataset.local = local;
                script.onload = resolve;
                script.onerror = reject;
                document.head.append(script);
            })""",
            f"http://localhost:{server.server_address[1]}/",
        )
        result = page.evaluate("() => window.__probes")
        assert result["inlineScript"] is False and result["inlineHandler"] is False
        assert result["eval"] is False and result["newFunction"] is False
        assert result["foreignFetch"] is False and result["cdnFetch"] is False
        assert result["localFetch"] is True, "the page must reach a server on this computer (Measure your own)"
        assert result["wasm"] is True, "Pyodide needs WebAssembly ('wasm-unsafe-eval')"
        for directive in ("script-src-elem", "script-src-attr", "script-src", "connect-src", "img-src", "frame-src", "worker-src"):
            assert directive in result["violations"], (directive, result["violations"])
    finally:
        context.close()
        server.shutdown()
        server.server_close()

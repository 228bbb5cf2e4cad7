"""What a visitor types, pastes or measures: a config.json that is not JSON, of the wrong shape,
missing or contradicting fields, absurd, nested without end or 20 MB long; custom numbers out
of range; and a local server that answers with junk, markup, negative or absurd numbers, an
error page or an endless line. Each gets a message next to the input it is about, the page stays
responsive, and no "NaN", negative number or injected element ever appears."""

from __future__ import annotations

import http.server
import json
import re
import threading

import pytest

from engine.models import load_models
from engine.page.view import estimate_view
from pagekit import page_view, settle, show, value

pytestmark = pytest.mark.browser

MODEL_ERROR = '[data-testid="custom-model-error"]'
HARDWARE_ERROR = '[data-testid="custom-hw-error"]'
FORM_ERROR = '[data-testid="form-error"]'
METRICS = [f'.results [data-testid="{testid}"]' for testid in ("decode-tps", "prefill-tps", "ttft", "fit")]
BAD_TEXT = re.compile(r"\bNaN\b|\bInfinity\b|\bundefined\b|\[object Object\]|(?<![\w-])-[0-9]")
INJECTED = "() => window.__pwned !== undefined || document.querySelectorAll('[id^=\"pwned\"], [onerror], [onload]').length > 0"


def llama_config() -> dict:
    return dict(load_models()["llama-3.1-8b"].config)


def without(config: dict, key: str) -> dict:
    return {k: v for k, v in config.items() if k != key}


#: (what is pasted, words the message next to the box must contain).
PASTES = [
    ("{", ["not valid JSON"]),
    ('{"hidden_size": NaN}', ["not valid JSON"]),
    ("[1, 2, 3]", ["one JSON object"]),
    ('"a string"', ["one JSON object"]),
    ("{}", ["model_type"]),
    (json.dumps({"model_type": "<img id=pwned-type src=x onerror=window.__pwned=1>"}), ["not supported"]),
    (json.dumps({**llama_config(), "hidden_size": "big"}), ["hidden_size"]),
    (json.dumps({**llama_config(), "num_hidden_layers": 31.5}), ["num_hidden_layers"]),
    (json.dumps({**llama_config(), "intermediate_size": -5}), ["intermediate_size"]),
    (json.dumps(without(llama_config(), "num_hidden_layers")), ["missing", "num_hidden_layers"]),
    (json.dumps({**llama_config(), "num_key_value_heads": 5}), ["num_attention_heads", "multiple"]),
    (json.dumps({**llama_config(), "hidden_size": 10**12}), ["hidden_size", "implausibly large"]),
    ('{"a":' * 40 + "1" + "}" * 40, ["nests deeper than 16"]),
    (json.dumps({**llama_config(), "id2label": {str(i): f"label {i}" for i in range(3000)}}), ["a link can carry at most 20,000"]),
]


def visible_text(page) -> str:
    """The page's visible text, without the message about a paste (it may quote the paste)."""
    return page.evaluate("() => document.body.innerText.replace(document.querySelector('[data-testid=\"custom-model-error\"]').innerText, '')")


def assert_page_is_sound(page) -> None:
    assert not page.evaluate(INJECTED)
    text = visible_text(page)
    match = BAD_TEXT.search(text)
    assert not match, text[max(0, match.start() - 80):match.end() + 80]


def apply_config(page, text: str) -> None:
    """Paste `text` into the config box (set directly: a 20 MB fill would be typing) and apply."""
    page.evaluate("(text) => { const box = document.querySelector('[data-testid=\"custom-model-config\"]'); box.value = text; }", text)
    page.click('[data-testid="custom-model-apply"]')


def test_a_pasted_config_json_gets_a_message_for_what_is_wrong(app):
    page, _log, _console = app
    show(page)
    page.select_option('[data-testid="model-select"]', "custom")
    try:
        for text, words in PASTES:
            apply_config(page, text)
            page.wait_for_function(
                "(words) => { const e = document.querySelector('[data-testid=\"custom-model-error\"]'); return !e.hidden && words.every((w) => e.textContent.includes(w)); }",
                arg=words,
                timeout=20_000,
            )
            assert_page_is_sound(page)
            for metric in METRICS:
                assert page.inner_text(metric) in ("—", "…"), (text[:80], metric)
        # A real one is used, and its numbers are the engine's.
        apply_config(page, json.dumps(llama_config(), indent=2))
        page.wait_for_function("() => window.__tokfeel.current()?.view.model === 'custom' && !window.__tokfeel.current().failed")
        settle(page)
        assert page.locator(MODEL_ERROR).is_hidden()
        expected = estimate_view(page_view(page))["estimate"]
        assert value(page, METRICS[0]) == pytest.approx(expected["decode_tps"], rel=1e-9)
        assert_page_is_sound(page)
    finally:
        page.evaluate("() => { document.querySelector('[data-testid=\"custom-model-config\"]').value = ''; }")
        show(page)


def test_a_20_mb_paste_is_refused_at_once_and_the_page_stays_responsive(app):
    page, _log, _console = app
    show(page)
    page.select_option('[data-testid="model-select"]', "custom")
    try:
        page.evaluate("() => { document.querySelector('[data-testid=\"custom-model-config\"]').value = '{\"a\": \"' + 'x'.repeat(20 * 1000 * 1000) + '\"}'; }")
        took_ms = page.evaluate(
            """() => { const t = performance.now(); document.querySelector('[data-testid="custom-model-apply"]').click(); return performance.now() - t; }"""
        )
        assert took_ms < 200, took_ms
        message = page.inner_text(MODEL_ERROR)
        assert "20,000,0" in message and "characters" in message, message
        # Still answering: a frame is drawn and a control works right away.
        assert page.evaluate("() => new Promise((resolve) => requestAnimationFrame(() => resolve(true)))")
        page.select_option('[data-testid="model-select"]', "llama-3.1-8b")
        page.wait_for_function("() => window.__tokfeel.current()?.view.model === 'llama-3.1-8b'")
        assert_page_is_sound(page)
    finally:
        page.evaluate("() => { document.querySelector('[data-testid=\"custom-model-config\"]').value = ''; }")
        show(page)


def set_input(page, selector: str, text: str) -> None:
    """Type into an input as a browser would deliver it (a number field holds "" for junk)."""
    page.evaluate(
        "([selector, text]) => { const input = document.querySelector(selector); input.value = text; input.dispatchEvent(new Event('input', { bubbles: true })); }",
        [selector, text],
    )


#: (field, typed text, words its message contains).
CUSTOM_NUMBERS = [
    ('[data-testid="custom-hw-bw"]', "-5", ["bandwidth", "negative", "20,000"]),
    ('[data-testid="custom-hw-bw"]', "0", ["bandwidth", "outside", "20,000"]),
    ('[data-testid="custom-hw-bw"]', "1e309", ["bandwidth", "not a number"]),
    ('[data-testid="custom-hw-mem"]', "NaN", ["memory", "not a number"]),
    ('[data-testid="custom-hw-mem"]', "99999", ["memory", "outside", "4,096"]),
    ('[data-testid="custom-hw-tf"]', "Infinity", ["TFLOPS", "not a number"]),
    ('[data-testid="custom-hw-name"]', "x" * 61, ["name", "too long"]),
]
OTHER_NUMBERS = [
    ('[data-testid="prompt-tokens"]', "-1", ["prompt", "negative"]),
    ('[data-testid="prompt-tokens"]', "99999999999", ["prompt", "not a whole number"]),
    ('[data-testid="prompt-tokens"]', "2.5", ["prompt", "not a whole number"]),
    ('[data-testid="batch-input"]', "0", ["concurrent", "outside"]),
]


def test_custom_numbers_out_of_range_get_a_message_by_their_field(app):
    page, _log, _console = app
    show(page)
    page.select_option('[data-testid="hardware-select"]', "custom")
    page.wait_for_function("() => window.__tokfeel.current()?.view.hw === 'custom'")
    settle(page)
    numbers = [page.inner_text(metric) for metric in METRICS]
    try:
        for selector, text, words in CUSTOM_NUMBERS + OTHER_NUMBERS:
            box = HARDWARE_ERROR if "custom-hw" in selector else FORM_ERROR
            set_input(page, selector, text)
            message = page.inner_text(box)
            assert page.is_visible(box) and all(w.lower() in message.lower() for w in words), (text, message)
            # The numbers of the last valid set-up stay; nothing broken is shown.
            assert [page.inner_text(metric) for metric in METRICS] == numbers
            assert_page_is_sound(page)
            show(page, "?hw=custom")
    finally:
        show(page)


class HostileServer(http.server.BaseHTTPRequestHandler):
    """A 'local model server' whose answers are junk in one way per model name asked for."""

    def log_message(self, *args):
        pass

    def do_OPTIONS(self):
        self.send_response(204)
        self.cors()
        self.end_headers()

    def cors(self):
        self.send_header("Access-Control-Allow-Origin", "*")
        self.send_header("Access-Control-Allow-Headers", "content-type")
        self.send_header("Access-Control-Allow-Methods", "POST, OPTIONS")

    def do_POST(self):
        kind = json.loads(self.rfile.read(int(self.headers["Content-Length"])))["model"]
        if kind == "error":
            self.send_response(500)
            self.cors()
            self.end_headers()
            self.wfile.write(b"<html><script>window.__pwned=1</script><img id=pwned-error src=x onerror=window.__pwned=1></html>")
            return
        self.send_response(200)
        self.cors()
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        if kind == "endless":
            for _ in range(40):
                self.wfile.write(b"x" * 65536)
            return
        if kind == "silent":
            self.wfile.write(b"data: {\"choices\": [{\"delta\": {}}]}\n\ndata: [DONE]\n\n")
            return
        for i in range(12):
            chunk = {"choices": [{"delta": {"content": f"<img id=pwned-{i} src=x onerror=window.__pwned=1>"}}]}
            self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
        self.wfile.write(b"data: not json at all\n\n")
        usage = {"choices": [], "usage": {"prompt_tokens": "<b>14</b>", "completion_tokens": -5}, "timings": {"predicted_per_second": -3}}
        self.wfile.write(f"data: {json.dumps(usage)}\n\ndata: [DONE]\n\n".encode())


@pytest.fixture()
def hostile_server():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), HostileServer)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def measure(page, base: str, kind: str) -> str:
    page.fill('[data-testid="measure-url"]', base)
    page.fill('[data-testid="measure-model"]', kind)
    before = page.inner_text('[data-testid="measure-status"]')
    page.click('[data-testid="measure-run"]')
    page.wait_for_function(
        "(before) => { const s = document.querySelector('[data-testid=\"measure-status\"]').textContent; return s !== before && !s.startsWith('Asking'); }",
        arg=before,
        timeout=30_000,
    )
    return page.inner_text('[data-testid="measure-status"]')


@pytest.fixture()
def page_without_engine(browser, site_url):
    """A page of its own (a server's error page is a console error, which the shared page must
    not collect); measuring needs no engine, so the runtime is refused and none boots."""
    context = browser.new_context(service_workers="block")
    context.route("**/pyodide/**", lambda route: route.abort())
    page = context.new_page()
    page.goto(site_url)
    yield page
    context.close()


def test_a_local_server_answering_junk_never_breaks_the_page(page_without_engine, hostile_server):
    page = page_without_engine
    # Junk values: the server's own numbers are ignored, the page counts what streamed.
    text = measure(page, hostile_server, "junk")
    assert "Measured 12 tokens" in text, text
    tps = page.get_attribute('[data-testid="measure-tps"]', "data-value")
    assert tps == "" or float(tps) > 0
    assert float(page.get_attribute('[data-testid="measure-ttft"]', "data-value")) >= 0
    assert "reports" not in text  # a negative server rate is not quoted
    assert_page_is_sound(page)
    for kind, words in (("error", "HTTP 500"), ("endless", "longer than a million characters"), ("silent", "sent no tokens")):
        text = measure(page, hostile_server, kind)
        assert words in text, (kind, text)
        assert_page_is_sound(page)
        assert page.locator('[data-testid="measure-table"]').is_hidden()

"""Measure what the server really runs: loopback servers (127.0.0.1 only, stopped by each test)
that answer like llama-server, Ollama (part of the model in system RAM) and LM Studio. The panel
names the catalog model the server runs, predicts for exactly that on the chosen device (equal to
the engine's own answer in CPython), shows the server's own timings and flags, and its share
button's rows parse with the engine's own calibration-CSV reader."""

from __future__ import annotations

import csv
import http.server
import io
import json
import socket
import threading
import time
from pathlib import Path
from urllib.parse import unquote

import pytest

from conftest import BOOT_TIMEOUT_MS, loopback_url, serving
from engine.tools.score import load_cases
from pagekit import call_engine, show

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parent.parent
TOKENS = 40
RATE_TPS = 80.0


class FakeServer(http.server.BaseHTTPRequestHandler):
    """Routes: {(method, path): callable(self, body) -> (status, content type, bytes or iterator)}."""

    routes: dict = {}
    seen: list = []

    def log_message(self, *args):
        pass

    def cors(self):
        self.send_header("Access-Control-Allow-Origin", "*")
        self.send_header("Access-Control-Allow-Headers", "content-type, authorization")
        self.send_header("Access-Control-Allow-Methods", "GET, POST, OPTIONS")

    def do_OPTIONS(self):
        self.send_response(204)
        self.cors()
        self.end_headers()

    def answer(self, method):
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length)) if length else None
        type(self).seen.append((method, self.path))
        route = self.routes.get((method, self.path))
        if route is None:
            self.send_response(404)
            self.cors()
            self.end_headers()
            return
        status, content_type, payload = route(self, body)
        self.send_response(status)
        self.cors()
        self.send_header("Content-Type", content_type)
        self.end_headers()
        if isinstance(payload, bytes):
            self.wfile.write(payload)
            return
        start = time.perf_counter()
        for i, chunk in enumerate(payload):
            time.sleep(max(0.0, start + 0.1 + i / RATE_TPS - time.perf_counter()))
            self.wfile.write(chunk)
            self.wfile.flush()

    def do_GET(self):
        self.answer("GET")

    def do_POST(self):
        self.answer("POST")


def as_json(value):
    return lambda handler, body: (200, "application/json", json.dumps(value).encode())


def sse(chunks):
    return (f"data: {json.dumps(c)}\n\n".encode() for c in chunks)


# llama-server: /props, /v1/models meta, /slots, streamed timings with a prompt-cache hit.
LLAMA_TIMINGS = {"cache_n": 3, "prompt_n": 11, "prompt_ms": 8.0, "prompt_per_second": 1375.0, "predicted_n": TOKENS, "predicted_ms": 500.0, "predicted_per_second": 78.9}


def llama_chat(handler, body):
    assert body["stream"] is True
    chunks = [{"choices": [{"delta": {"content": f"t{i} "}}]} for i in range(TOKENS)]
    chunks.append({"choices": [{"delta": {}, "finish_reason": "length"}], "timings": LLAMA_TIMINGS, "usage": {"prompt_tokens": 14, "completion_tokens": TOKENS}})
    return 200, "text/event-stream", (*sse(chunks), b"data: [DONE]\n\n")


class LlamaServer(FakeServer):
    routes = {
        ("GET", "/props"): as_json({"model_path": "/models/Llama-3.2-1B-Instruct-Q4_K_M.gguf", "model_ftype": "Q4_K - Medium", "build_info": "b6123-deadbeef", "total_slots": 1, "default_generation_settings": {"n_ctx": 4096}}),
        ("GET", "/v1/models"): as_json({"object": "list", "data": [{"id": "Llama-3.2-1B-Instruct-Q4_K_M.gguf", "object": "model", "meta": {"n_params": 1235814432, "size": 807694464, "n_ctx_train": 131072, "n_embd": 2048, "n_vocab": 128256}}]}),
        ("GET", "/slots"): as_json([{"id": 0, "is_processing": False}]),
        ("POST", "/v1/chat/completions"): llama_chat,
    }


# Ollama: 38% of the loaded model outside GPU memory; native /api/chat durations in ns.
def ollama_chat(handler, body):
    assert body["model"] == "llama3.1:8b" and body["stream"] is True
    lines = [{"model": "llama3.1:8b", "message": {"role": "assistant", "content": f"t{i} "}, "done": False} for i in range(TOKENS)]
    lines.append({"model": "llama3.1:8b", "message": {"role": "assistant", "content": ""}, "done": True, "total_duration": 2_100_000_000, "load_duration": 1_500_000_000,
                  "prompt_eval_count": 14, "prompt_eval_duration": 35_000_000, "eval_count": TOKENS, "eval_duration": 2_000_000_000})
    return 200, "application/x-ndjson", (json.dumps(line).encode() + b"\n" for line in lines)


OLLAMA_PS = {"models": [{"name": "llama3.1:8b", "model": "llama3.1:8b", "size": 6_500_000_000, "size_vram": 4_000_000_000, "context_length": 4096,
                         "details": {"format": "gguf", "family": "llama", "parameter_size": "8.0B", "quantization_level": "Q4_K_M"}}]}


class Ollama(FakeServer):
    routes = {
        ("GET", "/api/ps"): as_json(OLLAMA_PS),
        ("GET", "/api/tags"): as_json({"models": [{"name": "llama3.1:8b", "model": "llama3.1:8b", "size": 4_920_734_000}]}),
        ("GET", "/api/version"): as_json({"version": "0.32.15"}),
        ("POST", "/api/show"): as_json({"details": {"quantization_level": "Q4_K_M", "parameter_size": "8.0B"},
                                        "model_info": {"general.architecture": "llama", "general.parameter_count": 8030261248, "llama.block_count": 32, "llama.embedding_length": 4096, "llama.attention.head_count": 32, "llama.attention.head_count_kv": 8}}),
        ("POST", "/api/chat"): ollama_chat,
    }


# LM Studio: /api/v1/models and the named events of /api/v1/chat.
def lmstudio_chat(handler, body):
    assert body["model"] == "qwen3-8b" and body["stream"] is True and "input" in body
    events = [("chat.start", {"type": "chat.start", "model_instance_id": "qwen3-8b"}), ("message.start", {"type": "message.start"})]
    events += [("message.delta", {"type": "message.delta", "content": f"t{i} "}) for i in range(TOKENS)]
    events.append(("chat.end", {"type": "chat.end", "result": {"stats": {"input_tokens": 14, "total_output_tokens": TOKENS, "tokens_per_second": 61.2, "time_to_first_token_seconds": 0.081}}}))
    return 200, "text/event-stream", (f"event: {name}\ndata: {json.dumps(data)}\n\n".encode() for name, data in events)


class LmStudio(FakeServer):
    routes = {
        ("GET", "/api/v1/models"): as_json({"models": [
            {"type": "llm", "publisher": "lmstudio-community", "key": "qwen3-8b", "display_name": "Qwen3 8B", "architecture": "qwen3", "quantization": {"name": "Q4_K_M", "bits_per_weight": 4},
             "size_bytes": 5_027_783_488, "params_string": "8B", "loaded_instances": [{"id": "qwen3-8b", "config": {"context_length": 4096, "flash_attention": True}}], "max_context_length": 40960, "format": "gguf"},
            {"type": "embedding", "key": "text-embedding-nomic-embed-text-v1.5", "loaded_instances": []}]}),
        ("POST", "/api/v1/chat"): lmstudio_chat,
    }


def measure(page, base: str) -> dict:
    page.fill('[data-testid="measure-url"]', base)
    page.fill('[data-testid="measure-model"]', "")
    page.click('[data-testid="measure-run"]')
    page.wait_for_selector('[data-testid="measure-table"]:not([hidden])', timeout=60_000)
    return page.evaluate("""() => {
      const q = (s) => document.querySelector(s);
      return {
        model: q('[data-testid="measure-model-detected"]').dataset.value,
        how: q('[data-testid="measure-model-detected"]').textContent,
        predicted: q('[data-testid="measure-predicted-tps"]').dataset.value,
        measured: q('[data-testid="measure-tps"]').dataset.value,
        own: q('#measure-tps-own').textContent,
        ownPrefill: q('#measure-pp-own').textContent,
        flags: q('#measure-flags').textContent,
        status: q('[data-testid="measure-status"]').textContent,
        share: q('[data-testid="measure-share"]').dataset.value,
      };
    }""")


def expected_prediction(view: dict, report: dict) -> dict:
    return call_engine("server_model", {"report": report, "view": {**view, "prompt": 14}})


def rows_of(text: str) -> list[dict]:
    return list(csv.DictReader(io.StringIO(text)))


def check_share(text: str, tmp_path, model_name: str, engine: str) -> list[dict]:
    """The rows are calibration CSV: the same header, and the engine's reader resolves them."""
    header = (ROOT / "data" / "calibration" / "measurements.csv").read_text(encoding="utf-8").splitlines()[0]
    assert text.splitlines()[0] == header
    rows = rows_of(text)
    assert {r["test"] for r in rows} == {"pp", "tg"}
    assert all(r["source_id"] == "tokfeel_visitor_measurement" and r["model"] == model_name and r["engine"] == engine for r in rows)
    path = tmp_path / "shared.csv"
    path.write_text(text, encoding="utf-8")
    cases = load_cases(str(path))
    assert len(cases) == 2 and all(case.resolved for case in cases), [c.status for c in cases]
    return rows


@pytest.fixture(scope="module")
def own_page(browser, site_url):
    """A page of its own: probing a server logs its 404s and refused connections as console
    errors, which the shared page must not collect."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.goto(site_url)
    page.wait_for_selector('[data-testid="engine-status"][data-state="ready"]', timeout=BOOT_TIMEOUT_MS)
    yield page
    context.close()


@pytest.fixture()
def view_3060(own_page):
    yield own_page, show(own_page, "?hw=rtx-3060")


def test_llama_server_model_prediction_timings_flags_and_share(view_3060, tmp_path):
    page, view = view_3060
    with serving(LlamaServer) as server:
        result = measure(page, loopback_url(server))
    assert result["model"] == "llama-3.2-1b", result
    assert "Llama 3.2 1B, Q4_K_M, 0.81 GB" in result["how"] and "from the server" in result["how"]
    report = {"server": "llama-server", "names": ["Llama-3.2-1B-Instruct-Q4_K_M.gguf", "Llama-3.2-1B-Instruct-Q4_K_M.gguf"], "ftype": "Q4_K - Medium",
              "params": 1235814432, "size_bytes": 807694464, "n_ctx": 4096, "n_embd": 2048, "build_info": "b6123-deadbeef"}
    expected = expected_prediction(view, report)
    assert expected["view"]["build"] == 6123 and "llama.cpp b6123" in result["how"]
    assert float(result["predicted"]) == pytest.approx(expected["estimate"]["decode_tps"], rel=1e-9)
    assert "78.9" in result["own"] and "1,375" in result["ownPrefill"]
    assert float(result["measured"]) == pytest.approx(RATE_TPS, rel=0.25)
    assert "prompt cache" in result["flags"]
    rows = check_share(result["share"], tmp_path, "Llama 3.2 1B", "llama.cpp")
    tg = next(r for r in rows if r["test"] == "tg")
    assert tg["hardware"] == "NVIDIA GeForce RTX 3060" and tg["quant"] == "Q4_K_M" and float(tg["tokens_per_s"]) == 78.9 and "b6123" in tg["notes"]
    # The rate goes into the URL (me_run), so a copied link shows it beside this computer's lane.
    assert "me_run=rtx-3060*llama-3.2-1b*Q4_K_M*78.90" in unquote(page.evaluate("location.search"))


def test_llama_servers_logged_layers_are_the_ngl_predicted(view_3060):
    """llama-server reports no layer count over HTTP; its load log says "offloaded N/M layers to
    GPU". Pasted into the panel it is predicted as -ngl N (the page's -ngl field, not the share)."""
    page, view = view_3060
    page.fill('[data-testid="measure-log"]', "load_tensors: offloaded 10/17 layers to GPU")
    try:
        with serving(LlamaServer) as server:
            result = measure(page, loopback_url(server))
    finally:
        page.fill('[data-testid="measure-log"]', "")
    report = {"server": "llama-server", "names": ["Llama-3.2-1B-Instruct-Q4_K_M.gguf", "Llama-3.2-1B-Instruct-Q4_K_M.gguf"], "ftype": "Q4_K - Medium",
              "params": 1235814432, "size_bytes": 807694464, "n_ctx": 4096, "n_embd": 2048, "build_info": "b6123-deadbeef",
              "offload_log": "load_tensors: offloaded 10/17 layers to GPU"}
    expected = expected_prediction(view, report)
    assert (expected["view"]["offload"], expected["view"]["ngl"]) == ("flags", 10)
    assert expected["estimate"]["memory"]["n_gpu_layers"] == 10
    assert float(result["predicted"]) == pytest.approx(expected["estimate"]["decode_tps"], rel=1e-9)
    without = expected_prediction(view, {k: v for k, v in report.items() if k != "offload_log"})
    assert float(result["predicted"]) < without["estimate"]["decode_tps"]
    assert "offloaded 10 of 17 layers" in result["flags"]


def test_ollama_partial_offload_is_predicted_with_it(view_3060, tmp_path):
    page, view = view_3060
    Ollama.seen = []
    with serving(Ollama) as server:
        result = measure(page, loopback_url(server))
    assert result["model"] == "llama-3.1-8b", result
    report = {"server": "ollama", "names": ["llama3.1:8b"], "arch": "llama", "ftype": "Q4_K_M", "params": 8030261248, "params_string": "8.0B",
              "size_bytes": 4_920_734_000, "loaded_bytes": 6_500_000_000, "size_vram": 4_000_000_000, "n_ctx": 4096, "layers": 32, "n_embd": 4096, "version": "0.32.15"}
    expected = expected_prediction(view, report)
    assert (expected["view"]["offload"], expected["view"]["gpu_pct"], expected["view"]["engine"]) == ("layers", 62, "ollama")
    assert "Ollama 0.32.15" in result["how"] and "llama-server" in result["how"]
    assert expected["estimate"]["fit"] == "offload"
    assert float(result["predicted"]) == pytest.approx(expected["estimate"]["decode_tps"], rel=1e-9)
    assert "system RAM" in result["flags"] and "loaded the model inside this run" in result["flags"]
    assert "20.0" in result["own"]  # 40 tokens in 2.0 s, the server's own eval_duration
    assert ("POST", "/api/chat") in Ollama.seen  # its native API, which carries the durations
    check_share(result["share"], tmp_path, "Llama 3.1 8B", "ollama")


class OllamaBefore030(Ollama):
    """Ollama 0.23.1: its own Go engine for many architectures (engines.toml ollama-legacy)."""

    routes = {**Ollama.routes, ("GET", "/api/version"): as_json({"version": "0.23.1"})}


class OllamaWithoutVersion(Ollama):
    """An Ollama (or a proxy in front of one) whose /api/version answers 404."""

    routes = {k: v for k, v in Ollama.routes.items() if k != ("GET", "/api/version")}


def test_an_ollama_before_0_30_is_compared_with_its_go_engine(view_3060, tmp_path):
    """The server's /api/version picks the engine (engines.ollama_engine_for_version, the rule
    the calibration rows follow): 0.23.1 is compared with Ollama before 0.30, the panel says so
    and why, and the shared rows name the release so the engine's scorer reads them the same way."""
    from engine.tools.score import row_request

    page, view = view_3060
    OllamaBefore030.seen = []
    with serving(OllamaBefore030) as server:
        result = measure(page, loopback_url(server))
    assert ("GET", "/api/version") in OllamaBefore030.seen
    assert result["model"] == "llama-3.1-8b", result
    assert "Compared with Ollama before 0.30" in result["how"] and "the server is Ollama 0.23.1" in result["how"], result["how"]
    report = {"server": "ollama", "names": ["llama3.1:8b"], "arch": "llama", "ftype": "Q4_K_M", "params": 8030261248, "params_string": "8.0B",
              "size_bytes": 4_920_734_000, "loaded_bytes": 6_500_000_000, "size_vram": 4_000_000_000, "n_ctx": 4096, "layers": 32, "n_embd": 4096, "version": "0.23.1"}
    expected = expected_prediction(view, report)
    assert expected["view"]["engine"] == "ollama-legacy" and expected["text"] == result["how"]
    assert float(result["predicted"]) == pytest.approx(expected["estimate"]["decode_tps"], rel=1e-9)
    rows = check_share(result["share"], tmp_path, "Llama 3.1 8B", "ollama")
    assert all("backend_version=0.23.1" in r["notes"] and row_request(r)["engine"] == "Ollama before 0.30" for r in rows)


class OllamaGarbageVersion(Ollama):
    routes = {**Ollama.routes, ("GET", "/api/version"): as_json({"version": "<b>nightly</b>"})}


@pytest.mark.parametrize(("server_class", "said"), [(OllamaWithoutVersion, "did not report its version"), (OllamaGarbageVersion, "“<b>nightly</b>” names no release")])
def test_an_ollama_that_does_not_say_its_release_keeps_todays_engine_and_says_so(view_3060, server_class, said):
    page, _view = view_3060
    with serving(server_class) as server:
        result = measure(page, loopback_url(server))
    assert result["model"] == "llama-3.1-8b", result
    assert "Compared with Ollama (0.30 and later" in result["how"] and said in result["how"] and "Traceback" not in result["how"], result["how"]
    assert float(result["predicted"]) > 0


def test_lm_studio_model_and_its_own_stats(view_3060, tmp_path):
    page, view = view_3060
    with serving(LmStudio) as server:
        result = measure(page, loopback_url(server))
    assert result["model"] == "qwen3-8b", result
    report = {"server": "lmstudio", "names": ["qwen3-8b", "Qwen3 8B"], "arch": "qwen3", "ftype": "Q4_K_M", "format": "gguf", "params_string": "8B", "size_bytes": 5_027_783_488, "n_ctx": 4096}
    expected = expected_prediction(view, report)
    assert float(result["predicted"]) == pytest.approx(expected["estimate"]["decode_tps"], rel=1e-9)
    assert "61.2" in result["own"]
    # LM Studio reports no prefill rate of its own: only the decode row can be shared.
    rows = rows_of(result["share"])
    assert [r["test"] for r in rows] == ["tg"] and rows[0]["flash_attn"] == "1"


def test_nothing_running_says_blocked_or_not_running(own_page):
    page = own_page
    show(page)
    with serving(FakeServer) as server:
        base = loopback_url(server)
    # The server is stopped: the port refuses connections.
    page.fill('[data-testid="measure-url"]', base)
    page.click('[data-testid="measure-run"]')
    page.wait_for_function("() => /tell the two apart|Could not reach/.test(document.querySelector('[data-testid=\"measure-status\"]').textContent)", timeout=30_000)
    text = page.inner_text('[data-testid="measure-status"]')
    assert "no server is running" in text and "blocked" in text and "OLLAMA_ORIGINS" in text and "Enable CORS" in text


def test_the_measure_panel_opens_at_its_fragment_whatever_hides_it(own_page):
    page = own_page
    show(page)
    # Hide it the ways a layout can: a closed <details> around it and a hidden section.
    page.evaluate("""() => {
      const panel = document.getElementById('measure');
      const details = document.createElement('details');
      panel.replaceWith(details);
      details.append(panel);
      panel.hidden = true;
      window.scrollTo(0, 0);
      location.hash = '#measure';
    }""")
    page.wait_for_function("() => { const r = document.getElementById('measure').getBoundingClientRect(); return r.height > 0 && r.top >= -1 && r.top < innerHeight; }", timeout=10_000)
    assert page.locator('[data-testid="measure-run"]').is_visible()
    page.evaluate("() => history.replaceState(null, '', location.pathname + location.search)")


# LM Studio 0.3.x: no /api/v1 (404), the /api/v0 REST API and its OpenAI-style chat with `stats`.
def lmstudio_v0_chat(handler, body):
    assert body["model"] == "qwen3-8b" and body["stream"] is True
    chunks = [{"choices": [{"delta": {"content": f"t{i} "}}]} for i in range(TOKENS)]
    chunks.append({"choices": [{"delta": {}, "finish_reason": "length"}], "stats": {"tokens_per_second": 57.5, "time_to_first_token": 0.09}, "usage": {"prompt_tokens": 14, "completion_tokens": TOKENS}})
    return 200, "text/event-stream", (*sse(chunks), b"data: [DONE]\n\n")


class LmStudioV0(FakeServer):
    routes = {
        ("GET", "/api/v0/models"): as_json({"object": "list", "data": [
            {"id": "text-embedding-nomic-embed-text-v1.5", "type": "embeddings", "state": "not-loaded"},
            {"id": "qwen3-8b", "type": "llm", "arch": "qwen3", "quantization": "Q4_K_M", "compatibility_type": "gguf", "state": "loaded", "max_context_length": 40960, "loaded_context_length": 8192}]}),
        ("POST", "/api/v0/chat/completions"): lmstudio_v0_chat,
    }


def test_lm_studio_before_its_v1_api_is_read_through_v0(view_3060):
    page, view = view_3060
    LmStudioV0.seen = []
    with serving(LmStudioV0) as server:
        result = measure(page, loopback_url(server))
    assert ("GET", "/api/v1/models") in LmStudioV0.seen and ("GET", "/api/v0/models") in LmStudioV0.seen
    assert result["model"] == "qwen3-8b", result
    report = {"server": "lmstudio", "names": ["qwen3-8b"], "arch": "qwen3", "ftype": "Q4_K_M", "format": "gguf", "n_ctx": 8192}
    expected = expected_prediction(view, report)
    assert expected["view"]["ctx"] == 8192
    assert float(result["predicted"]) == pytest.approx(expected["estimate"]["decode_tps"], rel=1e-9)
    assert "57.5" in result["own"]


class LockedLlamaServer(LlamaServer):
    """llama-server started with --api-key: every route answers 401 without the bearer token."""

    def answer(self, method):
        if self.headers.get("Authorization") != "Bearer s3cret":
            type(self).seen.append((method, self.path, "refused"))
            self.send_response(401)
            self.cors()
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(b'{"error":{"code":401,"message":"Invalid API Key","type":"authentication_error"}}')
            return
        super().answer(method)


def test_a_server_behind_an_api_token_asks_for_it_then_measures_with_it(view_3060):
    page, _view = view_3060
    LockedLlamaServer.seen = []
    page.fill('[data-testid="measure-token"]', "")
    with serving(LockedLlamaServer) as server:
        base = loopback_url(server)
        page.fill('[data-testid="measure-url"]', base)
        page.click('[data-testid="measure-run"]')
        page.wait_for_function("() => /API token/.test(document.querySelector('[data-testid=\"measure-status\"]').textContent)", timeout=30_000)
        assert "HTTP 401" in page.inner_text('[data-testid="measure-status"]')
        assert page.locator('[data-testid="measure-table"]').is_hidden()
        page.fill('[data-testid="measure-token"]', "s3cret")
        result = measure(page, base)
    assert result["model"] == "llama-3.2-1b", result
    assert ("POST", "/v1/chat/completions") in LockedLlamaServer.seen  # the chat went through with the token
    page.fill('[data-testid="measure-token"]', "")


def test_with_no_address_the_usual_ports_are_tried_in_turn(view_3060):
    """Nothing entered: llama-server's 8080, then its announced new default 9931, ... A fake
    llama-server on 9931 (8080 left empty) is found and measured there."""
    page, _view = view_3060
    try:
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 9931), LlamaServer)
    except OSError:
        pytest.skip("port 9931 is taken on this machine")
    with socket.socket() as probe:
        if probe.connect_ex(("127.0.0.1", 8080)) == 0:
            server.server_close()
            pytest.skip("something listens on 8080, which the page tries first")
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        result = measure(page, "")
    finally:
        server.shutdown()
        server.server_close()
    assert result["model"] == "llama-3.2-1b", result
    assert "at http://localhost:9931" in result["status"]

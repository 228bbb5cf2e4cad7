"""Choose: searchable pickers with fit marks, presets, the advanced panel, the reverse hardware
search, the agent estimator, custom hardware and models, and measuring a local server."""

from __future__ import annotations

import http.server
import json
import time

import pytest

from conftest import loopback_url, serving
from engine.hardware import load_hardware
from engine.models import load_models
from engine.page.view import estimate_view
from pagekit import call_engine, page_view, query, settle, show, value

pytestmark = pytest.mark.browser

METRICS = {"decode-tps": "decode_tps", "prefill-tps": "prefill_tps", "ttft": "ttft_s"}


def assert_numbers_are_the_engines(page):
    """The headline numbers equal the engine's for the view in the URL."""
    settle(page)
    expected = estimate_view(page_view(page))["estimate"]
    assert page.get_attribute('.results [data-testid="fit"]', "data-value") == expected["fit"]
    for testid, key in METRICS.items():
        if expected["fit"] == "no":  # a set-up that cannot load shows no speed (issue 13)
            assert not page.get_attribute(f'.results [data-testid="{testid}"]', "data-value"), testid
        else:
            assert value(page, f'.results [data-testid="{testid}"]') == pytest.approx(expected[key], rel=1e-9), key


def wait_for_the_engine_on_the_view(page) -> dict:
    """Wait until the numbers on screen were computed for the view now in the URL; return it."""
    view = page_view(page)
    page.wait_for_function("(v) => Object.entries(v).every(([k, x]) => window.__tokfeel.current()?.view[k] === x)", arg=view)
    return view


def numbers_follow_the_url(page, *parts: str):
    """After a control changed: the URL carries ``parts``, the engine answered for that view, and
    the headline numbers are the engine's."""
    page.wait_for_function("(parts) => parts.every(p => location.search.includes(p))", arg=list(parts))
    wait_for_the_engine_on_the_view(page)
    assert_numbers_are_the_engines(page)


def open_advanced(page):
    page.evaluate("() => { document.querySelector('#advanced').open = true; }")


def decode_rate(page) -> float:
    return value(page, '.results [data-testid="decode-tps"]')


def test_search_narrows_the_picker_and_enter_picks(app):
    page, _log, _console = app
    show(page)
    page.fill("#hardware-search", "7900 xtx")
    labels = page.eval_on_selector_all('[data-testid="hardware-select"] option', "els => els.map(e => [e.value, e.textContent])")
    matching = [v for v, text in labels if v not in ("custom", "rtx-4090")]
    assert matching and all("7900 XTX" in text for v, text in labels if v in matching)
    page.press("#hardware-search", "Enter")
    page.wait_for_function("() => location.search.includes('hw=rx-7900-xtx')")
    assert_numbers_are_the_engines(page)
    page.fill("#hardware-search", "")


def test_search_ranks_the_named_model_first_and_enter_picks_it(app):
    """'deepseek r1' names DeepSeek R1 (671B) itself; the R1 distills only start with those words,
    so they come after it, and Enter picks it (issue 14)."""
    page, _log, _console = app
    show(page)
    page.fill("#model-search", "deepseek r1")
    values = page.eval_on_selector_all('[data-testid="model-select"] option', "els => els.map(e => e.value)")
    assert values[0] == "deepseek-r1"
    assert {"deepseek-r1-distill-qwen-1.5b", "deepseek-r1-distill-llama-70b"} <= set(values)
    page.press("#model-search", "Enter")
    page.wait_for_function("() => location.search.includes('model=deepseek-r1') && !location.search.includes('model=deepseek-r1-')")
    assert_numbers_are_the_engines(page)
    page.fill("#model-search", "")


def test_the_picked_device_and_model_link_to_their_sources(app):
    """The notes under the pickers link to the entries of catalog.html, which exist and show."""
    page, _log, _console = app
    show(page, query(hw="apple-m3-max-40c-64gb", model="qwen3-30b-a3b"))
    links = {
        testid: page.get_attribute(f'[data-testid="{testid}"]', "href")
        for testid in ("hardware-sources-link", "model-sources-link")
    }
    assert links == {
        "hardware-sources-link": "catalog.html#hw-apple-m3-max-40c-64gb",
        "model-sources-link": "catalog.html#model-qwen3-30b-a3b",
    }
    tab = page.context.new_page()
    try:
        for href in links.values():
            tab.goto(page.url.split("?")[0].rsplit("/", 1)[0] + "/" + href)
            tab.wait_for_load_state("load")
            assert tab.locator("#" + href.split("#")[1]).is_visible()
    finally:
        tab.close()
    show(page, query(hw="custom"))
    assert page.locator('[data-testid="hardware-sources-link"]').count() == 0
    show(page)


def test_every_picker_item_gets_the_engines_fit_mark(app):
    page, _log, _console = app
    view = show(page, query(model="qwen3-32b"))
    page.wait_for_function("() => document.querySelectorAll('[data-testid=\"hardware-select\"] option[data-fit]').length > 300", timeout=60_000)
    marks = dict(page.eval_on_selector_all('[data-testid="hardware-select"] option[data-fit]', "els => els.map(e => [e.value, e.dataset.fit])"))
    expected = {}
    for offset in range(0, len(load_hardware()), 64):  # every chunk of the catalog
        expected.update(call_engine("marks", {"view": view, "kind": "hardware", "offset": offset, "limit": 64})["marks"])
    assert marks == expected
    assert {"fits", "offload", "no"} <= set(marks.values())
    label = page.eval_on_selector('[data-testid="hardware-select"] option[value="rtx-3060"]', "e => e.textContent")
    assert label.endswith({"fits": "fits", "offload": "offload", "no": "won't run"}[expected["rtx-3060"]])
    model_marks = page.eval_on_selector_all('[data-testid="model-select"] option[data-fit]', "els => els.length")
    assert model_marks == len(load_models())
    assert page.locator('[data-testid="quant-select"] optgroup[label^="Published for"]').count() == 1


def test_prompt_presets_set_the_prompt(app):
    page, _log, _console = app
    show(page)
    page.click('#prompt-presets button[data-tokens="12000"]')
    page.wait_for_function("() => location.search.includes('prompt=12000')")
    assert page.get_attribute('#prompt-presets button[data-tokens="12000"]', "aria-pressed") == "true"
    assert_numbers_are_the_engines(page)


def test_advanced_settings_reach_the_engine(app):
    page, _log, _console = app
    show(page)
    open_advanced(page)
    page.fill('[data-testid="depth-tokens"]', "8000")
    page.select_option('[data-testid="kv-select"]', "q8_0")
    page.fill('[data-testid="gpus-input"]', "2")
    page.select_option('[data-testid="split-select"]', "row")
    page.fill('[data-testid="batch-input"]', "4")
    page.select_option('[data-testid="spec-select"]', "draft")
    page.select_option('[data-testid="workload-select"]', "code")
    numbers_follow_the_url(page, "depth=8000", "kv=q8_0", "gpus=2", "split=row", "batch=4", "spec=draft", "workload=code")
    cli = page.inner_text('[data-testid="cli-line"]')
    for flag in ("--depth 8000", "--kv-quant q8_0", "--gpus 2", "--split row", "--batch 4", "--draft llama-3.2-1b", "--workload code"):
        assert flag in cli
    page.select_option('[data-testid="offload-select"]', "layers")
    page.fill('[data-testid="gpu-pct"]', "50")
    page.wait_for_function("() => location.search.includes('offload=layers')")
    assert_numbers_are_the_engines(page)
    assert "--gpu-layers 0.5" in page.inner_text('[data-testid="cli-line"]')
    show(page)


def test_flash_attention_off_reaches_the_engine(app):
    """Advanced 'Flash attention' (view key fa, engine/options.py): off is the request's
    flash_attn false and the CLI line's --no-flash-attn; the numbers are the engine's."""
    page, _log, _console = app
    show(page)
    open_advanced(page)
    page.fill('[data-testid="depth-tokens"]', "8000")
    page.select_option('[data-testid="fa-select"]', "off")
    numbers_follow_the_url(page, "depth=8000", "fa=off")
    assert "--no-flash-attn" in page.inner_text('[data-testid="cli-line"]')
    show(page)


def test_the_llama_cpp_build_reaches_the_engine(app):
    """Advanced 'llama.cpp build' (view key build, engine/options.py llama_cpp_build): b7423 on an
    RDNA4 card runs prefill flash attention on HIP's tile kernel on the shader ALUs (its WMMA kernel
    came with b7654, engine/fa_kernels.py), so prefill at depth is slower, and its ROCm build launches every decode kernel from the host (HIP graphs off by
    default until PR 22254); the explain panel says why and the CLI line carries --llama-cpp-build."""
    page, _log, _console = app
    show(page, query(hw="radeon-ai-pro-r9700", model="qwen3-30b-a3b", prompt=2048, depth=16384))
    open_advanced(page)
    assert "Attention kernel" not in page.inner_text('[data-testid="breakdown-prefill"]')
    assert "No HIP graphs" not in page.inner_text('[data-testid="breakdown-decode"]')
    page.fill('[data-testid="build-input"]', "7423")
    page.press('[data-testid="build-input"]', "Tab")
    numbers_follow_the_url(page, "build=7423")
    assert "--llama-cpp-build 7423" in page.inner_text('[data-testid="cli-line"]')
    assert "HIP's tile flash-attention kernel on the shader ALUs" in page.inner_text('[data-testid="breakdown-prefill"]')
    assert "llama.cpp b7423's ROCm build launches every kernel from the host" in page.inner_text('[data-testid="breakdown-decode"]')
    show(page)


def test_the_rocm_gemm_library_reaches_the_engine(app):
    """Advanced 'ROCm GEMM library' (view key gemm, engine/options.py rocm_gemm): Tensile
    (ROCBLAS_USE_HIPBLASLT=0) runs an RDNA4 card's 16-bit GEMMs on the shader ALUs, so BF16
    prefill is slower, the explain panel says why and the CLI line carries --rocm-gemm."""
    page, _log, _console = app
    show(page, query(hw="radeon-ai-pro-r9700", model="llama-3.1-8b", quant="BF16"))
    open_advanced(page)
    assert "GEMM library" not in page.inner_text('[data-testid="breakdown-prefill"]')
    page.select_option('[data-testid="gemm-select"]', "tensile")
    numbers_follow_the_url(page, "gemm=tensile")
    assert "--rocm-gemm tensile" in page.inner_text('[data-testid="cli-line"]')
    assert "rocBLAS's Tensile backend" in page.inner_text('[data-testid="breakdown-prefill"]')
    show(page)


def test_a_cold_start_reaches_the_engine(app):
    """Advanced 'First prompt of a fresh process' (view key cold, engine/options.py cold_start): on
    CUDA the first large batch loads its kernels once (params.py t_cold_batch_s), so TTFT grows,
    the explain panel says why and the CLI line carries --cold-start."""
    page, _log, _console = app
    show(page, query(hw="rtx-4090", model="llama-3.1-8b", quant="Q4_K_M"))
    open_advanced(page)
    assert "Cold start" not in page.inner_text('[data-testid="breakdown-prefill"]')
    page.select_option('[data-testid="cold-select"]', "on")
    numbers_follow_the_url(page, "cold=on")
    assert "--cold-start" in page.inner_text('[data-testid="cli-line"]')
    assert "loads its CUDA kernels" in page.inner_text('[data-testid="breakdown-prefill"]')
    show(page)


def test_the_links_between_cards_reach_the_engine(app):
    """Advanced: the PCIe slots and an NVLink bridge. The bridge choice is offered only where a
    bridge exists (a 3090 pair), not on a 4090 or a single card; both reach the engine and the
    check command, and the explain panel names the link."""
    page, _log, _console = app
    show(page, query(gpus=2, split="row"))
    assert page.is_disabled('[data-testid="nvlink-select"]')  # RTX 4090: no NVLink
    show(page, query(hw="rtx-3090"))
    assert page.is_disabled('[data-testid="nvlink-select"]')  # one card
    show(page, query(hw="rtx-3090", gpus=2, split="row"))
    open_advanced(page)
    assert page.is_enabled('[data-testid="nvlink-select"]')
    before = decode_rate(page)
    page.select_option('[data-testid="nvlink-select"]', "yes")
    page.select_option('[data-testid="slot-select"]', "3x8")
    page.wait_for_function("() => ['nvlink=yes', 'slot=3x8'].every(p => location.search.includes(p))")
    assert_numbers_are_the_engines(page)
    assert decode_rate(page) > before  # NVLink beats PCIe
    cli = page.inner_text('[data-testid="cli-line"]')
    for flag in ("--nvlink", "--slot-pcie-gen 3", "--slot-pcie-lanes 8"):
        assert flag in cli
    assert estimate_view(page_view(page))["estimate"]["breakdown"]["interconnect"] == "NVLink"
    assert "per token over NVLink" in page.inner_text('[data-testid="breakdown-decode"]')
    show(page)


def test_cpu_threads_reach_the_engine(app):
    """Advanced: CPU threads (llama.cpp -t) are offered for a CPU device only. Two threads on a
    Ryzen 7950X make IQ3_S compute bound (the codebook look-ups): slower than all 16 cores, and
    the explain panel, the command line and the llama-bench check say so."""
    page, _log, _console = app
    show(page)
    assert page.is_disabled('[data-testid="threads-input"]')  # RTX 4090
    show(page, query(hw="amd-ryzen-9-7950x-128gb", quant="IQ3_S"))
    open_advanced(page)
    assert page.is_enabled('[data-testid="threads-input"]')
    before = decode_rate(page)
    page.fill('[data-testid="threads-input"]', "2")
    page.press('[data-testid="threads-input"]', "Tab")
    page.wait_for_function("() => location.search.includes('threads=2')")
    assert_numbers_are_the_engines(page)
    assert decode_rate(page) < 0.7 * before
    assert "--threads 2" in page.inner_text('[data-testid="cli-line"]')
    bench = page.inner_text('[data-testid="commands"] [data-tool="llama-bench"] pre').split()
    assert bench[bench.index("-t") + 1] == "2"
    decode_text = page.inner_text('[data-testid="breakdown-decode"]')
    assert "on 2 threads" in decode_text and "look up a codebook" in decode_text
    assert "(2 threads)" in page.inner_text('#setup-line')
    show(page)


def test_reverse_search_lists_the_engines_devices(app):
    page, _log, _console = app
    view = show(page, query(model="qwen3-32b"))
    page.fill('[data-testid="reverse-min"]', "30")
    page.click('[data-testid="reverse-run"]')
    page.wait_for_selector('[data-testid="reverse-table"]:not([hidden])', timeout=60_000)
    rows, offset, total = [], 0, 1
    while offset < total:  # every chunk, however large the catalog grows
        chunk = call_engine("reverse", {"view": view, "min_tps": 30, "offset": offset, "limit": 64})
        rows, offset, total = rows + chunk["rows"], offset + 64, chunk["total"]
    matching = [r for r in rows if r["meets"] and r["price_usd"]]
    assert f"{len(matching):,} of {len(rows):,} devices" in page.inner_text('[data-testid="reverse-status"]')
    shown = page.eval_on_selector_all('[data-testid="reverse-table"] tbody tr', "els => els.map(e => [e.dataset.id, Number(e.dataset.tps)])")
    by_id = {r["id"]: r for r in rows}
    assert all(tps >= 30 and tps == pytest.approx(by_id[i]["decode_tps"]) for i, tps in shown)
    per_dollar = [by_id[i]["tps_per_kusd"] for i, _ in shown]
    assert per_dollar == sorted(per_dollar, reverse=True)
    page.click('[data-testid="reverse-table"] th button[data-sort="decode_tps"]')
    speeds = page.eval_on_selector_all('[data-testid="reverse-table"] tbody tr', "els => els.map(e => Number(e.dataset.tps))")
    assert speeds == sorted(speeds, reverse=True)
    first = page.get_attribute('[data-testid="reverse-table"] tbody tr', "data-id")
    page.locator('[data-testid="reverse-table"] tbody tr').first.locator("button").click()
    page.wait_for_function("(id) => location.search.includes(`hw=${id}`)", arg=first)


def test_reverse_search_with_a_budget_lists_a_multi_gpu_build(app):
    """Issue 14: $2,000 for Llama 3.3 70B at >= 10 tok/s. The builds, their prices and speeds are
    the engine's (engine/page/buying.py); two used RTX 3090s ($750 each, a dated public price in
    data/hardware) are among them, and "Use" puts the build on the page (hw and gpus)."""
    page, _log, _console = app
    view = show(page, query(model="llama-3.3-70b"))
    page.fill('[data-testid="reverse-min"]', "10")
    page.fill('[data-testid="reverse-budget"]', "2000")
    page.click('[data-testid="reverse-run"]')
    page.wait_for_function("() => document.querySelector('[data-testid=\"reverse-status\"]').textContent.includes('within $2,000')", timeout=120_000)
    rows, offset, total = [], 0, 1
    while offset < total:
        chunk = call_engine("reverse", {"view": view, "min_tps": 10, "budget_usd": 2000, "offset": offset, "limit": 64})
        rows, offset, total = rows + chunk["rows"], offset + 64, chunk["total"]
    expected = {(r["id"], r["cards"]) for r in rows if r["meets"] and r["price_usd"]}
    shown = page.eval_on_selector_all('[data-testid="reverse-table"] tbody tr', "els => els.map(e => [e.dataset.id, Number(e.dataset.cards), Number(e.dataset.price)])")
    assert {(i, c) for i, c, _ in shown} == expected
    assert all(price <= 2000 for _i, _c, price in shown)
    assert ["rtx-3090", 2, 1500] in shown
    row = page.locator('[data-testid="reverse-table"] tbody tr[data-id="rtx-3090"]')
    text = " ".join(row.inner_text().split())
    assert "2 × NVIDIA GeForce RTX 3090" in text and "2 × $750 used, May 2026" in text
    assert row.locator("a", has_text="source").get_attribute("href").startswith("https://bestllmfor.com/")
    assert "within $2,000" in page.inner_text('[data-testid="reverse-status"]')
    row.locator("button").click()
    page.wait_for_function("() => location.search.includes('hw=rtx-3090') && location.search.includes('gpus=2')")
    page.fill('[data-testid="reverse-budget"]', "")
    show(page)


def test_a_memory_size_shows_its_own_price(app):
    """The 512GB M3 Ultra launched at $9,499, not the 96GB model's $5,499 (issue 14)."""
    page, _log, _console = app
    show(page, query(hw="apple-m3-ultra-80c-512gb"))
    note = page.inner_text("#hardware-note")
    assert "launched at $9,499" in note and "$5,499" not in note
    show(page, query(hw="rtx-3090"))
    assert "launched at $1,499 · used $750 (2026-05)" in page.inner_text("#hardware-note")
    show(page)


def test_agent_estimate_is_the_engines(app):
    page, _log, _console = app
    view = show(page)
    page.wait_for_function("() => document.querySelector('[data-testid=\"agent-total\"]').dataset.value")
    expected = call_engine("agent", {"view": view})
    assert value(page, '[data-testid="agent-total"]') == pytest.approx(expected["total_s"])
    page.fill('[data-testid="agent-turns"]', "10")
    page.uncheck('[data-testid="agent-cache"]')
    expected = call_engine("agent", {"view": view, "turns": 10, "prefix_cache": False})
    page.wait_for_function("(t) => Math.abs(Number(document.querySelector('[data-testid=\"agent-total\"]').dataset.value) - t) < 1e-9 * t", arg=expected["total_s"])
    assert "With prefix caching it would take" in page.inner_text('[data-testid="agent-note"]')
    page.fill('[data-testid="agent-turns"]', "4")
    page.check('[data-testid="agent-cache"]')


def test_custom_hardware_is_validated_and_estimated(app):
    page, _log, _console = app
    show(page)
    page.select_option('[data-testid="hardware-select"]', "custom")
    page.fill('[data-testid="custom-hw-bw"]', "0")
    error = page.locator('[data-testid="custom-hw-error"]')
    error.wait_for(state="visible")
    assert "bandwidth" in error.inner_text().lower() and "20,000" in error.inner_text()
    page.fill('[data-testid="custom-hw-bw"]', "640")
    page.fill('[data-testid="custom-hw-mem"]', "16")
    page.fill('[data-testid="custom-hw-tf"]', "45")
    page.fill('[data-testid="custom-hw-name"]', "Future card")
    page.wait_for_function("() => location.search.includes('hw_bw=640') && location.search.includes('hw_tf=45')")
    page.wait_for_function("() => window.__tokfeel.current()?.view.hw_tf === 45")
    assert error.is_hidden()
    assert_numbers_are_the_engines(page)
    assert page.inner_text('[data-testid="cli-line"]').startswith("python -m engine estimate --hardware-json ")
    show(page)


def test_custom_model_from_a_config_json(app):
    page, _log, _console = app
    show(page)
    page.select_option('[data-testid="model-select"]', "custom")
    page.fill('[data-testid="custom-model-config"]', '{"hidden_size": 4096,')
    page.click('[data-testid="custom-model-apply"]')
    assert "not valid JSON" in page.inner_text('[data-testid="custom-model-error"]')
    page.fill('[data-testid="custom-model-config"]', json.dumps({"model_type": "no-such-architecture"}))
    page.click('[data-testid="custom-model-apply"]')
    page.wait_for_function("() => document.querySelector('[data-testid=\"custom-model-error\"]').textContent.length > 0 && !document.querySelector('[data-testid=\"custom-model-error\"]').hidden")
    config = load_models()["llama-3.1-8b"].config
    page.fill('[data-testid="custom-model-config"]', json.dumps(config, indent=2))
    page.click('[data-testid="custom-model-apply"]')
    page.wait_for_function("() => window.__tokfeel.current()?.view.model === 'custom' && window.__tokfeel.current()?.view.cfg.includes('llama')")
    assert page.locator('[data-testid="custom-model-error"]').is_hidden()
    assert_numbers_are_the_engines(page)
    catalog = estimate_view({**page_view(page), "model": "llama-3.1-8b", "cfg": ""})["estimate"]
    assert decode_rate(page) == pytest.approx(catalog["decode_tps"], rel=0.02)
    show(page)


class FakeServer(http.server.BaseHTTPRequestHandler):
    """An OpenAI-compatible streaming server with a known TTFT and rate (and CORS, like
    llama-server's default)."""

    ttft_s = 0.4
    rate_tps = 40.0
    tokens = 60

    def log_message(self, *args):
        pass

    def cors(self):
        self.send_header("Access-Control-Allow-Origin", self.headers.get("Origin", "*"))
        self.send_header("Access-Control-Allow-Headers", "content-type")
        self.send_header("Access-Control-Allow-Methods", "POST, OPTIONS")

    def do_OPTIONS(self):
        self.send_response(204)
        self.cors()
        self.end_headers()

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        assert body["stream"] is True
        self.send_response(200)
        self.cors()
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        start = time.perf_counter()
        for i in range(self.tokens):
            due = start + self.ttft_s + i / self.rate_tps
            time.sleep(max(0.0, due - time.perf_counter()))
            chunk = {"choices": [{"delta": {"content": f"tok{i} "}}]}
            self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
            self.wfile.flush()
        usage = {"choices": [], "usage": {"prompt_tokens": 14, "completion_tokens": self.tokens}}
        self.wfile.write(f"data: {json.dumps(usage)}\n\ndata: [DONE]\n\n".encode())
        self.wfile.flush()


@pytest.fixture()
def fake_server():
    with serving(FakeServer) as server:
        yield loopback_url(server)


def test_measure_a_local_server_beside_the_prediction(app, fake_server):
    page, _log, _console = app
    view = show(page)
    page.fill('[data-testid="measure-url"]', fake_server)
    page.click('[data-testid="measure-run"]')
    page.wait_for_selector('[data-testid="measure-table"]:not([hidden])', timeout=30_000)
    assert value(page, '[data-testid="measure-ttft"]') == pytest.approx(FakeServer.ttft_s, abs=0.1)
    assert value(page, '[data-testid="measure-tps"]') == pytest.approx(FakeServer.rate_tps, rel=0.1)
    # The prediction beside it is the engine's for the prompt the server reported (14 tokens).
    predicted = estimate_view({**view, "prompt": 14})["estimate"]
    shown = float(page.inner_text("#measure-tps-pred").split()[0].replace(",", ""))
    assert shown == pytest.approx(predicted["decode_tps"], rel=0.006)


def test_measure_refuses_addresses_that_are_not_local(app):
    page, _log, _console = app
    show(page)
    page.fill('[data-testid="measure-url"]', "http://example.com:8080")
    page.click('[data-testid="measure-run"]')
    assert "this computer" in page.inner_text('[data-testid="measure-status"]')

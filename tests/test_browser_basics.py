"""The built page in Debian's Chromium: boot, numbers equal to the CLI's, the stream plays at
the predicted TTFT and rate, nothing leaves 127.0.0.1, and failures say what failed."""

from __future__ import annotations

import json
from urllib.parse import parse_qs, urlsplit

import pytest

from conftest import BOOT_TIMEOUT_MS, run_cli
from engine.page.fields import answers

pytestmark = pytest.mark.browser

METRICS = {"decode-tps": "decode_tps", "prefill-tps": "prefill_tps", "ttft": "ttft_s"}

#: Installs a recorder of every change of the stream element (state, tokens) with its time.
RECORD_STREAM = """() => {
  const el = document.querySelector('[data-testid="stream"]');
  window.__streamLog = [];
  const note = () => window.__streamLog.push([performance.now(), el.dataset.state, Number(el.dataset.tokens)]);
  new MutationObserver(note).observe(el, {attributes: true, attributeFilter: ["data-state", "data-tokens"]});
}"""

#: Clicks Run and returns the click's time on the page clock.
CLICK_RUN = """() => { const t = performance.now(); document.querySelector('[data-testid="run"]').click(); return t; }"""


def select(page, hardware: str, model: str, quant: str, prompt: int, answer: str = "chat") -> None:
    """Choose a set-up through the controls and wait until the engine's numbers for it are shown."""
    page.select_option('[data-testid="hardware-select"]', hardware)
    page.select_option('[data-testid="model-select"]', model)
    page.select_option('[data-testid="quant-select"]', quant)
    page.fill('[data-testid="prompt-tokens"]', str(prompt))
    page.select_option('[data-testid="answer-select"]', answer)
    # The answer's length is the CLI's --gen: waiting for it too means the numbers, the URL and
    # the stream's schedule all come from the reply to the last change, not an earlier one.
    gen_tokens = len(answers()[answer]["tokens"])
    page.wait_for_function(
        """([hw, model, quant, prompt, gen]) => {
            // The CLI line and the numbers are rendered together from one engine reply.
            const line = document.querySelector('[data-testid="cli-line"]').textContent;
            return line.includes(`--hardware ${hw} `) && line.includes(`--model ${model} `)
                && line.includes(`--quant ${quant} `) && line.includes(`--prompt ${prompt} `)
                && line.includes(`--gen ${gen} `);
        }""",
        arg=[hardware, model, quant, prompt, gen_tokens],
        timeout=15_000,
    )


def page_numbers(page) -> dict:
    values = {key: float(page.get_attribute(f'[data-testid="{tid}"]', "data-value")) for tid, key in METRICS.items()}
    values["fit"] = page.get_attribute('[data-testid="fit"]', "data-value")
    return values


def cli_numbers(page) -> dict:
    line = page.inner_text('[data-testid="cli-line"]')
    args = line.split()[3:]  # drop "python -m engine"
    result = run_cli(*args)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_engine_boots_and_first_number_is_prebuilt(browser, site_url):
    context = browser.new_context()
    page = context.new_page()
    page.goto(site_url)
    # The build-time estimate is in the page before Pyodide has booted.
    assert page.get_attribute('[data-testid="engine-status"]', "data-state") == "loading"
    assert float(page.get_attribute('[data-testid="decode-tps"]', "data-value")) > 0
    page.wait_for_selector('[data-testid="engine-status"][data-state="ready"]', timeout=BOOT_TIMEOUT_MS)
    context.close()


@pytest.mark.parametrize(
    "hardware, model, quant, prompt",
    [
        ("rtx-4090", "llama-3.1-8b", "Q4_K_M", 512),
        ("rtx-3090", "llama-3.1-8b", "Q8_0", 2000),
        ("apple-m2-ultra-76c-192gb", "llama-3.1-8b", "F16", 12000),
    ],
)
def test_page_numbers_equal_the_cli(app, hardware, model, quant, prompt):
    page, _log, _console = app
    select(page, hardware, model, quant, prompt)
    shown = page_numbers(page)
    expected = cli_numbers(page)
    for key in METRICS.values():
        assert shown[key] == pytest.approx(expected[key], rel=1e-9), key
    assert shown["fit"] == expected["fit"]


def view_of(page) -> dict:
    """The page's view, read back from its URL (the state a copied link carries)."""
    from engine.page.fields import DEFAULT_VIEW, VIEW_FIELDS

    query = parse_qs(urlsplit(page.url).query)
    view = dict(DEFAULT_VIEW)
    for key, values in query.items():
        view[key] = int(values[0]) if VIEW_FIELDS[key]["kind"] == "int" else values[0]
    return view


def measure_stream(page, min_seconds: float) -> dict:
    """Run the stream; return measured TTFT and decode rate against the schedule's prediction."""
    from engine.page.view import estimate_view

    schedule = estimate_view(view_of(page))["estimate"]["schedule"]
    page.evaluate(RECORD_STREAM)
    clicked = page.evaluate(CLICK_RUN)
    arrivals = schedule["arrival_s"]
    page.wait_for_function(
        "([t0, s]) => performance.now() - t0 > s * 1000", arg=[clicked, schedule["ttft_s"] + min_seconds + 0.3], timeout=120_000
    )
    log = page.evaluate("() => window.__streamLog")
    page.evaluate("() => document.querySelector('[data-testid=\"run\"]').blur()")
    shown = [(t, n) for t, _state, n in log if n > 0]
    first_time, first_count = shown[0]
    # The rate over whole tokens: from the first token to the last token that appeared at least
    # min_seconds later (each appearance is exact to one animation frame).
    later = [(t, n) for t, n in shown if t - first_time >= min_seconds * 1000]
    last_time, last_count = later[0]
    measured_rate = (last_count - first_count) / ((last_time - first_time) / 1000)
    predicted_rate = (last_count - first_count) / (arrivals[last_count - 1] - arrivals[first_count - 1])
    return {
        "ttft_measured": (first_time - clicked) / 1000,
        "ttft_predicted": schedule["ttft_s"],
        "rate_measured": measured_rate,
        "rate_predicted": predicted_rate,
    }


@pytest.mark.parametrize(
    "hardware, model, quant, prompt, answer, rate_range",
    [
        # CPU only, 16-bit weights: a few tokens per second.
        ("amd-ryzen-9-7950x-64gb", "llama-3.1-8b", "F16", 20, "chat", (0.5, 10)),
        # A big card on a small quantised model: well over 150 tokens per second.
        ("rtx-5090", "llama-3.2-3b", "Q4_K_M", 20, "document", (150, 2000)),
    ],
)
def test_stream_plays_at_the_predicted_ttft_and_rate(app, hardware, model, quant, prompt, answer, rate_range):
    page, _log, _console = app
    select(page, hardware, model, quant, prompt, answer)
    decode = float(page.get_attribute('[data-testid="decode-tps"]', "data-value"))
    assert rate_range[0] < decode < rate_range[1]
    result = measure_stream(page, min_seconds=3.0)
    assert abs(result["ttft_measured"] - result["ttft_predicted"]) < 0.050, result
    assert result["rate_measured"] == pytest.approx(result["rate_predicted"], rel=0.03), result
    # The schedule's rate is the engine's decode prediction (it slows only as the cache grows).
    assert result["rate_predicted"] == pytest.approx(decode, rel=0.03), result


def test_no_request_leaves_loopback(app):
    page, log, _console = app
    page.click('[data-testid="run"]')
    page.wait_for_timeout(500)
    assert log.urls, "no requests were recorded at all"
    assert log.foreign() == []


def test_no_console_errors(app):
    _page, _log, console = app
    errors = [line for line in console if line.startswith(("error", "pageerror"))]
    assert errors == []


def test_missing_bundle_reports_an_error(browser, site_url):
    context = browser.new_context()
    context.route("**/engine-*.zip", lambda route: route.fulfill(status=404, body="gone"))
    page = context.new_page()
    page.goto(site_url)
    page.wait_for_selector('[data-testid="engine-status"][data-state="error"]', timeout=BOOT_TIMEOUT_MS)
    text = page.inner_text('[data-testid="engine-status"]')
    assert "could not start" in text and "engine bundle" in text
    # The build-time numbers stay on the page, and a retry is offered.
    assert float(page.get_attribute('[data-testid="decode-tps"]', "data-value")) > 0
    assert page.is_visible(".retry")
    context.close()


def test_missing_worker_script_reports_an_error(browser, site_url):
    context = browser.new_context()
    context.route("**/js/worker.js", lambda route: route.fulfill(status=404, body="gone"))
    page = context.new_page()
    page.goto(site_url)
    page.wait_for_selector('[data-testid="engine-status"][data-state="error"]', timeout=30_000)
    assert "worker" in page.inner_text('[data-testid="engine-status"]')
    context.close()


def test_wasm_with_wrong_mime_type_times_out_with_a_message(browser, site_url, built_site):
    """A host serving .wasm as text/plain makes Pyodide hang; the page's boot timeout says so."""
    context = browser.new_context()
    wasm = next(built_site.glob("pyodide/*/pyodide.asm.wasm")).read_bytes()
    context.route("**/*.wasm", lambda route: route.fulfill(status=200, body=wasm, content_type="text/plain"))
    page = context.new_page()
    page.clock.install()
    page.goto(site_url)
    page.wait_for_timeout(1500)
    page.clock.fast_forward(65_000)
    page.wait_for_selector('[data-testid="engine-status"][data-state="error"]', timeout=30_000)
    text = page.inner_text('[data-testid="engine-status"]')
    assert "could not start" in text or "stopped" in text
    context.close()

"""This computer, in the browser: WebGL and WebGPU stubbed by init scripts with real renderer
strings; detection preselects only at high confidence on a visit whose URL names no hardware,
asks for a Mac's variant, keeps a link's device, and suggests nothing for Safari's "Apple GPU".
Each case boots the page in a context of its own (the stub must be there before the page runs)."""

from __future__ import annotations

import json
from urllib.parse import parse_qs, urlsplit

import pytest

from conftest import BOOT_TIMEOUT_MS
from engine.page.fields import DEFAULT_VIEW
from pagekit import settle

pytestmark = pytest.mark.browser

RTX_3060 = "ANGLE (NVIDIA, NVIDIA GeForce RTX 3060 (0x00002504) Direct3D11 vs_5_0 ps_5_0, D3D11)"
M2_PRO = "ANGLE (Apple, ANGLE Metal Renderer: Apple M2 Pro, Unspecified Version)"

STUB = """
(() => {
  const renderer = %(renderer)s, vendor = %(vendor)s, gpu = %(gpu)s;
  const getContext = HTMLCanvasElement.prototype.getContext;
  HTMLCanvasElement.prototype.getContext = function (type, ...rest) {
    if (type !== "webgl" && type !== "webgl2") return getContext.call(this, type, ...rest);
    return {
      RENDERER: 0x1f01, VENDOR: 0x1f00,
      getExtension: (name) => (name === "WEBGL_debug_renderer_info" ? { UNMASKED_VENDOR_WEBGL: 0x9245, UNMASKED_RENDERER_WEBGL: 0x9246 } : null),
      getParameter: (p) => (p === 0x9246 ? renderer : p === 0x9245 ? vendor : null),
    };
  };
  Object.defineProperty(Navigator.prototype, "gpu", { configurable: true, get: () => (gpu ? { requestAdapter: async () => ({ info: gpu }) } : undefined) });
})();
"""


@pytest.fixture()
def stubbed(browser, site_url):
    """Open the site with a stubbed GPU: stubbed(renderer, vendor, gpu_info, query) -> page."""
    contexts = []

    def open_page(renderer: str, vendor: str = "Google Inc.", gpu: dict | None = None, query: str = ""):
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        contexts.append(context)
        context.add_init_script(STUB % {"renderer": json.dumps(renderer), "vendor": json.dumps(vendor), "gpu": json.dumps(gpu)})
        page = context.new_page()
        page.goto(site_url + query)
        page.wait_for_selector('[data-testid="engine-status"][data-state="ready"]', timeout=BOOT_TIMEOUT_MS)
        page.wait_for_selector('[data-testid="detected-device"][data-state="done"]', state="attached", timeout=30_000)
        settle(page)
        return page

    yield open_page
    for context in contexts:
        context.close()


def url_view(page) -> dict:
    return {k: v[0] for k, v in parse_qs(urlsplit(page.url).query).items()}


def hook(page) -> dict:
    return page.evaluate("""() => { const h = document.querySelector('[data-testid="detected-device"]');
      return {value: h.dataset.value, confidence: h.dataset.confidence, text: h.textContent}; }""")


def test_a_named_gpu_with_no_link_state_is_preselected_and_written_into_the_url(stubbed):
    page = stubbed(RTX_3060, "Google Inc. (NVIDIA)", {"vendor": "nvidia", "architecture": "ampere"})
    assert (hook(page)["value"], hook(page)["confidence"]) == ("rtx-3060", "high")
    assert "NVIDIA GeForce RTX 3060 (0x00002504)" in hook(page)["text"] and "nvidia ampere" in hook(page)["text"]
    assert page.input_value('[data-testid="hardware-select"]') == "rtx-3060"
    assert url_view(page).get("hw") == "rtx-3060"  # a copied link reproduces the view
    assert page.evaluate("() => window.__tokfeel.current().view.hw") == "rtx-3060"


def test_a_mac_chip_asks_for_its_variant_and_selects_nothing_by_itself(stubbed):
    page = stubbed(M2_PRO, "Google Inc. (Apple)", {"vendor": "apple", "architecture": "metal-3"})
    state = hook(page)
    assert (state["value"], state["confidence"]) == ("apple-m2-pro-19c-32gb", "partial")
    assert page.input_value('[data-testid="hardware-select"]') == DEFAULT_VIEW["hw"]
    assert "hw" not in url_view(page)
    choices = page.locator(".detected-choices button")
    assert choices.count() == 4
    assert "which one" in page.inner_text("#detected summary")
    choices.filter(has_text="16-core GPU 16GB").click()
    page.wait_for_function("() => window.__tokfeel.current()?.view.hw === 'apple-m2-pro-16c-16gb'")
    assert url_view(page)["hw"] == "apple-m2-pro-16c-16gb"


def test_a_link_naming_another_device_keeps_it_and_detection_only_suggests(stubbed):
    page = stubbed(RTX_3060, "Google Inc. (NVIDIA)", None, "?hw=rx-7900-xtx")
    assert hook(page)["value"] == "rtx-3060"
    assert page.input_value('[data-testid="hardware-select"]') == "rx-7900-xtx"
    assert url_view(page)["hw"] == "rx-7900-xtx"
    suggestion = page.locator(".detected-choices button")
    assert suggestion.count() >= 1 and suggestion.first.inner_text().endswith("RTX 3060")


def test_safari_apple_gpu_suggests_nothing(stubbed):
    page = stubbed("Apple GPU", "Apple Inc.")
    state = hook(page)
    assert (state["value"], state["confidence"]) == ("unknown", "low")
    assert "Apple GPU" in state["text"]
    assert page.locator(".detected-choices button").count() == 0
    assert page.input_value('[data-testid="hardware-select"]') == DEFAULT_VIEW["hw"]
    assert "not detected" in page.inner_text("#detected summary")
    assert "every Mac" in page.text_content("#detected .detected-why")

"""The catalog page (catalog.html): every entry of every catalog with all its sources as links,
an anchor per entry, the calibration fit, a search that filters the rows, nothing loaded from
another origin, and no serious accessibility violations."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser

import pytest

from catalog_page import FIT_FILE, engine_rows
from conftest import RequestLog
from engine.engines import load_engines
from engine.hardware import load_hardware
from engine.models import load_models
from engine.quant import load_quants
from pagekit import axe_violations

#: A URL in a source text, and the punctuation that may follow one in a sentence.
URL_IN_TEXT = re.compile(r"https?://[^\s<>\"]+")
SENTENCE_PUNCTUATION = ".,;:!?)'\""


class CatalogPage(HTMLParser):
    """What a reader of catalog.html sees per entry: the ids on the page, the links and the text
    of each entry (its row and the sources row after it)."""

    def __init__(self):
        super().__init__()
        self.ids: list[str] = []
        self.fragment_links: list[str] = []
        self.entries: dict[str, str] = {}  # entry anchor -> data-entry kind
        self.variants: list[str] = []
        self.links: dict[str, list[str]] = {}  # entry anchor -> hrefs of its two rows
        self.text: dict[str, list[str]] = {}
        self.scripts: list[dict] = []
        self._current: str | None = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        for name, _value in attrs:
            assert not name.startswith("on"), f"inline event handler {name} on <{tag}>"
        if "id" in a:
            self.ids.append(a["id"])
        if "data-variant" in a:
            self.variants.append(a["data-variant"])
        if tag == "script":
            self.scripts.append(a)
        if tag == "tr":
            if "data-entry" in a:
                self._current = a["id"]
                self.entries[a["id"]] = a["data-entry"]
                self.links[a["id"]], self.text[a["id"]] = [], []
            elif a.get("data-sources-of"):
                assert a["data-sources-of"] == self._current, "a sources row must follow its entry's row"
            else:
                self._current = None
        if tag == "a" and a.get("href"):
            if a["href"].startswith("#"):
                self.fragment_links.append(a["href"][1:])
            if self._current:
                self.links[self._current].append(a["href"])

    def handle_data(self, data):
        if self._current:
            self.text[self._current].append(data)

    def entry_text(self, anchor: str) -> str:
        return " ".join("".join(self.text[anchor]).split())


@pytest.fixture(scope="module")
def catalog(built_site) -> CatalogPage:
    page = CatalogPage()
    page.feed((built_site / "catalog.html").read_text(encoding="utf-8"))
    return page


def _anchors(kind: str, catalog: CatalogPage) -> set[str]:
    return {anchor for anchor, entry_kind in catalog.entries.items() if entry_kind == kind}


def test_every_entry_of_every_catalog_is_listed(catalog):
    devices = load_hardware()
    assert sorted(catalog.variants) == sorted(devices), "every memory variant, once"
    assert _anchors("hardware", catalog) == {f"hw-{d.base_id}" for d in devices.values()}
    assert _anchors("model", catalog) == {f"model-{m}" for m in load_models()}
    assert _anchors("quant", catalog) == {f"quant-{q}" for q in load_quants()}
    assert _anchors("engine", catalog) == {f"engine-{e}" for e in load_engines()}
    fit = json.loads(FIT_FILE.read_text(encoding="utf-8"))
    assert _anchors("fit", catalog) == {"fit-" + key.replace("/", "-") for key in fit["backends"]}


def test_every_entry_has_an_anchor_and_every_link_on_the_page_lands(catalog):
    assert len(catalog.ids) == len(set(catalog.ids)), "duplicate ids"
    ids = set(catalog.ids)
    for device in load_hardware().values():
        assert f"hw-{device.id}" in ids  # catalog.html#hw-apple-m3-max-40c-64gb lands on the variant
    assert {f"model-{m}" for m in load_models()} <= ids
    missing = sorted(set(catalog.fragment_links) - ids)
    assert not missing, f"links to no element: {missing[:5]}"


def _sources(kind: str):
    """(anchor, every source text) of every entry of a catalog kind."""
    if kind == "hardware":
        seen = set()
        for d in load_hardware().values():
            if d.base_id not in seen:
                seen.add(d.base_id)
                yield f"hw-{d.base_id}", [d.source, *d.sources.values()]
    elif kind == "model":
        for m in load_models().values():
            yield f"model-{m.id}", [m.source, *m.sources.values()]
    elif kind == "quant":
        for q in load_quants().values():
            yield f"quant-{q.id}", [q.source, *q.sources.values()]
    else:
        for e, sources in engine_rows():
            yield f"engine-{e.id}", [e.source, *sources.values()]


@pytest.mark.parametrize("kind", ["hardware", "model", "quant", "engine"])
def test_every_source_of_every_entry_is_on_its_row_with_its_urls_as_links(catalog, kind):
    checked = 0
    for anchor, texts in _sources(kind):
        hrefs = catalog.links[anchor]
        shown = catalog.entry_text(anchor)
        for text in texts:
            urls = [match.group(0).rstrip(SENTENCE_PUNCTUATION) for match in URL_IN_TEXT.finditer(text)]
            for url in urls:
                # A link may keep a closing parenthesis that belongs to the URL (Wikipedia).
                assert any(href == url or href == url + ")" for href in hrefs), f"{anchor}: {url} is not a link"
                checked += 1
            # The words around the URLs are on the row as written (the URLs show shortened).
            for fragment in re.split("|".join(map(re.escape, urls)) or "$^", text):
                fragment = " ".join(fragment.split())
                assert fragment in shown, f"{anchor}: {fragment[:80]!r} is not on the row"
    assert checked > 0


def test_model_rows_show_the_engines_numbers(catalog):
    """A model's row shows its layers, its attention layout and its KV bytes per token as the
    engine derives them from config.json (spot check: gpt-oss-20b alternates full and 128-token
    sliding attention, 8 KV heads of 64 dims: 2 x 8 x 64 x 24 layers x 2 bytes = 49,152)."""
    text = catalog.entry_text("model-gpt-oss-20b")
    assert "12 full, 12 sliding" in text and "window 128 tokens" in text and "49,152" in text
    assert "data/models/gpt-oss.toml [gpt-oss-20b]" in text


def test_the_page_and_its_neighbours(built_site, catalog):
    index = (built_site / "index.html").read_text(encoding="utf-8")
    assert 'href="catalog.html"' in index, "the main page's footer links the catalog"
    assert (built_site / "docs" / "calibration.md").read_text(encoding="utf-8").startswith("# Calibration")
    # The same content-addressed scripts as the main page (no stale mix after a redeploy).
    assets = re.search(r'src="(assets/[0-9a-f]+/)js/main\.js"', index).group(1)
    assert [s.get("src") for s in catalog.scripts] == [f"{assets}js/theme-early.js", f"{assets}js/catalog.js"]
    assert all(s.get("src") for s in catalog.scripts), "an inline script would need 'unsafe-inline'"
    html = (built_site / "catalog.html").read_text(encoding="utf-8")
    foreign = re.search(r"""<(script|link|img)\b[^>]*\b(src|href)=["'](https?:)?//""", html)
    assert not foreign, "the page loads something from another origin"
    assert 'href="docs/calibration.md"' in html
    policy = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', html).group(1)
    assert "script-src 'self';" in policy and "unsafe" not in policy


# --------------------------------------------------------------------------------------------
# In the browser
# --------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def catalog_tab(browser, site_url):
    """The catalog page in a fresh context, with every request and console message recorded."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    log = RequestLog()
    context.on("request", log.record)
    page = context.new_page()
    errors: list[str] = []
    page.on("console", lambda message: message.type in ("error", "warning") and errors.append(message.text))
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(site_url + "catalog.html")
    page.wait_for_load_state("load")
    yield page, log, errors
    context.close()


VISIBLE_ENTRIES = """() => [...document.querySelectorAll('tr[data-search]')]
  .filter(row => row.offsetParent !== null).map(row => row.id)"""


def _search(page, text: str) -> list[str]:
    page.fill('[data-testid="catalog-search"]', text)
    return page.evaluate(VISIBLE_ENTRIES)


@pytest.mark.browser
def test_search_filters_the_rows(catalog_tab, catalog):
    page, _log, errors = catalog_tab
    everything = _search(page, "")
    assert len(everything) == len(catalog.entries)

    shown = _search(page, "RTX 4090")
    assert "hw-rtx-4090" in shown and "hw-rtx-4090-laptop" in shown and "hw-rtx-3090" not in shown
    assert all(anchor.startswith("hw-") for anchor in shown)

    shown = _search(page, "qwen3 30b")
    names = {f"model-{m.id}": " ".join([m.id, m.name, *m.aliases]).lower() for m in load_models().values()}
    expected = {anchor for anchor, text in names.items() if "qwen3" in text and "30b" in text}
    assert expected and expected <= set(shown)
    assert "model-qwen3-8b" not in shown
    count = page.inner_text('[data-testid="catalog-count"]')
    assert count.startswith(f"{len(shown)} of {len(catalog.entries)}")
    # A source row goes with its entry; a family whose rows are all hidden hides its heading.
    assert page.evaluate("() => document.querySelector('[data-sources-of=\"model-qwen3-8b\"]').offsetParent") is None
    assert page.evaluate("() => document.querySelector('#hw-rtx-4090').closest('[data-group]').hidden")

    assert _search(page, "no such thing anywhere") == []
    assert len(_search(page, "")) == len(catalog.entries)
    assert errors == []


@pytest.mark.browser
def test_a_link_to_an_entry_shows_it_even_when_the_search_hid_it(catalog_tab):
    page, _log, errors = catalog_tab
    _search(page, "gemma")
    page.evaluate("() => { location.hash = 'hw-apple-m3-max-40c-64gb'; }")
    page.wait_for_function("() => document.querySelector('#hw-apple-m3-max-40c-64gb').offsetParent !== null")
    assert page.input_value('[data-testid="catalog-search"]') == ""
    assert page.evaluate("() => document.querySelector(':target').id") == "hw-apple-m3-max-40c-64gb"
    assert errors == []


@pytest.mark.browser
def test_nothing_leaves_the_machine(catalog_tab):
    page, log, _errors = catalog_tab
    page.reload()
    page.wait_for_load_state("networkidle")
    assert log.urls, "no request recorded?"
    assert log.foreign() == []


@pytest.mark.browser
@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_no_serious_accessibility_violations(browser, site_url, scheme):
    context = browser.new_context(viewport={"width": 1280, "height": 900}, color_scheme=scheme)
    try:
        page = context.new_page()
        page.goto(site_url + "catalog.html")
        page.evaluate("() => document.querySelectorAll('details').forEach(d => d.open = true)")
        assert axe_violations(page) == []
    finally:
        context.close()

"""The catalog page (catalog.html): every entry of every catalog in the page's data with all its
sources (their URLs as links), the calibration fit, tables that filter by vendor, kind, memory and
price, sort and show a page of rows at a time (quick on a phone), an anchor per entry that shows
it, nothing loaded from another origin, and no serious accessibility violations."""

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
from engine.page.buying import price
from engine.quant import load_quants
from pagekit import axe_violations

#: A URL in a source text, and the punctuation that may follow one in a sentence.
URL_IN_TEXT = re.compile(r"https?://[^\s<>\"]+")
SENTENCE_PUNCTUATION = ".,;:!?)'\""
#: A phone's viewport (CSS pixels).
PHONE = {"width": 390, "height": 844}


class CatalogPage(HTMLParser):
    """What catalog.html holds before its script runs: the ids, the fragment links, the scripts,
    the static calibration rows, and its data islands."""

    def __init__(self):
        super().__init__()
        self.ids: list[str] = []
        self.fragment_links: list[str] = []
        self.fit_rows: list[str] = []
        self.scripts: list[dict] = []
        self.islands: dict[str, str] = {}
        self._island: str | None = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        for name, _value in attrs:
            assert not name.startswith("on"), f"inline event handler {name} on <{tag}>"
        if "id" in a:
            self.ids.append(a["id"])
        if tag == "script":
            self.scripts.append(a)
            if a.get("type") == "application/json":
                self._island = a["id"]
                self.islands[self._island] = ""
        if tag == "tr" and a.get("data-entry") == "fit":
            self.fit_rows.append(a["id"])
        if tag == "a" and a.get("href", "").startswith("#"):
            self.fragment_links.append(a["href"][1:])

    def handle_endtag(self, tag):
        if tag == "script":
            self._island = None

    def handle_data(self, data):
        if self._island:
            self.islands[self._island] += data

    @property
    def data(self) -> dict:
        return json.loads(self.islands["catalog-data"])


@pytest.fixture(scope="module")
def catalog(built_site) -> CatalogPage:
    page = CatalogPage()
    page.feed((built_site / "catalog.html").read_text(encoding="utf-8"))
    return page


def test_every_entry_of_every_catalog_is_in_the_pages_data(catalog):
    data = catalog.data
    devices = load_hardware()
    variants = [v["id"] for entry in data["hardware"] for v in entry["variants"]]
    assert sorted(variants) == sorted(devices), "every memory variant, once"
    assert {e["id"] for e in data["hardware"]} == {d.base_id for d in devices.values()}
    assert sorted(m["id"] for m in data["models"]) == sorted(load_models())
    assert sorted(q["id"] for q in data["quants"]) == sorted(load_quants())
    assert sorted(e["id"] for e in data["engines"]) == sorted(load_engines())
    fit = json.loads(FIT_FILE.read_text(encoding="utf-8"))
    assert set(catalog.fit_rows) == {"fit-" + key.replace("/", "-") for key in fit["backends"]}


def test_each_memory_size_carries_the_price_the_reverse_search_uses(catalog):
    """One rule for what a device costs (engine/page/buying.py): its street price with condition
    and date where one is published, else its own launch price (the 512GB M3 Ultra's $9,499)."""
    by_id = {v["id"]: v for entry in catalog.data["hardware"] for v in entry["variants"]}
    for device in load_hardware().values():
        expected = price(device)
        shown = by_id[device.id].get("price")
        assert shown == (expected and {k: v for k, v in expected.items() if k != "source"}), device.id
    assert by_id["apple-m3-ultra-80c-512gb"]["price"] == {"usd": 9499, "kind": "launch", "date": "2025"}
    assert by_id["rtx-3090"]["price"] == {"usd": 750, "kind": "used", "date": "2026-05"}


def test_every_link_on_the_page_lands(catalog):
    assert len(catalog.ids) == len(set(catalog.ids)), "duplicate ids"
    missing = sorted(set(catalog.fragment_links) - set(catalog.ids))
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


def _segments_text(segments: list) -> tuple[str, list[str]]:
    """(the text a reader sees with URLs as written, the link targets) of a source in the data."""
    text, hrefs = "", []
    for part in segments:
        if isinstance(part, str):
            text += part
        else:
            text, hrefs = text + part[0], hrefs + [part[0]]
    return text, hrefs


def _entry_sources(data: dict, kind: str) -> dict[str, list]:
    key = {"hardware": "hw", "model": "model", "quant": "quant", "engine": "engine"}[kind]
    entries = data[{"hardware": "hardware", "model": "models", "quant": "quants", "engine": "engines"}[kind]]
    out = {}
    for entry in entries:
        shown = [entry["source"], *(text for _key, text in entry.get("sources", []))]
        out[f"{key}-{entry['id']}"] = shown
    return out


@pytest.mark.parametrize("kind", ["hardware", "model", "quant", "engine"])
def test_every_source_of_every_entry_is_in_the_data_with_its_urls_as_links(catalog, kind):
    shown = _entry_sources(catalog.data, kind)
    checked = 0
    for anchor, texts in _sources(kind):
        assert len(shown[anchor]) == len(texts), anchor
        written = {"".join(part if isinstance(part, str) else part[0] for part in segments): segments for segments in shown[anchor]}
        for text in texts:
            segments = written[text]
            seen, hrefs = _segments_text(segments)
            assert seen == text, f"{anchor}: the source is shown as written"
            urls = [match.group(0).rstrip(SENTENCE_PUNCTUATION) for match in URL_IN_TEXT.finditer(text)]
            for url in urls:
                # A link may keep a closing parenthesis that belongs to the URL (Wikipedia).
                assert any(href == url or href == url + ")" for href in hrefs), f"{anchor}: {url} is not a link"
                checked += 1
    assert checked > 0


def test_each_row_says_whether_its_numbers_were_read(catalog):
    """Issue 14: a row shows its provenance: read (with the file read as a link) or unverified
    (with the reason), the same state `python -m engine list --json` reports."""
    from engine.catalog import provenance

    devices = {d.base_id: d for d in load_hardware().values()}
    entries = [(e, devices[e["id"]]) for e in catalog.data["hardware"]]
    entries += [(m, load_models()[m["id"]]) for m in catalog.data["models"]]
    states = set()
    for shown, entry in entries:
        state = provenance(entry)
        states.add(state)
        assert shown.get("checked") == (None if state == "not stated" else state), entry.id
        if state == "read":
            text, hrefs = _segments_text(shown["verified_from"])
            assert text == entry.verified_from and hrefs, entry.id
        if state == "unverified":
            assert shown["unverified"] == entry.unverified
    assert {"read", "unverified"} <= states


def test_model_rows_show_the_engines_numbers(catalog):
    """A model's data holds its layers, its attention layout and its KV bytes per token as the
    engine derives them from config.json (spot check: gpt-oss-20b alternates full and 128-token
    sliding attention, 8 KV heads of 64 dims: 2 x 8 x 64 x 24 layers x 2 bytes = 49,152)."""
    model = next(m for m in catalog.data["models"] if m["id"] == "gpt-oss-20b")
    assert model["layout"] == ["12 full", "12 sliding"] and model["windows"] == [128]
    assert model["kv_bytes_per_token"] == 49152 and model["file"] == "data/models/gpt-oss.toml"


def test_the_page_and_its_neighbours(built_site, catalog):
    index = (built_site / "index.html").read_text(encoding="utf-8")
    assert 'href="catalog.html"' in index, "the main page's footer links the catalog"
    assert (built_site / "docs" / "calibration.md").read_text(encoding="utf-8").startswith("# Calibration")
    # The same content-addressed scripts as the main page (no stale mix after a redeploy).
    assets = re.search(r'src="(assets/[0-9a-f]+/)js/main\.js"', index).group(1)
    code = [s for s in catalog.scripts if s.get("type") != "application/json"]
    assert [s.get("src") for s in code] == [f"{assets}js/theme-early.js", f"{assets}js/catalog.js"]
    assert all(s.get("src") for s in code), "an inline script would need 'unsafe-inline'"
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
    """The catalog page at a phone's size in a fresh context, with every request and console
    message recorded."""
    context = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True)
    log = RequestLog()
    context.on("request", log.record)
    page = context.new_page()
    errors: list[str] = []
    page.on("console", lambda message: message.type in ("error", "warning") and errors.append(message.text))
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(site_url + "catalog.html")
    page.wait_for_load_state("load")
    page.wait_for_selector('[data-testid="hw-table"] tbody tr')
    yield page, log, errors
    context.close()


VISIBLE_ENTRIES = """() => [...document.querySelectorAll('tr[data-entry]:not([data-entry=fit])')]
  .filter(row => row.offsetParent !== null).map(row => row.id)"""
HARDWARE_ROWS = """() => [...document.querySelectorAll('[data-testid="hw-table"] tbody tr[data-entry]')].map(row => row.id)"""


def _search(page, text: str) -> list[str]:
    page.fill('[data-testid="catalog-search"]', text)
    return page.evaluate(VISIBLE_ENTRIES)


def _column(page, index: int) -> list[float | None]:
    """The sort values of one hardware column, top to bottom ("" = no value)."""
    values = page.eval_on_selector_all('[data-testid="hw-table"] tbody tr[data-entry]', f"rows => rows.map(r => r.cells[{index}].dataset.value)")
    return [float(v) if v else None for v in values]


def _entry_count() -> int:
    return len(load_hardware()) + len(load_models()) + len(load_quants()) + len(load_engines())


@pytest.mark.browser
def test_at_phone_size_the_page_is_short_and_a_filter_narrows_the_hardware(catalog_tab, built_site):
    """Issue 14: a buyer's page, quick on a phone. It lays out a page of rows per table (the
    2,000-row single table was 113,000 px tall); the filters narrow the hardware to what they say."""
    page, _log, errors = catalog_tab
    height = page.evaluate("() => document.documentElement.scrollHeight")
    assert height < 20_000, f"{height} px tall at {PHONE['width']} px wide"
    first = page.evaluate(HARDWARE_ROWS)
    assert 0 < len(first) < len(load_hardware())
    assert page.inner_text('[data-testid="hw-count"]').startswith(f"{len(load_hardware())} devices")

    page.select_option('[data-testid="hw-vendor"]', "nvidia")
    page.select_option('[data-testid="hw-memory"]', "24")
    page.fill('[data-testid="hw-price"]', "2000")
    expected = {f"hw-{d.id}" for d in load_hardware().values()
                if d.vendor == "nvidia" and d.memory_gib >= 24 and (p := price(d)) and p["usd"] <= 2000}
    assert expected and "hw-rtx-3090" in expected  # $750 used (its street price), under $2,000
    shown = page.evaluate(HARDWARE_ROWS)
    assert set(shown) == expected
    assert page.inner_text('[data-testid="hw-count"]').startswith(f"{len(expected)} of {len(load_hardware())} devices match")
    for select in ("hw-vendor", "hw-memory"):
        page.select_option(f'[data-testid="{select}"]', "")
    page.fill('[data-testid="hw-price"]', "")
    assert page.evaluate(HARDWARE_ROWS) == first
    assert errors == []


@pytest.mark.browser
def test_sorting_by_a_column_orders_the_rows_and_a_row_opens_to_its_sources(catalog_tab):
    page, _log, errors = catalog_tab
    price_header = page.locator('[data-testid="hw-table"] thead button', has_text="Price")
    price_header.click()  # numbers: largest first
    prices = _column(page, 2)
    known = [p for p in prices if p is not None]
    assert known == sorted(known, reverse=True) and prices[: len(known)] == known  # no price last
    price_header.click()
    known = [p for p in _column(page, 2) if p is not None]
    assert known == sorted(known)
    assert page.get_attribute('[data-testid="hw-table"] th[aria-sort="ascending"]', "aria-sort") == "ascending"
    page.locator('[data-testid="hw-table"] thead button', has_text="Memory").click()
    memory = _column(page, 1)
    assert memory == sorted(memory, reverse=True)

    _search(page, "rtx 3090")
    page.click('#hw-rtx-3090 button.entry-name')
    details = page.locator("#hw-rtx-3090-details")
    assert details.is_visible() and page.get_attribute("#hw-rtx-3090 button.entry-name", "aria-expanded") == "true"
    hrefs = details.locator("a").evaluate_all("links => links.map(a => a.href)")
    device = load_hardware()["rtx-3090"]
    assert device.source in hrefs and device.sources["launch_price_usd"] in hrefs
    assert "https://bestllmfor.com/best/dual-rtx-3090-budget-rig/" in hrefs
    assert "$750 used, May 2026" in details.inner_text()
    assert "data/hardware/nvidia-geforce-30.toml [rtx-3090]" in " ".join(details.inner_text().split())
    # A row whose numbers were read links the file read, in its row and its details.
    _search(page, "radeon vii")
    read = load_hardware()["radeon-vii"].verified_from
    assert page.get_attribute('#hw-radeon-vii a[title^="Numbers checked"]', "href") == read.split()[0]
    page.click('#hw-radeon-vii button.entry-name')
    assert "Checked against:" in page.locator("#hw-radeon-vii-details").inner_text()
    _search(page, "")
    assert errors == []


@pytest.mark.browser
def test_search_filters_the_rows(catalog_tab):
    page, _log, errors = catalog_tab
    shown = _search(page, "RTX 4090")
    assert "hw-rtx-4090" in shown and "hw-rtx-4090-laptop" in shown and "hw-rtx-3090" not in shown
    assert all(anchor.startswith("hw-") for anchor in shown)

    shown = _search(page, "qwen3 30b")
    names = {f"model-{m.id}": " ".join([m.id, m.name, *m.aliases]).lower() for m in load_models().values()}
    expected = {anchor for anchor, text in names.items() if "qwen3" in text and "30b" in text}
    assert expected and expected <= set(shown)
    assert "model-qwen3-8b" not in shown
    count = page.inner_text('[data-testid="catalog-count"]')
    assert count.startswith(f"{len(shown)} of {_entry_count()}")
    assert page.locator('[data-testid="hw-table"]').is_hidden()  # no device matches: no empty table

    assert _search(page, "no such thing anywhere") == []
    assert len(_search(page, "")) > 0
    assert errors == []


@pytest.mark.browser
def test_a_link_to_an_entry_shows_it_even_when_the_search_hid_it(catalog_tab):
    page, _log, errors = catalog_tab
    _search(page, "gemma")
    page.evaluate("() => { location.hash = 'hw-apple-m3-max-40c-64gb'; }")
    page.wait_for_function("() => document.querySelector('#hw-apple-m3-max-40c-64gb')?.offsetParent")
    assert page.input_value('[data-testid="catalog-search"]') == "apple-m3-max-40c-64gb"  # it names the entry
    assert page.locator("#hw-apple-m3-max-40c-64gb-details").is_visible()
    assert "hw-apple-m3-max-40c-64gb" in page.evaluate(HARDWARE_ROWS)
    # An entry's own id leads to its first memory size.
    page.evaluate("() => { location.hash = 'hw-apple-m3-max-40c'; }")
    page.wait_for_function("() => document.querySelector('#hw-apple-m3-max-40c-48gb-details')?.offsetParent")
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
        page.goto(site_url + "catalog.html#hw-rtx-3090")  # an opened row is checked too
        page.wait_for_selector("#hw-rtx-3090-details")
        page.evaluate("() => document.querySelectorAll('details').forEach(d => d.open = true)")
        assert axe_violations(page) == []
    finally:
        context.close()

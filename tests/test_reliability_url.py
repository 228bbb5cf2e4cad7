"""URL state under attack. Thousands of random and hostile query strings (markup and script,
prototype keys, huge values, NaN/Infinity, negative and absurd numbers, unknown ids, broken
percent-encoding, duplicates) go through the page's own parser (state.js + schema.js, evaluated
in Chromium many at a time) and through engine/page/query.py parse_query, which must agree exactly;
then hostile links go through the whole page: no dialog, no injected element, no "NaN",
"Infinity" or "undefined" on screen, defaults in place and a notice naming what was ignored.
The counts are in the README's "Reliability and security" section."""

from __future__ import annotations

import json
import random
import re
from urllib.parse import quote

import pytest

from conftest import BOOT_TIMEOUT_MS
from engine.listing import list_catalog
from engine.page.fields import MAX_QUERY_LENGTH, VIEW_FIELDS, answers
from engine.page.query import parse_query
from engine.page.view import estimate_view
from pagekit import SHOW_URL, settle, show

pytestmark = pytest.mark.browser

#: How many query strings the parser fuzz tries, and how many per browser round trip.
PARSER_CASES = 6000
BATCH = 500
#: Hostile links loaded as whole pages (a fresh navigation each) and shown on the running page.
PAGE_LOADS = 24
RUNNING_PAGE_LINKS = 40
SEED = 6

#: Payloads that would run script or add elements if any were ever parsed as markup; each marks
#: what it did on window.__pwned or with an element whose id starts with "pwned".
MARKUP = [
    '<img id="pwned-img" src=x onerror="window.__pwned=1">',
    '"><svg id="pwned-svg" onload="window.__pwned=1">',
    "<script>window.__pwned=1</script>",
    "javascript:window.__pwned=1",
    "<iframe id=pwned-frame srcdoc='<script>parent.__pwned=1</script>'>",
    "{{constructor.constructor('window.__pwned=1')()}}",
    "${window.__pwned=1}",
    "<a id=pwned-a href=javascript:alert(1)>x</a>",
]
PROTOTYPE_KEYS = ["__proto__", "constructor", "prototype", "hasOwnProperty", "toString", "valueOf", "__defineGetter__", "__proto__[polluted]", "constructor[prototype][polluted]"]
NUMBERS = ["NaN", "Infinity", "-Infinity", "-1", "-0", "0", "1e3", "1e308", "0x10", "1_000", " 5", "5 ", "+5", "5.", ".5", "٥", "１２", "9" * 10, "1.1234567", "2.5", "00001", "4096.000001"]
BROKEN_ENCODING = ["%", "%Z", "%ZZ", "%C3%28", "%FF", "%ED%A0%80", "%C0%AF", "%F0%9F", "%F0%9F%98%80", "%00", "%1F", "%7F", "%E2%80%AE", "%EF%BB%BF", "+", "%2B", "%26", "%3D"]


def catalog_ids() -> dict[str, list[str]]:
    return {
        "hardware": ["custom", *(d["id"] for d in list_catalog("hardware"))],
        "model": ["custom", *(m["id"] for m in list_catalog("models"))],
        "quant": [q["name"] for q in list_catalog("quants")],
        "engine": ["", *(e["id"] for e in list_catalog("engines"))],
        "answer": list(answers()),
        "draft": ["", *(m["id"] for m in list_catalog("models"))],
        "device": ["", *(d["id"] for d in list_catalog("hardware"))],
    }


class HostileQueries:
    """A seeded generator of query strings: mostly settings of the page with valid, boundary or
    hostile values, sometimes encoded, plus keys that are no setting and whole-query oddities."""

    def __init__(self, seed: int):
        self.random = random.Random(seed)
        self.ids = catalog_ids()

    def pick(self, items):
        return self.random.choice(items)

    def valid(self, key: str) -> str:
        spec = VIEW_FIELDS[key]
        kind = spec["kind"]
        if kind == "int":
            return str(self.random.randint(spec["min"], spec["max"]))
        if kind == "number":
            return self.pick([str(spec["min"]), str(spec["max"]), f"{self.random.uniform(spec['min'], spec['max']):.3f}", str(self.random.randint(1, int(spec["max"])))])
        if kind == "choice":
            return self.pick(spec["choices"])
        if kind == "text":
            return self.pick(["My card", "RTX 9090 (rumour)", "ü" * 30, "😀" * 30, "x" * spec["max_length"], "<b>bold</b>"])
        if kind == "json":
            return self.pick(['{"model_type":"llama"}', "{}", json.dumps({"hidden_size": 4096, "num_hidden_layers": 32, "architectures": ["LlamaForCausalLM"]})])
        if kind == "lane":
            parts = [self.pick(["", *self.ids["hardware"][:20]]), self.pick(["", *self.ids["model"][:20]]), self.pick(["", "Q8_0", "Q4_K_M"]), self.pick(["", "llama-cpp"]), self.pick(["", "off", "mtp", "llama-3.2-1b"])]
            return "*".join(parts[: self.random.randint(1, 5)])
        return self.pick(self.ids[kind][:60])

    def boundary(self, key: str) -> str:
        spec = VIEW_FIELDS[key]
        if spec["kind"] in ("int", "number"):
            low, high = spec["min"], spec["max"]
            return self.pick([str(low), str(high), str(low - 1), str(high + 1), f"{high}.5", f"{low}.0000001", str(-high)])
        if spec["kind"] == "text":
            return self.pick(["x" * spec["max_length"], "x" * (spec["max_length"] + 1), "😀" * 31, "a\u0000b", "tab\there", "del\x7f"])
        if spec["kind"] == "json":
            return self.pick(["[1,2]", "null", "1", '"text"', '{"a":NaN}', "{" * 17 + "}" * 17, '{"a":' * 16 + "1" + "}" * 16, "{nope", "x" * (spec["max_length"] + 1)])
        if spec["kind"] == "lane":
            return self.pick(["a*b*c*d*e*f", "******", "nope****", "*nope***", "**nope**", "***nope*", "****nope", "*" * 4 + "custom"])
        return self.pick(["", " ", self.valid(key).upper(), self.valid(key) + " ", "x" * 201])

    def hostile_value(self) -> str:
        roll = self.random.random()
        if roll < 0.3:
            return self.pick(MARKUP)
        if roll < 0.6:
            return self.pick(NUMBERS)
        if roll < 0.7:
            return self.pick(PROTOTYPE_KEYS)
        if roll < 0.75:
            return "A" * self.pick([201, 1000, 20_001, 70_000])
        return "".join(self.pick([*BROKEN_ENCODING, "a", "=", "&", "*", "\u00e9", "#"]) for _ in range(self.random.randint(1, 6)))

    def key(self) -> str:
        roll = self.random.random()
        if roll < 0.8:
            return self.pick(list(VIEW_FIELDS))
        if roll < 0.9:
            return self.pick(PROTOTYPE_KEYS)
        return self.pick([*MARKUP, *BROKEN_ENCODING, "", "HW", "hw ", "x" * 100, "🙂"])

    def encode(self, text: str) -> str:
        roll = self.random.random()
        if roll < 0.6:
            return quote(text, safe="")
        if roll < 0.8:
            return text.replace("&", "%26").replace("#", "%23")
        return text

    def pair(self) -> str:
        key = self.key()
        if key in VIEW_FIELDS:
            roll = self.random.random()
            value = self.valid(key) if roll < 0.45 else self.boundary(key) if roll < 0.75 else self.hostile_value()
        else:
            value = self.hostile_value() if self.random.random() < 0.5 else "1"
        separator = self.pick(["=", "=", "=", "", "=="])
        return f"{self.encode(key)}{separator}{self.encode(value)}"

    def query(self) -> str:
        roll = self.random.random()
        if roll < 0.01:
            return "?" + "hw=rtx-3090&" * (MAX_QUERY_LENGTH // 12 + 1)
        pairs = [self.pair() for _ in range(self.random.randint(0, 9))]
        if roll < 0.1 and pairs:
            pairs.append(pairs[0])  # a setting given twice
        glue = self.pick(["&", "&", "&", "&&", ";"])
        return self.pick(["?", "?", "", "??", "?&"]) + glue.join(pairs)

    def queries(self, count: int) -> list[str]:
        return [self.query() for _ in range(count)]


#: Runs parseState on each query, checks what must hold in the browser, returns the results.
PARSE_BATCH = """async (queries) => {
  const main = document.querySelector('script[type="module"]').src; // the page's own modules
  const { parseState, serializeState } = await import(new URL("./state.js", main));
  const { buildSchema } = await import(new URL("./schema.js", main));
  const read = (id) => JSON.parse(document.getElementById(id).textContent);
  const catalog = read("catalog-data");
  const schema = buildSchema(read("view-fields"), catalog, read("answers-data").answers);
  const prototypeKeys = Object.getOwnPropertyNames(Object.prototype).sort().join();
  const out = [];
  for (const query of queries) {
    let parsed;
    try {
      parsed = parseState(query, schema);
    } catch (error) {
      out.push({ threw: String(error) });
      continue;
    }
    const problems = [];
    if (Object.getPrototypeOf(parsed.state) !== Object.prototype) problems.push("state prototype changed");
    if (Object.keys(parsed.state).sort().join() !== Object.keys(schema).sort().join()) problems.push("state keys differ from the schema");
    for (const [key, value] of Object.entries(parsed.state)) {
      if (typeof value === "number" && !Number.isFinite(value)) problems.push(`${key} is not finite`);
      if (value === undefined || value === null) problems.push(`${key} is ${value}`);
    }
    const again = parseState(serializeState(parsed.state, schema), schema);
    if (JSON.stringify(again.state) !== JSON.stringify(parsed.state) || again.ignored.length) problems.push("serialize/parse round trip changed the state");
    out.push({ state: parsed.state, ignored: parsed.ignored, problems });
  }
  if (Object.getOwnPropertyNames(Object.prototype).sort().join() !== prototypeKeys || ({}).polluted !== undefined) out.push({ threw: "Object.prototype was polluted" });
  return out;
}"""


def test_the_page_parser_and_the_engine_agree_on_thousands_of_hostile_links(app):
    page, _log, _console = app
    queries = HostileQueries(SEED).queries(PARSER_CASES)
    ignored_total = 0
    for start in range(0, len(queries), BATCH):
        batch = queries[start:start + BATCH]
        results = page.evaluate(PARSE_BATCH, batch)
        assert len(results) == len(batch), results[-1]
        for query, result in zip(batch, results):
            assert "threw" not in result, (query[:200], result)
            assert result["problems"] == [], (query[:200], result["problems"])
            view, ignored = parse_query(query)
            assert result["state"] == view, query[:200]
            assert result["ignored"] == ignored, query[:200]
            ignored_total += len(ignored)
    # The generator is hostile enough: most links carry something the page must ignore.
    assert ignored_total > PARSER_CASES


#: Anything injected by a link, or a dialog it opened.
INJECTED = """() => ({
  pwned: window.__pwned !== undefined || ({}).polluted !== undefined,
  elements: document.querySelectorAll('[id^="pwned"], [onerror], [onload], iframe, script:not([src]):not([type="application/json"]), a[href^="javascript:"]').length,
})"""
#: Visible text, with the notice (which quotes what it ignored) and the visitor's own text left out.
VISIBLE_TEXT = """(ownText) => {
  let text = document.body.innerText.replace(document.getElementById("url-notice").innerText, "");
  for (const own of ownText) if (own) text = text.split(own).join("");
  return text;
}"""
BAD_TEXT = re.compile(r"\bNaN\b|\bInfinity\b|\bundefined\b|\[object Object\]|\bnull\b")
METRIC = re.compile(r"^(…|—|[0-9][0-9,]*(\.[0-9]+)?( ms| s| min| h)?|Fits|Offload|Won't run)$")


def search_of(page, url: str) -> str:
    """The query string the browser makes of a link (it percent-encodes some characters)."""
    return page.evaluate("(url) => new URL(url).search", url)


def check_page_after_link(page, dialogs: list, search: str) -> None:
    """What a hostile link (whose query string is `search`) must never achieve, and the notice
    it must produce."""
    view, ignored = parse_query(search)
    assert dialogs == [], search
    assert page.evaluate(INJECTED) == {"pwned": False, "elements": 0}, search
    own = [view["hw_name"], view["cfg"], page.input_value('[data-testid="custom-model-config"]')]
    text = page.evaluate(VISIBLE_TEXT, own)
    assert not BAD_TEXT.search(text), (search[:200], BAD_TEXT.search(text).group(0))
    for testid in ("decode-tps", "prefill-tps", "ttft", "fit"):
        shown = page.inner_text(f'.results [data-testid="{testid}"]')
        assert METRIC.match(shown), (search[:200], testid, shown)
    notice = page.locator("#url-notice")
    if ignored:
        assert notice.is_visible(), search[:200]
        text = notice.text_content()
        for item in ignored[:8]:
            assert f"{item['key']} ({item['reason']})" in text, (search[:200], item)
        if len(ignored) > 8:
            assert f"and {len(ignored) - 8:,} more" in text
    else:
        assert notice.is_hidden(), search[:200]
    # The controls show the view the engine would compute (defaults where the link was ignored).
    assert page.input_value('[data-testid="hardware-select"]') == view["hw"]
    assert page.input_value('[data-testid="prompt-tokens"]') == str(view["prompt"])


def page_links(count: int, seed: int) -> list[str]:
    """Hostile links for whole pages: every markup payload in a setting that is shown as text
    (a custom device's name) and in one that is not, plus generated ones."""
    generator = HostileQueries(seed)
    curated = [
        "?hw=custom&hw_name=" + quote(MARKUP[0]) + "&hw_bw=1e3&hw_mem=-4&hw_tf=NaN",
        "?hw=" + quote(MARKUP[1]) + "&model=" + quote(MARKUP[2]) + "&__proto__[polluted]=1&constructor[prototype][polluted]=1",
        "?prompt=Infinity&depth=-1&gpus=99&batch=0&think=NaN&gpu_pct=101&draft_n=0&lane1=" + quote("<b>*" * 5),
        "?model=custom&cfg=" + quote('{"model_type":"llama","hidden_size":"<img src=x onerror=alert(1)>"}'),
        "?" + "&".join(f"unknown{i}=1" for i in range(30)),
        "?cfg=" + quote("{" * 40 + "}" * 40) + "&model=custom",
        "?hw_name=" + quote(MARKUP[4]) + "&hw=custom&hw_bw=500&hw_mem=16&hw_tf=40",
        # As long as the test server takes (64 KiB a request line): the notice counts the rest.
        "?" + "&".join(f"k{i}=%3Cb%3E" for i in range(3000)),
    ]
    generated = [q if q.startswith("?") else "?" + q for q in generator.queries(count * 4) if len(q) < 4000]
    return (curated + generated)[:count]


def test_hostile_links_load_as_a_working_page(browser, site_url):
    """Whole page loads of hostile links (the engine does not need to be up for what is
    checked); the last one waits for the engine and checks its numbers."""
    context = browser.new_context(service_workers="block")
    page = context.new_page()
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    # These loads need the page, not the engine: the runtime is refused, so no boot runs.
    context.route("**/pyodide/**", lambda route: route.abort())
    try:
        links = page_links(PAGE_LOADS, SEED + 1)
        for link in links:
            page.goto(site_url + link, wait_until="domcontentloaded")
            page.wait_for_function("() => window.__tokfeel && document.querySelector('#hardware-select').options.length > 0")
            check_page_after_link(page, dialogs, search_of(page, site_url + link))
        context.unroute("**/pyodide/**")
        page.reload(wait_until="domcontentloaded")
        page.wait_for_selector('[data-testid="engine-status"][data-state="ready"]', timeout=BOOT_TIMEOUT_MS)
        settle(page)
        check_page_after_link(page, dialogs, search_of(page, site_url + links[-1]))
        # The engine's numbers for the last link: a speed, or (a set-up that cannot load, such as
        # a multi-million-token prompt) the won't-run verdict and no speed (issue 13).
        expected = estimate_view(parse_query(search_of(page, site_url + links[-1]))[0])["estimate"]
        assert page.get_attribute('.results [data-testid="fit"]', "data-value") == expected["fit"]
        decode = page.get_attribute('.results [data-testid="decode-tps"]', "data-value")
        if expected["fit"] == "no":
            assert decode == ""
        else:
            assert float(decode) == pytest.approx(expected["decode_tps"], rel=1e-6)
        assert errors == []
    finally:
        context.close()


def test_hostile_links_on_the_running_engine(app):
    """Links the visitor follows within the page (back/forward): the engine computes each view
    the parser kept, and nothing hostile reaches the screen as markup or as a broken number."""
    page, _log, _console = app
    dialogs: list[str] = []

    def on_dialog(dialog):
        dialogs.append(dialog.message)
        dialog.dismiss()

    page.on("dialog", on_dialog)
    base = page.url.split("?")[0]
    try:
        for link in page_links(RUNNING_PAGE_LINKS, SEED + 2):
            search = search_of(page, base + link)
            page.evaluate(SHOW_URL, base + link)
            view = parse_query(search)[0]
            if view["model"] != "custom" or view["cfg"]:
                page.wait_for_function(
                    "(v) => { const c = window.__tokfeel.current(); return c && Object.entries(v).every(([k, x]) => c.view[k] === x); }", arg=view, timeout=30_000
                )
            check_page_after_link(page, dialogs, search)
            decode = page.get_attribute('.results [data-testid="decode-tps"]', "data-value")
            assert decode == "" or float(decode) > 0
    finally:
        page.remove_listener("dialog", on_dialog)
        show(page)

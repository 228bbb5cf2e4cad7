"""build.py: a complete, self-contained, reproducible site in a temporary folder."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import subprocess
import sys
import zipfile
from html.parser import HTMLParser

import build

#: Attributes through which a page loads something.
LOADING_ATTRIBUTES = {("script", "src"), ("link", "href"), ("img", "src"), ("iframe", "src"), ("source", "src"), ("audio", "src"), ("video", "src")}


class _Loads(HTMLParser):
    def __init__(self):
        super().__init__()
        self.loads: list[str] = []
        self.inline_scripts = 0
        self._in_script = None

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        for name, value in attrs:
            if (tag, name) in LOADING_ATTRIBUTES and value:
                self.loads.append(value)
            if name.startswith("on"):
                raise AssertionError(f"inline event handler {name} on <{tag}>")
        if tag == "script":
            self._in_script = attributes.get("type", "")

    def handle_data(self, data):
        if self._in_script is not None and self._in_script != "application/json" and data.strip():
            self.inline_scripts += 1

    def handle_endtag(self, tag):
        if tag == "script":
            self._in_script = None


def test_site_has_page_runtime_and_bundle(built_site):
    assert (built_site / "index.html").is_file()
    version = build.pyodide_version()
    for name in build.PYODIDE_FILES:
        assert (built_site / "pyodide" / version / name).is_file(), name
    bundles = list(built_site.glob("engine-*.zip"))
    assert len(bundles) == 1
    names = zipfile.ZipFile(bundles[0]).namelist()
    assert "engine/api.pyc" in names and "data/catalogs.json" in names
    assert not [name for name in names if name.endswith(".toml")], "the catalogs go in parsed (catalogs.json)"
    assert "data/calibration/measurements.csv" not in names


def test_bundle_integrity_matches_what_the_page_asks_for(built_site):
    html = (built_site / "index.html").read_text()
    boot = json.loads(re.search(r'<script type="application/json" id="boot-config">(.*?)</script>', html).group(1))
    payload = (built_site / boot["bundleURL"]).read_bytes()
    assert boot["bundleIntegrity"] == "sha256-" + base64.b64encode(hashlib.sha256(payload).digest()).decode()


def test_nothing_loads_from_another_origin(built_site):
    parser = _Loads()
    parser.feed((built_site / "index.html").read_text())
    assert parser.loads, "the page loads nothing?"
    for url in parser.loads:
        assert not re.match(r"^(https?:)?//", url), f"page loads {url} from another origin"
    assert parser.inline_scripts == 0, "inline scripts would need 'unsafe-inline' in the CSP"
    for path in list(built_site.glob("assets/*/js/**/*.js")) + list(built_site.glob("assets/*/css/*.css")):
        text = path.read_text()
        assert not re.search(r"""(import|fetch|url)\s*\(?\s*["'`]?(https?:)?//""", text), path.name
        assert not re.search(r"""from\s+["'](https?:)?//""", text), path.name


def test_content_security_policy_is_strict(built_site):
    html = (built_site / "index.html").read_text()
    policy = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', html).group(1)
    directives = dict(part.strip().split(" ", 1) for part in policy.split(";"))
    assert directives["default-src"] == "'self'"
    assert directives["script-src"] == "'self' 'wasm-unsafe-eval'"
    assert "unsafe-inline" not in policy and "unsafe-eval'" not in policy.replace("wasm-unsafe-eval'", "")


def test_build_is_reproducible(tmp_path):
    first = build.build(tmp_path / "a")
    second = build.build(tmp_path / "b")
    files_a = sorted(p.relative_to(first) for p in first.rglob("*") if p.is_file())
    files_b = sorted(p.relative_to(second) for p in second.rglob("*") if p.is_file())
    assert files_a == files_b
    for relative in files_a:
        assert (first / relative).read_bytes() == (second / relative).read_bytes(), relative


def test_initial_estimate_is_the_engines(built_site):
    from engine.page.fields import DEFAULT_VIEW
    from engine.page.view import estimate_view

    html = (built_site / "index.html").read_text()
    initial = json.loads(re.search(r'id="initial-view">(.*?)</script>', html).group(1))
    assert initial["view"] == DEFAULT_VIEW
    assert initial["estimate"]["decode_tps"] == estimate_view(DEFAULT_VIEW)["estimate"]["decode_tps"]


#: Calls the parity test makes through engine.page.handle: every catalog, views on several
#: devices and models, and picker marks (which read every model's architecture).
PARITY_CALLS = [
    {"fn": "list", "args": {"kind": kind}} for kind in ("hardware", "models", "quants", "engines")
] + [
    {"fn": "view", "args": {}},
    {"fn": "view", "args": {"hw": "apple-m4-max-40c-128gb", "model": "qwen3-30b-a3b", "quant": "Q8_0", "prompt": 2000}},
    {"fn": "view", "args": {"hw": "rtx-3090", "depth": 32000, "kv": "q8_0"}},
    {"fn": "marks", "args": {"view": {}, "kind": "hardware", "offset": 0, "limit": 64}},
] + [{"fn": "marks", "args": {"view": {}, "kind": "models", "offset": offset, "limit": 64}} for offset in range(0, 512, 64)]


def test_bundle_holds_bytecode_for_every_module_and_parsed_catalogs(built_site):
    # Only the bundle may hold parsed catalogs: where the engine finds them it skips its checks.
    assert not (build.DATA / build.COMPILED_CATALOGS).exists()
    names = set(zipfile.ZipFile(next(built_site.glob("engine-*.zip"))).namelist())
    modules = {name for _path, name in build.bundle_files() if name.endswith(".py")}
    assert modules and not names & modules, "the bundle is sourceless: Pyodide imports the .pyc files"
    assert {name[:-3] + ".pyc" for name in modules} == {name for name in names if name.endswith(".pyc")}
    assert not any(name.startswith("engine/tools/") for name in names)


def test_the_bundles_catalogs_give_the_checkouts_answers(built_site, tmp_path):
    """The page's engine reads the catalogs the build parsed and skips the checks the build made;
    it must answer exactly as the checkout, which parses and checks the TOML files. (The bundle's
    bytecode is for Pyodide's CPython; this runs the same sources with the bundle's data.)"""
    with zipfile.ZipFile(next(built_site.glob("engine-*.zip"))) as bundle:
        for name in bundle.namelist():
            if name.startswith("data/"):
                bundle.extract(name, tmp_path)
    for path, name in build.bundle_files():
        if name.endswith(".py"):
            (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / name).write_bytes(path.read_bytes())
    program = (
        "import json, sys\n"
        "from engine.catalog import prevalidated\n"
        "from engine.page import handle\n"
        "assert prevalidated()\n"
        "print(json.dumps([json.loads(handle(json.dumps(call))) for call in json.loads(sys.argv[1])]))\n"
    )
    calls = json.dumps(PARITY_CALLS)
    bundled = subprocess.run([sys.executable, "-c", program, calls], cwd=tmp_path, capture_output=True, text=True, timeout=300,
                             env={**os.environ, "PYTHONPATH": str(tmp_path)})
    assert bundled.returncode == 0, bundled.stderr
    from engine.page import handle

    expected = [json.loads(handle(json.dumps(call))) for call in PARITY_CALLS]
    assert all(answer["ok"] for answer in expected)
    assert json.loads(bundled.stdout) == expected

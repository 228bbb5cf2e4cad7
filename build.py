"""Build the static site into a fresh ``dist/`` (and optionally serve it).

    python3 build.py                 build into dist/
    python3 build.py --out DIR       build into DIR (tests build into a temporary folder)
    python3 build.py --serve         build, then serve on http://localhost:8000

The recipe, one small function per step (see main()):
validate the catalogs, copy the Pyodide runtime and the chart library out of node_modules, bundle
the engine with its data (its modules as bytecode compiled by Pyodide itself, run in Node; the
TOML catalogs parsed into one JSON file the page's engine loads without checking again), compute the default view's estimate with CPython, render the page with
jinja2, copy the page's scripts and styles (index.html loads them from a content-addressed
assets/<hash>/ folder), and last write the service worker that precaches the finished site for
offline use. Everything is deterministic: the same inputs give the same bytes.
"""

from __future__ import annotations

import argparse
import base64
import functools
import hashlib
import http.server
import json
import os
import shutil
import sys
import zipfile
from pathlib import Path

import jinja2
import markupsafe

ROOT = Path(__file__).resolve().parent
DATA = ROOT / "data"
ENGINE = ROOT / "engine"
SITE = ROOT / "site"
NODE_MODULES = ROOT / "node_modules"
DEFAULT_OUT = ROOT / "dist"

#: The four files of the Pyodide npm package a site needs, plus its lock file (docs/sources.md, Pyodide and Chromium).
PYODIDE_FILES = ("pyodide.mjs", "pyodide.asm.mjs", "pyodide.asm.wasm", "python_stdlib.zip", "pyodide-lock.json")
#: The chart library's self-contained browser build (no bare imports, so no bundler is needed).
CHART_FILE = "dist/chart.umd.min.js"
#: The Markdown renderer and the sanitiser for the streamed answers: their ES-module builds (no
#: imports of their own), with the licence files beside them. {package: (module, licences)}
MARKDOWN_FILES = {
    "marked": ("lib/marked.esm.js", ("LICENSE",)),
    "dompurify": ("dist/purify.es.mjs", ("LICENSE",)),
}
#: Data the page's engine does not need: the raw measurements (only ``score``/``calibrate`` read
#: them) and the editors' JSON schemas (prefixes of paths under data/).
BUNDLE_EXCLUDE = ("calibration/measurements.csv", "schema/")
#: The bundle carries the TOML catalogs parsed, in this one file (engine/catalog.py reads it and
#: skips the checks this build's validate_catalogs made), instead of the TOML files.
COMPILED_CATALOGS = "catalogs.json"
#: Fixed timestamp for archive members, so the bundle's bytes depend only on its contents.
ZIP_DATE = (1980, 1, 1, 0, 0, 0)
JSON_COMPACT = {"separators": (",", ":"), "sort_keys": True, "allow_nan": False}
#: The service worker's file (at the site's root: a service worker controls only its folder).
SERVICE_WORKER = "sw.js"
#: Files the service worker does not install up front (prefixes of paths in the build): the
#: catalog page and the document it links, which a visitor may never open; they are kept once
#: fetched.
ON_DEMAND = ("catalog.html", "docs/")
#: Caches of this site are named with this prefix (the service worker deletes the other builds').
CACHE_PREFIX = "tokfeel-"
#: Paths that change when their content does (the runtime and chart library are in versioned
#: folders, the engine bundle is content-addressed): the service worker serves them cache-first.
VERSIONED_PATHS = r"^(pyodide/|vendor/|assets/|engine-[0-9a-f]+\.zip$)"
#: The page's scripts and styles also go to a content-addressed folder, assets/<hash>/, which
#: index.html loads them from: a browser holding an old copy in memory can never run it with a
#: new index.html (a reload reuses cached subresources without asking the network or the
#: service worker, so equal URLs for different builds would mix them).
PAGE_ASSET_FOLDERS = ("js", "css")

sys.path.insert(0, str(ROOT))


def npm_version(package: str) -> str:
    """The pinned version of an installed npm package (package.json pins it exactly)."""
    manifest = NODE_MODULES / package / "package.json"
    if not manifest.exists():
        sys.exit(f"node_modules/{package} is missing: run `npm ci` first")
    return json.loads(manifest.read_text())["version"]


def pyodide_version() -> str:
    return npm_version("pyodide")


def fresh_output_dir(out: Path) -> None:
    """Build from scratch: never mix files of two builds."""
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)


#: The catalog fields the page uses (pickers, search, notes, prices); sources stay in data/ and
#: in the engine bundle, which keeps the page's first download small.
PAGE_FIELDS = {
    "hardware": ("id", "name", "aliases", "vendor", "family", "kind", "memory_gib", "bandwidth_gbs", "fp16_tflops", "launch_price_usd", "street_price", "nvlink_cards", "nvlink_bridge", "backend", "engine_id"),
    "models": ("id", "name", "aliases", "family", "org", "params_b", "active_params_b", "layers", "moe", "experts",
               "experts_per_token", "max_context", "reasoning", "tokenizer", "quants"),
    "quants": ("id", "name", "kind", "bits_per_weight", "backends"),
    "engines": ("id", "name", "backends", "runs", "kv_types", "catch_all"),
}


def validate_catalogs() -> dict:
    """Load every catalog through the engine's strict loaders (a bad entry stops the build)."""
    from engine.listing import list_catalog

    return {kind: list_catalog(kind) for kind in ("hardware", "models", "quants", "engines")}


def page_catalog(catalogs: dict) -> dict:
    """The catalogs as the page needs them (PAGE_FIELDS only); each model also names the quant
    the page switches to when the current one is not published for it (engine/page/points.py quant_for),
    and the page gets the backends' names. What runs where is the engine's data (engine/listing.py)."""
    from engine.engines import BACKEND_NAMES
    from engine.page.points import quant_for

    page = {kind: [{key: entry[key] for key in PAGE_FIELDS[kind]} for entry in entries] for kind, entries in catalogs.items()}
    page["backends"] = BACKEND_NAMES  # what the pickers call each backend
    for model in page["models"]:
        model["quant"] = quant_for(model["id"], "")
    return page


def copy_pyodide_runtime(out: Path, version: str) -> str:
    """Copy the runtime to a versioned folder, so an upgrade never mixes with cached old files."""
    target = out / "pyodide" / version
    target.mkdir(parents=True)
    for name in PYODIDE_FILES:
        shutil.copyfile(NODE_MODULES / "pyodide" / name, target / name)
    return f"pyodide/{version}/"


def copy_chart_library(out: Path, version: str) -> str:
    """Chart.js into a versioned folder (like the Pyodide runtime), with its licence."""
    target = out / "vendor" / f"chart.js-{version}"
    target.mkdir(parents=True)
    shutil.copyfile(NODE_MODULES / "chart.js" / CHART_FILE, target / Path(CHART_FILE).name)
    shutil.copyfile(NODE_MODULES / "chart.js" / "LICENSE.md", target / "LICENSE.md")
    return f"vendor/chart.js-{version}/{Path(CHART_FILE).name}"


def compile_catalogs() -> bytes:
    """Every TOML catalog under data/, parsed: {path under data/: document}, compact JSON. Only
    called after validate_catalogs() loaded the same files strictly."""
    import tomllib

    documents = {
        path.relative_to(DATA).as_posix(): tomllib.loads(path.read_text(encoding="utf-8"))
        for path in sorted(DATA.rglob("*.toml"))
    }
    return json.dumps(documents, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()


def copy_markdown_libraries(out: Path) -> dict:
    """marked and DOMPurify into versioned folders (like Chart.js); returns {package: (URL,
    version)}. A node_modules installed before they were added lacks them: the build says so
    and the page streams plain text (``npm ci`` installs them)."""
    found = {}
    for package, (module, licences) in MARKDOWN_FILES.items():
        if not (NODE_MODULES / package / "package.json").exists():
            print(f"build: node_modules/{package} is missing (run `npm ci`): answers will stream as plain text", file=sys.stderr)
            return {}
        version = npm_version(package)
        target = out / "vendor" / f"{package}-{version}"
        target.mkdir(parents=True)
        for name in (module, *licences):
            shutil.copyfile(NODE_MODULES / package / name, target / Path(name).name)
        found[package] = (f"{target.relative_to(out).as_posix()}/{Path(module).name}", version)
    return found


def bundle_files() -> list[tuple[Path, str]]:
    """(file, name in archive) for the engine package and its data (TOML catalogs excluded: they
    go in parsed, see compile_catalogs), sorted."""
    files = []
    for path in sorted(ENGINE.rglob("*.py")):
        if path.is_relative_to(ENGINE / "tools"):
            continue  # developer tools (score, calibrate, bench ...) never run in the page
        files.append((path, path.relative_to(ROOT).as_posix()))
    for path in sorted(DATA.rglob("*")):
        relative = path.relative_to(DATA).as_posix()
        if path.is_file() and not relative.startswith(BUNDLE_EXCLUDE) and path.suffix != ".toml":
            files.append((path, path.relative_to(ROOT).as_posix()))
    return files


def compile_bytecode(sources: dict[str, bytes]) -> dict[str, bytes]:
    """{archive name of a .py: source} -> {archive name of its .pyc: bytecode}, compiled by the
    page's own interpreter (Pyodide's CPython, in Node: scripts/compile-bytecode.mjs), so the
    browser imports the engine without compiling it. The same sources give the same bytes; the
    result is kept in node_modules/.cache keyed by the runtime's version and the sources."""
    key = hashlib.sha256(pyodide_version().encode())
    for name, source in sorted(sources.items()):
        key.update(name.encode() + b"\0" + source + b"\0")
    cache = NODE_MODULES / ".cache" / "tokfeel-bytecode" / f"{key.hexdigest()[:24]}.zip"
    if not cache.exists():
        import subprocess
        import tempfile

        with tempfile.TemporaryDirectory() as folder:
            stage = Path(folder)
            for name, source in sources.items():
                (stage / name).parent.mkdir(parents=True, exist_ok=True)
                (stage / name).write_bytes(source)
            compiled = subprocess.run(
                ["node", str(ROOT / "scripts" / "compile-bytecode.mjs"), str(NODE_MODULES / "pyodide"), str(stage)],
                capture_output=True, text=True, timeout=600,
            )
            if compiled.returncode != 0:
                sys.exit(f"compiling the engine's bytecode with Pyodide failed:\n{compiled.stderr[-2000:]}")
            tag = compiled.stdout.strip().splitlines()[-1]
            cache.parent.mkdir(parents=True, exist_ok=True)
            partial = cache.with_suffix(f".{os.getpid()}.partial")  # builds may run side by side
            with zipfile.ZipFile(partial, "w") as archive:
                for name in sorted(sources):
                    path = Path(name)
                    pyc = stage / path.parent / "__pycache__" / f"{path.stem}.{tag}.pyc"
                    archive.writestr(str(path.with_suffix(".pyc")), pyc.read_bytes())
            partial.rename(cache)
    with zipfile.ZipFile(cache) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


def bundle_engine(out: Path) -> tuple[str, str]:
    """Zip engine/ (as Pyodide bytecode, sourceless) and data/ (the catalogs parsed into one file)
    in the repository's layout into a content-addressed archive.

    Returns (file name, subresource-integrity string) for the worker's fetch.
    """
    temporary = out / "engine.zip"
    files = {name: path.read_bytes() for path, name in bundle_files()}
    sources = {name: payload for name, payload in files.items() if name.endswith(".py")}
    members = [(name, payload) for name, payload in files.items() if name not in sources]
    members += compile_bytecode(sources).items()
    members.append((f"data/{COMPILED_CATALOGS}", compile_catalogs()))
    with zipfile.ZipFile(temporary, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        for name, payload in sorted(members):
            info = zipfile.ZipInfo(name, date_time=ZIP_DATE)
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, payload)
    payload = temporary.read_bytes()
    digest = hashlib.sha256(payload).digest()
    name = f"engine-{digest.hex()[:12]}.zip"
    temporary.rename(out / name)
    return name, "sha256-" + base64.b64encode(digest).decode()


def load_answers() -> dict:
    """The canned answers with their token strings (data/answers/tokens.json)."""
    return json.loads((DATA / "answers" / "tokens.json").read_text(encoding="utf-8"))


def initial_view() -> dict:
    """The default view's estimate, computed now with CPython, so the first numbers are in the
    page before Pyodide has booted (the worker computes the same thing later)."""
    from engine.page.fields import DEFAULT_VIEW
    from engine.page.view import estimate_view

    return {"view": DEFAULT_VIEW, **estimate_view(DEFAULT_VIEW)}


def url_limits() -> dict:
    """The limits of the page's URL parser (state.js), from the engine's (engine/page/fields.py)."""
    from engine.page.fields import URL_LIMITS

    return URL_LIMITS


def number_formats() -> dict:
    """The decimals the page shows per quantity, the CLI's (engine/textformat.py DECIMALS)."""
    from engine.textformat import DECIMALS

    return DECIMALS


def view_fields() -> dict:
    """The page's URL-state schema, from the engine (one definition for both sides)."""
    from engine.page.fields import VIEW_FIELDS

    return VIEW_FIELDS


def menu_options(key: str) -> markupsafe.Markup:
    """The <option>s of a view setting's menu, in the order and wording of its ``labels``
    (engine/page/fields.py), so the page offers exactly the choices its URL parser accepts."""
    field = view_fields()[key]
    return markupsafe.Markup("").join(
        markupsafe.Markup('<option value="{}">{}</option>').format(value, label) for value, label in field["labels"].items()
    )


def use_cases() -> dict:
    """The use-case speed thresholds the page marks on its live gauge (engine/page/explore.py)."""
    from engine.page.advice import USE_CASES, USE_CASES_SOURCE

    return {"cases": list(USE_CASES), "source": USE_CASES_SOURCE}


def templates() -> jinja2.Environment:
    """The one template environment of the build (site/templates): HTML templates autoescaped,
    the service worker's script not; an undefined name is an error, never an empty string."""
    return _environment(SITE / "templates")


@functools.cache
def _environment(folder: Path) -> jinja2.Environment:
    """One environment per templates folder (a build from another site folder, as the
    new-deployment test makes, must not render the first folder's cached templates)."""
    from catalog_page import PAGE_FILTERS

    environment = jinja2.Environment(
        loader=jinja2.FileSystemLoader(folder),
        autoescape=jinja2.select_autoescape(enabled_extensions=("html.j2",), default_for_string=True),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
    )
    environment.filters.update(PAGE_FILTERS)
    environment.globals["options"] = menu_options
    return environment


def render_page(out: Path, context: dict) -> None:
    html = templates().get_template("index.html.j2").render(fields=view_fields(), **context)
    (out / "index.html").write_text(html, encoding="utf-8")


def render_catalog_page(out: Path, assets_url: str) -> None:
    """catalog.html: every catalog entry with its sources and the file to edit (catalog_page.py
    builds the data the page's script renders as tables), and the calibration document it links to. It loads
    the same content-addressed scripts and styles as the main page."""
    from catalog_page import CALIBRATION_DOC, catalog_context, catalog_data

    html = templates().get_template("catalog.html.j2").render(
        **catalog_context(), catalog_json=json_for_script(catalog_data()),
        number_formats_json=json_for_script(number_formats()), assets_url=assets_url,
    )
    (out / "catalog.html").write_text(html, encoding="utf-8")
    (out / CALIBRATION_DOC).parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(ROOT / CALIBRATION_DOC, out / CALIBRATION_DOC)


def copy_page_assets(out: Path) -> str:
    """site/js and site/css into assets/<hash of their contents>/; returns that folder's URL."""
    files = sorted(path for folder in PAGE_ASSET_FOLDERS for path in (SITE / folder).rglob("*") if path.is_file())
    digest = hashlib.sha256()
    for path in files:
        digest.update(path.relative_to(SITE).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    url = f"assets/{digest.hexdigest()[:12]}/"
    for folder in PAGE_ASSET_FOLDERS:
        shutil.copytree(SITE / folder, out / url / folder)
    return url


def copy_static(out: Path) -> None:
    """Files served at fixed names (the scripts and styles are in assets/<hash>/).

    The pages link favicon.png, favicon.svg drawn at 32 px by Chromium (a screenshot of the SVG,
    no background): Chromium fetches and decodes the icon again at every change of the address
    (each pick writes the view into the URL), and an SVG icon is parsed as a document on the page's
    main thread, ~4.5 ms per pick in bench_page's trace against ~0.4 ms for the PNG."""
    for name in ("favicon.svg", "favicon.png"):
        shutil.copyfile(SITE / name, out / name)


def json_for_script(value) -> str:
    """JSON safe inside <script type="application/json">: no "</" can close the element."""
    return json.dumps(value, **JSON_COMPACT).replace("</", "<\\/")


def integrity_of(path: Path) -> str:
    """A file's subresource-integrity string (sha256)."""
    return "sha256-" + base64.b64encode(hashlib.sha256(path.read_bytes()).digest()).decode()


def write_service_worker(out: Path) -> str:
    """sw.js (site/templates/sw.js.j2): lists every file of the build with its integrity and
    precaches those the page needs (all but ON_DEMAND) into a cache named after all of their
    hashes, so the name changes exactly when a
    file does and two builds never share a cache. The last step: it hashes the finished site.
    Returns the cache's name."""
    files = {path.relative_to(out).as_posix(): integrity_of(path) for path in sorted(out.rglob("*")) if path.is_file()}
    digest = hashlib.sha256("".join(f"{name} {integrity}\n" for name, integrity in files.items()).encode()).hexdigest()
    cache = f"{CACHE_PREFIX}{digest[:16]}"
    script = templates().get_template(f"{SERVICE_WORKER}.j2").render(
        cache_json=json.dumps(cache),
        cache_prefix_json=json.dumps(CACHE_PREFIX),
        files_json=json.dumps(files, indent=2, sort_keys=True),
        precache_json=json.dumps([path for path in files if not path.startswith(ON_DEMAND)], indent=2),
        versioned_json=json.dumps(VERSIONED_PATHS),
    )
    (out / SERVICE_WORKER).write_text(script, encoding="utf-8")
    return cache


def build(out: Path) -> Path:
    version = pyodide_version()
    fresh_output_dir(out)
    catalogs = validate_catalogs()
    index_url = copy_pyodide_runtime(out, version)
    chart_version = npm_version("chart.js")
    chart_url = copy_chart_library(out, chart_version)
    bundle_name, bundle_integrity = bundle_engine(out)
    view = initial_view()
    answers = load_answers()
    markdown = copy_markdown_libraries(out)
    boot = {"indexURL": index_url, "bundleURL": bundle_name, "bundleIntegrity": bundle_integrity, "chartURL": chart_url}
    if markdown:
        boot.update(markedURL=markdown["marked"][0], purifyURL=markdown["dompurify"][0])
    assets_url = copy_page_assets(out)
    render_page(
        out,
        {
            "boot_json": json_for_script(boot),
            "catalog_json": json_for_script(page_catalog(catalogs)),
            "answers_json": json_for_script(answers),
            "initial_json": json_for_script(view),
            "view_fields_json": json_for_script(view_fields()),
            "url_limits_json": json_for_script(url_limits()),
            "number_formats_json": json_for_script(number_formats()),
            "use_cases_json": json_for_script(use_cases()),
            "pyodide_version": version,
            "chart_version": chart_version,
            "markdown_credit": f"; answers rendered with marked {markdown['marked'][1]} and DOMPurify {markdown['dompurify'][1]}" if markdown else "",
            "assets_url": assets_url,
        },
    )
    render_catalog_page(out, assets_url)
    copy_static(out)
    write_service_worker(out)
    return out


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    """Static files with the right types for ES modules and WebAssembly."""

    extensions_map = {
        **http.server.SimpleHTTPRequestHandler.extensions_map,
        ".mjs": "text/javascript",
        ".js": "text/javascript",
        ".wasm": "application/wasm",
        ".json": "application/json",
        ".svg": "image/svg+xml",
    }


def serve(out: Path, port: int) -> None:
    handler = functools.partial(QuietHandler, directory=str(out))
    with http.server.ThreadingHTTPServer(("127.0.0.1", port), handler) as server:
        print(f"serving {out} at http://localhost:{port}/ (Ctrl-C to stop)")
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            pass


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="output folder (default: dist/)")
    parser.add_argument("--serve", action="store_true", help="serve the built site after building")
    parser.add_argument("--port", type=int, default=8000)
    args = parser.parse_args(argv)
    out = build(args.out.resolve())
    print(f"built {out}")
    if args.serve:
        serve(out, args.port)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

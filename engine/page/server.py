"""Measure your own: what a local server says it runs, resolved to the catalog, and the prediction
for exactly that (the page's *Measure* reads the server, site/js/measure.js, and calls this through
the worker).

The server's report (llama-server ``/v1/models`` meta and ``/props``; Ollama ``/api/ps``,
``/api/show`` and ``/api/version``; LM Studio ``/api/v1/models``) arrives as one flat object.
Ollama's release picks its engine (engines.ollama_engine_for_version, the rule calibration rows
follow too): before 0.30 its own Go engine (ollama-legacy), from 0.30 llama.cpp's llama-server. The model is resolved from
its names (file name, Ollama tag, LM Studio key) through the catalog's aliases, else from its
architecture and parameter count; the weight format from the server's own type string
(llama.cpp's ``model_ftype`` such as "Q4_K - Medium" and Ollama's ``quantization_level`` are
catalog aliases), else from the file name. The file size and parameter count are checks only: a
Q4_K_M file averages more bits than its name says, so they never pick the format.

Placement: llama.cpp logs at load how many layers it offloaded, ``load_tensors: offloaded N/M
layers to GPU`` with N = min(-ngl, blocks + 1) and M = blocks + 1 (ggml-org/llama.cpp
src/llama-model.cpp ``load_tensors``); no server reports it over HTTP (llama-server's ``/props``
lists the slots, model path and type, context, chat template and build: tools/server
server-context.cpp ``get_props``). A pasted line (``offload_log``) is that -ngl, predicted as the
page's ``-ngl`` field (n_gpu_layers, engine/offload.py). Without one, Ollama's ``size_vram`` below
``size`` (``/api/ps``: the loaded model, weights and buffers) means part of the model runs from
system RAM; the prediction then keeps the same share of layers on the GPU. ``size_bytes`` is the
weights file.
"""

from __future__ import annotations

import math
import re

from ..catalog import normalise_name
from ..engines import OLLAMA_LLAMA_SERVER_RELEASE, load_engines, ollama_engine_for_version
from ..errors import EngineInputError

#: Longest text field accepted from a server (file paths and names are far shorter).
MAX_TEXT = 400
#: Most names of one model a report may carry.
MAX_NAMES = 8
#: Engines by server kind; LM Studio runs MLX weights with its MLX engine.
SERVER_ENGINES = {"llama-server": "llama-cpp", "ollama": "ollama", "lmstudio": "llama-cpp", "openai": ""}
#: A name and a parameter count further apart than this are not the same model.
PARAMS_TOLERANCE = 0.25
#: Weight-format tokens in a GGUF file name: UD-Q4_K_XL, Q4_K_M, IQ4_XS, Q8_0, BF16, MXFP4 ...
QUANT_TOKEN = re.compile(r"(?<![A-Za-z0-9])((?:UD-)?(?:I?Q\d(?:_[A-Z0-9]+)*|TQ\d_\d|BF16|F16|F32|MXFP4(?:_MOE)?))(?![A-Za-z0-9])", re.I)
#: llama.cpp's load log line for the layers it offloaded ("offloaded 20/33 layers to GPU"), or its
#: two numbers alone ("20/33").
OFFLOAD_LOG = re.compile(r"(?:offloaded\s+)?(\d{1,6})\s*/\s*(\d{1,6})(?:\s+layers\s+to\s+GPU)?", re.I)
#: File-name parts that are not the model's name.
NAME_NOISE = re.compile(r"(?i)(\.gguf$|-\d{5}-of-\d{5}|[-_.]gguf\b|^.*[/\\])")


def _text(report: dict, key: str) -> str:
    value = report.get(key)
    if value is None:
        return ""
    if not isinstance(value, str) or len(value) > MAX_TEXT:
        raise EngineInputError(f"server report: {key} must be text of at most {MAX_TEXT} characters", field=key)
    return value.strip()


def _number(report: dict, key: str, hi: float) -> float | None:
    value = report.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or not 0 < value <= hi:
        return None  # a server's implausible figure is ignored, never used (reliability README)
    return float(value)


def read_report(args) -> dict:
    if not isinstance(args, dict) or not isinstance(args.get("report"), dict) or not isinstance(args.get("view"), dict):
        raise EngineInputError('server_model takes {"report": {...}, "view": {...}}')
    report = args["report"]
    kind = _text(report, "server")
    if kind not in SERVER_ENGINES:
        raise EngineInputError(f"server report: server must be one of {', '.join(SERVER_ENGINES)}", field="server")
    names = report.get("names", [])
    if not isinstance(names, list) or len(names) > MAX_NAMES or not all(isinstance(n, str) and len(n) <= MAX_TEXT for n in names):
        raise EngineInputError(f"server report: names must be a list of at most {MAX_NAMES} texts", field="names")
    params = _number(report, "params", 1e13)
    if params is None and _text(report, "params_string"):
        match = re.fullmatch(r"([\d.]+)\s*([KMBT])", _text(report, "params_string"), flags=re.I)
        if match:
            params = float(match.group(1)) * {"k": 1e3, "m": 1e6, "b": 1e9, "t": 1e12}[match.group(2).lower()]
    return {
        "server": kind,
        "names": [n.strip() for n in names if n.strip()],
        "arch": _text(report, "arch"),
        "ftype": _text(report, "ftype"),
        "format": _text(report, "format").lower(),
        "params": params,
        "size_bytes": _number(report, "size_bytes", 1e14),
        "loaded_bytes": _number(report, "loaded_bytes", 1e14),
        "size_vram": _number(report, "size_vram", 1e14),
        "vram_reported": report.get("size_vram") is not None,
        "n_ctx": _number(report, "n_ctx", 1e8),
        "layers": _number(report, "layers", 1e4),
        "n_embd": _number(report, "n_embd", 1e6),
        "llama_cpp_build": _build_number(_text(report, "build_info")) if kind == "llama-server" else None,
        "offloaded": _offloaded(_text(report, "offload_log")),
        "version": _text(report, "version")[:40] if kind == "ollama" else "",
    }


def ollama_engine(version: str) -> tuple[str, str]:
    """(engine id, why) for an Ollama server that reports ``version`` (GET /api/version): its
    release decides between its Go engine and llama-server (engines.ollama_engine_for_version);
    a version that names no release keeps today's Ollama, and says so."""
    engines = load_engines()
    engine = ollama_engine_for_version(version)
    since = ".".join(map(str, OLLAMA_LLAMA_SERVER_RELEASE))
    if engine is None:
        why = f"its version “{version}” names no release (a build from source reports 0.0.0)" if version else "it did not report its version (GET /api/version)"
        return "ollama", f"Compared with {engines['ollama'].name} ({since} and later, llama.cpp's llama-server): {why}, so the release is not known; an older Ollama runs its own engine, {engines['ollama-legacy'].name}."
    if engine == "ollama-legacy":
        return engine, f"Compared with {engines[engine].name} (its own Go engine for many architectures): the server is Ollama {version}; {since} and later run llama.cpp's llama-server."
    return engine, f"Compared with {engines[engine].name} ({since} and later, llama.cpp's llama-server): the server is Ollama {version}."


def _offloaded(line: str) -> tuple[int, int] | None:
    """(layers offloaded, layers in all) from llama.cpp's load log line, or None when absent.
    A line that says something else is refused with what it should look like."""
    if not line:
        return None
    match = OFFLOAD_LOG.search(line)
    if not match or not 0 <= int(match.group(1)) <= int(match.group(2)) or int(match.group(2)) < 2:
        raise EngineInputError(
            f"the log line {line[:80]!r} is not llama.cpp's “offloaded N/M layers to GPU” (paste that line, or N/M)", field="offload_log",
        )
    return int(match.group(1)), int(match.group(2))


def _build_number(build_info: str) -> int | None:
    """llama-server's /props ``build_info`` ("b6123-deadbeef") as the build number the engine takes."""
    from ..options import OPTION

    match = re.match(r"b(\d+)\b", build_info)
    option = OPTION["llama_cpp_build"]
    return int(match.group(1)) if match and option.lo <= int(match.group(1)) <= option.hi else None


def _stem(name: str) -> str:
    """A model name out of a file name or tag: no folder, extension, shard suffix or format."""
    stem = NAME_NOISE.sub("", name)
    stem = QUANT_TOKEN.sub("", stem)
    return re.sub(r"[-_. ]+$", "", stem.replace(":latest", ""))


def _resolve_name(text: str):
    from ..models import model_index
    from ..resolve import resolve

    try:
        return resolve(model_index(), text, field="model", display={})
    except (EngineInputError, KeyError):
        return None


def resolve_model(report: dict) -> tuple[str, str]:
    """(catalog model id or "", how it was found)."""
    from ..models import load_models

    models = load_models()
    params = report["params"]

    def plausible(model_id: str) -> bool:
        return params is None or abs(models[model_id].params_b * 1e9 - params) <= PARAMS_TOLERANCE * params

    for name in report["names"]:
        for text in (name, _stem(name)):
            model_id = _resolve_name(text) if text else None
            if model_id and plausible(model_id):
                return model_id, f"from the name “{name}”"
    if params and report["arch"]:
        arch = normalise_name(report["arch"]).replace(" ", "")
        close = [
            m for m in models.values()
            if normalise_name(str(m.config.get("model_type", ""))).replace(" ", "") == arch
            and abs(m.params_b * 1e9 - params) <= 0.05 * params
            and (report["layers"] is None or m.config.get("num_hidden_layers") in (None, int(report["layers"])))
            and (report["n_embd"] is None or m.config.get("hidden_size") in (None, int(report["n_embd"])))
        ]
        if len(close) == 1:
            return close[0].id, f"from its architecture ({report['arch']}) and size ({params / 1e9:.2f} B parameters)"
        if close:
            return "", f"its architecture and size fit {len(close)} catalog models ({', '.join(m.name for m in close[:4])}{', ...' if len(close) > 4 else ''}): choose the model yourself"
    return "", ""


def resolve_quant(report: dict) -> tuple[str, str]:
    """(catalog weight format or "", how it was found)."""
    from ..quant import parse_quant

    def name_of(text: str):
        for candidate in (text, re.sub(r"\s+-\s+[\d.]+ bpw.*$", "", text), f"MLX {text}" if report["format"] == "mlx" else ""):
            if not candidate:
                continue
            try:
                return parse_quant(candidate).name
            except EngineInputError:
                continue
        return None

    if report["ftype"]:
        quant = name_of(report["ftype"])
        if quant:
            return quant, f"from the server's weight type “{report['ftype']}”"
    for name in report["names"]:
        for token in sorted(QUANT_TOKEN.findall(name), key=len, reverse=True):
            quant = name_of(token.upper())
            if quant:
                return quant, f"from the file name “{name}”"
    return "", ""


def server_model(args) -> dict:
    """``{"report": {...}, "view": page view}`` -> what the server runs, resolved, and the prediction
    for it on the view's device: ``{model, quant, text, checks, flags, view, estimate}``."""
    from ..models import load_models
    from .fields import check_view
    from .view import estimate_view

    report = read_report(args)
    view = check_view(args["view"])
    model_id, model_how = resolve_model(report)
    quant, quant_how = resolve_quant(report)
    shown = report["names"][0] if report["names"] else "the loaded model"
    out = {"model": model_id, "quant": quant, "text": "", "engine": "", "checks": [], "view": None, "estimate": None}
    if not model_id:
        why = model_how or f"nothing matched its name{', architecture and size' if report['arch'] else ''}"
        out["text"] = f"“{shown}” is not resolved to one catalog model ({why}): the prediction below is for the model chosen above."
        return out
    model = load_models()[model_id]
    quant = quant or view["quant"]
    patch = {"model": model_id, "quant": quant, "spec": "off"}
    engine = SERVER_ENGINES[report["server"]]
    if report["server"] == "lmstudio" and report["format"] == "mlx":
        engine = "mlx-lm"
    # Ollama's release decides its engine for GGUFs (its Go engine before 0.30): said in the text.
    engine, engine_why = ollama_engine(report["version"]) if report["server"] == "ollama" else (engine, "")
    out["engine"] = engine
    if engine:
        patch["engine"] = engine
    loaded = report["loaded_bytes"] or report["size_bytes"]
    layers = model.arch.layers
    if report["offloaded"]:
        # The -ngl the server ran with (its load log): N of M = N layers, the output one counted.
        ngl, counted = report["offloaded"]
        if ngl == 0:
            patch["offload"], patch["gpu_pct"] = "layers", 0  # the page's -ngl field reads 0 as unset
        elif ngl < counted:
            patch["offload"], patch["ngl"], patch["ncmoe"], patch["ot"] = "flags", ngl, 0, ""
        else:
            patch["offload"] = "auto"  # everything on the GPU, whatever the page was set to
        out["checks"].append(f"The server offloaded {ngl} of {counted} layers to the GPU (its log): predicted with -ngl {ngl}.")
        if counted != layers + 1:
            out["checks"].append(f"Its log counts {counted - 1} layers and the output layer; the catalog's {model.name} has {layers}: a different model or file?")
    elif report["vram_reported"] and loaded:
        # Ollama's /api/ps: size = the loaded model (weights, KV cache, buffers), size_vram = the
        # part of it in GPU memory.
        on_gpu = min(1.0, (report["size_vram"] or 0.0) / loaded)
        if on_gpu < 0.995:
            patch["offload"], patch["gpu_pct"] = "layers", max(0, min(100, round(100 * on_gpu)))
            out["checks"].append(f"{100 * (1 - on_gpu):.0f}% of the loaded model is in system RAM (size_vram {report['size_vram'] / 1e9 if report['size_vram'] else 0:.2f} GB of {loaded / 1e9:.2f} GB): predicted with that share of its layers on the CPU.")
    if report["n_ctx"]:
        # The server reserved its KV cache for this many tokens per slot when it loaded the model.
        patch["ctx"] = int(report["n_ctx"])
    if report["llama_cpp_build"]:
        # Kernels and placement rules changed between builds (engine/prefill.py, engine/offload.py).
        patch["build"] = report["llama_cpp_build"]
    if report["size_bytes"]:
        # The weights as the file holds them (llama-server's meta.size, Ollama's and LM Studio's
        # file size): a custom mix or a label that hides its tensor types reads what it holds.
        patch["file"] = round(report["size_bytes"] / 1e9, 3)
    predicted_view = {**view, **patch}
    try:
        result = estimate_view(predicted_view)
        recipe_gb = estimate_view({**predicted_view, "file": 0})["estimate"]["memory"]["weights_gb"] if "file" in patch else None
    except EngineInputError as exc:
        out["text"] = f"The server runs {model.name}, {quant} ({model_how}; weights {quant_how or 'as chosen above'}), but it cannot be predicted on this device: {exc} {engine_why}".strip()
        out["model"] = model_id
        return out
    estimate = result["estimate"]
    size = f", {report['size_bytes'] / 1e9:.2f} GB" if report["size_bytes"] else ""
    ctx = f", KV cache for {int(report['n_ctx']):,} tokens" if report["n_ctx"] else ""
    ctx += f", llama.cpp b{report['llama_cpp_build']}" if report["llama_cpp_build"] else ""
    out["text"] = f"{model.name}, {quant}{size}{ctx}, from the server ({model_how}; weights {quant_how or 'not reported: as chosen above'}). {engine_why}".strip()
    if report["params"] and abs(model.params_b * 1e9 - report["params"]) > 0.05 * report["params"]:
        out["checks"].append(f"The server counts {report['params'] / 1e9:.2f} B parameters, the catalog {model.params_b:.2f} B.")
    if recipe_gb:
        ratio = report["size_bytes"] / 1e9 / recipe_gb
        if not 0.8 <= ratio <= 1.25:
            out["checks"].append(f"The file is {report['size_bytes'] / 1e9:.2f} GB where {quant} weights of this model come to {recipe_gb:.2f} GB: a mix of other tensor types (or extra parts such as a vision projector); predicted for the file's size.")
    out["view"] = predicted_view
    out["estimate"] = estimate
    return out

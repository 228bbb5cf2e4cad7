"""What the catalog page (``catalog.html``) shows: every entry of the four catalogs with its
sources and the file to edit, the numbers the engine derives from a model's config.json (layers,
attention layout, KV bytes per token, our size of each published GGUF), and the calibration fit.

Build-time only (CPython, called by build.py); everything comes from the engine's loaders, so
the page shows exactly what the estimates use.
"""

from __future__ import annotations

import json
import re
import tomllib
from collections import Counter
from dataclasses import dataclass

from engine.arch import ATTENTION_KINDS, text_config
from engine.catalog import DATA_DIR, FIT_FILE, GB, provenance, read_toml_tables
from engine.engines import Engine, load_engines
from engine.errors import EngineInputError
from engine.hardware import VENDORS, Device, load_hardware
from engine.models import Model, load_models
from engine.quant import KV_BYTES, QuantFormat, load_quants, parse_quant, weight_bytes

#: How vendors are titled on the page (ids are the catalog's ``vendor`` values).
VENDOR_TITLES = {
    "nvidia": "NVIDIA", "amd": "AMD", "intel": "Intel", "apple": "Apple", "qualcomm": "Qualcomm",
    "ampere": "Ampere", "raspberry-pi": "Raspberry Pi", "other": "Other",
}
#: The document that explains the fit the page shows (engine.catalog.FIT_FILE).
CALIBRATION_DOC = "docs/calibration.md"


# --------------------------------------------------------------------------------------------
# Number formats (jinja filters of catalog.html.j2, all of them here)
# --------------------------------------------------------------------------------------------

#: Shown where an optional number is not in the catalog.
MISSING = "–"
#: A URL inside a source text (sources are URLs or citations that contain them).
URL = re.compile(r"https?://[^\s<>\"]+")
#: Characters that end a sentence rather than a URL.
URL_TRAILING = ".,;:!?'\""


def number(value: float | None, decimals: int = 1) -> str:
    """1008.0 -> "1,008", 82.58 -> "82.6", 0.5 -> "0.5": at most ``decimals``, no trailing zeros."""
    if value is None:
        return MISSING
    text = f"{value:,.{decimals}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def usd(value: float | None) -> str:
    return MISSING if value is None else "$" + number(value, 0)


def percent(fraction: float) -> str:
    """0.0538 -> "5.4%"."""
    return f"{fraction * 100:.1f}%"


def signed_percent(fraction: float) -> str:
    """-0.002 -> "−0.2%" (a real minus sign)."""
    return f"{fraction * 100:+.1f}%".replace("-", "\u2212")


def significant(value: float | None) -> str:
    """Fitted parameters span 1e-7 to 150: four significant digits."""
    return MISSING if value is None else f"{value:.4g}"


def _url_end(url: str) -> str:
    """A URL without the sentence punctuation after it; a closing parenthesis belongs to the URL
    only when it closes one the URL opened (Wikipedia-style)."""
    while url and (url[-1] in URL_TRAILING or (url[-1] == ")" and url.count(")") > url.count("("))):
        url = url[:-1]
    return url


#: Longer URLs are shown shortened (the link and its title keep all of it).
URL_SHOWN_CHARACTERS = 64


def _shown_url(url: str) -> str:
    """``https://images.nvidia.com/aem-dam/.../nvidia-ada-gpu-architecture.pdf`` without the
    scheme, its middle elided when long."""
    text = url.split("://", 1)[1]
    if len(text) <= URL_SHOWN_CHARACTERS:
        return text
    tail = URL_SHOWN_CHARACTERS // 3
    return text[: URL_SHOWN_CHARACTERS - tail - 1] + "\u2026" + text[-tail:]


def linkify(text: str) -> list:
    """Source text as the page renders it: plain strings, and ``[url, shown]`` for every URL in it
    (the page's script makes those links; the rule of what is a URL stays here)."""
    out, position = [], 0
    for match in URL.finditer(text):
        url = _url_end(match.group(0))
        if match.start() > position:
            out.append(text[position:match.start()])
        out.append([url, _shown_url(url)])
        position = match.start() + len(url)
    if position < len(text):
        out.append(text[position:])
    return out


PAGE_FILTERS = {
    "num": number,
    "usd": usd,
    "pct": percent,
    "signed_pct": signed_percent,
    "sig": significant,
}

# --------------------------------------------------------------------------------------------
# The rows
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class HardwareRow:
    """One hardware entry as written in its file: its memory variants share every other number."""

    device: Device  # the first variant (every field but memory is the entry's)
    variants: tuple[Device, ...]
    name: str  # as written in the file (variants add their memory size)
    aliases: tuple[str, ...]
    file: str

    @property
    def anchor(self) -> str:
        return f"hw-{self.device.base_id}"

    @property
    def configurable(self) -> bool:
        """Written with ``memory_options_gib``: every size is a device of its own (``<id>-<size>gb``)."""
        return self.device.id != self.device.base_id

    @property
    def search_text(self) -> str:
        names = [self.device.base_id, self.device.family, self.device.vendor]
        for variant in self.variants:
            names += [variant.id, variant.name, *variant.aliases]
        return " ".join(dict.fromkeys(name.lower() for name in names))


@dataclass(frozen=True)
class SizeCheck:
    """A published GGUF size next to the engine's size of the same format."""

    quant: str
    published_gb: float
    computed_gb: float | None

    @property
    def deviation(self) -> float | None:
        return None if self.computed_gb is None else self.computed_gb / self.published_gb - 1


@dataclass(frozen=True)
class ModelRow:
    model: Model
    file: str
    heads: int | None
    kv_heads: int | None
    layout: tuple[tuple[str, int], ...]  # (attention kind, layers), in ATTENTION_KINDS order
    windows: tuple[int, ...]  # sliding-window lengths, tokens
    kv_bytes_per_token_f16: float  # every caching layer, before a sliding window fills
    params_from_config_b: float  # weights the config describes, without MTP layers
    sizes: tuple[SizeCheck, ...]

    @property
    def anchor(self) -> str:
        return f"model-{self.model.id}"

    @property
    def search_text(self) -> str:
        m = self.model
        return " ".join(dict.fromkeys(name.lower() for name in [m.id, m.name, *m.aliases, m.family, m.org, m.hf_repo]))


def hardware_groups() -> list[tuple[str, list[tuple[str, list[HardwareRow]]]]]:
    """[(vendor title, [(family, rows)])]: vendors in catalog order, families and entries in file order."""
    tables = read_toml_tables(DATA_DIR / "hardware", "hardware")
    by_base: dict[str, list[Device]] = {}
    for device in load_hardware().values():
        by_base.setdefault(device.base_id, []).append(device)
    families: dict[str, dict[str, list[HardwareRow]]] = {vendor: {} for vendor in VENDORS}
    for base_id, variants in by_base.items():
        first = variants[0]
        raw, file = tables[base_id]
        row = HardwareRow(first, tuple(variants), raw["name"], tuple(raw["aliases"]), f"data/hardware/{file}")
        families[first.vendor].setdefault(first.family, []).append(row)
    return [(VENDOR_TITLES[vendor], list(groups.items())) for vendor, groups in families.items() if groups]


def _size_checks(model: Model) -> tuple[SizeCheck, ...]:
    checks = []
    for name, published in sorted((model.gguf_sizes_gb or {}).items()):
        try:
            # Published GGUFs of MTP models leave the MTP layers out (tests/test_quant.py).
            computed = weight_bytes(model.arch, parse_quant(name), include_mtp=False) / GB
        except EngineInputError:
            computed = None
        checks.append(SizeCheck(name, published, computed))
    return tuple(checks)


def model_row(model: Model, file: str) -> ModelRow:
    config = text_config(model.config)
    arch = model.arch
    kinds = Counter(layer.kind for layer in arch.attention)
    heads = config.get("num_attention_heads")
    return ModelRow(
        model=model,
        file=file,
        heads=heads,
        kv_heads=config.get("num_key_value_heads", heads),
        layout=tuple((kind, kinds[kind]) for kind in ATTENTION_KINDS if kinds[kind]),
        windows=tuple(sorted({layer.window for layer in arch.attention if layer.kind == "sliding" and layer.window})),
        kv_bytes_per_token_f16=sum(layer.kv_elements_per_token for layer in arch.attention) * KV_BYTES["f16"],
        params_from_config_b=arch.params_main / 1e9,
        sizes=_size_checks(model),
    )


def model_groups() -> list[tuple[str, list[ModelRow]]]:
    """[(family, rows)] in file order."""
    tables = read_toml_tables(DATA_DIR / "models", "model")
    files = {model_id: f"data/models/{file}" for model_id, (_raw, file) in tables.items()}
    groups: dict[str, list[ModelRow]] = {}
    for model in load_models().values():
        groups.setdefault(model.family, []).append(model_row(model, files[model.id]))
    return list(groups.items())


def quant_groups() -> list[tuple[str, list[QuantFormat]]]:
    """[(kind, formats)] in file order."""
    groups: dict[str, list[QuantFormat]] = {}
    for quant in load_quants().values():
        groups.setdefault(quant.kind, []).append(quant)
    return list(groups.items())


def engine_rows() -> list[tuple[Engine, dict]]:
    """[(engine, its sources table)]: the Engine record keeps no ``sources``, the file does."""
    document = tomllib.loads((DATA_DIR / "engines.toml").read_text(encoding="utf-8"))
    return [(engine, document[engine.id].get("sources", {})) for engine in load_engines().values()]


def calibration() -> dict:
    """fit.json as the page shows it: per engine/backend keys, and the backends' populations."""
    fit = json.loads(FIT_FILE.read_text(encoding="utf-8"))
    population = fit["population"]
    parameters = sorted({name for params in population.values() for name in params})
    return {
        "keys": sorted(fit["backends"].items()),
        "population": sorted(population.items()),
        "parameters": parameters,
        "rows": fit["rows"],
        "generated_by": fit["generated_by"],
        "doc": CALIBRATION_DOC,
    }


def catalog_context() -> dict:
    """Everything catalog.html.j2 renders but the entries (catalog_data, which build.py writes
    into the page as JSON): counts and the calibration fit."""
    return {
        "hardware_variants": len(load_hardware()),
        "model_count": len(load_models()),
        "quant_count": len(load_quants()),
        "engines": engine_rows(),
        "calibration": calibration(),
    }


# --------------------------------------------------------------------------------------------
# The page's data (catalog.html renders it with site/js/catalog*.js: filters, sorting, pages)
# --------------------------------------------------------------------------------------------

#: How the page names the device kinds (hardware ``kind``).
KIND_TITLES = {"gpu": "Graphics card", "soc": "Unified-memory chip", "cpu": "CPU"}


def _words(text: str) -> str:
    """A search text without repeated words (the page matches each typed word inside one)."""
    return " ".join(dict.fromkeys(text.split()))


def _drop_empty(record: dict) -> dict:
    """Leave out unset fields: the page shows a dash for a missing one, and the data stays small."""
    return {key: value for key, value in record.items() if value not in (None, "", [], {}, ())}


def _sources(source: str, sources: dict, notes: str) -> dict:
    return _drop_empty({
        "source": linkify(source),
        "sources": [[key, linkify(text)] for key, text in sorted(sources.items())],
        "notes": linkify(notes) if notes else None,
    })


def _checked(entry) -> dict:
    """Provenance of a device's or model's numbers (engine/catalog.py provenance): ``checked`` is
    ``read`` (with ``verified_from``, the file read), ``unverified`` (with the reason) or absent
    (entries older than these fields say neither)."""
    state = provenance(entry)
    return _drop_empty({
        "checked": state if state != "not stated" else None,
        "verified_from": linkify(entry.verified_from) if entry.verified_from else None,
        "unverified": entry.unverified or None,
    })


def _hardware_data() -> list[dict]:
    """One record per hardware entry (as written in its file) with its memory variants, each
    priced as the reverse search prices it (engine/page/buying.py)."""
    from engine.page.buying import price

    out = []
    for vendor, families in hardware_groups():
        for family, rows in families:
            for row in rows:
                d = row.device
                priced = next((v for v in row.variants if v.street_price), None)  # the one size it prices
                street = priced and {**priced.street_price, "memory_gib": priced.memory_gib if row.configurable else None}
                out.append(_drop_empty({
                    "id": d.base_id, "name": row.name, "vendor": d.vendor, "vendor_title": vendor, "family": family,
                    "kind": d.kind, "form_factor": d.form_factor, "status": d.status if d.status != "released" else None,
                    "aliases": list(row.aliases), "search": _words(row.search_text), "file": row.file,
                    "memory_type": d.memory_type, "memory_bus_bits": d.memory_bus_bits, "memory_channels": d.memory_channels,
                    "memory_data_rate_mts": d.memory_data_rate_mts, "bandwidth_gbs": d.bandwidth_gbs,
                    "cpu_bandwidth_gbs": d.cpu_bandwidth_gbs, "fp16_tflops": d.fp16_tflops, "fp16_acc16_tflops": d.fp16_acc16_tflops,
                    "int8_tops": d.int8_tops, "fp8_tflops": d.fp8_tflops, "fp4_tflops": d.fp4_tflops, "fp32_tflops": d.fp32_tflops,
                    "gpu_cores": d.gpu_cores, "gpu_clock_mhz": d.gpu_clock_mhz, "cpu_cores": d.cpu_cores, "cpu_threads": d.cpu_threads,
                    "pcie": f"PCIe {d.pcie_gen}.0 x{d.pcie_lanes or 16}" if d.pcie_gen else None,
                    "nvlink_gbs": d.nvlink_gbs, "backend": d.backend, "engine": d.engine, "tdp_w": d.tdp_w,
                    "launch_year": d.launch_year,
                    "street": _drop_empty({**street, "source": linkify(street["source"])}) if street else None,
                    "street_note": linkify(d.street_price_note) if d.street_price_note else None,
                    "variants": [_drop_empty({"id": v.id, "name": v.name, "memory_gib": v.memory_gib,
                                              "launch_price_usd": v.launch_price_usd, "price": price(v) and {
                                                  key: value for key, value in price(v).items() if key != "source"}})
                                 for v in row.variants],
                    **_sources(d.source, d.sources, d.notes),
                    **_checked(d),
                }))
    return out


def _model_data() -> list[dict]:
    out = []
    for family, rows in model_groups():
        for row in rows:
            m = row.model
            out.append(_drop_empty({
                "id": m.id, "name": m.name, "family": family, "org": m.org, "aliases": list(m.aliases), "search": _words(row.search_text),
                "file": row.file, "release_date": m.release_date, "license": m.license, "tokenizer": m.tokenizer,
                "reasoning": m.reasoning, "hf_repo": m.hf_repo, "params_b": m.params_b,
                "active_params_b": m.active_params_b if m.active_params_b != m.params_b else None,
                "params_from_config_b": row.params_from_config_b, "vision_params_b": m.vision_params_b,
                "layers": m.arch.layers, "hidden_size": m.arch.hidden_size, "heads": row.heads, "kv_heads": row.kv_heads,
                "experts": [m.arch.n_experts, m.arch.experts_per_token] if m.arch.is_moe else None,
                "layout": [f"{count} {kind}" for kind, count in row.layout], "windows": list(row.windows),
                "kv_bytes_per_token": row.kv_bytes_per_token_f16, "max_context": m.arch.max_context,
                "sizes": [f"{c.quant} {number(c.published_gb, 2)} / {number(c.computed_gb, 2)}"
                          + (f" ({signed_percent(c.deviation)})" if c.deviation is not None else "") for c in row.sizes],
                **_sources(m.source, m.sources, m.notes),
                **_checked(m),
            }))
    return out


def _quant_data() -> list[dict]:
    return [_drop_empty({
        "id": q.id, "name": q.name, "family": kind, "aliases": list(q.aliases),
        "search": " ".join([q.id, q.name, q.kind, *q.aliases]).lower(), "file": "data/quants.toml",
        "bits_per_weight": q.bits_per_weight, "compute_format": q.compute_format, "recipe": q.recipe,
        "weight_type": q.weight_type, "llama_ftype": q.llama_ftype, "engines": list(q.engines),
        **_sources(q.source, q.sources, q.notes),
    }) for kind, formats in quant_groups() for q in formats]


def _engine_data() -> list[dict]:
    return [_drop_empty({
        "id": e.id, "name": e.name, "family": "Engines", "aliases": list(e.aliases),
        "search": " ".join([e.id, e.name, *e.aliases]).lower(), "file": "data/engines.toml", "base": e.base,
        "backends": list(e.backends), "formats": list(e.formats), "flash_attn_default": "yes" if e.flash_attn_default else "no",
        **_sources(e.source, sources, e.notes),
    }) for e, sources in engine_rows()]


def catalog_data() -> dict:
    """Every entry of the four catalogs as catalog.html's script renders it (JSON)."""
    return {
        "hardware": _hardware_data(), "models": _model_data(), "quants": _quant_data(), "engines": _engine_data(),
        "vendors": {vendor: title for vendor, title in VENDOR_TITLES.items()}, "kinds": KIND_TITLES,
    }

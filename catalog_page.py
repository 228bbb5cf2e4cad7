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

from markupsafe import Markup, escape

from engine.arch import ATTENTION_KINDS, text_config
from engine.catalog import DATA_DIR, FIT_FILE, GB, read_toml_tables
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


def linkify(text: str) -> Markup:
    """Source text, escaped, with every URL in it a link."""
    out, position = [], 0
    for match in URL.finditer(text):
        url = _url_end(match.group(0))
        link = Markup('<a href="{0}" title="{0}" rel="noreferrer">{1}</a>').format(url, _shown_url(url))
        out += [escape(text[position:match.start()]), link]
        position = match.start() + len(url)
    out.append(escape(text[position:]))
    return Markup("").join(out)


PAGE_FILTERS = {
    "num": number,
    "usd": usd,
    "pct": percent,
    "signed_pct": signed_percent,
    "sig": significant,
    "linkify": linkify,
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
    """Everything catalog.html.j2 renders."""
    hardware = hardware_groups()
    models = model_groups()
    return {
        "hardware": hardware,
        "hardware_entries": sum(len(rows) for _vendor, families in hardware for _family, rows in families),
        "hardware_variants": len(load_hardware()),
        "models": models,
        "model_count": len(load_models()),
        "quants": quant_groups(),
        "quant_count": len(load_quants()),
        "engines": engine_rows(),
        "calibration": calibration(),
    }

"""``python -m engine list hardware|models|quants|engines``: the catalogs as plain data."""

from __future__ import annotations

from .catalog import GB, provenance
from .engines import CATCH_ALL, engine_runs, format_backends, load_engines
from .quant import KINDS as QUANT_KINDS
from .errors import EngineInputError
from .hardware import load_hardware
from .models import load_models
from .quant import load_quants
from .quant.order import quant_order

KINDS = ("hardware", "models", "quants", "engines")


def _hardware() -> list[dict]:
    from .system import resolve_engine  # listing is imported by system's importers; resolve late

    out = []
    for device in load_hardware().values():
        out.append(
            {
                "id": device.id,
                "name": device.name,
                "aliases": list(device.aliases),
                "vendor": device.vendor,
                "family": device.family,
                "kind": device.kind,
                "form_factor": device.form_factor,
                "status": device.status,
                "memory_gib": device.memory_gib,
                "memory_gb": device.memory_bytes / GB,
                "bandwidth_gbs": device.bandwidth_gbs,
                "fp16_tflops": device.fp16_tflops,
                "backend": device.backend,
                "engine": device.engine,
                # The usual engine's id: the page's KV picker offers that engine's cache types.
                "engine_id": resolve_engine(device.engine).id,
                "launch_price_usd": device.launch_price_usd,
                "launch_year": device.launch_year,
                "street_price": device.street_price,
                "street_price_note": device.street_price_note or None,
                "tdp_w": device.tdp_w,
                "nvlink_gbs": device.nvlink_gbs,
                "nvlink_cards": device.nvlink_cards,
                "nvlink_bridge": device.nvlink_bridge,
                "source": device.source,
                "sources": device.sources,
                "provenance": provenance(device),
                "verified_from": device.verified_from or None,
                "unverified": device.unverified or None,
                "base_id": device.base_id,
            }
        )
    return out


def _models() -> list[dict]:
    out = []
    for model in load_models().values():
        arch = model.arch
        out.append(
            {
                "id": model.id,
                "name": model.name,
                "aliases": list(model.aliases),
                "family": model.family,
                "org": model.org,
                "params_b": model.params_b,
                "active_params_b": model.active_params_b,
                "layers": arch.layers,
                "moe": arch.is_moe,
                "experts": arch.n_experts,
                "experts_per_token": arch.experts_per_token,
                "max_context": arch.max_context,
                "mtp": any(t.mtp for t in arch.tensors),
                "reasoning": model.reasoning,
                "tokenizer": model.tokenizer,
                "license": model.license,
                "release_date": model.release_date,
                "quants": list(model.quants),
                "source": model.source,
                "sources": model.sources,
                "provenance": provenance(model),
                "verified_from": model.verified_from or None,
                "unverified": model.unverified or None,
            }
        )
    return out


def _quants() -> list[dict]:
    """The formats in the order people use them (data/quant_order.toml), not catalog order."""
    quants = load_quants()
    return [
        {
            "id": quant.id,
            "name": quant.name,
            "aliases": list(quant.aliases),
            "kind": quant.kind,
            "bits_per_weight": quant.bits_per_weight,
            "engines": list(quant.engines),
            "backends": list(format_backends(quant.kind)),
            "source": quant.source,
        }
        for quant in (quants[quant_id] for quant_id in quant_order())
    ]


def _engines() -> list[dict]:
    return [
        {
            "id": engine.id,
            "name": engine.name,
            "aliases": list(engine.aliases),
            "backends": list(engine.backends),
            "formats": list(engine.formats),
            # What it runs where (engines.engine_runs): {backend: [format kinds]}, the page's rule.
            "runs": {b: [k for k in QUANT_KINDS if engine_runs(engine, b, k)] for b in engine.backends},
            "kv_types": list(engine.kv_cache_types()),
            "catch_all": engine.id == CATCH_ALL,
            "source": engine.source,
        }
        for engine in load_engines().values()
    ]


def count_line(kind: str, items: list[dict]) -> str:
    """How many entries ``items`` (a :func:`list_catalog` result) holds, as one line. A device sold
    with several memory sizes (a Mac, an RX 570 4GB/8GB) is one device: hardware counts distinct
    ``base_id`` values and names the memory variants apart."""
    if kind == "hardware":
        devices = {item["base_id"] for item in items}
        return f"{len(devices)} devices ({len(items)} with memory variants)"
    return f"{len(items)} {kind}"


def list_catalog(kind: str) -> list[dict]:
    builders = {"hardware": _hardware, "models": _models, "quants": _quants, "engines": _engines}
    if not isinstance(kind, str) or kind not in builders:
        raise EngineInputError(f"list what? one of {', '.join(KINDS)}", field="kind")
    return builders[kind]()

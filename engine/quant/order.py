"""The order weight formats are offered in (data/quant_order.toml): what people run first."""

from __future__ import annotations

from functools import cache

from ..catalog import CatalogError, read_toml_document
from .formats import QuantFormat, load_quants

#: A name in ``first`` ending in this stands for every format whose name starts with the rest.
WILDCARD = "*"


def ordered(quants: list[QuantFormat], first: list[str]) -> list[QuantFormat]:
    """``quants`` with the names of ``first`` first, in that order (a ``"UD-*"`` entry: every
    format whose name starts with ``UD-``, in catalog order), then the rest in catalog order.
    A listed name that is no format is an error, so the list cannot silently go stale, except a
    name the wildcard after it covers (a format the catalog may add later)."""
    by_name = {quant.name: quant for quant in quants}
    prefixes = [name[:-1] for name in first if name.endswith(WILDCARD)]
    out: list[QuantFormat] = []
    for name in first:
        if name.endswith(WILDCARD):
            out += [q for q in quants if q.name.startswith(name[:-1]) and q not in out]
        elif name in by_name:
            if by_name[name] not in out:
                out.append(by_name[name])
        elif not any(name.startswith(prefix) for prefix in prefixes):
            raise CatalogError(f"quant_order.toml: {name!r} is not a weight format of quants.toml")
    return out + [q for q in quants if q not in out]


@cache
def quant_order() -> tuple[str, ...]:
    """Every format id of the catalog, in the order the CLI and the page offer them."""
    document = read_toml_document("quant_order.toml")
    first = document.get("first")
    if not isinstance(first, list) or not all(isinstance(name, str) for name in first):
        raise CatalogError("quant_order.toml: first must be a list of format names")
    return tuple(quant.id for quant in ordered(list(load_quants().values()), first))

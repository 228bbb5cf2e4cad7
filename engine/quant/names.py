"""A format's name as a user writes it: a catalog id, name or alias, or a parametric EXL3 bitrate."""

from __future__ import annotations

import re
from dataclasses import replace
from functools import lru_cache

from ..errors import EngineInputError
from ..resolve import resolve
from .formats import QuantFormat, load_quants, quant_index

#: "EXL3-4.25bpw", "exl3 6.0 bpw", "EXL3-4bpw-h8" (the head bits suffix is accepted and ignored).
EXL3_NAME = re.compile(r"^exl3[\s_-]*(\d+(?:\.\d+)?)[\s_-]*bpw\b", re.IGNORECASE)
#: exllamav3 quantises linear layers at 1 to 8 bits per weight (convert.md: --bits, --head_bits).
EXL3_BITS_RANGE = (1.0, 8.0)


def _exl3_format(bits: float, text: str) -> QuantFormat:
    if not EXL3_BITS_RANGE[0] <= bits <= EXL3_BITS_RANGE[1]:
        raise EngineInputError(f"quant {text!r}: EXL3 bits per weight must be 1 to 8", field="quant")
    family = load_quants()["exl3"]
    label = f"{bits:.2f}".rstrip("0").rstrip(".") if bits != int(bits) else f"{bits:.1f}"
    return replace(
        family,
        id=f"exl3-{label}bpw",
        name=f"EXL3-{label}bpw",
        bits_per_weight=bits,
        weight_type=f"exl3-{bits:g}",
        aliases=(),
    )


def parse_quant(name: str) -> QuantFormat:
    """The format ``name`` names: an id, a name or an alias (compared normalised), or a
    parametric ``EXL3-<x>bpw``. Unknown names raise EngineInputError(field="quant") listing the
    closest names."""
    if not isinstance(name, str):
        raise EngineInputError(f"quant must be a name such as Q4_K_M, got {name!r}", field="quant")
    return _parse_quant_name(name)


@lru_cache(maxsize=512)
def _parse_quant_name(name: str) -> QuantFormat:
    match = EXL3_NAME.match(name.strip())
    if match:
        return _exl3_format(float(match.group(1)), name)
    quants = load_quants()
    entry_id = resolve(quant_index(), name, field="quant", display={q.id: q.name for q in quants.values()})
    return quants[entry_id]

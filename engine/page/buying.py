"""What a buyer pays and which builds the reverse search weighs (explore.reverse), decided once.

- The price: a device's street price where a dated public one is in the catalog (``street_price``:
  what it sells for now, used or new), else its launch list price; every row says which it used.
- The builds: one device, or 2 to :data:`MAX_BUILD_CARDS` identical cards of a discrete GPU sold
  for desktops, workstations or servers (laptop and embedded GPUs cannot be added to; a unified-
  memory chip is one machine; several CPUs are a server's sockets, not a build of parts). A build
  is estimated with ``gpus = N`` and the view's split, slots and NVLink setting, so it pays the
  engine's own multi-card physics (engine/parallel.py); nothing here scales a speed.
"""

from __future__ import annotations

from ..hardware import Device

#: The most identical cards a build may have: four double-width cards is what a workstation board
#: seats at full width; the 4x RTX 3090 rig is the common large home build
#: (https://thinksmart.life/research/posts/gpu-rig-3090-vs-high-end: "Our $5K GPU rig build uses
#: 4x RTX 3090"). More takes risers or a server chassis, which the estimate does not price.
MAX_BUILD_CARDS = 4
#: Form factors of the cards that can be combined in one machine.
BUILD_FORM_FACTORS = ("desktop", "workstation", "datacenter")
#: Largest budget a search may name, USD.
MAX_BUDGET_USD = 10_000_000


def max_cards(device: Device) -> int:
    """How many identical devices a build of this one may have."""
    return MAX_BUILD_CARDS if device.kind == "gpu" and device.form_factor in BUILD_FORM_FACTORS else 1


def price(device: Device) -> dict | None:
    """The price a buyer pays for one device and where it comes from: ``{"usd", "kind" ("used",
    "new" or "launch"), "date" (month or year), "source"}``; None when the catalog has none."""
    street = device.street_price
    if street:
        return {"usd": street["usd"], "kind": street["condition"], "date": street["date"], "source": street["source"]}
    if device.launch_price_usd:
        variant = device.base_id != device.id  # a memory size of a configurable system
        source = (variant and device.sources.get("launch_prices_usd")) or device.sources.get("launch_price_usd") or device.source
        return {"usd": device.launch_price_usd, "kind": "launch",
                "date": str(device.launch_year) if device.launch_year else "", "source": source}
    return None


def build_counts(device: Device) -> range:
    """The card counts a search tries for a device, fewest first."""
    return range(1, max_cards(device) + 1)

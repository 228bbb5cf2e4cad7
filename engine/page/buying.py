"""What a buyer pays and which builds the reverse search weighs (explore.reverse), decided once.

- The price: a device's street price where a dated public one is in the catalog (``street_price``:
  what it sells for now, used or new), else its launch list price; every row says which it used.
- The builds: one device, or 2 to :data:`MAX_BUILD_CARDS` identical cards of a discrete GPU sold
  for desktops, workstations or servers (laptop and embedded GPUs cannot be added to; a unified-
  memory chip is one machine; several CPUs are a server's sockets, not a build of parts). A build
  is estimated with ``gpus = N`` and the view's split, slots and NVLink setting, so it pays the
  engine's own multi-card physics (engine/parallel.py); nothing here scales a speed.
- SXM modules (NVLink built into the board, no bridge, an NVSwitch domain of 4 to 8) are not sold as
  loose cards: they come on HGX/DGX baseboards of 4 or 8 GPUs, so their builds are 4 and 8
  (:data:`SXM_BOARD_CARDS`). The catalog has no baseboard price, so they carry none and a search
  with a budget leaves them out. Superchips whose NVLink domain is a rack (GH200, GB200: 72 or
  more) stay single: one superchip is one machine, and racks are beyond the estimate.
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


#: The GPU counts of the baseboards SXM modules come on: "HGX ... integrating 4 or 8 high-performance
#: GPUs" (https://knowledgebase.rackmountnts.com/blog/what-is-hgx-platform/); HGX H100 4-GPU and
#: 8-GPU (https://developer.nvidia.com/blog/introducing-nvidia-hgx-h100-an-accelerated-server-platform-for-ai-and-high-performance-computing/).
SXM_BOARD_CARDS = (4, 8)


def is_board_module(device: Device) -> bool:
    """An SXM module: its NVLink is built into the board (no bridge) and joins a baseboard's 4 to 8 GPUs."""
    return bool(device.kind == "gpu" and device.nvlink_gbs and not device.nvlink_bridge
                and SXM_BOARD_CARDS[0] <= (device.nvlink_cards or 0) <= SXM_BOARD_CARDS[-1])


def max_cards(device: Device) -> int:
    """How many identical devices a build of this one may have."""
    return build_counts(device)[-1]


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


def build_counts(device: Device) -> tuple[int, ...]:
    """The card counts a search tries for a device, fewest first."""
    if is_board_module(device):
        return SXM_BOARD_CARDS
    if device.nvlink_gbs and not device.nvlink_bridge and (device.nvlink_cards or 0) > SXM_BOARD_CARDS[-1]:
        return (1,)  # a superchip of a rack-wide NVLink domain (GH200, GB200): one machine
    if device.kind == "gpu" and device.form_factor in BUILD_FORM_FACTORS:
        return tuple(range(1, MAX_BUILD_CARDS + 1))
    return (1,)

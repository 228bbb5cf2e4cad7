"""The hardware catalog: schema, loader and the :class:`Device` record the physics uses.

Entries live in ``data/hardware/*.toml`` (schema documented in ``data/README.md``). Systems sold
with several memory sizes (Macs, CPU platforms) are written once with ``memory_options_gib`` and
expanded into one variant per size, id ``<id>-<size>gb``, so ``"Apple M3 Max 64GB"`` names a
concrete machine.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from .catalog import DATA_DIR, GB, GIB, AliasIndex, CatalogError, Field, check_provenance, prevalidated, read_toml_tables, validate_entry

VENDORS = ("nvidia", "amd", "intel", "apple", "qualcomm", "ampere", "raspberry-pi", "other")
KINDS = ("gpu", "soc", "cpu")
FORM_FACTORS = ("desktop", "laptop", "workstation", "datacenter", "mini-pc", "sbc", "embedded", "server")
#: Compute backends. ``vulkan`` is llama.cpp's Vulkan backend on the usual driver (Mesa RADV on
#: AMD/Linux, the vendor's elsewhere); ``vulkan-amdvlk`` the same backend on AMD's own AMDVLK
#: driver, whose prompt processing differs by 2-3x (calibration: Strix Halo toolboxes).
BACKENDS = ("cuda", "rocm", "metal", "vulkan", "vulkan-amdvlk", "sycl", "cpu")

#: PCIe bandwidth per lane and direction, GB/s, by generation (after 128b/130b encoding; PCI-SIG
#: specifications: 8, 16, 32, 64 GT/s for gen 3..6; gen 1-2 use 8b/10b at 2.5 and 5 GT/s).
PCIE_GBS_PER_LANE = {1: 0.25, 2: 0.5, 3: 0.985, 4: 1.969, 5: 3.938, 6: 7.563}

SCHEMA = (
    Field("name", str, required=True),
    Field("vendor", str, required=True, choices=VENDORS),
    Field("family", str, required=True),
    Field("kind", str, required=True, choices=KINDS),
    Field("form_factor", str, required=True, choices=FORM_FACTORS),
    Field("status", str, choices=("released", "announced")),
    Field("memory_gib", float, lo=0.5, hi=4096),
    Field("memory_options_gib", list),
    Field("memory_type", str),
    Field("bandwidth_gbs", float, required=True, lo=1, hi=20000),
    Field("memory_bus_bits", int, lo=16, hi=16384),
    Field("memory_channels", int, lo=1, hi=24),
    Field("memory_data_rate_mts", float, lo=400, hi=40000),
    Field("cpu_bandwidth_gbs", float, lo=1, hi=2000),
    Field("fp16_tflops", float, required=True, lo=0.005, hi=20000),
    Field("fp16_acc16_tflops", float, lo=0.005, hi=20000),
    Field("int8_tops", float, lo=0.005, hi=40000),
    Field("fp8_tflops", float, lo=0.005, hi=40000),
    Field("fp4_tflops", float, lo=0.005, hi=80000),
    Field("fp32_tflops", float, lo=0.005, hi=2000),
    Field("cuda_compute_capability", float, lo=1.0, hi=20.0),
    Field("backend", str, required=True, choices=BACKENDS),
    Field("engine", str, required=True),
    Field("gpu_cores", int, lo=1, hi=100000),
    Field("gpu_clock_mhz", float, lo=100, hi=4000),
    Field("memory_latency_ns", float, lo=50, hi=2000),
    Field("cpu_cores", int, lo=1, hi=1024),
    Field("cpu_threads", int, lo=1, hi=2048),
    Field("cpu_p_cores", int, lo=1, hi=1024),
    Field("cpu_base_clock_ghz", float, lo=0.5, hi=7),
    Field("cpu_boost_clock_ghz", float, lo=0.5, hi=7),
    # 2: a core without SIMD (one scalar FP32 FMA per cycle, the RV64GC SiFive U74); 256: two AVX-512 FMA units x 2 x 64.
    Field("cpu_fp32_flops_per_cycle", int, lo=2, hi=256),
    Field("cpu_isa", list),
    Field("cpu_ccds", int, lo=1, hi=64),
    Field("pcie_gen", int, lo=1, hi=max(PCIE_GBS_PER_LANE)),
    Field("pcie_lanes", int, lo=1, hi=32),
    Field("nvlink_gbs", float, lo=1, hi=10000),
    Field("nvlink_cards", int, lo=2, hi=576),
    Field("nvlink_bridge", bool),
    Field("tdp_w", float, lo=1, hi=5000),
    Field("launch_price_usd", float, lo=10, hi=1_000_000),
    Field("launch_prices_usd", dict),
    Field("launch_year", int, lo=2010, hi=2027),
    Field("street_price", dict),
    Field("street_price_note", str),
    Field("aliases", list, required=True),
    Field("source", str, required=True),
    Field("sources", dict),
    Field("notes", str),
    Field("verified_from", str),
    Field("unverified", str),
)

#: Vector and matrix instruction sets a CPU entry may list (``cpu_isa``), the ones ggml's CPU
#: kernels choose between (ggml/src/ggml-cpu: arch/x86, arch/arm, amx/, llamafile/sgemm.cpp):
#: x86 AVX2 (int8 through vpmaddubsw), AVX-VNNI / AVX-512 VNNI (vpdpbusd), AVX-512 BF16
#: (vdpbf16ps), AMX (tile int8/bf16 multiply); Arm NEON, dot product (sdot), int8 matrix multiply
#: (smmla), BF16 (bfmmla), SVE, SME; RISC-V vector (RVV).
CPU_ISAS = (
    "avx2", "avx-vnni", "avx512", "avx512-vnni", "avx512-bf16", "amx",
    "neon", "dotprod", "i8mm", "bf16", "sve", "sve2", "sme", "rvv",
    # No SIMD at all (RISC-V RV64GC cores such as the SiFive U74): scalar code only.
    "scalar",
)


@dataclass(frozen=True)
class Device:
    """One concrete device (a memory variant is its own device)."""

    id: str
    name: str
    vendor: str
    family: str
    kind: str
    form_factor: str
    status: str
    memory_gib: float
    bandwidth_gbs: float
    fp16_tflops: float
    backend: str
    engine: str
    aliases: tuple[str, ...]
    source: str
    sources: dict
    memory_type: str = ""
    fp16_acc16_tflops: float | None = None
    int8_tops: float | None = None
    fp8_tflops: float | None = None
    fp4_tflops: float | None = None
    fp32_tflops: float | None = None
    #: NVIDIA compute capability where it matters to a kernel choice (below 6.1: no __dp4a int8
    #: dot product); left out, a CUDA card is taken to have it (every catalog card but the P100s
    #: and the Jetson Nano).
    cuda_compute_capability: float | None = None
    cpu_bandwidth_gbs: float | None = None
    memory_bus_bits: int | None = None
    memory_channels: int | None = None
    memory_data_rate_mts: float | None = None
    gpu_cores: int | None = None
    gpu_clock_mhz: float | None = None
    #: Idle load-to-use latency of device memory (pointer chase beyond the last-level cache), ns;
    #: with the SMs it bounds what a kernel with few bytes in flight streams (Little's law,
    #: roofline.latency_bound_bandwidth). None where no measurement was read.
    memory_latency_ns: float | None = None
    cpu_cores: int | None = None
    cpu_threads: int | None = None
    #: Performance cores of a hybrid part (the rest are efficiency cores); None = all alike.
    cpu_p_cores: int | None = None
    #: Base clock (what the vendor guarantees with every core busy) and the highest single-core
    #: boost, GHz (of the performance cores on a hybrid part).
    cpu_base_clock_ghz: float | None = None
    cpu_boost_clock_ghz: float | None = None
    #: FP32 FLOP per cycle of one (performance) core: FMA pipes x lanes x 2.
    cpu_fp32_flops_per_cycle: int | None = None
    cpu_isa: tuple[str, ...] = ()
    #: Core chiplets that each reach memory over their own link (AMD CCDs); None = monolithic.
    cpu_ccds: int | None = None
    #: ``bandwidth_gbs`` was measured on the machine (custom hardware: STREAM, Intel MLC), not
    #: read off a spec sheet: it already includes what the cores in use can draw.
    bandwidth_measured: bool = False
    #: Sockets of a multi-socket CPU server (cores, FLOPS and memory summed; see system.py).
    cpu_sockets: int = 1
    pcie_gen: int | None = None
    pcie_lanes: int | None = None
    nvlink_gbs: float | None = None
    #: The most cards one NVLink domain joins (2 for a bridge pair, 8 on an HGX board's NVSwitch).
    nvlink_cards: int | None = None
    #: The link is a bridge, an accessory fitted or not (GeForce, RTX A-series, PCIe data-centre
    #: cards), rather than built into the board (SXM modules on NVSwitch).
    nvlink_bridge: bool = False
    tdp_w: float | None = None
    launch_price_usd: float | None = None
    launch_year: int | None = None
    #: What the device sells for today where a dated public price was read: ``{"usd", "condition"
    #: ("used" or "new"), "date" ("YYYY" or "YYYY-MM"), "source"}`` (see _check_street_price).
    street_price: dict | None = None
    #: Why there is no street price where one was looked for (e.g. only ranges are published).
    street_price_note: str = ""
    notes: str = ""
    #: Provenance, as for models (engine/catalog.py check_provenance).
    verified_from: str = ""
    unverified: str = ""
    base_id: str = ""

    @property
    def memory_bytes(self) -> float:
        return self.memory_gib * GIB

    @property
    def unified_memory(self) -> bool:
        """CPU and GPU share one pool (Apple, Strix Halo, DGX Spark, Jetson; CPU-only systems)."""
        return self.kind in ("soc", "cpu")

    @property
    def pcie_gbs(self) -> float | None:
        """Host link bandwidth per direction, GB/s, when the card's PCIe link is known."""
        if self.pcie_gen is None:
            return None
        return PCIE_GBS_PER_LANE[self.pcie_gen] * (self.pcie_lanes or 16)

    def summary(self) -> dict:
        return {
            "id": self.id,
            "name": self.name,
            "bandwidth_gbs": self.bandwidth_gbs,
            "memory_gb": round(self.memory_bytes / GB, 3),
            "memory_gib": self.memory_gib,
        }


def _check_bandwidth_arithmetic(entry_id: str, raw: dict) -> None:
    """Where the bus and data rate are given, the stated bandwidth must follow from them."""
    rate = raw.get("memory_data_rate_mts")
    if rate is None:
        return
    if "memory_bus_bits" in raw:
        derived = raw["memory_bus_bits"] / 8 * rate / 1000
    elif "memory_channels" in raw:
        derived = raw["memory_channels"] * 8 * rate / 1000
    else:
        return
    stated = raw["bandwidth_gbs"]
    if abs(derived - stated) / stated > 0.03:
        raise CatalogError(
            f"hardware {entry_id!r}: bandwidth_gbs {stated} disagrees with bus x data rate = {derived:.1f} GB/s"
        )


def _check_nvlink(entry_id: str, raw: dict) -> None:
    """An NVLink speed needs the size of its domain, and the reverse."""
    if ("nvlink_gbs" in raw) != ("nvlink_cards" in raw) or ("nvlink_bridge" in raw and "nvlink_gbs" not in raw):
        raise CatalogError(f"hardware {entry_id!r}: give nvlink_gbs and nvlink_cards together (nvlink_bridge only with them)")


#: The keys of a street price, and the conditions one can be in.
STREET_PRICE_KEYS = ("usd", "condition", "date", "source")
STREET_CONDITIONS = ("used", "new")
STREET_DATE = re.compile(r"^20[0-9]{2}(-(0[1-9]|1[0-2]))?$")


def _check_street_price(entry_id: str, raw: dict) -> None:
    """A street price is one figure a dated public page states (never a range's middle):
    ``{ usd, condition = "used"|"new", date = "YYYY[-MM]", source }``, plus ``memory_gib`` on an
    entry sold in several sizes (the one size it prices)."""
    price = raw.get("street_price")
    if price is None:
        return
    where = f"hardware {entry_id!r}: street_price"
    sizes = raw.get("memory_options_gib")
    keys = (*STREET_PRICE_KEYS, "memory_gib") if sizes else STREET_PRICE_KEYS
    if sorted(price) != sorted(keys):
        raise CatalogError(f"{where} needs exactly {', '.join(keys)}")
    if sizes and price["memory_gib"] not in sizes:
        raise CatalogError(f"{where}.memory_gib must be one of memory_options_gib (the size the price is for)")
    usd = price["usd"]
    if isinstance(usd, bool) or not isinstance(usd, (int, float)) or not 10 <= usd <= 1_000_000:
        raise CatalogError(f"{where}.usd must be a price in USD")
    if price["condition"] not in STREET_CONDITIONS:
        raise CatalogError(f"{where}.condition must be one of {', '.join(STREET_CONDITIONS)}")
    if not isinstance(price["date"], str) or not STREET_DATE.match(price["date"]):
        raise CatalogError(f"{where}.date must be the month (YYYY-MM) or year the source states")
    if not isinstance(price["source"], str) or "http" not in price["source"]:
        raise CatalogError(f"{where}.source must name the page it was read on (a URL)")


def _check_cpu(entry_id: str, raw: dict) -> None:
    """CPU fields agree with each other: a known ISA, P-cores fewer than cores, boost >= base, and
    on parts with one kind of core the vector peak is cores x base clock x FLOP per cycle."""
    unknown = [isa for isa in raw.get("cpu_isa", []) if isa not in CPU_ISAS]
    if unknown:
        raise CatalogError(f"hardware {entry_id!r}: unknown cpu_isa {unknown} (known: {', '.join(CPU_ISAS)})")
    cores = raw.get("cpu_cores")
    if raw.get("cpu_p_cores") is not None and (cores is None or raw["cpu_p_cores"] >= cores):
        raise CatalogError(f"hardware {entry_id!r}: cpu_p_cores must be fewer than cpu_cores (hybrid parts only)")
    base, boost = raw.get("cpu_base_clock_ghz"), raw.get("cpu_boost_clock_ghz")
    if base and boost and boost < base:
        raise CatalogError(f"hardware {entry_id!r}: cpu_boost_clock_ghz is below cpu_base_clock_ghz")
    per_cycle = raw.get("cpu_fp32_flops_per_cycle")
    if raw.get("kind") == "cpu" and per_cycle and base and cores and "cpu_p_cores" not in raw:
        derived = cores * base * per_cycle / 1000
        stated = raw.get("fp32_tflops", raw["fp16_tflops"])
        if abs(derived - stated) / stated > 0.03:
            raise CatalogError(
                f"hardware {entry_id!r}: fp32_tflops {stated} disagrees with cores x base clock x FLOP/cycle = {derived:.3f}"
            )


def _variants(entry_id: str, raw: dict) -> list[tuple[str, dict]]:
    """One (id, entry) per memory size."""
    has_single = "memory_gib" in raw
    options = raw.get("memory_options_gib")
    if has_single == (options is not None):
        raise CatalogError(f"hardware {entry_id!r}: give exactly one of memory_gib and memory_options_gib")
    if options is None:
        return [(entry_id, raw)]
    if not options or any(isinstance(o, bool) or not isinstance(o, (int, float)) or not 0.5 <= o <= 4096 for o in options):
        raise CatalogError(f"hardware {entry_id!r}: memory_options_gib must list sizes in GiB")
    if len(set(options)) != len(options) or list(options) != sorted(options):
        raise CatalogError(f"hardware {entry_id!r}: memory_options_gib must be sorted and distinct")
    # Each memory size has its own price: launch_prices_usd {"<size>" = USD} where published; the
    # base launch_price_usd is the cheapest configuration's; a size with neither has no price (it
    # does not inherit the smallest one's).
    prices = raw.get("launch_prices_usd", {})
    unknown = sorted(set(prices) - {f"{size:g}" for size in options})
    if unknown:
        raise CatalogError(f"hardware {entry_id!r}: launch_prices_usd names sizes not in memory_options_gib: {unknown}")
    if prices and "launch_prices_usd" not in raw.get("sources", {}):
        raise CatalogError(f"hardware {entry_id!r}: launch_prices_usd needs sources.launch_prices_usd")
    for label, price in prices.items():
        if isinstance(price, bool) or not isinstance(price, (int, float)) or not 10 <= price <= 1_000_000:
            raise CatalogError(f"hardware {entry_id!r}: launch_prices_usd.{label} must be a price in USD")
    out = []
    for size in options:
        label = f"{size:g}"
        variant = {k: v for k, v in raw.items() if k not in ("memory_options_gib", "launch_prices_usd", "street_price")}
        variant["memory_gib"] = size
        street = raw.get("street_price")
        if street and street["memory_gib"] == size:
            variant["street_price"] = {k: v for k, v in street.items() if k != "memory_gib"}
        price = prices.get(label, raw.get("launch_price_usd") if size == options[0] else None)
        if price is None:
            variant.pop("launch_price_usd", None)
        else:
            variant["launch_price_usd"] = price
        variant["name"] = f"{raw['name']} {label}GB"
        variant["aliases"] = [f"{alias} {label}GB" for alias in raw["aliases"]]
        out.append((f"{entry_id}-{label}gb", variant))
    # A name without a memory size ("Apple M2 Ultra") means the largest configuration: it is the
    # one benchmark tables usually run, and it never reports "does not fit" wrongly.
    out[-1][1]["aliases"] += [raw["name"], *raw["aliases"]]
    return out


@cache
def load_hardware() -> dict[str, Device]:
    """Every device of ``data/hardware/*.toml``, memory variants expanded, keyed by id."""
    devices: dict[str, Device] = {}
    checked = prevalidated()
    for entry_id, (raw, _file) in read_toml_tables(DATA_DIR / "hardware", "hardware").items():
        if not checked:
            validate_entry("hardware", entry_id, raw, SCHEMA)
            _check_bandwidth_arithmetic(entry_id, raw)
            _check_nvlink(entry_id, raw)
            _check_cpu(entry_id, raw)
            _check_street_price(entry_id, raw)
            check_provenance("hardware", entry_id, raw)
        for variant_id, variant in _variants(entry_id, raw):
            if variant_id in devices:
                raise CatalogError(f"duplicate hardware id {variant_id!r}")
            fields = {k: v for k, v in variant.items() if k not in ("aliases", "sources", "cpu_isa")}
            fields.setdefault("status", "released")
            devices[variant_id] = Device(
                id=variant_id,
                aliases=tuple(variant["aliases"]),
                cpu_isa=tuple(variant.get("cpu_isa", ())),
                sources=dict(variant.get("sources", {})),
                base_id=entry_id,
                **fields,
            )
    return devices


@cache
def hardware_index() -> AliasIndex:
    index = AliasIndex("hardware")
    for device in load_hardware().values():
        for name in (device.id, device.name, *device.aliases):
            index.add(name, device.id)
    return index

"""The device of a request: a catalog name resolved (with a memory size or a qualifier such as a
board's chip or a cloud VM's slice), a multi-socket CPU server, or a custom device described by
the user (its fields and bounds: engine/options.py HARDWARE_FIELDS)."""

from __future__ import annotations

import math
import re
from dataclasses import replace

from .errors import EngineInputError
from .hardware import BACKENDS, CPU_ISAS, VENDORS, Device, hardware_index, load_hardware
from .options import HARDWARE_FIELD, HARDWARE_FIELDS
from .resolve import resolve


def _lookup(name: str) -> Device:
    devices = load_hardware()
    if isinstance(name, str) and name in devices:
        return devices[name]  # an id (what the page sends) names itself: no name index needed
    display = {k: d.name for k, d in devices.items()}
    try:
        return devices[resolve(hardware_index(), name, field="hardware", display=display)]
    except EngineInputError as unknown:
        sized = MEMORY_SUFFIX.match(name) if isinstance(name, str) else None
        if not sized:
            raise
        # "RX 9070 16GB", "RTX PRO 6000 Blackwell 96GB", "RTX 3090 24 GB": the name without its
        # memory size, then the variant of that size (a device sold in one size must have it).
        base, size = sized.group(1), float(sized.group(2))
        try:
            device = devices[resolve(hardware_index(), base, field="hardware", display=display)]
        except EngineInputError:
            raise unknown from None
    sizes = sorted({d.memory_gib for d in devices.values() if d.base_id == device.base_id})
    variant = next((d for d in devices.values() if d.base_id == device.base_id and d.memory_gib == size), None)
    if variant is None:
        offered = ", ".join(f"{m:g} GB" for m in sizes)
        raise EngineInputError(f"hardware {name!r}: {device.name.removesuffix(f' {device.memory_gib:g}GB')} comes with {offered}, not {size:g} GB", field="hardware")
    return variant


#: A trailing memory size: "... 16GB", "... 24 GB", "... 512 GiB".
MEMORY_SUFFIX = re.compile(r"^(.*?\S)[\s_-]*(?<![\d.])(\d{1,4}(?:\.\d+)?)\s*(?:GB|GiB|G)\s*$", re.IGNORECASE)


#: A trailing qualifier in parentheses: "Orange Pi 5 (RK3588)", "AMD EPYC 9R14 (cloud VM, 2 cores)".
QUALIFIER = re.compile(r"^(.*\S)\s*\(([^()]*)\)\s*$")
#: The size of a slice of a bigger CPU named in a qualifier: "2 cores", "8 vCPUs", "16 threads".
SLICE = re.compile(r"\b(\d{1,4})\s*-?\s*(cores?|vcpus?|threads?)\b", re.IGNORECASE)


#: What /proc/cpuinfo's "model name" (also lscpu, llama-bench's cpu_info, Windows' processor
#: name) adds to a CPU's product name: trademark marks, "13th Gen", "CPU @ 2.00GHz",
#: "64-Core Processor", "w/ Radeon 780M Graphics". Removed to read the product name, e.g.
#: "Intel(R) Xeon(R) Gold 6338 CPU @ 2.00GHz" -> "Intel Xeon Gold 6338".
CPUINFO_NOISE = (
    re.compile(r"\((?:R|TM|C)\)", re.IGNORECASE),
    re.compile(r"\b\d{1,2}(?:st|nd|rd|th) Gen\b", re.IGNORECASE),
    re.compile(r"@\s*\d+(?:\.\d+)?\s*GHz", re.IGNORECASE),
    re.compile(r"\b\d{1,3}-Core Processor\b", re.IGNORECASE),
    re.compile(r"\s(?:w/|with) Radeon\b.*$", re.IGNORECASE),
    re.compile(r"\bCPU\b(?=\s*(?:@|$|E\d|E-\d))"),
)


def cpuinfo_product_name(name: str) -> str:
    """The product name in a CPU model name as the operating system prints it."""
    for noise in CPUINFO_NOISE:
        name = noise.sub(" ", name)
    return " ".join(name.split())


def resolve_device(name: str) -> Device:
    """The catalog device a name means. A name the catalog does not know may carry a qualifier in
    parentheses: a board with its chip, ``"Board (SoC)"``, resolves to the chip when the board is
    unknown; a slice of a bigger CPU, ``"Part (cloud VM, N cores)"``, resolves to the part cut to
    N cores (``N vCPUs`` / ``N threads``: hardware threads, two per core where the part has SMT).
    A CPU model name as /proc/cpuinfo prints it resolves to its product (``cpuinfo_product_name``)."""
    try:
        return _resolve_named(name)
    except EngineInputError:
        product = cpuinfo_product_name(name) if isinstance(name, str) else name
        if product == name or not product:
            raise
        try:
            return _resolve_named(product)
        except EngineInputError:
            pass
        raise


def _resolve_named(name: str) -> Device:
    try:
        return _lookup(name)
    except EngineInputError:
        match = QUALIFIER.match(name) if isinstance(name, str) else None
        if not match:
            raise
    part, qualifier = match.groups()
    try:
        device = _lookup(part)
    except EngineInputError:
        # "Board (SoC)": the board is not in the catalog, its chip may be.
        return _lookup(qualifier)
    size = SLICE.search(qualifier)
    if size and device.kind == "cpu":
        return cpu_slice(device, int(size.group(1)), size.group(2).lower().startswith("core"), qualifier)
    return device


def cpu_slice(device: Device, count: int, cores: bool, label: str) -> Device:
    """``count`` cores (or hardware threads) of a CPU, as a virtual machine gets them: the cores'
    share of its FLOPS; the memory bandwidth stays the socket's (a few cores cannot draw it all:
    roofline.cpu_bandwidth limits what the cores in use pull)."""
    total_cores = device.cpu_cores or 1
    smt = max(1, (device.cpu_threads or total_cores) // total_cores)
    slice_cores = count if cores else max(1, math.ceil(count / smt))
    slice_cores = min(slice_cores, total_cores)
    threads = min(count, device.cpu_threads or total_cores)
    share = slice_cores / total_cores
    ccds = None if device.cpu_ccds is None else max(1, math.ceil(device.cpu_ccds * share))
    return replace(
        device,
        name=f"{device.name} ({label.strip()})"[:120],
        cpu_cores=slice_cores,
        cpu_threads=max(threads, slice_cores),
        cpu_p_cores=None,
        cpu_ccds=ccds,
        fp16_tflops=device.fp16_tflops * share,
        fp32_tflops=device.fp32_tflops * share if device.fp32_tflops else None,
    )


#: Sockets a CPU server may have (llama.cpp runs one process across them).
MAX_SOCKETS = 8


def cpu_sockets(device: Device, sockets: int, one_socket: bool = False) -> Device:
    """A multi-socket server of ``device``: cores, threads, FLOPS and memory add up. Memory
    bandwidth does not: llama.cpp maps the weights once and the pages land on the node that first
    touches them (Linux first-touch placement), so threads on the other socket read across the
    socket link; llama.cpp's own ``--numa`` documentation calls multi-socket gains "not
    guaranteed". The calibration's dual-socket rows (2x Xeon Gold 6138, 2x Xeon E5-2690 v3)
    decode below one socket's bandwidth, so the prior is one socket's bandwidth.

    ``one_socket``: the threads run on one socket only (numactl -N 0, llama.cpp ``--numa
    isolate``, or Windows before 11: a process stays in one processor group of at most 64
    logical processors, and a NUMA node is never split across groups,
    https://learn.microsoft.com/windows/win32/procthread/processor-groups; Windows 11 and Server
    2022 spread a process over all groups, GetProcessGroupAffinity remarks). Then the cores,
    FLOPS and clocks are one socket's; the memory of all sockets still holds the model."""
    if sockets == 1:
        return device
    if sockets > MAX_SOCKETS:
        raise EngineInputError(f"{device.name}: at most {MAX_SOCKETS} sockets", field="gpus")
    if one_socket:
        return replace(device, name=f"{sockets}x {device.name} (threads on one socket)", memory_gib=device.memory_gib * sockets)
    scale = lambda value: None if value is None else value * sockets  # noqa: E731
    return replace(
        device,
        name=f"{sockets}x {device.name}",
        memory_gib=device.memory_gib * sockets,
        cpu_cores=scale(device.cpu_cores),
        cpu_threads=scale(device.cpu_threads),
        cpu_p_cores=scale(device.cpu_p_cores),
        cpu_ccds=scale(device.cpu_ccds),
        fp16_tflops=device.fp16_tflops * sockets,
        fp32_tflops=scale(device.fp32_tflops),
        cpu_sockets=sockets,
    )


def dimm_population(device: Device, dimms: int, sockets: int = 1) -> Device:
    """``device`` with ``dimms`` memory modules spread over its sockets' channels (the catalog's
    ``memory_channels`` is per socket), bandwidth scaled to what the population interleaves.

    A memory controller interleaves addresses across channels in sets of equal-capacity
    channel groups; with D identical DIMMs on C channels of a socket, ceil(D / C) sets form
    (e.g. 8 DIMMs on 6 channels: one set on all 6 channels, one on the 2 channels with a second
    DIMM). Weights spread over all of memory in proportion to capacity stream through each set
    in turn, each set at its width, so the whole reads at D / ceil(D / C) channels' worth:
    8 on 6 channels = 4 of 6, 2/3 of the peak. Vendors state the same: unbalanced configurations
    "can reduce memory bandwidth by up to 33%" (Dell, "Balanced Memory with 2nd Generation
    Intel Xeon Scalable Processors", 2019); Lenovo measured the bandwidth of balanced and
    unbalanced populations (https://lenovopress.lenovo.com/lp1517-balanced-memory-configurations-3rd-gen-2s-intel-processors).
    Balanced counts (C, 2C; fewer DIMMs than channels) keep the device as it is: fewer
    channels than the socket has are a different, slower machine the catalog's peak does not
    describe, and a measured bandwidth already includes the population."""
    channels = device.memory_channels
    per_socket = dimms / max(sockets, 1)
    if not channels or device.bandwidth_measured or per_socket <= channels or per_socket != int(per_socket):
        return device
    per_socket = int(per_socket)
    share = per_socket / math.ceil(per_socket / channels) / channels
    if share >= 1.0:
        return device
    return replace(device, bandwidth_gbs=device.bandwidth_gbs * share)


#: What a custom device must and may state, with its bounds (engine/options.py HARDWARE_FIELDS).
CUSTOM_REQUIRED = {o.key: (o.lo, o.hi) for o in HARDWARE_FIELDS if o.required}
CUSTOM_OPTIONAL = {o.key: (o.lo, o.hi) for o in HARDWARE_FIELDS if not o.required and o.type in ("int", "float")}
CUSTOM_INTEGERS = frozenset(o.key for o in HARDWARE_FIELDS if o.type == "int")
#: The backend a custom device of each kind runs by default.
CUSTOM_KINDS = {"gpu": "cuda", "soc": "metal", "cpu": "cpu"}
#: An ISA level implies the ones below it (what the CPU's kernels may use): "avx512-vnni" means
#: AVX2, AVX-512 and VNNI; "i8mm" means NEON with dot product and int8 matrix multiply.
ISA_LEVELS = {
    "avx2": ("avx2",), "avx-vnni": ("avx2", "avx-vnni"), "avx512": ("avx2", "avx512"),
    "avx512-vnni": ("avx2", "avx512", "avx512-vnni"), "avx512-bf16": ("avx2", "avx512", "avx512-vnni", "avx512-bf16"),
    "amx": ("avx2", "avx512", "avx512-vnni", "avx512-bf16", "amx"),
    "neon": ("neon",), "dotprod": ("neon", "dotprod"), "i8mm": ("neon", "dotprod", "i8mm"),
    "sve": ("neon", "dotprod", "i8mm", "bf16", "sve", "sve2"), "sme": ("neon", "dotprod", "i8mm", "bf16", "sve", "sve2", "sme"),
    "rvv": ("rvv",),
    # RV64GC without the V extension (StarFive JH7110): ggml's scalar C kernels (roofline._int8_kernel).
    "scalar": ("scalar",),
}


#: The vendor a custom device's backend implies (Vulkan runs on every vendor's GPUs).
BACKEND_VENDORS = {"cuda": "nvidia", "rocm": "amd", "vulkan-amdvlk": "amd", "metal": "apple", "sycl": "intel"}


def _custom_kind(spec: dict) -> str:
    """A custom device's kind when the spec names none: a CPU for the cpu backend, a chip with
    one memory for everything with ``unified_memory``, else a card. A kind given with a
    contradicting ``unified_memory`` is an error."""
    unified = spec.get("unified_memory")
    if unified is not None and not isinstance(unified, bool):
        raise EngineInputError("custom hardware: unified_memory must be true or false", field="hardware.unified_memory")
    if spec.get("backend") == "cpu":
        return "cpu"
    return "soc" if unified else "gpu"


def custom_device(spec: dict) -> Device:
    """A device described by the user: ``{"name", "kind", "memory_gib", "bandwidth_gbs",
    "fp16_tflops"}`` plus optional ``backend``, ``vendor``, ``fp32_tflops``, ``gpu_clock_mhz``,
    ``pcie_gen`` and, for CPUs, ``cpu_cores``, ``cpu_threads``, ``cpu_p_cores``,
    ``memory_channels`` with ``memory_data_rate_mts`` (instead of ``bandwidth_gbs``: 8 bytes per
    channel per transfer), ``bandwidth_measured`` (true: ``bandwidth_gbs`` was measured, e.g.
    with STREAM or Intel MLC, not read off a spec sheet), ``cpu_isa`` (an ISA level such as
    ``"avx512-vnni"`` or ``"i8mm"``, or a list of extensions), clocks and ``cpu_ccds``. Every
    problem is reported with the field's name."""
    known = set(HARDWARE_FIELD)
    unknown = sorted(set(spec) - known)
    if unknown:
        raise EngineInputError(f"custom hardware: unknown field(s) {', '.join(map(str, unknown))}", field="hardware")
    kind = spec.get("kind") or _custom_kind(spec)
    if kind not in HARDWARE_FIELD["kind"].choices:
        raise EngineInputError(f"custom hardware: kind must be {', '.join(HARDWARE_FIELD['kind'].choices)}", field="hardware.kind")
    if spec.get("unified_memory") is not None and (spec["unified_memory"] is True) != (kind == "soc"):
        raise EngineInputError(
            f"custom hardware: kind {kind} contradicts unified_memory {str(spec['unified_memory']).lower()} (a soc has one memory)",
            field="hardware.unified_memory",
        )
    spec = dict(spec)
    channels, rate = spec.get("memory_channels"), spec.get("memory_data_rate_mts")
    if spec.get("bandwidth_gbs") is None and channels is not None and rate is not None:
        if all(isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) for x in (channels, rate)):
            spec["bandwidth_gbs"] = channels * 8 * rate / 1000
    values = {}
    for key, (lo, hi) in {**CUSTOM_REQUIRED, **CUSTOM_OPTIONAL}.items():
        value = spec.get(key)
        if value is None:
            if key in CUSTOM_REQUIRED:
                hint = " (or memory_channels and memory_data_rate_mts)" if key == "bandwidth_gbs" else ""
                raise EngineInputError(f"custom hardware: {key} is required{hint}", field=f"hardware.{key}")
            continue
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or not lo <= value <= hi:
            raise EngineInputError(f"custom hardware: {key} must be a number from {lo:g} to {hi:g}", field=f"hardware.{key}")
        values[key] = int(value) if key in CUSTOM_INTEGERS else value
    measured = spec.get("bandwidth_measured", False)
    if not isinstance(measured, bool):
        raise EngineInputError("custom hardware: bandwidth_measured must be true or false", field="hardware.bandwidth_measured")
    isa = spec.get("cpu_isa")
    if isa is None:
        isa_names: tuple[str, ...] = ()
    elif isinstance(isa, str) and isa.lower() in ISA_LEVELS:
        isa_names = ISA_LEVELS[isa.lower()]
    elif isinstance(isa, list) and isa and all(isinstance(x, str) and x.lower() in CPU_ISAS for x in isa):
        isa_names = tuple(x.lower() for x in isa)
    else:
        raise EngineInputError(
            f"custom hardware: cpu_isa must be one of {', '.join(ISA_LEVELS)} or a list of {', '.join(CPU_ISAS)}", field="hardware.cpu_isa"
        )
    cores = values.get("cpu_cores")
    if values.get("cpu_p_cores") is not None and (cores is None or values["cpu_p_cores"] >= cores):
        raise EngineInputError("custom hardware: cpu_p_cores must be fewer than cpu_cores (hybrid CPUs)", field="hardware.cpu_p_cores")
    if cores is not None and values.get("cpu_threads") is not None and values["cpu_threads"] < cores:
        raise EngineInputError("custom hardware: cpu_threads cannot be fewer than cpu_cores", field="hardware.cpu_threads")
    base, boost = values.get("cpu_base_clock_ghz"), values.get("cpu_boost_clock_ghz")
    if base and boost and boost < base:
        raise EngineInputError("custom hardware: cpu_boost_clock_ghz is below cpu_base_clock_ghz", field="hardware.cpu_boost_clock_ghz")
    backend = spec.get("backend") or CUSTOM_KINDS[kind]
    if backend not in BACKENDS:
        raise EngineInputError(f"custom hardware: backend must be one of {', '.join(BACKENDS)}", field="hardware.backend")
    vendor = spec.get("vendor") or BACKEND_VENDORS.get(backend, "other")
    name = spec.get("name") if isinstance(spec.get("name"), str) and spec.get("name").strip() else "Custom hardware"
    if kind == "cpu" and "fp32_tflops" not in values:
        values["fp32_tflops"] = values["fp16_tflops"]  # the catalog's CPU convention: one vector rate
    return Device(
        id="custom",
        name=name.strip()[:80],
        vendor=vendor if vendor in VENDORS else "other",
        family="Custom",
        kind=kind,
        form_factor="desktop",
        status="released",
        backend=backend,
        engine="llama.cpp",
        aliases=(),
        source="entered by the user",
        sources={},
        cpu_isa=isa_names,
        bandwidth_measured=measured,
        **values,
    )

"""A :class:`System`: the device(s), model, weight format and engine of one estimate, resolved
from a request and checked for consistency, with the weights placed (offload decided)."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, replace
from functools import cached_property

from .arch import Architecture, architecture_from_config
from .catalog import GB
from .engines import Engine, engine_for_format, engine_index, load_engines
from .errors import EngineInputError
from .hardware import BACKENDS, CPU_ISAS, VENDORS, Device, hardware_index, load_hardware
from .memory import (
    RUNTIME_BYTES,
    compute_buffer_bytes,
    host_usable_bytes,
    kv_cache_bytes,
    usable_bytes,
)
from .models import Model, as_finetune, load_models, model_index
from .offload import Placement, place_experts_on_host, place_layers
from .params import ResolvedParams, resolve_params
from .options import HARDWARE_FIELD, HARDWARE_FIELDS, OPTION
from .quant import QuantFormat, kv_bytes_per_element, parse_quant
from .request import Options, parse_options
from .resolve import resolve
from .roofline import default_threads
from .weights import WeightProfile, scaled_profile, weight_profile

#: System RAM of a discrete-GPU machine when the request names none: a desktop with dual-channel
#: DDR5 (the platform most people put a gaming card in).
DEFAULT_HOST = "AMD Ryzen 9 7950X 64GB"
#: DEFAULT_HOST's memory: the system RAM assumed unless a request names its own (system_ram_gib).
DEFAULT_SYSTEM_RAM_GIB = 64


def _lookup(name: str) -> Device:
    devices = load_hardware()
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


def resolve_device(name: str) -> Device:
    """The catalog device a name means. A name the catalog does not know may carry a qualifier in
    parentheses: a board with its chip, ``"Board (SoC)"``, resolves to the chip when the board is
    unknown; a slice of a bigger CPU, ``"Part (cloud VM, N cores)"``, resolves to the part cut to
    N cores (``N vCPUs`` / ``N threads``: hardware threads, two per core where the part has SMT)."""
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


def cpu_sockets(device: Device, sockets: int) -> Device:
    """A multi-socket server of ``device``: cores, threads, FLOPS and memory add up. Memory
    bandwidth does not: llama.cpp maps the weights once and the pages land on the node that first
    touches them (Linux first-touch placement), so threads on the other socket read across the
    socket link; llama.cpp's own ``--numa`` documentation calls multi-socket gains "not
    guaranteed". The calibration's dual-socket rows (2x Xeon Gold 6138, 2x Xeon E5-2690 v3)
    decode below one socket's bandwidth, so the prior is one socket's bandwidth."""
    if sockets == 1:
        return device
    if sockets > MAX_SOCKETS:
        raise EngineInputError(f"{device.name}: at most {MAX_SOCKETS} sockets", field="gpus")
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
}


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
    kind = spec.get("kind", "gpu")
    if kind not in HARDWARE_FIELD["kind"].choices:
        raise EngineInputError(f"custom hardware: kind must be {', '.join(HARDWARE_FIELD['kind'].choices)}", field="hardware.kind")
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
    vendor = spec.get("vendor") or {"cuda": "nvidia", "rocm": "amd", "metal": "apple"}.get(backend, "other")
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


def resolve_model(name: str) -> Model:
    """The catalog model ``name`` means; a listed fine-tune of it comes back under its own name,
    marked "architecture of <base>" (it runs as the base does)."""
    models = load_models()
    model = models[resolve(model_index(), name, field="model", display={k: m.name for k, m in models.items()})]
    return as_finetune(model, name)


def resolve_engine(name: str) -> Engine:
    engines = load_engines()
    return engines[resolve(engine_index(), name, field="engine", display={k: e.name for k, e in engines.items()})]


@dataclass(frozen=True)
class ModelInfo:
    """What the estimate reports about the model (catalog or custom)."""

    id: str
    name: str
    params_b: float
    active_params_b: float
    arch: Architecture
    catalog: Model | None


def _model_info(spec) -> ModelInfo:
    if isinstance(spec, str):
        model = resolve_model(spec)
        return ModelInfo(model.id, model.name, model.params_b, model.active_params_b, model.arch, model)
    if isinstance(spec, dict) and isinstance(spec.get("config"), dict):
        arch = architecture_from_config(spec["config"])
        name = spec.get("name") if isinstance(spec.get("name"), str) else "custom model"
        return ModelInfo("custom", name[:80], arch.params_main / 1e9, arch.params_active / 1e9, arch, None)
    raise EngineInputError("model must be a catalog name or {'config': <config.json object>}", field="model")


@dataclass(frozen=True)
class System:
    device: Device
    gpus: int
    host: Device | None
    model: ModelInfo
    quant: QuantFormat
    engine: Engine
    backend: str
    options: Options
    flash_attn: bool
    kv_bytes_per_element: float
    params: ResolvedParams
    host_params: ResolvedParams
    #: Accelerator memory kept free for something else (a speculative draft model).
    reserve_bytes: float = 0.0

    @property
    def arch(self) -> Architecture:
        return self.model.arch

    @cached_property
    def profile(self) -> WeightProfile:
        profile = weight_profile(self.arch, self.quant)
        if self.options.file_gb:
            return scaled_profile(profile, self.options.file_gb * GB)
        return profile

    @cached_property
    def cpu_threads(self) -> int:
        """Threads a cpu backend runs: as asked, else llama.cpp's default (physical cores; the
        performance cores of a hybrid part)."""
        return self.options.threads or default_threads(self.host if self.device.kind == "gpu" and self.host else self.device)

    @cached_property
    def context_tokens(self) -> int:
        o = self.options
        return o.depth + o.prompt_tokens + o.reasoning_tokens + o.gen_tokens

    @cached_property
    def weight_bytes(self) -> float:
        """Weights in memory: the MTP head only when it drafts (published GGUFs leave it out)."""
        return self.profile.total + (self.profile.mtp if self.options.mtp else 0.0)

    @cached_property
    def kv_bytes(self) -> float:
        return kv_cache_bytes(self.arch, self.context_tokens, self.options.batch, self.kv_bytes_per_element)

    @cached_property
    def compute_bytes(self) -> float:
        return compute_buffer_bytes(self.arch, self.context_tokens, self.flash_attn)

    @cached_property
    def runtime_bytes(self) -> float:
        return RUNTIME_BYTES[self.backend] * self.gpus

    @cached_property
    def usable_bytes(self) -> float:
        """Memory the backend may use across all devices."""
        return usable_bytes(self.device, self.backend) * self.gpus

    @cached_property
    def host_usable_bytes(self) -> float:
        return host_usable_bytes(self.host) if self.host else 0.0

    def gpu_need(self, placement: Placement) -> float:
        """Accelerator memory a placement needs: its weights, the KV of its blocks, buffers."""
        return (
            placement.gpu_bytes
            + self.kv_bytes * placement.gpu_layer_fraction
            + self.compute_bytes
            + self.runtime_bytes
            + self.reserve_bytes
        )

    @cached_property
    def placement(self) -> Placement:
        """Weights on the device(s) or offloaded, as requested or as llama.cpp would fit them."""
        o = self.options
        if self.host is None:  # unified memory: nothing to offload to
            return place_layers(self.profile, 1.0)
        if o.expert_offload:
            return place_experts_on_host(self.profile)
        if o.gpu_layers is not None:
            return place_layers(self.profile, o.gpu_layers)
        full = place_layers(self.profile, 1.0)
        if self.gpu_need(full) <= self.usable_bytes:
            return full
        layers = self.arch.layers
        for on_gpu in range(layers - 1, -1, -1):
            candidate = place_layers(self.profile, on_gpu / layers)
            if self.gpu_need(candidate) <= self.usable_bytes:
                return candidate
        return place_layers(self.profile, 0.0)


def _pick_backend(requested: str | None, device: Device, engine: Engine) -> str:
    if requested is not None:
        if not isinstance(requested, str) or requested.lower() not in BACKENDS:
            raise EngineInputError(f"backend must be one of {', '.join(BACKENDS)}, got {requested!r}", field="backend")
        backend = requested.lower()
    elif device.backend in engine.backends:
        backend = device.backend
    elif device.kind == "cpu" and "cpu" in engine.backends:
        backend = "cpu"
    else:
        raise EngineInputError(
            f"{engine.name} does not run on {device.name} (it supports {', '.join(engine.backends)}; "
            f"the device uses {device.backend})",
            field="engine",
        )
    if backend not in engine.backends:
        raise EngineInputError(f"{engine.name} has no {backend} backend", field="backend")
    if device.kind == "cpu" and backend != "cpu":
        raise EngineInputError(f"{device.name} is a CPU-only system: use the cpu backend", field="backend")
    if backend == "metal" and device.vendor != "apple":
        raise EngineInputError("the metal backend exists only on Apple Silicon", field="backend")
    if backend == "cuda" and device.vendor != "nvidia":
        raise EngineInputError("the cuda backend needs an NVIDIA device", field="backend")
    if backend in ("rocm", "vulkan-amdvlk") and device.vendor != "amd":
        raise EngineInputError(f"the {backend} backend needs an AMD device", field="backend")
    return backend


def _check_links(options: Options, device: Device) -> None:
    """Link options that describe something the device cannot have."""
    if options.nvlink and not device.nvlink_gbs:
        raise EngineInputError(f"{device.name} has no NVLink; leave nvlink unset", field="nvlink")
    slot = OPTION["slot_pcie_gen"]
    if not slot.applies_to(device.kind) and (options.slot_pcie_gen or options.slot_pcie_lanes):
        raise EngineInputError(f"{device.name} is not a PCIe card; leave the slot's PCIe link unset", field=slot.key)


def build_system(request: dict, reserve_bytes: float = 0.0) -> System:
    """Resolve and cross-check a request (see request.py for its keys). ``reserve_bytes`` of
    accelerator memory are kept free (for a draft model) when placing the weights."""
    options = parse_options(request)
    hardware = request["hardware"]
    if isinstance(hardware, dict):
        device = custom_device(hardware)
    elif isinstance(hardware, str):
        device = resolve_device(hardware)
    else:
        raise EngineInputError("hardware must be a catalog name or a custom specification", field="hardware")
    model = _model_info(request["model"])
    if not isinstance(request["quant"], str):
        raise EngineInputError("quant must be a name such as Q4_K_M", field="quant")
    quant = parse_quant(request["quant"])
    engine = resolve_engine(request["engine"] if request.get("engine") else device.engine)
    if request.get("engine") is None and quant.kind not in engine.formats:
        # The device's usual engine cannot load this format: take the first one that can.
        engine = next((e for e in load_engines().values() if quant.kind in e.formats and device.backend in e.backends), engine)
    if quant.kind not in engine.formats:
        raise EngineInputError(f"{engine.name} cannot load {quant.name} weights ({quant.kind})", field="quant")
    backend = _pick_backend(request.get("backend"), device, engine)
    engine = engine_for_format(engine, backend, quant.kind)
    gpus = options.gpus
    if gpus > 1 and device.kind == "cpu":
        # Several CPUs are the sockets of one server, one device to the physics.
        device, gpus = cpu_sockets(device, gpus), 1
    if gpus > 1 and not OPTION["gpus"].applies_to(device.kind):
        raise EngineInputError(f"several {device.name} cannot be combined here; choose gpus = 1", field="gpus")
    _check_links(options, device)
    host = None
    if OPTION["host"].applies_to(device.kind):
        host = resolve_device(options.host or DEFAULT_HOST)
        if host.kind == "gpu":
            raise EngineInputError("host must be a CPU platform (its RAM holds offloaded weights)", field="host")
        if options.system_ram_gib is not None:
            host = replace(host, memory_gib=options.system_ram_gib)
    elif options.system_ram_gib is not None:
        raise EngineInputError(f"{device.name} has one memory for everything: leave system_ram_gib unset", field="system_ram_gib")
    if options.expert_offload and not model.arch.is_moe:
        raise EngineInputError("expert offload needs a mixture-of-experts model", field="expert_offload")
    if (options.expert_offload or (options.gpu_layers is not None and options.gpu_layers < 1)) and host is None:
        raise EngineInputError(f"{device.name} has unified memory: there is nothing to offload to", field="gpu_layers")
    flash_attn = engine.flash_attn_default if options.flash_attn is None else options.flash_attn
    lineage = engine.lineage()
    return System(
        device=device,
        gpus=gpus,
        host=host,
        model=model,
        quant=quant,
        engine=engine,
        backend=backend,
        options=options,
        flash_attn=flash_attn,
        kv_bytes_per_element=kv_bytes_per_element(options.kv_quant),
        params=resolve_params(lineage, backend),
        host_params=resolve_params(lineage, "cpu"),
        reserve_bytes=reserve_bytes,
    )

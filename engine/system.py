"""A :class:`System`: the device(s), model, weight format and engine of one estimate, resolved
from a request and checked for consistency, with the weights placed (offload decided)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cached_property

from .arch import Architecture, architecture_from_config
from .catalog import GB
from .devices import (  # noqa: F401 - the device helpers are part of this module's interface
    CUSTOM_INTEGERS,
    CUSTOM_KINDS,
    CUSTOM_OPTIONAL,
    CUSTOM_REQUIRED,
    ISA_LEVELS,
    MAX_SOCKETS,
    cpu_slice,
    cpu_sockets,
    dimm_population,
    custom_device,
    resolve_device,
)
from .engines import (
    Engine,
    check_engine_limits,
    engine_for_format,
    engine_index,
    engine_runs,
    format_backends,
    load_engines,
    quant_name_for,
)
from .errors import EngineInputError
from .hardware import BACKENDS, Device
from .memory import (
    RUNTIME_BYTES,
    compute_buffer_bytes,
    host_usable_bytes,
    kv_cache_bytes,
    usable_bytes,
)
from .models import Model, as_finetune, load_models, model_index
from .offload import Placement, gpu_block_count, ngl_for_fraction, parse_overrides, place_blocks, place_experts_on_host, place_stated
from .params import ResolvedParams, resolve_params
from .options import OPTION
from .quant import QuantFormat, kv_bytes_per_element, parse_quant, tensor_bytes, tensor_types
from .request import Options, parse_options
from .resolve import resolve
from .roofline import default_threads
from .weights import WeightProfile, scaled_profile, weight_profile

#: System RAM of a discrete-GPU machine when the request names none: a desktop with dual-channel
#: DDR5 (the platform most people put a gaming card in): AMD Ryzen 9 7950X with 64 GB, by its
#: catalog id (an id resolves without building the name index).
DEFAULT_HOST = "amd-ryzen-9-7950x-64gb"
#: DEFAULT_HOST's memory: the system RAM assumed unless a request names its own (system_ram_gib).
DEFAULT_SYSTEM_RAM_GIB = 64


def resolve_model(name: str) -> Model:
    """The catalog model ``name`` means; a listed fine-tune of it comes back under its own name,
    marked "architecture of <base>" (it runs as the base does)."""
    models = load_models()
    if isinstance(name, str) and name in models:
        model = models[name]  # an id (what the page sends) names itself: no name index needed
    else:
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
        """Tokens the KV cache holds room for: what the request uses, or the allocation asked for
        (llama.cpp allocates its whole -c up front), whichever is larger."""
        o = self.options
        return max(o.depth + o.prompt_tokens + o.reasoning_tokens + o.gen_tokens, o.context_size or 0)

    @cached_property
    def ubatch(self) -> int:
        """Prompt tokens per micro-batch: llama.cpp caps -ub at -b (``cparams.n_ubatch =
        std::min(cparams.n_batch, params.n_ubatch)``, src/llama-context.cpp; ik_llama.cpp's
        src/llama.cpp at dcdfad29 the same). An engine that chunks the prompt itself ignores -ub
        (engines.toml ``prefill_chunk_tokens``: exllamav3's generator, max_chunk_size = 2048)."""
        return self.engine.prefill_chunk_tokens or min(self.options.ubatch, self.options.nbatch)

    @cached_property
    def weight_bytes(self) -> float:
        """Weights in memory: the MTP head only when it drafts (published GGUFs leave it out)."""
        return self.profile.total + (self.profile.mtp if self.options.mtp else 0.0)

    @cached_property
    def kv_bytes(self) -> float:
        return kv_cache_bytes(self.arch, self.context_tokens, self.options.batch, self.kv_bytes_per_element)

    @cached_property
    def compute_bytes(self) -> float:
        return compute_buffer_bytes(self.arch, self.context_tokens, self.flash_attn, self.ubatch)

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
    def placement_flags(self) -> str:
        """The llama.cpp flags that state this placement (-ngl, --n-cpu-moe / --cpu-moe, -ot);
        empty when the engine places the weights itself."""
        o = self.options
        flags = []
        if o.n_gpu_layers is not None:
            flags.append(f"-ngl {o.n_gpu_layers}")
        if o.expert_offload and (o.n_gpu_layers is not None or o.n_cpu_moe or o.tensor_overrides):
            flags.append("--cpu-moe")
        elif o.n_cpu_moe:
            flags.append(f"--n-cpu-moe {o.n_cpu_moe}")
        if o.tensor_overrides:
            flags.append(f"-ot {o.tensor_overrides}")
        return " ".join(flags)

    @cached_property
    def input_on_host(self) -> bool:
        """llama.cpp (and the engines that run it) keeps its input layer, the embedding tables, in
        system RAM beside a discrete GPU (engine/offload.py)."""
        return self.host is not None and "llama-cpp" in self.engine.lineage()

    @cached_property
    def placement(self) -> Placement:
        """Weights on the device(s) or offloaded, as requested or as llama.cpp would fit them."""
        return self._placed[0]

    @cached_property
    def n_gpu_layers(self) -> int | None:
        """The llama.cpp -ngl that states the placement's layer split: as given, the page's share
        of layers converted (offload.ngl_for_fraction), or the largest count that fits; None when
        every layer is on the GPU."""
        return self._placed[1]

    @cached_property
    def _placed(self) -> tuple[Placement, int | None]:
        o = self.options
        layers = self.arch.layers
        if self.host is None:  # unified memory: nothing to offload to
            return place_blocks(self.profile, layers, True), None
        pinned = self.input_on_host
        ngl = o.n_gpu_layers
        if ngl is None and o.gpu_layers is not None:
            ngl = ngl_for_fraction(layers, o.gpu_layers)
        if o.n_cpu_moe or o.tensor_overrides:
            # A llama.cpp command line's placement (-ngl, --n-cpu-moe / --cpu-moe, -ot).
            on_gpu, head_on_gpu = gpu_block_count(layers, ngl, None, o.llama_cpp_build)
            cpu_moe = layers if o.expert_offload else min(o.n_cpu_moe, layers)
            overrides = parse_overrides(o.tensor_overrides) if o.tensor_overrides else ()
            placement = place_stated(self.arch, self.profile, tensor_bytes(self.arch, self.quant), on_gpu, head_on_gpu, cpu_moe, overrides, pinned)
            return placement, ngl
        if o.expert_offload and ngl is None:
            return place_experts_on_host(self.profile, pinned), None
        if o.expert_offload:
            on_gpu, head_on_gpu = gpu_block_count(layers, ngl, None, o.llama_cpp_build)
            return place_stated(self.arch, self.profile, tensor_bytes(self.arch, self.quant), on_gpu, head_on_gpu, layers, (), pinned), ngl
        if ngl is not None:
            return place_blocks(self.profile, *gpu_block_count(layers, ngl, None, o.llama_cpp_build), pinned), ngl
        # Automatic: the largest -ngl whose placement fits (llama.cpp's rule for the count).
        full = place_blocks(self.profile, layers, True, pinned)
        if self.gpu_need(full) <= self.usable_bytes:
            return full, None
        for count in range(layers, -1, -1):
            candidate = place_blocks(self.profile, *gpu_block_count(layers, count, None, o.llama_cpp_build), pinned)
            if self.gpu_need(candidate) <= self.usable_bytes:
                return candidate, count
        return candidate, 0


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


def _check_placement(options: Options, model, device: Device, host: Device | None) -> None:
    """Placement options that contradict each other or the set-up (the -ot patterns are checked
    against the model's tensors when placed)."""
    if options.n_gpu_layers is not None and options.gpu_layers is not None:
        raise EngineInputError("give gpu_layers (a fraction) or n_gpu_layers (llama.cpp -ngl), not both", field="n_gpu_layers")
    for key in ("expert_offload", "n_cpu_moe"):
        if getattr(options, key) and not model.arch.is_moe:
            raise EngineInputError(f"{key} keeps routed experts in system RAM: it needs a mixture-of-experts model", field=key)
    partial = (options.gpu_layers is not None and options.gpu_layers < 1) or (
        options.n_gpu_layers is not None and options.n_gpu_layers <= model.arch.layers
    )
    if host is None and (options.expert_offload or options.n_cpu_moe or options.tensor_overrides or partial):
        field = next(k for k in ("expert_offload", "n_cpu_moe", "tensor_overrides", "n_gpu_layers", "gpu_layers") if getattr(options, k) not in (None, False, 0))
        raise EngineInputError(f"{device.name} has one memory for everything: there is nothing to offload to", field=field)


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
    engine = resolve_engine(request["engine"] if request.get("engine") else device.engine)
    quant = parse_quant(quant_name_for(engine, request["quant"]))
    runs_on = format_backends(quant.kind)
    wanted = request.get("backend") if isinstance(request.get("backend"), str) else device.backend
    if wanted.lower() in BACKENDS and wanted.lower() not in runs_on:
        # One rule (engines.format_backends): MLX weights run on Metal only, AWQ/GPTQ/FP8 on CUDA/ROCm ...
        raise EngineInputError(
            f"{quant.name} weights ({quant.kind}) run only on {', '.join(runs_on) or 'no backend'}; "
            f"{device.name} uses {wanted.lower()}: pick a format for {wanted.lower()}",
            field="quant",
        )
    if request.get("engine") is None and not engine_runs(engine, device.backend, quant.kind):
        # The device's usual engine cannot run this format here: take the first one that can.
        engine = next((e for e in load_engines().values() if engine_runs(e, device.backend, quant.kind)), engine)
    if quant.kind not in engine.formats:
        raise EngineInputError(f"{engine.name} cannot load {quant.name} weights ({quant.kind})", field="quant")
    backend = _pick_backend(request.get("backend"), device, engine)
    if not engine_runs(engine, backend, quant.kind):
        raise EngineInputError(f"{engine.name} does not run {quant.name} weights ({quant.kind}) on {backend}", field="quant")
    engine = engine_for_format(engine, backend, quant.kind)
    gguf_types = tensor_types(model.arch, quant) if engine.gguf_types and quant.kind == "gguf" else ()
    check_engine_limits(engine, quant.name, gguf_types, options.kv_quant)
    gpus = options.gpus
    if gpus > 1 and device.kind == "cpu":
        # Several CPUs are the sockets of one server, one device to the physics.
        device, gpus = cpu_sockets(device, gpus, options.one_socket), 1
    if options.memory_dimms and device.kind == "cpu":
        device = dimm_population(device, options.memory_dimms, options.gpus)
    if options.measured_bandwidth_gbs and device.kind == "cpu":
        # What the user's STREAM / MLC run read: the bandwidth the process streams from, as a custom
        # device's bandwidth_measured (roofline.bandwidth_bytes_s, decode.step_features).
        device = replace(device, bandwidth_gbs=options.measured_bandwidth_gbs, bandwidth_measured=True)
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
    _check_placement(options, model, device, host)
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

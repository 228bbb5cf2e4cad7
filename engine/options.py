"""Every option of an estimate request, declared once.

Each :class:`Option` states its name, type, default, bounds, unit, help text, command-line flag,
the page setting that carries it and the device kinds it applies to. Everything else is generated
from this table: the request parser (request.py ``DEFAULTS``, ``Options``, ``parse_options``), the
CLI's argparse options (cli.py), the CLI line the page shows (engine/page/commands.py), the page's
view fields and their bounds (engine/page/fields.py, handed to the page's JavaScript by build.py)
and the request's JSON Schema (``python -m engine schemas``: data/schema/request.schema.json).
``HARDWARE_FIELDS`` does the same for a custom device (``"hardware": {...}``, system.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .hardware import SCHEMA as HARDWARE_SCHEMA
from .quant import KV_TYPES

#: Upper bounds that keep every computation finite and every answer meaningful.
MAX_TOKENS = 10_000_000
MAX_BATCH = 4096
MAX_GPUS = 64
#: Largest system RAM a request may name, GiB (an 8-socket server holds a few TiB); below 4 GiB the
#: OS reserve (memory.py) leaves nothing for offloaded weights.
MAX_SYSTEM_RAM_GIB = 16384
#: Longest per-token schedule (``schedule``: reasoning + answer tokens) a request may ask for; a
#: long document answer is ~2-4k tokens.
MAX_SCHEDULE_TOKENS = 65_536
#: Longest name (a draft model, a host platform) a request may carry.
MAX_NAME_LENGTH = 200

SPLITS = ("layer", "row", "tensor")  # llama.cpp says "row", vLLM "tensor"
WORKLOADS = ("code", "chat", "creative")
#: Device kinds (hardware catalog ``kind``): a discrete card, a system on a chip with one memory
#: for everything (Apple Silicon, Strix Halo, DGX Spark), a CPU.
DEVICE_KINDS = ("gpu", "soc", "cpu")

#: Hidden reasoning ("thinking") tokens the page assumes a reasoning model spends before its
#: answer. Reasoning models commonly think for several hundred to a few thousand tokens on a chat
#: question; 600 keeps the thinking phase visible without dwarfing the answer.
DEFAULT_THINK_TOKENS = 600


@dataclass(frozen=True)
class Option:
    """One request option (or one field of a custom device).

    ``type``: ``int``, ``float``, ``bool``, ``choice`` (one of ``choices``, case-insensitive),
    ``name`` (text naming a catalog entry) or ``text`` (free text of at most ``extra["max_length"]``). ``lo``/``hi`` bound numbers; ``choices`` may also list
    the only allowed whole numbers. ``default=None``: unset, the engine decides. ``flag``: the CLI
    flag (``""``: not on the command line). ``view``: the page setting that carries it, with
    ``view_default`` where the page starts elsewhere (an unset whole number is 0 on the page).
    ``devices``: the device kinds it applies to (empty: all).
    """

    key: str
    type: str
    default: object
    help: str
    lo: float | None = None
    hi: float | None = None
    choices: tuple = ()
    unit: str = ""
    flag: str = ""
    view: str = ""
    view_default: object = None
    devices: tuple[str, ...] = ()
    required: bool = False
    extra: dict = field(default_factory=dict, compare=False, hash=False)

    @property
    def switch(self) -> bool:
        return self.type == "bool"

    def applies_to(self, kind: str) -> bool:
        return not self.devices or kind in self.devices

    def page_default(self):
        """The page setting's default: the option's, or 0 for an unset whole number."""
        if self.view_default is not None:
            return self.view_default
        return 0 if self.default is None and self.type == "int" else self.default

    def view_field(self) -> dict:
        """The page's view field for this option (engine/page/fields.py VIEW_FIELDS). A switch is
        a menu of on and off, with "auto" first where the engine decides (default None)."""
        if self.type == "bool":
            choices = (["auto"] if self.default is None else []) + ["on", "off"]
            default = "auto" if self.default is None else ("on" if self.default else "off")
            spec = {"default": default, "kind": "choice", "choices": choices, "doc": self.help}
            if self.devices:
                spec["devices"] = list(self.devices)
            return spec
        kind = {"int": "int", "float": "number", "choice": "choice", "text": "text"}[self.type]
        spec = {"default": self.page_default(), "kind": kind}
        if kind == "text":
            spec["default"] = spec["default"] or ""
            spec["max_length"] = self.extra["max_length"]
        elif kind == "choice":
            spec["choices"] = list(self.choices)
        else:
            spec["min"] = 0 if self.default is None and self.type == "int" else self.lo
            spec["max"] = self.hi
        spec["doc"] = self.help + (f" ({self.unit})" if self.unit and self.unit not in self.help else "")
        if self.default is None and self.type == "int":
            spec["doc"] += "; 0 = " + self.extra.get("unset", "the engine's default")
        if self.devices:
            spec["devices"] = list(self.devices)
        return spec


def _int(key, default, lo, hi, help, **kw) -> Option:
    return Option(key, "int", default, help, lo=lo, hi=hi, **kw)


#: The request options (besides ``hardware``, ``model`` and ``quant``, which are required), in the
#: order the CLI lists them.
OPTIONS: tuple[Option, ...] = (
    Option("engine", "name", None, "llama.cpp, mlx-lm, vllm ... (default: the device's usual one)", flag="--engine"),
    Option("backend", "name", None, "cuda, metal, rocm, vulkan, sycl, cpu (default: the device's)", flag="--backend"),
    _int("prompt_tokens", 512, 1, MAX_TOKENS, "prompt tokens to prefill", unit="tokens", flag="--prompt", view="prompt"),
    _int("depth", 0, 0, MAX_TOKENS, "tokens already in the KV cache (the chat so far)", unit="tokens", flag="--depth", view="depth"),
    _int("gen_tokens", 128, 1, MAX_TOKENS, "tokens to generate", unit="tokens", flag="--gen"),
    _int("batch", 1, 1, MAX_BATCH, "concurrent sequences", flag="--batch", view="batch"),
    _int("threads", None, 1, 1024, "CPU threads of a CPU device, llama.cpp -t; threads beyond the physical cores share "
         "them and slow a step down", flag="--threads", view="threads", devices=("cpu",),
         extra={"unset": "its physical cores, the performance cores of a hybrid CPU"}),
    _int("gpus", 1, 1, MAX_GPUS, "identical devices used together; on a CPU, the sockets of one server",
         flag="--gpus", view="gpus", devices=("gpu", "cpu")),
    Option("one_socket", "bool", False, "a multi-socket CPU server runs the threads on one socket (numactl -N 0, llama.cpp "
           "--numa isolate, or Windows 10 and older on more than 64 logical processors: one processor group)",
           flag="--one-socket", devices=("cpu",)),
    _int("memory_dimms", None, 1, 96, "memory modules (DIMMs) in a CPU server, all sockets together: a count that is not "
         "a whole number per memory channel leaves the channels unevenly filled, and the weights stream at fewer "
         "channels' worth", flag="--memory-dimms", devices=("cpu",),
         extra={"unset": "a balanced population (every channel filled alike)"}),
    Option("measured_bandwidth_gbs", "float", None, "memory bandwidth measured on this CPU machine (STREAM, Intel MLC): "
           "replaces the catalog's peak; a measured figure already holds the DIMM population and the chiplet links",
           lo=1.0, hi=20_000.0, unit="GB/s", flag="--measured-bandwidth", devices=("cpu",),
           extra={"unset": "the catalog's channels x data rate"}),
    Option("split", "choice", "layer", "how several devices share the model", choices=SPLITS, flag="--split", view="split"),
    Option("nvlink", "bool", None, "NVLink bridges are fitted between the cards (bridged models only)", flag="--nvlink",
           devices=("gpu",)),
    _int("slot_pcie_gen", None, 1, 6, "PCIe generation of the slots/risers the cards sit in (default: the card's)",
         flag="--slot-pcie-gen", devices=("gpu",)),
    Option("slot_pcie_lanes", "int", None, "PCIe lanes of the slots/risers (default: the card's)", lo=1, hi=16,
           choices=(1, 2, 4, 8, 16), flag="--slot-pcie-lanes", devices=("gpu",)),
    Option("gpu_layers", "float", None, "fraction of layers on the GPU, 0..1: llama.cpp -ngl round(fraction x layers), "
           "1 = everything (default: all that fit)", lo=0.0, hi=1.0,
           flag="--gpu-layers", devices=("gpu",)),
    Option("expert_offload", "bool", False, "routed experts of every layer in system RAM (llama.cpp --cpu-moe)",
           flag="--expert-offload", devices=("gpu",)),
    # Placement as a llama.cpp command line states it (engine/offload.py reads all three).
    _int("n_gpu_layers", None, 0, 100_000, "llama.cpp -ngl: layers on the GPU, the output layer first (builds before "
         "December 2025: last) and then the last blocks; more than the model has (99, 999) puts everything there "
         "(a count instead of gpu_layers)",
         flag="--n-gpu-layers", devices=("gpu",), extra={"unset": "all that fit", "aliases": ("-ngl",)}),
    _int("n_cpu_moe", 0, 0, 100_000, "llama.cpp --n-cpu-moe: the routed experts of the first N layers stay in system RAM",
         flag="--n-cpu-moe", devices=("gpu",), extra={"aliases": ("-ncmoe",)}),
    Option("tensor_overrides", "text", None, "llama.cpp -ot PATTERN=BUFFER[,...]: tensors whose GGUF name (blk.N.attn_q.weight, "
           "blk.N.ffn_up_exps.weight ...) matches go to CPU (system RAM) or a GPU buffer, e.g. exps=CPU",
           flag="--override-tensor", devices=("gpu",), extra={"aliases": ("-ot",), "max_length": MAX_NAME_LENGTH}),
    Option("kv_quant", "choice", "f16", "KV cache type", choices=KV_TYPES, flag="--kv-quant", view="kv"),
    Option("flash_attn", "bool", None, "flash attention on or off (default: the engine's); without it a GPU's decode "
           "attention streams a GQA model's KV cache once per query head", flag="--flash-attn", view="fa"),
    _int("prefix_cached", 0, 0, MAX_TOKENS, "prompt tokens already in the prompt cache", unit="tokens", flag="--prefix-cached"),
    Option("draft", "name", None, "draft model for speculative decoding", flag="--draft"),
    Option("mtp", "bool", False, "use the model's multi-token-prediction head", flag="--mtp"),
    _int("draft_tokens", 4, 1, 32, "tokens drafted per cycle", unit="tokens", flag="--draft-tokens", view="draft_n"),
    Option("acceptance", "float", None, "per-token acceptance of drafted tokens, 0..0.99 (default: by workload)", lo=0.0,
           hi=0.99, flag="--acceptance"),
    Option("workload", "choice", "chat", "what is generated (sets the draft acceptance)", choices=WORKLOADS,
           flag="--workload", view="workload"),
    Option("host", "name", None, "CPU platform whose RAM holds offloaded weights", flag="--host", devices=("gpu",)),
    Option("system_ram_gib", "float", None, "system RAM of that platform: offloaded weights and their KV cache live there "
           "(default: the host's)", lo=4.0, hi=MAX_SYSTEM_RAM_GIB, unit="GiB", flag="--system-ram", view="ram", devices=("gpu",)),
    _int("reasoning_tokens", 0, 0, MAX_TOKENS, "hidden reasoning (thinking) tokens before the answer", unit="tokens",
         flag="--reasoning", view="think", view_default=DEFAULT_THINK_TOKENS),
    Option("file_gb", "float", None, "the weight file's size when known: a custom quant mix reads what its file holds (a MoE "
           "file smaller than its label's recipe shrinks its routed experts, any other every tensor; default: the format's recipe)", lo=0.01, hi=100_000, unit="GB", flag="--file-gb",
           view="file"),
    _int("context_size", None, 1, MAX_TOKENS, "KV cache allocated per sequence (llama.cpp -c divided by its -np slots, "
         "Ollama num_ctx, LM Studio's context length): memory only, a step reads the tokens really cached",
         unit="tokens", flag="--ctx-size", view="ctx", extra={"unset": "what the request uses: chat so far + prompt + answer"}),
    _int("llama_cpp_build", None, 1000, 99999, "llama.cpp build number (bNNNN) of the run: builds older than a kernel "
         "lack it (AMD RDNA4's matrix-core flash attention arrived after b7653, RDNA3's at b9158, Metal's reworked prefill around b1200; ROCm "
         "builds before ~b8800 launch every decode kernel from the host, HIP graphs being off by default)", flag="--llama-cpp-build",
         view="build", extra={"unset": "a current release"}),
    Option("cold_start", "bool", False, "the prompt is the first large batch a fresh process runs (no warm-up of its size, "
           "as llama.cpp's ./main timed it): on CUDA it pays the one-time loading of that batch's kernels",
           flag="--cold-start", view="cold", devices=("gpu", "soc")),
    Option("rocm_gemm", "choice", "hipblaslt", "rocBLAS's GEMM backend for 16-bit weights on ROCm: hipblaslt (its default on "
           "RDNA4) or tensile (ROCBLAS_USE_HIPBLASLT=0), whose RDNA4 GEMMs run on the shader ALUs",
           choices=("hipblaslt", "tensile"), flag="--rocm-gemm", view="gemm", devices=("gpu", "soc")),
    # llama.cpp runs a prompt in micro-batches of min(-ub, -b) tokens (src/llama-context.cpp): fewer,
    # larger ones cut per-batch costs, give each MoE expert more tokens per read of its weights and
    # copy offloaded weights to the GPU fewer times, for a larger compute buffer.
    _int("ubatch", 512, 1, 65536, "prompt tokens per micro-batch, llama.cpp -ub (at most -b): larger ones speed up "
         "MoE prefill and prefill with weights in system RAM, for a larger compute buffer", unit="tokens",
         flag="--ubatch-size", view="ub", extra={"aliases": ("-ub",)}),
    _int("nbatch", 2048, 1, 1_000_000, "logical batch, llama.cpp -b: caps the micro-batch and is what a layer split "
         "pipelines over the cards", unit="tokens", flag="--batch-size", view="nb", extra={"aliases": ("-b",)}),
    Option("pipeline", "bool", None, "a layer split overlaps prompt micro-batches across the cards (llama.cpp pipeline "
           "parallelism; default: as llama.cpp decides: off with weights in system RAM or tensor overrides, and in effect "
           "off for MoE models whose expert matmuls wait for the host: ik_llama.cpp, 16-bit weights)",
           flag="--pipeline", view="pipe", devices=("gpu",)),
    Option("schedule", "bool", False, "return per-token times for the page's stream"),
)
OPTION = {option.key: option for option in OPTIONS}
REQUIRED = ("hardware", "model", "quant")

#: A custom device's numbers take the catalog's plausible ranges (engine/hardware.py SCHEMA): one
#: declaration of what a device can be, for catalog entries and custom hardware alike.
CATALOG_RANGE = {f.name: {"lo": f.lo, "hi": f.hi} for f in HARDWARE_SCHEMA if f.lo is not None}

#: A custom device (``"hardware": {...}``): units as in the hardware catalog (data/README.md).
HARDWARE_FIELDS: tuple[Option, ...] = (
    Option("name", "text", None, "name", view="hw_name", view_default="My hardware", extra={"max_length": 60}),
    Option("kind", "choice", "gpu", "kind: gpu (a card), soc (one memory for everything) or cpu", choices=DEVICE_KINDS,
           view="hw_kind"),
    Option("backend", "name", None, "backend: cuda, rocm, vulkan, metal, sycl or cpu (default: cuda for a gpu, metal for a "
           "soc, cpu for a cpu)"),
    Option("unified_memory", "bool", None, "one memory shared by CPU and GPU (Apple Silicon, Strix Halo, DGX Spark): the "
           "same as kind soc; without a kind, true means soc, and the cpu backend means cpu"),
    Option("vendor", "name", None, "vendor (default: by backend)"),
    Option("memory_gib", "float", None, "memory", **CATALOG_RANGE["memory_gib"], unit="GiB", view="hw_mem", view_default=24,
           required=True),
    Option("bandwidth_gbs", "float", None, "memory bandwidth", **CATALOG_RANGE["bandwidth_gbs"], unit="GB/s", view="hw_bw",
           view_default=1000, required=True),
    Option("fp16_tflops", "float", None, "FP16 tensor throughput", **CATALOG_RANGE["fp16_tflops"], unit="TFLOPS", view="hw_tf",
           view_default=80, required=True),
    Option("fp32_tflops", "float", None, "FP32 throughput", **CATALOG_RANGE["fp32_tflops"], unit="TFLOPS"),
    Option("gpu_clock_mhz", "float", None, "GPU boost clock", **CATALOG_RANGE["gpu_clock_mhz"], unit="MHz"),
    Option("pcie_gen", "int", None, "PCIe generation of the card", **CATALOG_RANGE["pcie_gen"]),
    # CPUs (data/README.md has their meaning): cores and threads, memory channels and their speed
    # (giving the bandwidth when bandwidth_gbs is left out), clocks, chiplets, instruction sets.
    Option("cpu_cores", "int", None, "CPU physical cores", **CATALOG_RANGE["cpu_cores"], view="hw_cores", devices=("cpu",),
           extra={"unset": "not stated"}),
    Option("cpu_threads", "int", None, "CPU hardware threads", **CATALOG_RANGE["cpu_threads"], view="hw_threads", devices=("cpu",),
           extra={"unset": "one per core"}),
    Option("cpu_p_cores", "int", None, "performance cores of a hybrid CPU", **CATALOG_RANGE["cpu_p_cores"], devices=("cpu",)),
    Option("memory_channels", "int", None, "64-bit memory channels", **CATALOG_RANGE["memory_channels"], view="hw_ch", devices=("cpu",),
           extra={"unset": "not stated"}),
    # Data rates are whole MT/s (DDR5-5600, LPDDR5X-8533).
    Option("memory_data_rate_mts", "int", None, "memory data rate (with memory_channels, instead of bandwidth_gbs)",
           **CATALOG_RANGE["memory_data_rate_mts"], unit="MT/s", view="hw_mts", devices=("cpu",), extra={"unset": "not stated"}),
    Option("cpu_base_clock_ghz", "float", None, "CPU base clock", **CATALOG_RANGE["cpu_base_clock_ghz"], unit="GHz", devices=("cpu",)),
    Option("cpu_boost_clock_ghz", "float", None, "CPU boost clock", **CATALOG_RANGE["cpu_boost_clock_ghz"], unit="GHz", devices=("cpu",)),
    Option("cpu_fp32_flops_per_cycle", "int", None, "FP32 FLOP per core per cycle", **CATALOG_RANGE["cpu_fp32_flops_per_cycle"], devices=("cpu",)),
    Option("cpu_ccds", "int", None, "CPU chiplets (CCDs)", **CATALOG_RANGE["cpu_ccds"], devices=("cpu",)),
    Option("bandwidth_measured", "bool", False, "bandwidth_gbs was measured (STREAM, Intel MLC), not read off a spec sheet"),
    Option("cpu_isa", "isa", None, "vector/matrix instructions: a level (avx2 ... amx, neon ... sve) or a list of extensions",
           devices=("cpu",)),
)
HARDWARE_FIELD = {option.key: option for option in HARDWARE_FIELDS}


def hardware_view_field(key: str) -> dict:
    """The page's view field for a custom-device field (hw_name, hw_kind, hw_mem, hw_bw, hw_tf, hw_cores, hw_threads,
    hw_ch, hw_mts)."""
    option = HARDWARE_FIELD[key]
    if option.type == "text":
        return {"default": option.view_default, "kind": "text", "max_length": option.extra["max_length"], "doc": f"custom hardware: {option.help}"}
    spec = option.view_field()
    return {**spec, "doc": f"custom hardware: {spec['doc']}"}


def cli_help(option: Option) -> str:
    """An option's --help text: its help, its choices, its default."""
    text = option.help
    if option.type == "choice" and len(option.choices) > 3:
        text += f": {', '.join(map(str, option.choices))}"
    if option.default not in (None, False):
        text += f" ({option.default})"
    elif "unset" in option.extra:
        text += f" (default: {option.extra['unset']})"
    return text


def _json_property(option: Option) -> dict:
    """One option as a JSON Schema property (null allowed where the option may be left unset)."""
    if option.type in ("int", "float"):
        schema = {"type": "integer" if option.type == "int" else "number", "minimum": option.lo, "maximum": option.hi}
        if option.choices:
            schema["enum"] = list(option.choices)
    elif option.type == "bool":
        schema = {"type": "boolean"}
    elif option.type == "choice":
        schema = {"type": "string", "enum": list(option.choices)}
    elif option.type == "isa":
        schema = {"anyOf": [{"type": "string", "minLength": 1}, {"type": "array", "minItems": 1, "items": {"type": "string"}}]}
    else:
        schema = {"type": "string", "minLength": 1, "maxLength": option.extra.get("max_length", MAX_NAME_LENGTH)}
    if option.default is None and not option.required:
        schema = {"anyOf": [schema, {"type": "null"}]}
    elif option.default is not None:
        schema["default"] = option.default
    return {**schema, "description": option.help + (f" ({option.unit})" if option.unit else "")}


def request_json_schema() -> dict:
    """The JSON Schema (draft-07) of an estimate request, from OPTIONS and HARDWARE_FIELDS.
    Cross-field rules (prefix_cached <= prompt_tokens; a draft model or MTP) are the parser's."""
    hardware = {
        "type": "object",
        "additionalProperties": False,
        "required": [o.key for o in HARDWARE_FIELDS if o.required],
        "properties": {o.key: _json_property(o) for o in HARDWARE_FIELDS},
    }
    config = {"type": "object", "required": ["config"], "properties": {"config": {"type": "object"}, "name": {"type": "string"}}}
    properties = {
        "hardware": {"description": "catalog name or alias, or a custom device", "anyOf": [{"type": "string", "minLength": 1}, hardware]},
        "model": {"description": "catalog name or alias, or a Hugging Face config.json", "anyOf": [{"type": "string", "minLength": 1}, config]},
        "quant": {"description": "weight format name (Q4_K_M, MLX-4bit, EXL3-4.25bpw ...)", "type": "string", "minLength": 1},
    }
    properties.update({option.key: _json_property(option) for option in OPTIONS})
    return {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "title": "tokfeel estimate request",
        "description": "engine.estimate(request). Generated by `python -m engine schemas` from engine/options.py.",
        "type": "object",
        "additionalProperties": False,
        "required": list(REQUIRED),
        "properties": properties,
    }

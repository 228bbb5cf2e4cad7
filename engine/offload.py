"""Where the weights sit: on the accelerator(s), or partly in system RAM.

llama.cpp places weights by three flags, read here as the run states them:

- ``-ngl N`` (``n_gpu_layers``) counts the output head as one more layer (index ``n_layer``) after
  the repeating blocks; above the block count (99, 999) everything is on the GPU. Current builds
  put the output layer there first, then the last N-1 blocks (llama-model.cpp ``load_tensors``:
  ``i_gpu_start = max(n_layer + 1 - n_gpu_layers, 0)``; PR 18148, "llama: offload output layer to
  GPU first", merged 2025-12-17, https://github.com/ggml-org/llama.cpp/pull/18148). Older builds
  took the last N blocks and the output only when N exceeded the block count
  (``i_gpu_start = max(n_layer - n_gpu_layers, 0)``). The page's fraction (``gpu_layers``) is a
  share of the blocks, the output with them only at 1.
- ``--n-cpu-moe N`` keeps the routed experts (``blk.i.ffn_(up|down|gate)_exps``) of the first N
  blocks in system RAM, ``--cpu-moe`` (our ``expert_offload``) those of every block
  (common/arg.cpp, ``llm_ffn_exps_block_regex``; llama-bench gained the flag in PR 15952).
- ``-ot PATTERN=BUFFER[,...]`` (``--override-tensor``) sends every tensor whose GGUF name
  matches the regular expression (``std::regex_search``, first matching pattern wins) to a
  buffer: ``CPU`` is system RAM, a device buffer (``CUDA0``, ``ROCm0``, ``Vulkan0``, ``SYCL0``,
  ``Metal``) the accelerator. Overrides win over ``-ngl``.

Per token the two parts run one after the other, so the slow part dominates (docs/physics.md
section 5): decode reads the host-resident bytes at system-RAM bandwidth on the host's cores.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .arch import Architecture, Tensor
from .errors import EngineInputError
from .weights import LOOKUP_TENSORS, WeightProfile

#: Buffer names of ``-ot`` that mean the accelerator (llama.cpp's backend device names, any index:
#: the physics does not tell one card of a split from another).
DEVICE_BUFFERS = re.compile(r"(?:CUDA|ROCm|Vulkan|SYCL|Metal|MTL|MUSA|CANN|OpenCL)\d*", re.IGNORECASE)
#: Regular-expression groups that ECMAScript (std::regex, which llama.cpp uses) and Python read
#: differently or not at all: lookbehind, named groups, inline flags. A pattern with one is refused
#: rather than guessed at; plain groups, (?: ), lookahead, classes, alternation and repeats agree.
UNPORTABLE = re.compile(r"\(\?(?![:=!])")


@dataclass(frozen=True)
class Placement:
    """Bytes of weights per location, and what decode reads where."""

    #: Fraction of blocks on the accelerator(s): their attention and KV cache run there.
    gpu_layer_fraction: float
    #: Routed experts held in system RAM while their block runs on the accelerator (expert offload).
    experts_on_host: bool
    #: Weight bytes stored on the accelerator(s) and in system RAM.
    gpu_bytes: float
    host_bytes: float
    #: Of the host bytes: those every token reads (attention, dense MLP, shared experts, head) ...
    host_dense_bytes: float = 0.0
    #: ... and routed experts (a token reads its top-k share of them).
    host_expert_bytes: float = 0.0

    @property
    def offloaded(self) -> bool:
        return self.host_bytes > 0


@dataclass(frozen=True)
class Override:
    """One ``-ot`` entry: a pattern over GGUF tensor names and where matching tensors go."""

    pattern: str
    on_host: bool


def place_layers(profile: WeightProfile, gpu_layer_fraction: float) -> Placement:
    """Blocks split by ``gpu_layer_fraction``; outside-block tensors go with the GPU only when
    every block does (llama.cpp offloads the output layer last)."""
    layers = len(profile.per_layer)
    on_gpu = round(gpu_layer_fraction * layers)
    return _place_blocks(profile, on_gpu, outside_on_gpu=on_gpu == layers)


def _place_blocks(profile: WeightProfile, on_gpu: int, outside_on_gpu: bool) -> Placement:
    layers = len(profile.per_layer)
    host_layers = range(layers - on_gpu)
    gpu_blocks = sum(profile.per_layer[layers - on_gpu :]) if on_gpu else 0.0
    host_blocks = sum(profile.per_layer[i] for i in host_layers)
    host_experts = sum(profile.per_layer_experts[i] for i in host_layers)
    outside = 0.0 if outside_on_gpu else profile.outside_layers
    return Placement(
        on_gpu / layers,
        False,
        gpu_blocks + profile.outside_layers - outside,
        host_blocks + outside,
        host_dense_bytes=host_blocks - host_experts + (0.0 if outside_on_gpu else profile.head),
        host_expert_bytes=host_experts,
    )


def place_experts_on_host(profile: WeightProfile) -> Placement:
    """Attention, shared weights and head on the GPU; routed experts in system RAM."""
    return Placement(1.0, True, profile.total - profile.experts, profile.experts, host_expert_bytes=profile.experts)


def gguf_name(tensor: Tensor) -> str:
    """A tensor's name in a GGUF file: ``blk.3.ffn_up_exps.weight``, ``output.weight``,
    ``blk.0.attn_q.bias`` (our names carry the ``.bias`` suffix; weights get ``.weight``)."""
    name = tensor.name if "." in tensor.name else tensor.name + ".weight"
    return f"blk.{tensor.layer}.{name}" if tensor.layer >= 0 else name


def parse_overrides(text: str) -> tuple[Override, ...]:
    """``-ot`` as llama.cpp reads it: ``pattern=buffer`` entries separated by commas. Refuses what
    this page cannot read the way llama.cpp does, with the reason."""
    entries = []
    for entry in text.split(","):
        entry = entry.strip()
        pattern, sep, buffer = entry.rpartition("=")
        if not sep or not pattern or not buffer:
            raise EngineInputError(
                f"tensor override {entry!r} is not PATTERN=BUFFER (e.g. exps=CPU, or blk\\.(0|1)\\.ffn_.*=CPU)", field="tensor_overrides"
            )
        buffer = buffer.strip()
        if buffer.upper() == "CPU":
            on_host = True
        elif DEVICE_BUFFERS.fullmatch(buffer):
            on_host = False
        else:
            raise EngineInputError(
                f"tensor override buffer {buffer!r} is not CPU or a GPU buffer (CUDA0, ROCm0, Vulkan0, SYCL0, Metal)", field="tensor_overrides"
            )
        if UNPORTABLE.search(pattern):
            raise EngineInputError(
                f"tensor override pattern {pattern!r} uses a (?...) group that llama.cpp's std::regex reads differently; "
                "use plain groups, alternation and classes", field="tensor_overrides",
            )
        try:
            re.compile(pattern)
        except re.error as exc:
            raise EngineInputError(f"tensor override pattern {pattern!r} is not a regular expression: {exc}", field="tensor_overrides") from None
        entries.append(Override(pattern, on_host))
    return tuple(entries)


#: First llama.cpp build taken to count the output layer first for -ngl (PR 18148). Its exact
#: release number is not in our sources: b7045 (released 2025-11-13, docker/model-runner PR 404)
#: predates the merge and b7571 (packaged 2025-12-29, AOSC-Dev/aosc-os-abbs PR 14262) follows it;
#: builds in between are given the current rule.
OUTPUT_FIRST_BUILD = 7046


def gpu_block_count(layers: int, n_gpu_layers: int | None, gpu_layers: float | None, build: int | None = None) -> tuple[int, bool]:
    """Blocks on the GPU and whether the output head is there too, for ``-ngl`` (a count, read
    as the stated llama.cpp build reads it; unset: a current release) or the page's fraction."""
    if n_gpu_layers is not None:
        if n_gpu_layers > layers:
            return layers, True
        if build is not None and build < OUTPUT_FIRST_BUILD:
            return n_gpu_layers, False
        return max(n_gpu_layers - 1, 0), n_gpu_layers >= 1
    on_gpu = layers if gpu_layers is None else round(gpu_layers * layers)
    return on_gpu, on_gpu == layers


def place_stated(
    arch: Architecture, profile: WeightProfile, sizes: tuple[float, ...], on_gpu: int, head_on_gpu: bool,
    cpu_moe_layers: int = 0, overrides: tuple[Override, ...] = (),
) -> Placement:
    """The placement a llama.cpp command line states: blocks by -ngl, then the routed experts of
    the first ``cpu_moe_layers`` blocks in system RAM, then ``-ot`` overrides (which win).
    ``sizes``: bytes of each of ``arch.tensors`` (scaled to the file when its size is known).
    The token embedding follows the output head (the engine's convention for a full offload)."""
    layers = arch.layers
    scale = profile.total / max(sum(s for t, s in zip(arch.tensors, sizes) if not t.mtp), 1.0)
    matched = [False] * len(overrides)
    compiled = [re.compile(o.pattern) for o in overrides]
    gpu = host = host_dense = host_experts = 0.0
    experts_apart = False
    has_output = any(t.name == "output" for t in arch.tensors)
    for tensor, size in zip(arch.tensors, sizes):
        if tensor.mtp:
            continue
        size *= scale
        on_host = tensor.layer < layers - on_gpu if tensor.layer >= 0 else not head_on_gpu
        if tensor.is_routed_expert and 0 <= tensor.layer < cpu_moe_layers:
            on_host = True
        name = gguf_name(tensor)
        for i, pattern in enumerate(compiled):
            if pattern.search(name):
                matched[i] = True
                on_host = overrides[i].on_host
                break
        if not on_host:
            gpu += size
            continue
        host += size
        if tensor.is_routed_expert:
            host_experts += size
            experts_apart |= tensor.layer >= layers - on_gpu
        elif tensor.name not in LOOKUP_TENSORS or (tensor.name == "token_embd" and not has_output):
            host_dense += size
    unmatched = [o.pattern for o, hit in zip(overrides, matched) if not hit]
    if unmatched:
        raise EngineInputError(
            f"tensor override pattern {unmatched[0]!r} matches no tensor of this model (names look like "
            f"blk.0.attn_q.weight, blk.0.ffn_up_exps.weight, output.weight)", field="tensor_overrides",
        )
    return Placement(on_gpu / layers, experts_apart, gpu, host, host_dense_bytes=host_dense, host_expert_bytes=host_experts)

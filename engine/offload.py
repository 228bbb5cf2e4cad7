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

- The input layer (the embedding tables: ``token_embd``, Gemma 3n's ``per_layer_token_embd``)
  stays in system RAM whatever ``-ngl`` says: llama-model.cpp ``load_tensors`` assigns
  ``pimpl->dev_input = { cpu_dev, &pimpl->cpu_buft_list }`` ("there is very little benefit to
  offloading the input layer, so always keep it on the CPU"; ggml-org/llama.cpp
  src/llama-model.cpp). A token reads one row of it (a GET_ROWS, which no backend takes over:
  ``get_op_batch_size`` returns 0 for GET_ROWS in ggml-cuda.cu). A model with tied embeddings has
  no ``output.weight``: its output layer is created from ``token_embd`` with ``TENSOR_DUPLICATED``,
  and the loader makes a second copy in the output layer's buffer when that is another buffer
  type (llama-model-loader.cpp ``create_tensor``), so with the output on the GPU the matrix is held
  twice, once in system RAM and once on the card. Engines of other lineages (vLLM, ExLlama)
  keep the embedding with the rest of the model.

Per token the two parts run one after the other, so the slow part dominates (docs/physics.md
section 5): decode reads the host-resident bytes at system-RAM bandwidth on the host's cores,
until a step holds ``OP_OFFLOAD_MIN_BATCH`` tokens; from there every matmul of weights in system
RAM is copied over PCIe and runs on the GPU (op offload, :func:`op_offload`), in decode (batched
sequences, speculative verification) as in prefill.
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
#: Tokens from which llama.cpp runs a matmul of weights held in system RAM on the GPU, copying the
#: weights over PCIe: ggml-org/llama.cpp ggml/src/ggml-cuda/ggml-cuda.cu
#: ``ggml_backend_cuda_device_offload_op`` (``get_op_batch_size(op) >= min_batch_size``, 32 by
#: default, ``GGML_OP_OFFLOAD_MIN_BATCH`` overrides it) against the op's token count (``ne[1]`` of
#: MUL_MAT, ``ne[2]`` of MUL_MAT_ID, 0 for GET_ROWS); the scheduler (ggml/src/ggml-backend.cpp
#: ``ggml_backend_sched_backend_id_from_cur``, "1.off") moves such ops to the GPU unless
#: ``--no-op-offload``. The rule looks at the tokens of one micro-batch, not the phase: a decode
#: step of 32 or more tokens (32 concurrent sequences, or speculative verification passes that add
#: up to it) pays the copy as prefill does. ik_llama.cpp PR 520 describes the same mainline rule
#: ("matrix multiplications are always offloaded when the batch size is >= 32",
#: https://github.com/ikawrakow/ik_llama.cpp/pull/520). Vulkan and SYCL use the same threshold.
OP_OFFLOAD_MIN_BATCH = 32
#: PCIe transfers of weights for offloaded matmuls reach about 80% of the link's rate.
PCIE_EFFICIENCY = 0.8
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
    #: Of the host bytes: llama.cpp's input layer (embedding tables), read one row per token and
    #: never copied to the GPU; alone it does not make a set-up "offloaded".
    host_lookup_bytes: float = 0.0

    @property
    def offloaded(self) -> bool:
        """Weights that compute from system RAM (more than the input layer's lookup tables)."""
        return self.host_bytes - self.host_lookup_bytes > 1.0

    def copy_bytes(self, expert_fraction: float) -> float:
        """Bytes op offload copies to the GPU for one micro-batch: every host-resident weight its
        matmuls use, the routed experts only as far as the micro-batch touches them (ggml-backend.cpp
        ``ggml_backend_sched_compute_splits``: "when offloading MoE weights, we can reduce the amount
        of data copied by copying only the experts that are used"); never the lookup tables."""
        return self.host_bytes - self.host_lookup_bytes - self.host_expert_bytes * (1.0 - expert_fraction)


def op_offload(placement: Placement, tokens: int) -> bool:
    """Whether a micro-batch of ``tokens`` runs its host-resident matmuls on the GPU (after a PCIe
    copy) rather than on the host's cores."""
    return placement.offloaded and tokens >= OP_OFFLOAD_MIN_BATCH


@dataclass(frozen=True)
class Override:
    """One ``-ot`` entry: a pattern over GGUF tensor names and where matching tensors go."""

    pattern: str
    on_host: bool


def place_blocks(profile: WeightProfile, on_gpu: int, outside_on_gpu: bool, input_on_host: bool = False) -> Placement:
    """The last ``on_gpu`` blocks on the GPU, the output layer there when ``outside_on_gpu``;
    with ``input_on_host`` the embedding tables in system RAM (a tied head then also on the GPU
    as its own copy), else with the output layer."""
    layers = len(profile.per_layer)
    host_layers = range(layers - on_gpu)
    gpu_blocks = sum(profile.per_layer[layers - on_gpu :]) if on_gpu else 0.0
    host_blocks = sum(profile.per_layer[i] for i in host_layers)
    host_experts = sum(profile.per_layer_experts[i] for i in host_layers)
    lookup = profile.lookup_tables if input_on_host else 0.0
    # The output layer: the head and final norm (a tied head is the embedding matrix: a second
    # copy when the output sits on the GPU, the same tensor when it stays in system RAM).
    output = profile.outside_layers - lookup + (profile.head if input_on_host and profile.tied and outside_on_gpu else 0.0)
    # Tables in system RAM that are only looked up (a tied table there is also the head, read in full).
    tables = profile.lookup_tables if input_on_host or not outside_on_gpu else 0.0
    looked_up = tables - (profile.head if profile.tied and not outside_on_gpu else 0.0)
    return Placement(
        on_gpu / layers,
        False,
        gpu_blocks + (output if outside_on_gpu else 0.0),
        host_blocks + lookup + (0.0 if outside_on_gpu else output),
        host_dense_bytes=host_blocks - host_experts + (0.0 if outside_on_gpu else profile.head),
        host_expert_bytes=host_experts,
        host_lookup_bytes=max(looked_up, 0.0),
    )


def place_experts_on_host(profile: WeightProfile, input_on_host: bool = False) -> Placement:
    """Attention, shared weights and head on the GPU; routed experts in system RAM."""
    full = place_blocks(profile, len(profile.per_layer), True, input_on_host)
    return Placement(
        1.0, True, full.gpu_bytes - profile.experts, full.host_bytes + profile.experts,
        host_expert_bytes=profile.experts, host_lookup_bytes=full.host_lookup_bytes,
    )


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


def ngl_for_fraction(layers: int, fraction: float) -> int:
    """The ``-ngl`` the page's share of layers stands for: ``round(fraction x blocks)``; a share
    that rounds to every block is everything, the output layer included (``blocks + 1``).
    The one conversion between the two options (commands, the explain panel and the placement
    all read it)."""
    n = round(fraction * layers)
    return layers + 1 if n >= layers else n


def gpu_block_count(layers: int, n_gpu_layers: int | None, gpu_layers: float | None, build: int | None = None) -> tuple[int, bool]:
    """Blocks on the GPU and whether the output head is there too, for ``-ngl`` (a count, read
    as the stated llama.cpp build reads it; unset: a current release) or the page's fraction
    (the ``-ngl`` of :func:`ngl_for_fraction`); neither: everything."""
    if n_gpu_layers is None:
        n_gpu_layers = layers + 1 if gpu_layers is None else ngl_for_fraction(layers, gpu_layers)
    if n_gpu_layers > layers:
        return layers, True
    if build is not None and build < OUTPUT_FIRST_BUILD:
        return n_gpu_layers, False
    return max(n_gpu_layers - 1, 0), n_gpu_layers >= 1


def place_stated(
    arch: Architecture, profile: WeightProfile, sizes: tuple[float, ...], on_gpu: int, head_on_gpu: bool,
    cpu_moe_layers: int = 0, overrides: tuple[Override, ...] = (), input_on_host: bool = False,
) -> Placement:
    """The placement a llama.cpp command line states: blocks by -ngl, then the routed experts of
    the first ``cpu_moe_layers`` blocks in system RAM, then ``-ot`` overrides (which win).
    ``sizes``: bytes of each of ``arch.tensors`` (scaled to the file when its size is known).
    The embedding tables stay in system RAM with ``input_on_host`` (llama.cpp's input layer), else
    follow the output head."""
    layers = arch.layers
    scale = profile.total / max(sum(s for t, s in zip(arch.tensors, sizes) if not t.mtp), 1.0)
    matched = [False] * len(overrides)
    compiled = [re.compile(o.pattern) for o in overrides]
    gpu = host = host_dense = host_experts = host_lookup = 0.0
    experts_apart = False
    has_output = any(t.name == "output" for t in arch.tensors)
    for tensor, size in zip(arch.tensors, sizes):
        if tensor.mtp:
            continue
        size *= scale
        lookup = tensor.name in LOOKUP_TENSORS
        on_host = tensor.layer < layers - on_gpu if tensor.layer >= 0 else not head_on_gpu
        if lookup and input_on_host:
            on_host = True
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
        if tensor.name == "token_embd" and not has_output and head_on_gpu:
            gpu += size  # a tied head's own copy in the output layer's buffer (TENSOR_DUPLICATED)
        host += size
        if tensor.is_routed_expert:
            host_experts += size
            experts_apart |= tensor.layer >= layers - on_gpu
        elif not lookup or (tensor.name == "token_embd" and not has_output and not head_on_gpu):
            host_dense += size
        else:
            host_lookup += size
    unmatched = [o.pattern for o, hit in zip(overrides, matched) if not hit]
    if unmatched:
        raise EngineInputError(
            f"tensor override pattern {unmatched[0]!r} matches no tensor of this model (names look like "
            f"blk.0.attn_q.weight, blk.0.ffn_up_exps.weight, output.weight)", field="tensor_overrides",
        )
    return Placement(
        on_gpu / layers, experts_apart, gpu, host, host_dense_bytes=host_dense, host_expert_bytes=host_experts, host_lookup_bytes=host_lookup,
    )

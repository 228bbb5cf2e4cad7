"""Memory: what a set-up needs, what a device lets it use, and the verdict.

    needed = weights + KV cache (full context, every sequence) + compute buffers + runtime

Capacity decides *what fits*; bandwidth (decode.py) decides how fast it runs once it fits.
"""

from __future__ import annotations

from dataclasses import dataclass

from .arch import Architecture
from .hardware import Device
from .kvcache import kv_elements, state_bytes

#: Bytes per f32 activation element in llama.cpp's compute graphs.
F32 = 4.0

#: Runtime memory outside the model, by backend: the CUDA/ROCm context with cuBLAS/hipBLAS
#: workspaces (llama.cpp on an RTX 4090 reports ~0.4-0.5 GB in use before loading a model);
#: Metal and CPU keep only small allocations.
RUNTIME_BYTES = {"cuda": 0.5e9, "rocm": 0.5e9, "sycl": 0.5e9, "vulkan": 0.3e9, "vulkan-amdvlk": 0.3e9, "metal": 0.1e9, "cpu": 0.1e9}

#: What the OS keeps off-limits on systems whose GPU shares system memory, and on CPU-only
#: systems: a fixed 2.5 GB plus 10% of RAM, as Jan derives it for Apple Silicon (janhq/jan PR
#: #7842) and which serves as well for Linux boxes with a desktop running.
OS_RESERVE_FIXED_BYTES = 2.5e9
OS_RESERVE_SHARE = 0.10
#: ... but never more than a small board's headless OS keeps: a Raspberry Pi Zero 2 W (512 MiB)
#: on Raspberry Pi OS Lite (Bookworm, 64-bit) has 291.6 MiB available after boot, firmware's
#: memory split, kernel and services taking the other 43% (https://docs.printercow.com/guide/32bit-vs-64bit.html,
#: `top` after boot). The two rules cross at ~7.6 GB, so machines of 8 GB and more keep the first.
OS_RESERVE_SMALL_SHARE = 1 - 291.6 / 512


def os_reserve_bytes(total_bytes: float) -> float:
    """Memory the OS keeps on a machine with ``total_bytes`` of RAM (CPU-only or shared memory)."""
    return min(total_bytes * OS_RESERVE_SHARE + OS_RESERVE_FIXED_BYTES, total_bytes * OS_RESERVE_SMALL_SHARE)

#: macOS lets the GPU wire at most ~2/3 of unified memory on machines up to 36 GB and ~3/4 above
#: (Metal's recommendedMaxWorkingSetSize; docs/physics.md section 4; raised with
#: ``sudo sysctl iogpu.wired_limit_mb``).
APPLE_GPU_SHARE_SMALL = 2 / 3
APPLE_GPU_SHARE_LARGE = 3 / 4
APPLE_LARGE_FROM_GIB = 36

#: Display and driver allocations on a discrete card before anything is loaded.
DISCRETE_RESERVE_BYTES = 0.35e9

def usable_bytes(device: Device, backend: str) -> float:
    """Memory the inference backend can use on one device, bytes."""
    total = device.memory_bytes
    if device.kind == "gpu":
        return total - DISCRETE_RESERVE_BYTES
    if device.vendor == "apple" and backend != "cpu":
        share = APPLE_GPU_SHARE_LARGE if device.memory_gib > APPLE_LARGE_FROM_GIB else APPLE_GPU_SHARE_SMALL
        return total * share
    return total - os_reserve_bytes(total)


def host_usable_bytes(host: Device) -> float:
    """System RAM a discrete-GPU machine can give offloaded weights."""
    return max(host.memory_bytes - os_reserve_bytes(host.memory_bytes), 0.0)


def kv_cache_bytes(arch: Architecture, context: int, sequences: int, kv_bytes_per_element: float) -> float:
    """KV cache (and recurrent state) for ``sequences`` sequences of ``context`` tokens."""
    return sequences * (kv_elements(arch, context) * kv_bytes_per_element + state_bytes(arch))


def compute_buffer_bytes(arch: Architecture, context: int, flash_attn: bool, ubatch: int) -> float:
    """llama.cpp's compute buffer for a micro-batch of ``ubatch`` tokens (it is sized for the
    largest, System.ubatch): logits, MLP activations and, without flash attention, the f32 score
    matrix of every head against the whole context."""
    widest = max((t.rows for t in arch.tensors if t.name in ("ffn_up", "ffn_up_exps", "ffn_up_shexp")), default=0)
    logits = ubatch * arch.vocab_size * F32
    activations = ubatch * (3 * widest + 6 * arch.hidden_size) * F32
    scores = 0.0
    if not flash_attn:
        # One graph's score matrix (the largest layer's) is live at a time.
        heads = max((layer.query_heads for layer in arch.attention), default=0)
        scores = ubatch * heads * context * F32
    return logits + activations + scores


@dataclass(frozen=True)
class MemoryNeed:
    weights: float
    kv: float
    compute: float
    runtime: float

    @property
    def overhead(self) -> float:
        return self.compute + self.runtime

    @property
    def total(self) -> float:
        return self.weights + self.kv + self.overhead

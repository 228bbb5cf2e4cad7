"""llama.cpp's decode on Intel GPUs: the matrix-vector paths that stream weights slower (decode mechanisms).

Vulkan: the integer-dot matrix-vector path.

For a one-token step ggml-vulkan multiplies a quantised weight matrix either with its float
mat-vec shader (the weights unpacked against F32 activations) or with the integer-dot one,
"MMVQ" (the activations first quantised to q8_1, then DP4A-style dot products;
``ggml_vk_should_use_mmvq`` in ggml/src/ggml-vulkan/ggml-vulkan.cpp, PR 14903 for the legacy
quants, PR 16900 for the k-quants and ``mul_mat_vec_id``). On Intel's Linux driver (Mesa ANV)
the selector sends every quantised type to MMVQ once the row length k reaches 2048, except
Q4_0 and Q5_1 ("From tests on A770 Linux"); Intel's Windows driver takes the float shader
(PR 20672, "disable mmvq on Intel Windows driver", fixing issue 17628). 16-bit weights always
take the float shader. On AMD and NVIDIA the same selector picks MMVQ where it is the faster
path, so nothing changes there.

On Intel the integer-dot path streams the weights at a fraction of the float path's rate.
Measured pairs: an Arc A770 at build 8191 decodes Llama 3 8B Q4_K_M at 32 tok/s on Linux and 52
on Windows (0.62), gpt-oss-20b MXFP4 at 36 and 62 (0.58) (llama.cpp PR 19988, comment of
2026-03-03); issue 24002 (Arc A770, Vulkan) has Q8 formats 2.3-3.7x slower than Q6_K; on an Arc
Pro B70 Vulkan decode is "almost twice as fast under Windows than on Linux" (issue 22413,
Qwen3.6-35B-A3B UD-Q4_K_XL). The prior ``MMVQ_STREAM_SHARE`` = 0.6 is the A770's K-quant and
MXFP4 ratio; Q4_0 (float shader on both systems) lost less (44 against 56 tok/s), a general
Linux-driver gap that the backend's bandwidth efficiency carries. Not fitted: only one Intel
device has Vulkan rows. What the engine does not know: the operating system (it assumes Linux,
where the calibration rows and the kyuz0 toolboxes run) and the build (before PR 16900, late
2025, k-quants took the float shader everywhere).

SYCL: BF16 weights before PR 21580. Until that PR (https://github.com/ggml-org/llama.cpp/pull/21580,
merged 2026-05-22, ggml sync 807fd144) ggml-sycl had no mat-vec kernel for BF16: a one-token step
"falls through to the generic ``ggml_sycl_op_mul_mat_sycl`` GEMM path, which dequantizes to FP32
and runs a full matrix multiply", "~14% memory bandwidth utilization on Intel Arc GPUs"; the PR adds
BF16 to the DMMV kernels, "~4x tg speedup" measured on an Arc Pro B70. The FP32 branch writes the
weights out as FP32 and reads them back (2 + 4 + 4 bytes per weight instead of 2), so the prior is the
PR's 4x, ``SYCL_BF16_GEMM_SLOWDOWN``; not fitted (one SYCL device). Applied to llama.cpp builds
older than ``SYCL_BF16_DMMV_BUILD`` (a run without a stated build is taken as today's); F16 had its
DMMV kernel all along.
"""

from __future__ import annotations

from functools import lru_cache

from .quant import storage, tensor_bytes, tensor_types
from .weights import LOOKUP_TENSORS

#: Types Intel's Linux driver multiplies with the float mat-vec shader at any k
#: (``ggml_vk_should_use_mmvq``, VK_VENDOR_ID_INTEL: "From tests on A770 Linux").
INTEL_FLOAT_MATVEC = frozenset({"q4_0", "q5_1"})
#: Below this row length (k) the quantisation of the activations is not worth it: float shader.
MMVQ_MIN_K = 2048
#: The integer-dot path's weight-streaming rate over the float path's on Intel (module docstring).
MMVQ_STREAM_SHARE = 0.6

#: First llama.cpp build with PR 21580's BF16 DMMV kernel on SYCL: merged 2026-05-22, after b9247
#: (released by 2026-05-20, https://github.com/containers/ramalama/pull/2761) and before b9512
#: (2026-06-04, ramalama PR 2783); approximate, the calibration's SYCL rows are b9039 (2026-05-05).
SYCL_BF16_DMMV_BUILD = 9280
#: A BF16 weight's decode time on the FP32 GEMM fallback over the DMMV kernel's (PR 21580: "~4x").
SYCL_BF16_GEMM_SLOWDOWN = 4.0


def applies(device, backend: str) -> bool:
    """Intel GPUs under llama.cpp's Vulkan backend."""
    return backend == "vulkan" and device.vendor == "intel" and device.kind != "cpu"


def _multiplied_byte_share(arch, quant, counts) -> float:
    """Share of the weight bytes one token multiplies (routed experts at their top-k share, no
    lookup tables, MTP heads or vectors) whose tensor and type ``counts(tensor, type_name)``."""
    share = arch.experts_per_token / arch.n_experts if arch.is_moe else 1.0
    total = counted = 0.0
    for tensor, type_name, size in zip(arch.tensors, tensor_types(arch, quant), tensor_bytes(arch, quant)):
        if tensor.mtp or tensor.name in LOOKUP_TENSORS or tensor.rows == 1:
            continue
        read = size * (share if tensor.is_routed_expert else 1.0)
        total += read
        if counts(tensor, type_name):
            counted += read
    return counted / total if total else 0.0


@lru_cache(maxsize=512)
def mmvq_byte_share(arch, quant) -> float:
    """Share of the weight bytes one token multiplies that Intel's Vulkan driver path streams
    through the integer-dot mat-vec (routed experts at their top-k share)."""
    return _multiplied_byte_share(
        arch, quant,
        lambda tensor, type_name: storage(type_name).quantized and type_name.lower() not in INTEL_FLOAT_MATVEC and tensor.cols >= MMVQ_MIN_K,
    )


@lru_cache(maxsize=512)
def bf16_byte_share(arch, quant) -> float:
    """Share of the weight bytes one token multiplies that are BF16 matrices (routed experts at
    their top-k share), in a file whose main type is BF16. Mixed files count none: the Unsloth
    recipe's "higher precision" tensors are modelled as BF16 without a published tensor table
    (data/quants.toml), and the B70's SYCL rows of such files decode at the bandwidth rate
    (Qwen3.5-9B UD-Q8_K_XL 38.8 tok/s, ~83% of 608 GB/s), so they do not take the fallback."""
    if quant.weight_type.lower() != "bf16":
        return 0.0
    return _multiplied_byte_share(arch, quant, lambda _tensor, type_name: type_name.lower() == "bf16")


def sycl_bf16_fallback(system) -> bool:
    """A SYCL run on a llama.cpp build without PR 21580's BF16 mat-vec kernel."""
    build = system.options.llama_cpp_build
    return system.backend == "sycl" and system.device.kind != "cpu" and build is not None and build < SYCL_BF16_DMMV_BUILD


def stream_kernel(system) -> str | None:
    """Which slow mat-vec path stream_factor counts: "sycl-bf16-gemm", "vulkan-mmvq" or None."""
    if sycl_bf16_fallback(system):
        return "sycl-bf16-gemm" if bf16_byte_share(system.arch, system.quant) else None
    return "vulkan-mmvq" if applies(system.device, system.backend) else None


def stream_factor(system) -> float:
    """Time of the device's weight stream relative to the float path's (1 = no slowdown)."""
    if sycl_bf16_fallback(system):
        return 1.0 + bf16_byte_share(system.arch, system.quant) * (SYCL_BF16_GEMM_SLOWDOWN - 1.0)
    if not applies(system.device, system.backend):
        return 1.0
    return 1.0 + mmvq_byte_share(system.arch, system.quant) * (1.0 / MMVQ_STREAM_SHARE - 1.0)

"""The 16-bit tensors of a quantised GGUF file, which llama.cpp's ROCm build multiplies through
rocBLAS rather than its own quantised kernels.

llama.cpp's CUDA/HIP backend runs its MMQ kernels only for quantised tensor types
(``ggml_cuda_mul_mat``: ``use_mul_mat_q = ggml_is_quantized(src0->type) && ...``,
https://github.com/ggml-org/llama.cpp/blob/master/ggml/src/ggml-cuda/ggml-cuda.cu); an F16/BF16
tensor in the same file goes to the BLAS path (hipBLAS -> rocBLAS on ROCm) at a prompt's batch
sizes. Unsloth's dynamic quants keep attention, SSM and shared-expert tensors, and in dense
models more layers than their recipe documents, at BF16 (data/quants.toml ``upgrade_type``), so
the BLAS library behind them (``rocm_gemm``, prefill.gemm_slowdown) moves their prefill too. The
R9700 rows of kyuz0's toolboxes (b7423) show it: with ROCBLAS_USE_HIPBLASLT=0 the UD-Q8_K_XL
files prefill 1.45x (gemma-3-12b), 1.56x (Nemotron-3-Nano-30B-A3B) and 1.13x (Qwen3-Coder-30B-A3B)
slower at an empty cache, where plain Q4_0/Q3_K_S/Q4_K_M/MXFP4 files of the same toolboxes run
within 2% (docs/calibration.md).

How many weights a file keeps at 16 bits: the recipe's own 16-bit tensors, plus, where the file's
size is stated (llama-bench prints it) and exceeds the recipe's, the excess read as further
tensors raised from the base type to the recipe's 16-bit upgrade type (gemma-3-12b UD-Q8_K_XL:
13.40 GiB where the recipe gives 12.5, ~1 billion more BF16 weights than its embedding).
"""

from __future__ import annotations

from .quant import storage, tensor_types
from .catalog import GB
from .weights import prompt_matmul, weight_profile

#: ggml's 16-bit float types, which ggml-cuda multiplies through the BLAS library.
SIXTEEN_BIT = ("f16", "bf16")


def blas_share(system) -> float:
    """Share of the non-expert weights a prompt's tokens multiply that a quantised GGUF file on
    ROCm keeps in a 16-bit type (0 elsewhere): the part of its dense matmuls rocBLAS runs."""
    quant = system.quant
    if system.backend != "rocm" or quant.kind != "gguf":
        return 0.0
    arch = system.arch
    total = sixteen = 0.0
    for tensor, type_name in zip(arch.tensors, tensor_types(arch, quant)):
        if not prompt_matmul(tensor):
            continue
        total += tensor.params
        sixteen += tensor.params if type_name in SIXTEEN_BIT else 0.0
    if not total:
        return 0.0
    file_gb = system.options.file_gb
    upgrade = quant.upgrade_type
    if file_gb and upgrade in SIXTEEN_BIT and quant.weight_type:
        excess_bytes = file_gb * GB - weight_profile(arch, quant).total
        extra_bytes_per_weight = (storage(upgrade).bits_per_weight - storage(quant.weight_type).bits_per_weight) / 8
        if excess_bytes > 0 and extra_bytes_per_weight > 0:
            sixteen = min(total, sixteen + excess_bytes / extra_bytes_per_weight)
    return sixteen / total

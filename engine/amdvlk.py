"""AMD's AMDVLK Vulkan driver under llama.cpp's AMD cooperative-matrix tile tuning (issue 12).

llama.cpp PR 18749 (https://github.com/ggml-org/llama.cpp/pull/18749, merged 2026-01-11) gave AMD
GPUs with cooperative matrices a large matmul tile of 256 threads (``l_warptile`` {256, 128, 128,
...}), tuned on RADV (+36-76% pp512 on a Radeon 8060S). PR 18763, merged the same day
(https://github.com/ggml-org/llama.cpp/pull/18763), turned that configuration off on AMD's
proprietary driver after a report in PR 18749's thread; the gate tests the driver ID
``eAmdProprietary``, and AMDVLK reports ``AMD open-source driver`` (its logs below), though it
compiles with the same LLPC compiler ("driverInfo = 2025.Q2.1 (LLPC)",
https://github.com/GPUOpen-Drivers/AMDVLK/issues/420). The routed experts' matmuls
(``mul_mat_id``) never got the large tile ("it was regressing on MUL_MAT_ID in my tests",
https://github.com/ggml-org/llama.cpp/issues/23106), so only the dense matmuls change.

Prior: the R9700's AMDVLK pp512 of Devstral-2 123B Q3_K_S (dense) fell from 133.8 tok/s at b7423
to 43.1 at b8990 on the same toolbox, while RADV's rose 104.9 -> 194.6
(github.com/kyuz0/amd-r9700-ai-toolboxes ``__vulkan_{radv,amdvlk}__fa1__dual.log``,
docs/calibration.md): 0.32. On the Strix Halo at b9187-9193 AMDVLK runs dense models at 0.23-0.29x
RADV's pp512 and MoE models at 0.58-0.92x (kyuz0/amd-strix-halo-toolboxes d1a34be); at b6486 the
two drivers were within 0.98-1.21x.
"""

from __future__ import annotations

from .roofline import shader_fp32_flops

#: First llama.cpp build with PR 18749's AMD tiles: approximate (its merge on 2026-01-11 falls
#: between b7540 of 2025-12-26 and b7789 of 2026-01-21, the openSUSE package's changelog,
#: https://build.opensuse.org/projects/openSUSE/packages/llamacpp/files/llamacpp.changes; PR 18481
#: was benchmarked against b7653 on 2026-01-12). The calibration's AMDVLK rows are b7423 and
#: b9187-9193, so any boundary between them scores the same.
AMD_COOPMAT_TILE_BUILD = 7700
AMDVLK_DENSE_SHARE = 43.1 / 133.8


def amd_dual_issue(device) -> bool:
    """An AMD GPU of RDNA 3 or later: its catalog FP32 figure counts dual issue, at least 1.5x the
    single-issue shader rate (roofline.shader_fp32_flops); the GPUs llama.cpp runs WMMA and
    cooperative matrices on."""
    fp32 = device.fp32_tflops
    return bool(fp32) and fp32 * 1e12 >= 1.5 * shader_fp32_flops(device)


def dense_matmul_share(system) -> float:
    """The share of its earlier dense-matmul prefill rate AMDVLK keeps on a llama.cpp build with
    PR 18749's tiles (unset: a current release), on GPUs llama.cpp runs cooperative matrices on:
    RDNA 3 and later, whose FP32 figure counts dual issue (twice the single-issue shader rate,
    amd_dual_issue). 1 for every other backend, build and GPU."""
    build = system.options.llama_cpp_build
    if system.backend != "vulkan-amdvlk" or (build is not None and build < AMD_COOPMAT_TILE_BUILD):
        return 1.0
    if not amd_dual_issue(system.device):
        return 1.0
    return AMDVLK_DENSE_SHARE

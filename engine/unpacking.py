"""How a backend's decode kernels unpack quantised weights: hidden, added, or overlapped.

A quantised matrix-vector product streams packed weights and turns them into numbers before the
multiply-adds (``dequant_ops`` per weight, ``codebook_ops`` more for IQ1-IQ3 types, on the vector
units). Three cases, by backend (engine/decode.py ``step_time_from`` uses them):

- Hidden: CUDA cards with the dp4a int8 dot product multiply the packed weights against
  int8-quantised activations (llama.cpp's MMVQ kernels), so unpacking costs no separate pass
  (:func:`unpacking_hidden`).
- Overlapped: on Apple GPUs (Metal) the unpacking and the multiply-adds are one ALU stream that
  runs while the weights stream in, so a step takes the longer of the two, not their sum
  (:func:`unpacking_overlaps`). The calibration rows show it where the sum cannot: on the Apple
  harness's M3 Max (llama.cpp b8920, hiesch_apple_silicon_bench) the dense 27-32B models decode at
  the same rate from files 1.6x apart, Qwen3-32B UD-Q2_K_XL 17.6-17.9 tok/s against Q4_K_M
  17.4-17.5 (12.1 against 19.3 GB read per token), gemma-4-31B UD-Q2_K_XL 17.5 against Q4_K_M
  16.5-17.0: both are bound by the ALU work, which is the same per weight. With the sum, the
  Q2 files came out 1.35x faster than the Q4 ones. Measured by the same harness, the 3-4B-active
  MoE models (a tenth of the weights per token) stay memory bound and decode 1.1x faster from
  the smaller file (Qwen3.6-35B-A3B UD-Q2_K_XL 65.4 against UD-Q4_K_M 58.4).
  A roofline of the ALU and memory streams is the textbook kernel model
  (https://docs.nersc.gov/tools/performance/roofline/); a Metal matrix-vector kernel
  (ggml/src/ggml-metal/ggml-metal.metal kernel_mul_mv_q4_K_f32) loads a block's packed bytes
  and scales, unpacks them and multiplies in the same threads, with enough simdgroups in flight
  per core to cover the memory latency.
- Added (every other backend): the unpacking time adds to the memory stream, the form this
  engine had everywhere before; CPUs (one core unpacks what it streams) and the AMD/Intel GPU
  backends keep it until their own rows are tested against the overlapped form.
"""

from __future__ import annotations

#: Lowest CUDA compute capability with the __dp4a int8 dot product (ggml-cuda common.cuh
#: MIN_CC_DP4A = 610): llama.cpp's quantised matrix-vector kernels (MMVQ) multiply the packed
#: weights against int8-quantised activations with it, so unpacking costs no separate pass.
MIN_CC_DP4A = 6.1

#: Backends whose decode kernels overlap the unpacking and multiply-adds with the weight stream.
OVERLAPPED_UNPACKING_BACKENDS = ("metal",)


def unpacking_hidden(device, backend: str) -> bool:
    """CUDA cards with dp4a read quantised weights straight into int8 dot products (no separate
    unpacking cost); older ones (the P100, compute capability 6.0) dequantise first."""
    if backend != "cuda":
        return False
    capability = getattr(device, "cuda_compute_capability", None)
    return capability is None or capability >= MIN_CC_DP4A


def unpacking_overlaps(backend: str) -> bool:
    """Whether the backend's unpacking runs alongside the weight stream (a step takes the longer
    of memory and ALU work) rather than after it (their sum)."""
    return backend in OVERLAPPED_UNPACKING_BACKENDS

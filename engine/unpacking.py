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

#: Integer instructions ggml's dp4a stand-in issues for 4 int8 products where the card lacks
#: __dp4a (compute capability below :data:`MIN_CC_DP4A`: Maxwell, the P100's GP100):
#: ``ggml_cuda_dp4a`` then returns ``c + a8[0]*b8[0] + a8[1]*b8[1] + a8[2]*b8[2] + a8[3]*b8[3]``
#: on the bytes of its two 32-bit operands (ggml/src/ggml-cuda/common.cuh,
#: https://github.com/ggml-org/llama.cpp/blob/master/ggml/src/ggml-cuda/common.cuh, the
#: ``#else`` branch of ``ggml_cuda_dp4a``; every MMVQ dot product in vecdotq.cuh goes through it).
#: That is 8 byte extractions with sign extension (4 of the weights' word, 4 of the q8_1
#: activations'), and 4 multiply-adds of 32-bit ints, which compute capability 5.x and 6.x have
#: no single instruction for (CUDA C++ Programming Guide, throughput of native arithmetic
#: instructions: 32-bit integer multiply and multiply-add "multiple instructions" on 5.x/6.x,
#: https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#arithmetic-instructions):
#: ptxas expands ``mul.lo`` into 3 XMADs, the last one adding the accumulator
#: (https://forums.developer.nvidia.com/t/xmad-meaning/46653). 8 + 4 x 3 = 20 instructions.
DP4A_FALLBACK_INSTRUCTIONS = 8 + 4 * 3
#: ... where a dp4a card issues one.
DP4A_INSTRUCTIONS = 1
#: FP32-FLOP units per weight of that difference (what ``dequant_ops`` counts: the catalog's
#: FP32 rate counts a lane's fused multiply-add as 2 FLOPs, and integer instructions issue on the
#: same lanes): (20 - 1) / 4 weights x 2 = 9.5.
DP4A_FALLBACK_OPS = (DP4A_FALLBACK_INSTRUCTIONS - DP4A_INSTRUCTIONS) / 4 * 2

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

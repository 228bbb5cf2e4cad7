// Instruction count of the MMQ tile loads, one kernel per GGUF type (engine/mmq_tiles.py).
//
// Each kernel runs one load_tiles_<type> call of mmq.cuh for a 128-row tile (mmq_y = 128, 8 warps
// of 32 threads: 128 rows x 256 weights, 128 weights per thread), so its SASS, less kern_empty's,
// is one call's instructions per thread. Compile against either tree (a stub cublas_v2.h that
// declares cublasStatus_t, cublasHandle_t, cublasCreate/Destroy/SetMathMode and the
// CUBLAS_STATUS_* / CUBLAS_TF32_TENSOR_OP_MATH names is enough; no cuBLAS call is compiled in):
//
//   ik_llama.cpp at dcdfad29 (its load_tiles take <mmq_y, nwarps, need_check>):
//     nvcc -arch=sm_86 -cubin -O3 -std=c++17 -DIK_LLAMA -I<stub> -I<ik>/ggml/src/ggml-cuda \
//          -I<ik>/ggml/src -I<ik>/ggml/include -o ik86.cubin mmq_tile_count.cu
//   llama.cpp's ggml at ac0c8be4 (b7423; <mmq_y, need_check>):
//     nvcc -arch=sm_86 -cubin -O3 -std=c++17 -I<stub> -I<ggml>/src/ggml-cuda -I<ggml>/src \
//          -I<ggml>/include -o ml86.cubin mmq_tile_count.cu
//
// then: python mmq_tile_count.py ik86.cubin (or ml86.cubin).
#include "mmq.cuh"

#ifdef IK_LLAMA
#define LOAD(T) load_tiles_##T<128, 8, false>
#else
#define LOAD(T) load_tiles_##T<128, false>
#endif

#define K(T) extern "C" __global__ void __launch_bounds__(256) kern_##T(const char * __restrict__ x, int kbx0, int i_max, int stride) { \
    extern __shared__ int tile[]; LOAD(T)(x, tile, kbx0, i_max, stride); }

extern "C" __global__ void __launch_bounds__(256) kern_empty(const char * __restrict__ x, int kbx0, int i_max, int stride) {
    extern __shared__ int tile[];
    tile[threadIdx.x] = kbx0;
}

K(q4_0) K(q4_1) K(q5_0) K(q5_1) K(q8_0) K(q2_K) K(q3_K) K(q4_K) K(q5_K) K(q6_K)
K(iq4_nl) K(iq2_xxs) K(iq2_xs) K(iq2_s) K(iq3_xxs) K(iq3_s) K(iq1_s) K(iq4_xs)
#ifdef IK_LLAMA
K(q6_0)
#else
K(mxfp4)
#endif

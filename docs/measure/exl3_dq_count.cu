#include <cuda_fp16.h>
#include <cstdint>
#include "util.cuh"
#include "ptx.cuh"
#include "quant/exl3_dq.cuh"

// Per-bits microkernel: the regular EXL3 GEMM's weight decode (dq_dispatch, called as in
// exl3_gemm_inner.cuh with idx = lane_id << 3) in a loop; the accumulate is the same for all bits.
template <int bits, int cb, int mode, int reps>
__global__ void kern(const uint32_t* __restrict__ g, half2* __restrict__ out, int iters)
{
    __shared__ uint32_t sh[4][bits * 256 / 32];
    for (int i = threadIdx.x; i < 4 * bits * 256 / 32; i += blockDim.x) (&sh[0][0])[i] = g[i];
    __syncthreads();
    int lane_id = threadIdx.x & 31;
    half2 acc = __float2half2_rn(0.0f);
    FragB f0, f1;
    #pragma unroll 1
    for (int i = 0; i < iters; ++i)
    {
        #pragma unroll
        for (int r = 0; r < reps; ++r)
        {
        const uint32_t* p = sh[(i + r) & 3];
        if constexpr (mode == 1) dq_dispatch<bits, cb>(p, lane_id << 3, f0, f1);
        else { f0[0] = *(half2*)&p[lane_id]; f0[1] = f0[0]; f1[0] = *(half2*)&p[lane_id+1]; f1[1] = f1[0]; }
        acc = __hadd2(acc, __hadd2(__hadd2(f0[0], f0[1]), __hadd2(f1[0], f1[1])));
        }
    }
    out[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}
template __global__ void kern<1,2,1,1>(const uint32_t*, half2*, int);
template __global__ void kern<1,2,1,2>(const uint32_t*, half2*, int);
template __global__ void kern<1,2,1,3>(const uint32_t*, half2*, int);
template __global__ void kern<2,2,1,1>(const uint32_t*, half2*, int);
template __global__ void kern<2,2,1,2>(const uint32_t*, half2*, int);
template __global__ void kern<2,2,1,3>(const uint32_t*, half2*, int);
template __global__ void kern<3,2,1,1>(const uint32_t*, half2*, int);
template __global__ void kern<3,2,1,2>(const uint32_t*, half2*, int);
template __global__ void kern<3,2,1,3>(const uint32_t*, half2*, int);
template __global__ void kern<4,2,1,1>(const uint32_t*, half2*, int);
template __global__ void kern<4,2,1,2>(const uint32_t*, half2*, int);
template __global__ void kern<4,2,1,3>(const uint32_t*, half2*, int);
template __global__ void kern<5,2,1,1>(const uint32_t*, half2*, int);
template __global__ void kern<5,2,1,2>(const uint32_t*, half2*, int);
template __global__ void kern<5,2,1,3>(const uint32_t*, half2*, int);
template __global__ void kern<6,2,1,1>(const uint32_t*, half2*, int);
template __global__ void kern<6,2,1,2>(const uint32_t*, half2*, int);
template __global__ void kern<6,2,1,3>(const uint32_t*, half2*, int);
template __global__ void kern<7,2,1,1>(const uint32_t*, half2*, int);
template __global__ void kern<7,2,1,2>(const uint32_t*, half2*, int);
template __global__ void kern<7,2,1,3>(const uint32_t*, half2*, int);
template __global__ void kern<8,2,1,1>(const uint32_t*, half2*, int);
template __global__ void kern<8,2,1,2>(const uint32_t*, half2*, int);
template __global__ void kern<8,2,1,3>(const uint32_t*, half2*, int);
template __global__ void kern<4,1,1,1>(const uint32_t*, half2*, int);
template __global__ void kern<4,1,1,2>(const uint32_t*, half2*, int);
template __global__ void kern<4,1,1,3>(const uint32_t*, half2*, int);
template __global__ void kern<6,1,1,1>(const uint32_t*, half2*, int);
template __global__ void kern<6,1,1,2>(const uint32_t*, half2*, int);
template __global__ void kern<6,1,1,3>(const uint32_t*, half2*, int);
template __global__ void kern<4,2,0,1>(const uint32_t*, half2*, int);
template __global__ void kern<4,2,0,2>(const uint32_t*, half2*, int);
template __global__ void kern<4,2,0,3>(const uint32_t*, half2*, int);
template __global__ void kern<6,2,0,1>(const uint32_t*, half2*, int);
template __global__ void kern<6,2,0,2>(const uint32_t*, half2*, int);
template __global__ void kern<6,2,0,3>(const uint32_t*, half2*, int);

// pipeline_forms.cu — the three ways CUDA C++ asks for asynchronous copies, as the simulator meets them:
// cuda_pipeline.h's primitives, cuda::pipeline with cuda::memcpy_async, and a block-wide
// cuda::memcpy_async completing on a cuda::barrier (a bulk copy on sm_90).

#include <cuda_pipeline.h>
#include <cuda/pipeline>
#include <cuda/barrier>
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
extern "C" __global__ void primitives(float* out, const float* in) {
    __shared__ float s[128];
    __pipeline_memcpy_async(&s[threadIdx.x], &in[threadIdx.x], sizeof(float));
    __pipeline_commit();
    __pipeline_wait_prior(0);
    __syncthreads();
    out[threadIdx.x] = s[127 - threadIdx.x];
}
extern "C" __global__ void pipeline(float* out, const float* in) {
    __shared__ float s[128];
    cuda::pipeline<cuda::thread_scope_thread> p = cuda::make_pipeline();
    p.producer_acquire();
    cuda::memcpy_async(&s[threadIdx.x], &in[threadIdx.x], cuda::aligned_size_t<4>(4), p);
    p.producer_commit();
    p.consumer_wait();
    __syncthreads();
    out[threadIdx.x] = s[127 - threadIdx.x];
    p.consumer_release();
}
extern "C" __global__ void block_copy(float4* out, const float4* in) {
    __shared__ float4 s[128];
#pragma nv_diag_suppress static_var_with_dynamic_init
    __shared__ cuda::barrier<cuda::thread_scope_block> bar;
    auto block = cg::this_thread_block();
    if (block.thread_rank() == 0) init(&bar, block.size());
    block.sync();
    cuda::memcpy_async(block, s, in, sizeof(s), bar);
    bar.arrive_and_wait();
    out[threadIdx.x] = s[127 - threadIdx.x];
}

// hopper_probe.cu — small kernels that show what an H100 does and counts for Hopper's data movement:
// cp.async (LDGSTS), ldmatrix / stmatrix / movmatrix, bulk copies and TMA tiles with mbarriers.
// benchmarks/hopper_probe.py runs them: their outputs are the simulator's test vectors (what each
// lane receives, what lands where), and under Nsight Compute their counters are the simulator's
// metric targets. Every access pattern comes from kernel parameters (no loads of offset tables:
// they would add to the counters being measured); results leave through a store that only runs
// when a parameter says so.

#include <cuda.h>
#include <cuda_pipeline.h>
#include <cuda/barrier>
#include <cooperative_groups.h>

using block_barrier = cuda::barrier<cuda::thread_scope_block>;
namespace tma = cuda::device::experimental;

__device__ __forceinline__ unsigned smem_addr(const void* p) { return (unsigned)__cvta_generic_to_shared(p); }

// cp.async of SIZE bytes (CG: .cg, only 16) by the first `active` lanes of each warp: lane l
// copies from g + l * src_stride to shared byte l * dst_stride, reading src_size bytes (the rest
// zero-filled). dump != 0: write the shared bytes to out (the semantics run; not under ncu).
template <int SIZE, bool CG>
__global__ void probe_cpasync(const unsigned char* g, unsigned char* out, int src_stride, int dst_stride,
                              int active, int src_size, int dump)
{
    __shared__ alignas(128) unsigned char s[8192];
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    if (dump)
        for (int i = threadIdx.x; i < 8192; i += blockDim.x) s[i] = 0xAB;
    __syncthreads();
    if (lane < active) {
        unsigned dst = smem_addr(s + warp * 2048 + lane * dst_stride);
        const unsigned char* src = g + warp * 4096 + lane * src_stride;
        if (CG)
            asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" :: "r"(dst), "l"(src), "r"(src_size));
        else
            asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;" :: "r"(dst), "l"(src), "n"(SIZE), "r"(src_size));
    }
    asm volatile("cp.async.commit_group;");
    asm volatile("cp.async.wait_group 0;" ::: "memory");
    __syncthreads();
    if (dump)
        for (int i = threadIdx.x; i < 8192; i += blockDim.x) out[i] = s[i];
}

// cp.async with the ignore-src predicate: lanes with (lane % 3 == 0) != 0 get zeros.
__global__ void probe_cpasync_ignore(const unsigned char* g, unsigned char* out)
{
    __shared__ alignas(128) unsigned char s[512];
    const int lane = threadIdx.x;
    for (int i = lane; i < 512; i += 32) s[i] = 0xAB;
    __syncthreads();
    unsigned dst = smem_addr(s + lane * 16);
    int ignore = lane % 3 == 0;
    asm volatile("{ .reg .pred p; setp.ne.b32 p, %2, 0;\n"
                 "cp.async.ca.shared.global [%0], [%1], 16, p; }" :: "r"(dst), "l"(g + lane * 16), "r"(ignore));
    asm volatile("cp.async.commit_group;");
    asm volatile("cp.async.wait_all;" ::: "memory");
    __syncthreads();
    for (int i = lane; i < 512; i += 32) out[i] = s[i];
}

// ldmatrix .x{X}{.trans}: shared holds 16-bit values 0, 1, 2, ... (2 KB); lane l gives the
// address of row (l * row_mul + row_add) % 64 (16 bytes each, row_pitch bytes apart).
template <int X, bool TRANS>
__global__ void probe_ldsm(unsigned* out, int row_mul, int row_add, int row_pitch, int dump)
{
    __shared__ alignas(128) unsigned short s[8192];
    for (int i = threadIdx.x; i < 8192; i += blockDim.x) s[i] = (unsigned short)i;
    __syncthreads();
    const int lane = threadIdx.x % 32;
    unsigned a = smem_addr(s) + ((lane * row_mul + row_add) % 64) * row_pitch;
    unsigned r[4] = {0, 0, 0, 0};
    if (X == 1 && !TRANS) asm volatile("ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%0}, [%1];" : "=r"(r[0]) : "r"(a));
    if (X == 1 && TRANS) asm volatile("ldmatrix.sync.aligned.m8n8.x1.trans.shared.b16 {%0}, [%1];" : "=r"(r[0]) : "r"(a));
    if (X == 2 && !TRANS) asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0, %1}, [%2];" : "=r"(r[0]), "=r"(r[1]) : "r"(a));
    if (X == 2 && TRANS) asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0, %1}, [%2];" : "=r"(r[0]), "=r"(r[1]) : "r"(a));
    if (X == 4 && !TRANS) asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
                                       : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(a));
    if (X == 4 && TRANS) asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];"
                                      : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(a));
    if (dump)
        for (int k = 0; k < X; ++k) out[(blockIdx.x * blockDim.x + threadIdx.x) * 4 + k] = r[k];
}

// stmatrix .x{X}{.trans}: lane l's register k holds the 16-bit values 8 l + 2 k and 8 l + 2 k + 1;
// lane l gives the address of row (l * row_mul + row_add) % 64; shared starts as 0xFFFF.
template <int X, bool TRANS>
__global__ void probe_stsm(unsigned short* out, int row_mul, int row_add, int row_pitch, int dump)
{
    __shared__ alignas(128) unsigned short s[8192];
    if (dump)
        for (int i = threadIdx.x; i < 8192; i += blockDim.x) s[i] = 0xFFFF;
    __syncthreads();
    const int lane = threadIdx.x % 32;
    unsigned a = smem_addr(s) + ((lane * row_mul + row_add) % 64) * row_pitch;
    unsigned r[4];
    for (int k = 0; k < 4; ++k) r[k] = (8 * lane + 2 * k) | ((8 * lane + 2 * k + 1) << 16);
    if (X == 1 && !TRANS) asm volatile("stmatrix.sync.aligned.m8n8.x1.shared.b16 [%0], {%1};" :: "r"(a), "r"(r[0]) : "memory");
    if (X == 1 && TRANS) asm volatile("stmatrix.sync.aligned.m8n8.x1.trans.shared.b16 [%0], {%1};" :: "r"(a), "r"(r[0]) : "memory");
    if (X == 2 && !TRANS) asm volatile("stmatrix.sync.aligned.m8n8.x2.shared.b16 [%0], {%1, %2};" :: "r"(a), "r"(r[0]), "r"(r[1]) : "memory");
    if (X == 2 && TRANS) asm volatile("stmatrix.sync.aligned.m8n8.x2.trans.shared.b16 [%0], {%1, %2};" :: "r"(a), "r"(r[0]), "r"(r[1]) : "memory");
    if (X == 4 && !TRANS) asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};"
                                       :: "r"(a), "r"(r[0]), "r"(r[1]), "r"(r[2]), "r"(r[3]) : "memory");
    if (X == 4 && TRANS) asm volatile("stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%0], {%1, %2, %3, %4};"
                                      :: "r"(a), "r"(r[0]), "r"(r[1]), "r"(r[2]), "r"(r[3]) : "memory");
    __syncthreads();
    if (dump)
        for (int i = threadIdx.x; i < 2048; i += blockDim.x) out[i] = s[i];
}

// movmatrix: lane l's register holds 2 l and 2 l + 1; out gets each lane's result.
__global__ void probe_movmatrix(unsigned* out)
{
    const int lane = threadIdx.x;
    unsigned x = (2 * lane) | ((2 * lane + 1) << 16), y;
    asm volatile("movmatrix.sync.aligned.m8n8.trans.b16 %0, %1;" : "=r"(y) : "r"(x));
    out[lane] = y;
}

// A TMA load of one box at (c0, r0) (may reach outside the matrix), then (dump) the raw shared
// bytes; then, STORE: the same box to `store_map` at (sc0, sr0), clipped by the TMA.
template <int BOX_BYTES, bool STORE>
__global__ void probe_tma(const __grid_constant__ CUtensorMap map, const __grid_constant__ CUtensorMap store_map,
                          unsigned char* out, int c0, int r0, int dump, int sc0, int sr0)
{
    __shared__ alignas(1024) unsigned char box[BOX_BYTES];
#pragma nv_diag_suppress static_var_with_dynamic_init
    __shared__ block_barrier bar;
    if (threadIdx.x == 0) {
        init(&bar, blockDim.x);
        tma::fence_proxy_async_shared_cta();
    }
    __syncthreads();
    block_barrier::arrival_token token;
    if (threadIdx.x == 0) {
        tma::cp_async_bulk_tensor_2d_global_to_shared(box, &map, c0, r0, bar);
        token = cuda::device::barrier_arrive_tx(bar, 1, BOX_BYTES);
    } else {
        token = bar.arrive();
    }
    bar.wait(std::move(token));
    if (dump)
        for (int i = threadIdx.x; i < BOX_BYTES; i += blockDim.x) out[i] = box[i];
    if (STORE && threadIdx.x == 0) {
        tma::cp_async_bulk_tensor_2d_shared_to_global(&store_map, sc0, sr0, box);
        tma::cp_async_bulk_commit_group();
        tma::cp_async_bulk_wait_group_read<0>();
    }
}

// A plain bulk copy (no tensor map) of `bytes` from g into shared memory, completing on an mbarrier.
__global__ void probe_bulk(const unsigned char* g, unsigned char* out, int bytes, int dump)
{
    __shared__ alignas(128) unsigned char s[8192];
#pragma nv_diag_suppress static_var_with_dynamic_init
    __shared__ block_barrier bar;
    if (threadIdx.x == 0) init(&bar, blockDim.x);
    __syncthreads();
    cuda::memcpy_async(cooperative_groups::this_thread_block(), s, g, cuda::aligned_size_t<16>(bytes), bar);
    bar.arrive_and_wait();
    if (dump)
        for (int i = threadIdx.x; i < bytes; i += blockDim.x) out[i] = s[i];
}

// mbarrier traffic alone: init, every thread arrives, waits.
__global__ void probe_mbarrier(int rounds)
{
#pragma nv_diag_suppress static_var_with_dynamic_init
    __shared__ block_barrier bar;
    if (threadIdx.x == 0) init(&bar, blockDim.x);
    __syncthreads();
    for (int i = 0; i < rounds; ++i)
        bar.arrive_and_wait();
}

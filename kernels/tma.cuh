// tma.cuh — what the TMA kernels share (tma.cu, tma_fast.cu): the swizzle, one box loaded on an
// mbarrier, and a box turned around in registers into `out` with 16-byte stores.
#pragma once
#include <cuda.h>
#include <cuda/barrier>
#include "pack.cuh"

using block_barrier = cuda::barrier<cuda::thread_scope_block>;
namespace tma = cuda::device::experimental;

// Where byte b of an unswizzled box sits in shared memory (what the TMA does for mode SW).
template <int SW> __device__ __forceinline__ int swizzled(int b)
{
    constexpr int mask = SW == 128 ? 0x70 : SW == 64 ? 0x30 : SW == 32 ? 0x10 : 0;
    return b ^ ((b >> 3) & mask);
}

// Thread 0 asks for the box at (column c0, row r0); every thread returns once it has arrived.
template <typename Tile>
__device__ __forceinline__ void load_box(Tile& tile, const CUtensorMap& map, int c0, int r0, block_barrier& bar)
{
    block_barrier::arrival_token token;
    if (threadIdx.x == 0) {
        tma::cp_async_bulk_tensor_2d_global_to_shared(&tile, &map, c0, r0, bar);
        token = cuda::device::barrier_arrive_tx(bar, 1, sizeof(tile));   // + the bytes to expect
    } else {
        token = bar.arrive();
    }
    bar.wait(std::move(token));             // until every thread arrived and every byte landed
}

__device__ __forceinline__ void init_barrier(block_barrier& bar)
{
    if (threadIdx.x == 0) {
        init(&bar, blockDim.x);
        tma::fence_proxy_async_shared_cta();   // make the initialised barrier visible to the TMA
    }
    __syncthreads();
}

// Turn a box of BOX_R rows x SW bytes (in shared memory, swizzled by mode SW) around into `out`:
// warps take units of JW chunk columns x GW row blocks; a lane reads RG rows of one 16-byte chunk
// column (a quarter-warp: 8 different chunk slots) and writes 16 / sizeof(T) pieces of 16 bytes.
template <typename T, int BOX_R, int WARPS, int SW>
__device__ __forceinline__ void transpose_box(T* __restrict__ out, const unsigned char* tile, int rows, int cols,
                                              int r0, int c0)
{
    constexpr int S = sizeof(T), RG = 16 / S, E = 4 / (S < 4 ? S : 4);   // rows per block, elements per word
    constexpr int P = SW ? SW : 128, NCH = P / 16;                      // box row: SW bytes (128 unswizzled)
    constexpr int JW = RG < NCH ? RG : NCH;        // chunk columns per warp: quarter-warps conflict-free
    constexpr int GW = 32 / JW;                    // row blocks per warp
    constexpr int UNITS = (NCH / JW) * (BOX_R / (GW * RG));
    static_assert(BOX_R % (GW * RG) == 0 && BOX_R <= 256, "BOX_R must be a multiple of a warp's rows");
    const int lane = threadIdx.x % 32;
    for (int unit = threadIdx.x / 32; unit < UNITS; unit += WARPS) {
        const int j = (unit % (NCH / JW)) * JW + lane % JW;            // chunk column
        const int g = (unit / (NCH / JW)) * GW + lane / JW;            // block of RG rows
        const int r = r0 + g * RG;                                     // column of out
        if (r >= rows)
            continue;
        uint4 a[RG];
#pragma unroll
        for (int k = 0; k < RG; ++k)
            a[k] = *reinterpret_cast<const uint4*>(tile + swizzled<SW>((g * RG + k) * P + j * 16));
#pragma unroll
        for (int q = 0; q < 16 / S; ++q) {                             // output row c0 + 16/S * j + q
            const int oy = c0 + j * (16 / S) + q;
            uint4 piece;
            if constexpr (S == 8) {
                piece = q == 0 ? make_uint4(a[0].x, a[0].y, a[1].x, a[1].y) : make_uint4(a[0].z, a[0].w, a[1].z, a[1].w);
            } else {
                unsigned col[RG], o[E][4];
#pragma unroll
                for (int k = 0; k < RG; ++k) {
                    const int w = q / E;
                    col[k] = w == 0 ? a[k].x : w == 1 ? a[k].y : w == 2 ? a[k].z : a[k].w;
                }
                transpose_words<S, RG>(col, o);
                piece = make_uint4(o[q % E][0], o[q % E][1], o[q % E][2], o[q % E][3]);
            }
            if (oy < cols)
                *reinterpret_cast<uint4*>(out + (size_t)oy * rows + r) = piece;
        }
    }
}


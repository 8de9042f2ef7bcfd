// tma_fast.cu — TMA transposes tuned for speed (kernels/tma.cu has the ones the notebook reads first).
//
//   tma_pipe<T, BOX_R, WARPS, STAGES, ORDER>
//        tma_tile's work in a persistent loop: a block walks many boxes through a ring of STAGES
//        boxes, the next loads in flight while one is turned around. ORDER 0 walks along the rows
//        of `in`, 1 down its columns.
//   tma_wide<T, BOX_R, WARPS, NB, ORDER>
//        NB boxes side by side per block (NB x 128 bytes of each row, one mbarrier), a 1-D grid
//        walked in ORDER.
//   tma_out<T, WARPS, NB>
//        TMA in and TMA out: NB square boxes (128 bytes x 128 / sizeof(T) rows) stacked down `in`,
//        each turned around in registers into a second swizzled box, then stored with one TMA store
//        each. A lane takes work item (chunk column j, row block g) = (x, x ^ m) of quarter-warp m:
//        its 8 lanes read 8 different chunk slots of the input box and write 8 different chunk
//        slots of the output box, for every element size: no bank conflicts on either side.
// Same contract as tma.cu: `in` rows x cols through a tensor map, `out` cols x rows (through a
// tensor map for tma_out), row pitches multiples of 16 bytes.

#include "tma.cuh"

// The same work with the loads running ahead: a block walks boxes b = blockIdx.x, + gridDim.x, ...
// through a ring of STAGES boxes in shared memory, one mbarrier each. Thread 0 asks for box
// i + STAGES as soon as every thread is done with box i (the __syncthreads at the end of an
// iteration), so STAGES - 1 boxes are on their way while one is turned around. Each mbarrier
// phase completes when all threads arrived and the box's bytes landed (expect_tx announces them).
template <typename T, int BOX_R, int WARPS, int STAGES, int ORDER>
__global__ void __launch_bounds__(WARPS * 32) tma_pipe(T* __restrict__ out, const __grid_constant__ CUtensorMap in_map,
                                                       int rows, int cols)
{
    constexpr int P = 128, BOX_C = P / sizeof(T), BYTES = BOX_R * P;
    __shared__ alignas(1024) unsigned char ring[STAGES][BYTES];
#pragma nv_diag_suppress static_var_with_dynamic_init
    __shared__ block_barrier full[STAGES];
    const int nbx = (cols + BOX_C - 1) / BOX_C, nby = (rows + BOX_R - 1) / BOX_R, boxes = nbx * nby;
    // box b: ORDER 0 walks along the rows of `in` (reads of neighbouring blocks share rows), ORDER 1
    // down its columns (their writes share rows of `out`)
    auto c0_of = [&](int b) { return (ORDER ? b / nby : b % nbx) * BOX_C; };
    auto r0_of = [&](int b) { return (ORDER ? b % nby : b / nbx) * BOX_R; };
    auto ask = [&](int s, int b) {             // thread 0: box b into stage s
        if (b < boxes) {
            tma::cp_async_bulk_tensor_2d_global_to_shared(ring[s], &in_map, c0_of(b), r0_of(b), full[s]);
            cuda::device::barrier_expect_tx(full[s], BYTES);
        }
    };
    if (threadIdx.x == 0) {
        for (int s = 0; s < STAGES; ++s)
            init(&full[s], blockDim.x);
        tma::fence_proxy_async_shared_cta();
        for (int s = 0; s < STAGES; ++s)
            ask(s, blockIdx.x + s * gridDim.x);
    }
    __syncthreads();
    for (int i = 0, b = blockIdx.x; b < boxes; ++i, b += gridDim.x) {
        const int s = i % STAGES;
        full[s].wait(full[s].arrive());        // this phase: every thread here, every byte landed
        transpose_box<T, BOX_R, WARPS, 128>(out, ring[s], rows, cols, r0_of(b), c0_of(b));
        __syncthreads();                       // stage s is free again
        if (threadIdx.x == 0)
            ask(s, b + STAGES * gridDim.x);
    }
}

template <typename T, int BOX_R, int WARPS, int NB, int ORDER>
__global__ void __launch_bounds__(WARPS * 32) tma_wide(T* __restrict__ out, const __grid_constant__ CUtensorMap in_map,
                                                       int rows, int cols)
{
    constexpr int P = 128, BOX_C = P / sizeof(T), BYTES = BOX_R * P;
    __shared__ alignas(1024) unsigned char tile[NB][BYTES];
#pragma nv_diag_suppress static_var_with_dynamic_init
    __shared__ block_barrier bar;
    const int nbx = (cols + NB * BOX_C - 1) / (NB * BOX_C), nby = (rows + BOX_R - 1) / BOX_R;
    const int b = blockIdx.x, bx = ORDER ? b / nby : b % nbx, by = ORDER ? b % nby : b / nbx;
    const int c0 = bx * NB * BOX_C, r0 = by * BOX_R;
    init_barrier(bar);
    block_barrier::arrival_token token;
    if (threadIdx.x == 0) {
        int bytes = 0;
        for (int k = 0; k < NB; ++k)
            if (c0 + k * BOX_C < cols) {
                tma::cp_async_bulk_tensor_2d_global_to_shared(tile[k], &in_map, c0 + k * BOX_C, r0, bar);
                bytes += BYTES;
            }
        token = cuda::device::barrier_arrive_tx(bar, 1, bytes);
    } else {
        token = bar.arrive();
    }
    bar.wait(std::move(token));
#pragma unroll
    for (int k = 0; k < NB; ++k)
        if (c0 + k * BOX_C < cols)                 // a box past the last column was not loaded
            transpose_box<T, BOX_R, WARPS, 128>(out, tile[k], rows, cols, r0, c0 + k * BOX_C);
}

// Box `a` (B rows of 128 bytes, swizzled) turned around into box `t` (likewise): work item i of 64.
template <typename T>
__device__ __forceinline__ void transpose_item(unsigned char* t, const unsigned char* a, int i)
{
    constexpr int S = sizeof(T), RG = 16 / S, E = 4 / (S < 4 ? S : 4);
    const int x = i % 8, j = x, g = x ^ (i / 8);          // chunk column j, row block g
    uint4 v[RG];
#pragma unroll
    for (int k = 0; k < RG; ++k)
        v[k] = *reinterpret_cast<const uint4*>(a + swizzled<128>((g * RG + k) * 128 + j * 16));
#pragma unroll
    for (int q = 0; q < 16 / S; ++q) {                    // out row j * 16/S + q, chunk g
        uint4 piece;
        if constexpr (S == 8) {
            piece = q == 0 ? make_uint4(v[0].x, v[0].y, v[1].x, v[1].y) : make_uint4(v[0].z, v[0].w, v[1].z, v[1].w);
        } else {
            unsigned col[RG], o[E][4];
#pragma unroll
            for (int k = 0; k < RG; ++k) {
                const int w = q / E;
                col[k] = w == 0 ? v[k].x : w == 1 ? v[k].y : w == 2 ? v[k].z : v[k].w;
            }
            transpose_words<S, RG>(col, o);
            piece = make_uint4(o[q % E][0], o[q % E][1], o[q % E][2], o[q % E][3]);
        }
        *reinterpret_cast<uint4*>(t + swizzled<128>((j * (16 / S) + q) * 128 + g * 16)) = piece;
    }
}

template <typename T, int WARPS, int NB>
__global__ void __launch_bounds__(WARPS * 32) tma_out(const __grid_constant__ CUtensorMap out_map,
                                                      const __grid_constant__ CUtensorMap in_map, int rows, int cols)
{
    constexpr int B = 128 / sizeof(T), BYTES = 128 * B;   // a square box: B x B elements
    __shared__ alignas(1024) unsigned char a[NB][BYTES];
    __shared__ alignas(1024) unsigned char t[NB][BYTES];
#pragma nv_diag_suppress static_var_with_dynamic_init
    __shared__ block_barrier bar;
    const int c0 = blockIdx.x * B, r0 = blockIdx.y * NB * B;
    init_barrier(bar);
    block_barrier::arrival_token token;
    if (threadIdx.x == 0) {
        int bytes = 0;
        for (int k = 0; k < NB; ++k)
            if (r0 + k * B < rows) {
                tma::cp_async_bulk_tensor_2d_global_to_shared(a[k], &in_map, c0, r0 + k * B, bar);
                bytes += BYTES;
            }
        token = cuda::device::barrier_arrive_tx(bar, 1, bytes);
    } else {
        token = bar.arrive();
    }
    bar.wait(std::move(token));
    for (int it = threadIdx.x; it < NB * 64; it += WARPS * 32)
        if (r0 + it / 64 * B < rows)
            transpose_item<T>(t[it / 64], a[it / 64], it % 64);
    tma::fence_proxy_async_shared_cta();           // ordinary stores, read next by the TMA (async proxy)
    __syncthreads();
    if (threadIdx.x == 0) {
        for (int k = 0; k < NB; ++k)
            if (r0 + k * B < rows)
                tma::cp_async_bulk_tensor_2d_shared_to_global(&out_map, r0 + k * B, c0, t[k]);
        tma::cp_async_bulk_commit_group();
        tma::cp_async_bulk_wait_group_read<0>();
    }
}

// tma.cu — tiles moved by the Tensor Memory Accelerator (Hopper, sm_90).
//
// One thread asks the TMA for a whole box of the matrix: `cp.async.bulk.tensor` copies BOX_R rows
// x BOX_C columns of `in` into shared memory on its own, with no thread loading anything, and
// counts the bytes it delivers on an mbarrier in shared memory. The threads wait on the mbarrier
// (`bar.wait`), then read the tile. Parts of the box outside the matrix arrive as zeros. The
// copy engine needs a *tensor map*: the matrix's address, shape, row pitch, the box size and a
// swizzle mode, built on the host (course_lib.TensorMap; on a GPU the driver's
// cuTensorMapEncodeTiled) and passed by value as `const __grid_constant__ CUtensorMap`.
//
// The TMA writes the box's rows one after another: it cannot pad them. Instead it can swizzle
// them. With SW = 32, 64 or 128 (bytes) the 16-byte chunk c of a box row lands at chunk
// c ^ (bits of the row number), the hardware form of notebook 05's XOR swizzle: byte offset b
// of the unswizzled box is stored at  b ^ ((b >> 3) & MASK)  (MASK 0x10, 0x30, 0x70: bits 4..6
// take bits 7..9). Rows must then be at most SW bytes long, and the tile aligned to 1024 bytes.
//
// Kernels (same roles as the rest of kernels/: `in` rows x cols, `out` cols x rows):
//   tma_copy<T, SW>     the TMA copy: a box in, the same box out with a TMA store (the ceiling)
//   tma_tile<T, BOX_R, WARPS, SW>
//                       the fast one: a box of 128 bytes x BOX_R rows in through the TMA; each
//                       lane reads 16-byte chunks of RG = 16 / sizeof(T) consecutive rows of
//                       one chunk column, turns the RG x RG block around in registers
//                       (pack.cuh) and stores 16 bytes to each of 16 / sizeof(T) rows of out.
//                       With SW = 128 a quarter-warp's eight 16-byte reads hit eight different
//                       chunk slots: no bank conflicts. SW = 0: the same reads, 8-way conflicts.
//   tma_pipe<T, BOX_R, WARPS, STAGES, ORDER>
//                       tma_tile's work in a persistent loop: each block walks many boxes through a
//                       ring of STAGES boxes, the next loads in flight while one is turned around.
//   tma_both<T, SW>     a square box in, turned around in shared memory element by element,
//                       and out with a TMA store: both directions through the copy engine.
// The tensor maps' shapes must allow the TMA: row pitches (cols * sizeof(T), rows * sizeof(T)
// for out) multiples of 16 bytes, and tma_tile stores 16-byte pieces, so rows % RG == 0 too.

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

template <typename T, int SW>
__global__ void tma_copy(const __grid_constant__ CUtensorMap out_map, const __grid_constant__ CUtensorMap in_map,
                         int rows, int cols)
{
    constexpr int BOX_C = (SW ? SW : 128) / sizeof(T), BOX_R = 32;
    __shared__ alignas(1024) T tile[BOX_R][BOX_C];
#pragma nv_diag_suppress static_var_with_dynamic_init
    __shared__ block_barrier bar;
    init_barrier(bar);
    load_box(tile, in_map, blockIdx.x * BOX_C, blockIdx.y * BOX_R, bar);
    if (threadIdx.x == 0) {                     // the same box out; the TMA clips it at the edges
        tma::cp_async_bulk_tensor_2d_shared_to_global(&out_map, blockIdx.x * BOX_C, blockIdx.y * BOX_R, &tile);
        tma::cp_async_bulk_commit_group();
        tma::cp_async_bulk_wait_group_read<0>();   // shared memory must outlive the store's reads
    }
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

template <typename T, int BOX_R, int WARPS, int SW>
__global__ void __launch_bounds__(WARPS * 32) tma_tile(T* __restrict__ out, const __grid_constant__ CUtensorMap in_map,
                                                       int rows, int cols)
{
    constexpr int P = SW ? SW : 128;
    __shared__ alignas(1024) unsigned char tile[BOX_R * P];
#pragma nv_diag_suppress static_var_with_dynamic_init
    __shared__ block_barrier bar;
    const int c0 = blockIdx.x * (P / (int)sizeof(T)), r0 = blockIdx.y * BOX_R;
    init_barrier(bar);
    load_box(tile, in_map, c0, r0, bar);
    transpose_box<T, BOX_R, WARPS, SW>(out, tile, rows, cols, r0, c0);
}

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

template <typename T, int SW>
__global__ void tma_both(const __grid_constant__ CUtensorMap out_map, const __grid_constant__ CUtensorMap in_map,
                         int rows, int cols)
{
    constexpr int B = (SW ? SW : 128) / sizeof(T), P = B * sizeof(T);   // a square B x B box
    __shared__ alignas(1024) T a[B][B];
    __shared__ alignas(1024) T t[B][B];
#pragma nv_diag_suppress static_var_with_dynamic_init
    __shared__ block_barrier bar;
    init_barrier(bar);
    load_box(a, in_map, blockIdx.x * B, blockIdx.y * B, bar);
    const unsigned char* src = reinterpret_cast<const unsigned char*>(a);
    unsigned char* dst = reinterpret_cast<unsigned char*>(t);
    for (int i = threadIdx.x; i < B * B; i += blockDim.x) {
        const int r = i / B, c = i % B;             // a[r][c] -> t[c][r], both swizzled
        *reinterpret_cast<T*>(dst + swizzled<SW>(c * P + r * (int)sizeof(T))) =
            *reinterpret_cast<const T*>(src + swizzled<SW>(r * P + c * (int)sizeof(T)));
    }
    tma::fence_proxy_async_shared_cta();           // ordinary stores, read next by the copy engine
    __syncthreads();
    if (threadIdx.x == 0) {
        tma::cp_async_bulk_tensor_2d_shared_to_global(&out_map, blockIdx.y * B, blockIdx.x * B, &t);
        tma::cp_async_bulk_commit_group();
        tma::cp_async_bulk_wait_group_read<0>();
    }
}

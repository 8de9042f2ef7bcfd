// tma.cu — tiles moved by the Tensor Memory Accelerator (Hopper, sm_90).
//
// One thread asks the TMA for a whole box of the matrix: `cp.async.bulk.tensor` copies BOX_R rows
// x BOX_C columns of `in` into shared memory on its own, with no thread loading anything, and
// counts the bytes it delivers on an mbarrier in shared memory. The threads wait on the mbarrier
// (`bar.wait`), then read the tile. Parts of the box outside the matrix arrive as zeros. The
// TMA needs a *tensor map*: the matrix's address, shape, row pitch, the box size and a
// swizzle mode, built on the host (course_lib.TensorMap; on a GPU the driver's
// cuTensorMapEncodeTiled) and passed by value as `const __grid_constant__ CUtensorMap`.
//
// The TMA writes the box's rows one after another: it cannot pad them. Instead it can swizzle
// them. With SW = 32, 64 or 128 (bytes) the 16-byte chunk c of a box row lands at chunk
// c ^ (bits of the row number), notebook 07's chunk swizzle done by the hardware: byte offset b
// of the unswizzled box is stored at  b ^ ((b >> 3) & MASK)  (MASK 0x10, 0x30, 0x70: bits 4..6
// are XORed with bits 7..9). Rows must then be at most SW bytes long, and the tile aligned to 1024 bytes.
//
// Kernels (same roles as the rest of kernels/: `in` rows x cols, `out` cols x rows):
//   tma_copy<T, SW>     the TMA copy: a box in, the same box out with a TMA store (the ceiling)
//   tma_tile<T, BOX_R, WARPS, SW>
//                       the fast one: a box of 128 bytes x BOX_R rows in through the TMA; each
//                       lane reads 16-byte chunks of RG = 16 / sizeof(T) consecutive rows of
//                       one chunk column, turns the RG x RG block around in registers
//                       (pack.cuh) and stores 16 bytes to each of 16 / sizeof(T) rows of out.
//                       With SW = 128 a quarter-warp's eight 16-byte reads hit eight different
//                       chunk slots: no bank conflicts. SW = 0: the same reads, 2 wavefronts each.
//   tma_both<T, SW>     a square box in, turned around in shared memory element by element,
//                       and out with a TMA store: both directions through the TMA.
// tma_fast.cu has the variants tuned for speed (a ring of boxes, wider blocks, TMA stores out).
// The tensor maps' shapes must allow the TMA: row pitches (cols * sizeof(T), rows * sizeof(T)
// for out) multiples of 16 bytes, and tma_tile stores 16-byte pieces, so rows % RG == 0 too.

#include "tma.cuh"

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
    tma::fence_proxy_async_shared_cta();           // ordinary stores, read next by the TMA (async proxy)
    __syncthreads();
    if (threadIdx.x == 0) {
        tma::cp_async_bulk_tensor_2d_shared_to_global(&out_map, blockIdx.y * B, blockIdx.x * B, &t);
        tma::cp_async_bulk_commit_group();
        tma::cp_async_bulk_wait_group_read<0>();
    }
}

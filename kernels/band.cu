// band.cu — R whole rows of `in` per block, fetched by one bulk copy (cp.async.bulk, sm_90).
//
// For small matrices whose rows do not start on 16-byte boundaries (1000 x 1030 bytes: rows of
// 1030), neither wide loads nor the TMA's tensor maps fit: every row starts somewhere else. But R
// consecutive whole rows are one contiguous run of R * cols elements, and when R * cols * sizeof(T)
// is a multiple of 16 every such band starts on a 16-byte boundary too. One thread then asks for the
// whole band with a single bulk copy (cuda::memcpy_async on a block with 16-byte alignment: the
// TMA, completing on a cuda::barrier), and the block turns it around: thread c gathers
// column c of the band — R elements, one piece of row c of `out` — and stores it with one access
// of R * sizeof(T) bytes (8 for R = 8 bytes) where rows of `out` allow it.
//
// One block per band: 1000 rows make 125 blocks of 8 rows, one bulk copy of 8240 bytes each.
// Shared memory is dynamic: R * cols * sizeof(T) bytes, given at launch. Needs 16-byte aligned `in`
// and R * cols * sizeof(T) % 16 == 0 (else the copy falls back to per-thread copies, still right).

#include <cuda/barrier>
#include <cooperative_groups.h>

template <int N> struct Piece;                         // N bytes as one register-sized value
template <> struct Piece<4> { using type = unsigned; };
template <> struct Piece<8> { using type = uint2; };
template <> struct Piece<16> { using type = uint4; };

template <typename T, int R, int THREADS>
__global__ void __launch_bounds__(THREADS) band(T* __restrict__ out, const T* __restrict__ in, int rows, int cols)
{
    static_assert(R * sizeof(T) == 4 || R * sizeof(T) == 8 || R * sizeof(T) == 16, "a piece is 4, 8 or 16 bytes");
    using P = typename Piece<R * sizeof(T)>::type;
    extern __shared__ __align__(128) unsigned char band_bytes[];
    T* sh = reinterpret_cast<T*>(band_bytes);
#pragma nv_diag_suppress static_var_with_dynamic_init
    __shared__ cuda::barrier<cuda::thread_scope_block> bar;
    auto block = cooperative_groups::this_thread_block();
    const int r0 = blockIdx.x * R, nr = min(R, rows - r0);
    if (block.thread_rank() == 0)
        init(&bar, block.size());
    block.sync();
    const size_t n = (size_t)nr * cols;
    if ((n * sizeof(T)) % 16 == 0 && ((size_t)(in + (size_t)r0 * cols) & 15) == 0)
        cuda::memcpy_async(block, sh, in + (size_t)r0 * cols, cuda::aligned_size_t<16>(n * sizeof(T)), bar);
    else
        cuda::memcpy_async(block, sh, in + (size_t)r0 * cols, n * sizeof(T), bar);
    bar.arrive_and_wait();                             // the band has landed

    const bool whole = nr == R && rows % R == 0;       // a full piece, aligned in `out`
    for (int c = threadIdx.x; c < cols; c += THREADS) {
        T* dst = out + (size_t)c * rows + r0;
        if (whole) {
            union { P p; T e[R]; } u;
#pragma unroll
            for (int k = 0; k < R; ++k)
                u.e[k] = sh[k * cols + c];
            *reinterpret_cast<P*>(dst) = u.p;
        } else {
            for (int k = 0; k < nr; ++k)
                dst[k] = sh[k * cols + c];
        }
    }
}

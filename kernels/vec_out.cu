// vec_out.cu — a padded tile whose stores are one 16-byte (bytes: 8-byte) vector per thread
// wherever the rows of `out` allow it: the small-shape transpose.
//
// On a small matrix (1000 x 1030: 4 MB of floats, 1 MB of bytes) a transpose takes a few
// microseconds and every block runs in the first wave, so what counts is how many instructions
// and requests each warp issues, not bandwidth. padded_32x8 stores one element per instruction:
// a warp of bytes writes 32 bytes, one sector, per store. Here a block of 32 x 4 threads loads
// its 32 x 32 tile as usual (coalesced element loads, 8 per thread), then each thread builds VE
// consecutive elements of one output row from a column of the tile and stores them at once:
//
//   element size   1     2     4     8          VE = min(8, 16 / size) elements per store
//   store bytes    8    16    16    16          (bytes: 8, so that all 128 threads store)
//
// Whether a store can be a vector is a property of the shape, not of the kernel: the piece of
// row c of `out` that starts at column r0 + i sits at byte (c * rows + r0 + i) * size, aligned to
// VE elements for every c exactly when rows % VE == 0 (r0 and i are multiples of VE). 1000 x 1030
// qualifies (1000 % 8 == 0); 8191 x 8193 does not, and there the same kernel stores element by
// element (the sector kernel is the one for that case). The test runs once per launch, on values
// every thread shares, so no warp diverges on it; pieces that run past the matrix's last row are
// stored element by element too.
//
// Bank conflicts on the column read: lane (oc, m) of a warp reads t[VE m + k][oc] — PIECES lanes
// per output row, 32 / PIECES rows. PAD is chosen per element size so those land in different
// banks (floats: 1; halves: 2, a 68-byte pitch; bytes: 4, a 36-byte pitch). Doubles stay 2-way:
// a half-warp reads 16 rows two apart, and 2m * pitch takes only 8 values mod 16 8-byte banks.
// The loads into the tile are padded_32x8's.

template <int N> struct Vec;
template <> struct Vec<8> { using type = uint2; };
template <> struct Vec<16> { using type = uint4; };

template <typename T, int TILE, int BLOCK_ROWS, int PAD>
__global__ void vec_out(T* __restrict__ out, const T* __restrict__ in, int rows, int cols)
{
    constexpr int S = sizeof(T);
    constexpr int VE = 16 / S < 8 ? 16 / S : 8;      // elements per store
    constexpr int PIECES = TILE / VE;                 // stores per row segment of `out`
    constexpr int THREADS = TILE * BLOCK_ROWS;
    static_assert(TILE % VE == 0 && (TILE * PIECES) % THREADS == 0, "TILE must be a multiple of 8");
    using V = typename Vec<VE * S>::type;
    union Piece { V v; T e[VE]; };

    __shared__ T t[TILE][TILE + PAD];

    const int r0 = blockIdx.y * TILE, c0 = blockIdx.x * TILE;
    const int x = c0 + threadIdx.x, y = r0 + threadIdx.y;
#pragma unroll
    for (int j = 0; j < TILE; j += BLOCK_ROWS)
        if (x < cols && y + j < rows)
            t[threadIdx.y + j][threadIdx.x] = in[(size_t)(y + j) * cols + x];

    __syncthreads();

    const bool vectors = rows % VE == 0 && (size_t)out % (VE * S) == 0;
    const int tid = threadIdx.y * TILE + threadIdx.x;
#pragma unroll
    for (int p = tid; p < TILE * PIECES; p += THREADS) {
        const int oc = p / PIECES, oi = p % PIECES * VE;    // row of the tile's output, first element
        const int orow = c0 + oc, ocol = r0 + oi;            // in `out` (cols x rows)
        if (orow >= cols)
            continue;
        T* dst = out + (size_t)orow * rows + ocol;
        if (vectors && ocol + VE <= rows) {
            Piece piece;
#pragma unroll
            for (int k = 0; k < VE; ++k)
                piece.e[k] = t[oi + k][oc];
            *reinterpret_cast<V*>(dst) = piece.v;
        } else {
#pragma unroll
            for (int k = 0; k < VE; ++k)
                if (ocol + k < rows)
                    dst[k] = t[oi + k][oc];
        }
    }
}

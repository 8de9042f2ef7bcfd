// vec_out.cu — a padded tile moved with as few instructions as the shape allows: the small-shape
// transpose.
//
// On a small matrix (1000 x 1030: 4 MB of floats, 1 MB of bytes) a transpose takes a few
// microseconds and every block runs in the first wave, so what counts is how many instructions
// and requests each warp issues, not bandwidth. padded_32x8 moves one element per instruction: a
// warp of bytes reads and writes 32 bytes, one sector, at a time. A block of 32 x 4 threads here
// moves a 32 x 32 tile with wider accesses on both sides, each chosen by the shape:
//
//   loads   1- and 2-byte elements in pairs (a 2- or 4-byte load and one shared store per pair)
//           when every row of `in` starts on a pair boundary: cols even. Otherwise one at a time.
//   stores  each thread builds VE consecutive elements of one output row from a column of the
//           tile and stores them at once, when the rows of `out` allow it: rows % VE == 0.
//
//   element size   1     2     4     8          VE = min(8, 16 / size) elements per store
//   store bytes    8    16    16    16          (bytes: 8, so that all 128 threads store)
//
// Why rows % VE: the piece of row c of `out` that starts at column r0 + i sits at byte
// (c * rows + r0 + i) * size, aligned to VE elements for every c exactly when rows % VE == 0 (r0
// and i are multiples of VE). 1000 x 1030 qualifies for both (1000 % 8 == 0, 1030 even); 8191 x 8193
// for neither, and there vec_out is padded_32x8 with 32 x 4 threads (the sector kernel is the one
// for that case). Both tests run once per launch on values every thread shares, so no warp
// diverges on them; the pieces past the matrix's last row are stored element by element.
//
// Bank conflicts. Pair stores: a warp covers two half-rows 16 rows apart, which start 16 banks
// apart with the pitches below. Column reads: lane (oc, m) reads t[VE m + k][oc] — PIECES lanes per
// output row, 32 / PIECES rows. PAD per element size keeps both conflict-free (floats: 1; halves:
// 2, a 68-byte pitch; bytes: 4, a 36-byte pitch). Doubles read 2-way: a half-warp reads 16 rows two
// apart, and 2m * pitch takes only 8 values mod 16 8-byte banks.

template <int N> struct Vec;
template <> struct Vec<1> { using type = unsigned char; };
template <> struct Vec<2> { using type = unsigned short; };
template <> struct Vec<4> { using type = unsigned int; };
template <> struct Vec<8> { using type = uint2; };
template <> struct Vec<16> { using type = uint4; };

// Phase 1: the tile's rows into shared memory, LV elements per load and per shared store (LV = 2:
// one 2-byte load for two bytes, one 4-byte load for two halves; every load issued before any store).
// A row is PER_ROW = TILE / LV loads. Where that is at most a warp, a warp covers R = 32 / PER_ROW
// rows per instruction, TILE / R rows apart: with the pitch of halves (34 elements, 17 words) rows 16
// apart start 16 banks apart, so the two halves of a warp never share a bank (TILE 32, LV 2). A wider
// row (TILE 64 with LV 1, TILE 128) takes C = PER_ROW / 32 warp instructions, one piece each.
template <typename T, int LV, int TILE, int PAD, int THREADS>
__device__ __forceinline__ void load_rows(T (*t)[TILE + PAD], const T* __restrict__ in, int rows, int cols,
                                          int r0, int c0, int tid)
{
    using L = typename Vec<LV * sizeof(T)>::type;
    constexpr int PER_ROW = TILE / LV, WARPS = THREADS / 32;
    constexpr int R = PER_ROW <= 32 ? 32 / PER_ROW : 1, C = PER_ROW <= 32 ? 1 : PER_ROW / 32;
    constexpr int N = TILE * C / (R * WARPS);            // instructions per thread
    static_assert(32 % (PER_ROW <= 32 ? PER_ROW : 32) == 0 && (TILE * C) % (R * WARPS) == 0,
                  "the warps must cover the tile's rows evenly");
    const int lane = tid & 31, warp = tid / 32;
    int rr[N], cc[N];
#pragma unroll
    for (int j = 0; j < N; ++j) {
        const int u = warp + j * WARPS;                   // the warp's unit: a row group, or a row's piece
        rr[j] = C == 1 ? lane / PER_ROW * (TILE / R) + u : u / C;
        cc[j] = C == 1 ? lane % PER_ROW * LV : (u % C * 32 + lane) * LV;
    }
    L v[N];
#pragma unroll
    for (int j = 0; j < N; ++j)                          // with LV = 2 and cols even: the whole pair
        if (c0 + cc[j] < cols && r0 + rr[j] < rows)
            v[j] = *reinterpret_cast<const L*>(in + (size_t)(r0 + rr[j]) * cols + c0 + cc[j]);
#pragma unroll
    for (int j = 0; j < N; ++j)
        if (c0 + cc[j] < cols && r0 + rr[j] < rows)
            *reinterpret_cast<L*>(&t[rr[j]][cc[j]]) = v[j];
}

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

    __shared__ __align__(16) T t[TILE][TILE + PAD];

    const int r0 = blockIdx.y * TILE, c0 = blockIdx.x * TILE;
    const int tid = threadIdx.y * TILE + threadIdx.x;
    // Pairs of 1- or 2-byte elements when every row of `in` starts on a pair boundary (cols even);
    // the shared pitch keeps pairs aligned there too ((TILE + PAD) * S is a multiple of 2 * S).
    constexpr bool PAIRS_FIT = S <= 2 && (TILE + PAD) % 2 == 0;
    if (PAIRS_FIT && cols % 2 == 0 && (size_t)in % (2 * S) == 0)
        load_rows<T, PAIRS_FIT ? 2 : 1, TILE, PAD, THREADS>(t, in, rows, cols, r0, c0, tid);
    else
        load_rows<T, 1, TILE, PAD, THREADS>(t, in, rows, cols, r0, c0, tid);

    __syncthreads();

    if (!(rows % VE == 0 && (size_t)out % (VE * S) == 0)) {
        // No vector fits this shape: padded_32x8's stores, a warp along one output row.
        for (int j = threadIdx.y; j < TILE; j += BLOCK_ROWS)
            if (c0 + j < cols && r0 + threadIdx.x < rows)
                out[(size_t)(c0 + j) * rows + r0 + threadIdx.x] = t[threadIdx.x][j];
        return;
    }
#pragma unroll
    for (int p = tid; p < TILE * PIECES; p += THREADS) {
        const int oc = p / PIECES, oi = p % PIECES * VE;    // row of the tile's output, first element
        const int orow = c0 + oc, ocol = r0 + oi;            // in `out` (cols x rows)
        if (orow >= cols)
            continue;
        T* dst = out + (size_t)orow * rows + ocol;
        if (ocol + VE <= rows) {
            Piece piece;
#pragma unroll
            for (int k = 0; k < VE; ++k)
                piece.e[k] = t[oi + k][oc];
            *reinterpret_cast<V*>(dst) = piece.v;
        } else {                                             // the matrix's last rows: element by element
#pragma unroll
            for (int k = 0; k < VE; ++k)
                if (ocol + k < rows)
                    dst[k] = t[oi + k][oc];
        }
    }
}

// sector_tile.cu — a tiled transpose whose stores always write whole 32-byte sectors.
//
// Why. When the rows of `out` do not start on 32-byte boundaries (8191 x 8193: a row of `out`
// is 8191 elements), the usual tile's output pieces start in the middle of a sector: each warp's
// store touches 5 sectors where 4 carry its 128 bytes, and the first and last are written only in
// part — the other part comes from the neighbouring tile, written by another block much later.
// Measured on an H100 (benchmarks/misaligned_probe.py): a padded 32x32 tile whose rows of `in`
// are misaligned but rows of `out` aligned runs at 0.94 of a copy; the reverse at 0.61. Misaligned
// loads cost nothing measurable; partially written sectors cost a third of the bandwidth.
//
// How. The boundaries between two tiles are moved, in every row of `out`, to the next sector
// boundary. A block owns, in output row c, the elements from the first 32-byte boundary at or
// after its first row to the first boundary at or after the next tile's first row (the ends of
// the matrix are ends). To write them it needs up to SE - 1 rows of the next tile (SE elements
// per sector), so it loads TR + SE - 1 rows of `in` ("halo" rows, read twice: by this block and
// by the next) into a padded shared tile. Each warp then writes runs of whole sectors; only the
// sector where one output row ends and the next begins is still shared, once per row.
// When every output row starts on a sector boundary the halo is skipped: it is the plain tile.
//
// TR x TC tile (rows x columns of `in`), 32 x BY threads; any shape, any element size.
//
// 1- and 2-byte elements move as 4-byte words on both sides (one element per thread would carry a
// quarter or half of what a warp's request can). Phase 1: each lane loads the aligned word under
// 4 bytes of a tile row, shifts it into place with the word of the lane to its right
// (__funnelshift_r), and turns 4 / S rows x 4 / S columns around inside registers (__byte_perm,
// pack.cuh), so that the tile is stored transposed: shared row c holds output row c. Phase 2 copies
// whole aligned words of each output row out, each shifted out of two shared words. Phase 1's lanes
// store to shared rows 4 / S apart; the rows are skewed by one word every 4 / S rows so that those
// stores land in different banks.

#include "pack.cuh"

// Which part of output row `row` (elements) a tile starting at input row r0 owns: from the first
// sector boundary at or after r0 to the first one at or after r0 + TR (ends of the row are ends).
template <typename T, int TR>
__device__ __forceinline__ int2 owned(const T* row, int r0, int rows, bool shifted)
{
    constexpr int S = sizeof(T), SE = 32 / S;
    if (!shifted)
        return make_int2(r0, min(r0 + TR, rows));
    const int head = (int)((size_t)(row + r0) & 31) / S;          // elements into a sector
    const int tail = (int)((size_t)(row + r0 + TR) & 31) / S;
    const int first = r0 == 0 ? 0 : r0 + (head ? SE - head : 0);
    const int last = r0 + TR >= rows ? rows : min(r0 + TR + (tail ? SE - tail : 0), rows);
    return make_int2(first, last);
}

// 4- and 8-byte elements: one per thread on both sides.
template <typename T, int TR, int TC, int BY>
__device__ __forceinline__ void sector_elements(T* __restrict__ out, const T* __restrict__ in, int rows, int cols,
                                                bool shifted)
{
    constexpr int SE = 32 / sizeof(T);               // elements per sector
    constexpr int HALO = SE - 1;                     // rows of the next tile this one may need
    constexpr int NI = (TR + HALO + BY - 1) / BY;    // rows each thread loads
    constexpr int NJ = TC / 32;                      // columns each thread loads
    __shared__ T t[TR + HALO][TC + 1];               // + 1: columns are read without bank conflicts

    const int tx = threadIdx.x, ty = threadIdx.y;
    const int r0 = blockIdx.y * TR, c0 = blockIdx.x * TC;
    const int need = shifted ? TR + HALO : TR;       // rows of `in` this block reads

    // Phase 1: every load first (in flight together), then the shared stores.
    T v[NI][NJ];
#pragma unroll
    for (int i = 0; i < NI; ++i)
#pragma unroll
        for (int j = 0; j < NJ; ++j) {
            const int r = ty + i * BY, c = tx + 32 * j;
            const bool inside = r < need && r0 + r < rows && c0 + c < cols;
            v[i][j] = inside ? in[(size_t)(r0 + r) * cols + c0 + c] : T(0);
        }
#pragma unroll
    for (int i = 0; i < NI; ++i)
#pragma unroll
        for (int j = 0; j < NJ; ++j)
            if (ty + i * BY < TR + HALO)
                t[ty + i * BY][tx + 32 * j] = v[i][j];

    __syncthreads();

    // Phase 2: warp ty writes output rows c0 + ty, c0 + ty + BY, ...: lanes run along the row.
    for (int cc = ty; cc < TC && c0 + cc < cols; cc += BY) {
        T* row = out + (size_t)(c0 + cc) * rows;     // output row = column c0 + cc of `in`
        const int2 own = owned<T, TR>(row, r0, rows, shifted);
        // runs of 32 elements from a sector boundary: where the row starts mid-sector (the
        // first tile), its head is written on its own first
        const int head = (int)(((32 - ((size_t)(row + own.x) & 31)) & 31) / sizeof(T));
        const int a = min(own.x + head, own.y);
        if (tx < a - own.x)
            row[own.x + tx] = t[own.x + tx - r0][cc];
        for (int r = a + tx; r < own.y; r += 32)
            row[r] = t[r - r0][cc];
    }
}

// 1- and 2-byte elements, phase 1 (see the header): a warp takes EPW rows at a time; lane l the
// aligned word under tile bytes 4l..4l+3 of each (lane 31 also the word after it). U row blocks of
// loads are issued before any is used. Each row's words are then shifted into place (the next word
// comes from the lane to the right), turned around with __byte_perm (EPW rows x EPW columns) and
// stored: one word per column = EPW consecutive elements of an output row. CHECKED: this block
// touches the first or last word of `in`, which may hang over its ends; only such blocks pay for
// the byte-by-byte loads.
template <typename T, int TR, int TC, int BY, bool CHECKED>
__device__ __forceinline__ void words_in(unsigned* sh, const T* __restrict__ in, int rows, int cols, int r0, int c0,
                                         int need)
{
    constexpr int S = sizeof(T), EPW = 4 / S, HALO = 32 / S - 1;
    constexpr int NB = (TR + HALO + EPW - 1) / EPW, NIT = (NB + BY - 1) / BY, PW = NB + 2;
    constexpr int U = NIT < 2 ? NIT : 2;              // row blocks in flight per warp (registers)
    const int lane = threadIdx.x, warp = threadIdx.y;
    const unsigned char* inb = reinterpret_cast<const unsigned char*>(in);
    const unsigned char* tile = inb + ((long long)r0 * cols + c0) * S;     // element (0, c0) of the tile
    const long long row_bytes = (long long)cols * S;
    const long long size = (long long)rows * cols * S;                     // bytes of `in`
    const int live_rows = min(need, rows - r0);
    auto word = [&](const unsigned char* p) -> unsigned {   // the aligned word at p
        if constexpr (CHECKED) {
            const long long off = p - inb;
            if (off < 0 || off + 4 > size) {          // over an end of `in`: byte by byte
                unsigned w = 0;
                for (int b = 0; b < 4; ++b)
                    if (off + b >= 0 && off + b < size)
                        w |= (unsigned)inb[off + b] << (8 * b);
                return w;
            }
        }
        return __ldg(reinterpret_cast<const unsigned*>(p));
    };
    unsigned* dst = sh + EPW * lane * PW + lane;      // shared row EPW * lane (+ e * PW for column e)
    // Without CHECKED the tile's bytes lie within 2^31 of an aligned word below it: 32-bit offsets.
    const unsigned* tile_words = reinterpret_cast<const unsigned*>(tile - ((size_t)tile & 3));
    const int tile_m = (int)((size_t)tile & 3), rb = (int)row_bytes;
#pragma unroll
    for (int it0 = 0; it0 < NIT; it0 += U) {
        unsigned a[U][EPW], b[U][EPW];
        int m[U][EPW];
#pragma unroll
        for (int u = 0; u < U; ++u)
#pragma unroll
            for (int k = 0; k < EPW; ++k) {
                const int p = (warp + (it0 + u) * BY) * EPW + k;
                const bool live = it0 + u < NIT && p < live_rows;
                if constexpr (CHECKED) {
                    const unsigned char* r = tile + p * row_bytes;              // element (p, c0)
                    m[u][k] = (int)((size_t)r & 3);                             // its byte in its word
                    const unsigned char* w = r - m[u][k] + 4 * lane;
                    a[u][k] = live ? word(w) : 0u;
                    b[u][k] = live && lane == 31 && m[u][k] ? word(w + 4) : 0u;
                } else {
                    const int off = tile_m + p * rb;                            // element (p, c0)
                    m[u][k] = off & 3;
                    const unsigned* w = tile_words + (off >> 2) + lane;
                    a[u][k] = live ? __ldg(w) : 0u;
                    b[u][k] = live && lane == 31 && m[u][k] ? __ldg(w + 1) : 0u;
                }
            }
#pragma unroll
        for (int u = 0; u < U; ++u) {
            const int blk = warp + (it0 + u) * BY;
            unsigned w[EPW], col[EPW][1];
#pragma unroll
            for (int k = 0; k < EPW; ++k) {
                const unsigned next = __shfl_down_sync(0xffffffffu, a[u][k], 1);
                w[k] = __funnelshift_r(a[u][k], lane < 31 ? next : b[u][k], 8 * m[u][k]);
            }
            transpose_words<S, EPW>(w, col);         // col[e]: column EPW * lane + e, rows blk * EPW...
            if (it0 + u < NIT && blk < NB)
#pragma unroll
                for (int e = 0; e < EPW; ++e)
                    dst[e * PW + blk] = col[e][0];
        }
    }
}

// 1- and 2-byte elements: 4-byte words on both sides (see the header). TC * S = 128: one word
// of each tile row per lane.
template <typename T, int TR, int TC, int BY>
__device__ __forceinline__ void sector_words(T* __restrict__ out, const T* __restrict__ in, int rows, int cols,
                                             bool shifted)
{
    constexpr int S = sizeof(T), EPW = 4 / S, HALO = 32 / S - 1;
    static_assert(TC * S == 128, "1- and 2-byte elements: a tile row is 128 bytes, one word per lane");
    constexpr int NB = (TR + HALO + EPW - 1) / EPW;   // blocks of EPW rows (one output word each)
    constexpr int PW = NB + 2;                        // words per shared row (+ 2: phase 2 reads past the end)
    __shared__ unsigned sh[TC * PW + TC / EPW + 1];   // row cc starts at word cc * PW + cc / EPW (skewed)

    const int lane = threadIdx.x, warp = threadIdx.y;
    const int r0 = blockIdx.y * TR, c0 = blockIdx.x * TC;
    const int need = shifted ? TR + HALO : TR;
    // does a word of this block hang over an end of `in`? (a row's 128-byte piece and the word after
    // it reach past the row when the matrix is narrow) Or are its rows too far apart for 32-bit offsets?
    const long long last = ((long long)(min(r0 + need, rows) - 1) * cols + c0) * S + 128 + 8;
    const bool edge = last > (long long)rows * cols * S || (r0 == 0 && ((size_t)in & 3)) ||
                      (long long)(TR + HALO) * cols * S + 256 > 0x7fffffffLL;
    if (edge)
        words_in<T, TR, TC, BY, true>(sh, in, rows, cols, r0, c0, need);
    else
        words_in<T, TR, TC, BY, false>(sh, in, rows, cols, r0, c0, need);

    __syncthreads();

    // Phase 2: warp ty copies output rows c0 + ty, c0 + ty + BY, ...: shared row cc holds elements
    // r0, r0 + 1, ... of output row c0 + cc from its first byte. The tile's part of the row is
    // whole sectors, written 8 bytes per lane, each aligned word shifted out of two shared words;
    // in the first and last tile of a row the row's ends are partial sectors, written on their own.
    const bool inner = r0 > 0 && r0 + TR + HALO < rows;            // no row ends in this tile
    for (int cc = warp; cc < TC && c0 + cc < cols; cc += BY) {
        T* row = out + (size_t)(c0 + cc) * rows;
        const int2 own = owned<T, TR>(row, r0, rows, shifted);
        unsigned char* g = reinterpret_cast<unsigned char*>(row + r0);         // element r0 in `out`
        const unsigned* sr = sh + cc * PW + cc / EPW;
        const int b0 = (own.x - r0) * S, b1 = (own.y - r0) * S;                // owned bytes, from g
        const int mu = (int)((size_t)g & 31);
        const int s0 = inner ? b0 : min(b0 + ((32 - ((mu + b0) & 31)) & 31), b1);   // sector boundaries
        const int s1 = inner ? b1 : max(b1 - ((mu + b1) & 31), s0);
        const int sh8 = 8 * (s0 & 3);                                          // s0's byte in its shared word
        for (int b = s0 + 8 * lane; b < s1; b += 256) {
            const int q = b >> 2;
            const unsigned x = sr[q], y = sr[q + 1], z = sr[q + 2];
            *reinterpret_cast<uint2*>(g + b) = make_uint2(__funnelshift_r(x, y, sh8), __funnelshift_r(y, z, sh8));
        }
        if (inner)
            continue;
        const unsigned char* sb = reinterpret_cast<const unsigned char*>(sr);
        for (int b = b0 + S * lane; b < s0; b += 32 * S)                        // where the row starts
            *reinterpret_cast<T*>(g + b) = *reinterpret_cast<const T*>(sb + b);
        for (int b = s1 + S * lane; b < b1; b += 32 * S)                        // where the row ends
            *reinterpret_cast<T*>(g + b) = *reinterpret_cast<const T*>(sb + b);
    }
}

template <typename T, int TR, int TC, int BY>
__global__ void __launch_bounds__(32 * BY) sector_tile(T* __restrict__ out, const T* __restrict__ in, int rows, int cols)
{
    static_assert(TC % 32 == 0 && TR % (32 / sizeof(T)) == 0, "TC: whole warps; TR: whole sectors");
    const bool shifted = (((size_t)out | (size_t)rows * sizeof(T)) & 31) != 0;   // an output row starts mid-sector
    if constexpr (sizeof(T) >= 4)
        sector_elements<T, TR, TC, BY>(out, in, rows, cols, shifted);
    else
        sector_words<T, TR, TC, BY>(out, in, rows, cols, shifted);
}

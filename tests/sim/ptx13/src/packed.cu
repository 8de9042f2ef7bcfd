// packed.cu — 8- and 16-bit elements moved as 32-bit words, transposed with __byte_perm.
//
// A warp that loads one byte per thread moves 32 bytes per instruction: one sector, and eight
// times the instructions a float transpose needs for the same bytes. Here every access is a
// whole 32-bit word of E = 4 / sizeof(T) elements (4 bytes, or 2 shorts):
//
//   1. thread x of each row loads word x: the tile is 32 rows x 32 words (32 x 32E elements),
//      a warp loads 128 contiguous bytes (4 sectors) and stores them in shared memory by row;
//   2. a thread then reads E words that sit in one word column, in E consecutive rows: an E x E
//      block of elements. __byte_perm (PTX prmt, which picks any 4 of the 8 bytes of two
//      registers) turns it around: 2 prmt for a 2x2 block of shorts, 8 for 4x4 bytes (pack.cuh);
//   3. each resulting word is E consecutive elements of one row of `out`: stored as a word.
//
// Bank conflicts in step 2: a warp reads 32/E row groups x E word columns. Word (row, col)
// lives at row * (32 + PAD) + col. PAD = 0: every row starts in bank 0, the 32/E groups of a
// column land in one bank -> (32/E)-way (8-way for bytes, 16 for shorts, 32 for floats).
// PAD = 1: bank = E*g + k + col, all different -> conflict-free.
//
// With 4-byte T this is the classic padded tile (and 8-byte T are moved as one 8-byte "word"
// each). Rows whose length is not a whole number of words (odd widths) are loaded and stored
// element by element; everything else is words.

#include "pack.cuh"

template <int S> struct WordOf { using type = unsigned; };
template <> struct WordOf<8> { using type = unsigned long long; };

template <typename T, int BLOCK_ROWS, int PAD>
__global__ void packed(T* __restrict__ out, const T* __restrict__ in, int rows, int cols)
{
    constexpr int S = sizeof(T);
    using W = typename WordOf<S>::type;        // a 32-bit word (a 64-bit one for doubles)
    constexpr int E = sizeof(W) / S;           // elements per word
    constexpr int TR = 32;                     // rows of `in` per tile
    constexpr int TC = 32 * E;                 // columns of `in` per tile: 32 words
    constexpr int NG = TR / E;                 // groups of E rows
    __shared__ W w[TR][32 + PAD];

    const int r0 = blockIdx.y * TR, c0 = blockIdx.x * TC;
    const bool in_words = (size_t)cols * S % sizeof(W) == 0;    // every row of in starts on a word
    const bool out_words = (size_t)rows * S % sizeof(W) == 0;   // every row of out starts on a word

    // 1. rows of words into shared memory (zeros past the edge, so step 2 reads only data).
    //    All of a thread's loads are issued before any is stored: inside the loop the row test
    //    selects the value rather than branching around the load, because a load behind a
    //    branch cannot be moved above it — with a branch per row the H100 ran this kernel's
    //    loads one at a time (0.71 of a copy for floats where the same tile otherwise gets 0.94).
    constexpr int NJ = TR / BLOCK_ROWS;        // rows per thread (BLOCK_ROWS divides 32)
    const int c = c0 + threadIdx.x * E;
    W v[NJ];
    if (in_words && c + E <= cols) {           // whole words: the common case
#pragma unroll
        for (int n = 0; n < NJ; ++n) {
            const int j = threadIdx.y + n * BLOCK_ROWS;
            v[n] = r0 + j < rows ? *reinterpret_cast<const W*>(in + (size_t)(r0 + j) * cols + c) : W(0);
        }
    } else {                                   // a word sticking out of the row, or odd widths
#pragma unroll
        for (int n = 0; n < NJ; ++n) {
            const int j = threadIdx.y + n * BLOCK_ROWS;
            v[n] = 0;
            if constexpr (S < 8)
                if (r0 + j < rows)
                    for (int e = 0; e < E; ++e)
                        if (c + e < cols)
                            v[n] |= bits_of(in[(size_t)(r0 + j) * cols + c + e]) << (8 * S * e);
        }
    }
#pragma unroll
    for (int n = 0; n < NJ; ++n)
        w[threadIdx.y + n * BLOCK_ROWS][threadIdx.x] = v[n];

    __syncthreads();

    // 2-3. an E x E block per thread: lanes take NG row groups of E word columns
    for (int t = threadIdx.y * 32 + threadIdx.x; t < NG * 32; t += 32 * BLOCK_ROWS) {
        int g = t % NG, col = t / NG;
        W a[E], o[E][1];
#pragma unroll
        for (int k = 0; k < E; ++k)
            a[k] = w[E * g + k][col];
        if constexpr (S == 8)
            o[0][0] = a[0];
        else
            transpose_words<S, E>(a, o);
        int ox = r0 + E * g;                   // first column of out this word covers
#pragma unroll
        for (int e = 0; e < E; ++e) {
            int oy = c0 + col * E + e;         // row of out = column of in
            if (oy >= cols)
                continue;
            T* q = out + (size_t)oy * rows + ox;
            if (out_words && ox + E <= rows)
                *reinterpret_cast<W*>(q) = o[e][0];
            else if constexpr (S < 8)
                for (int k = 0; k < E; ++k)
                    if (ox + k < rows)
                        q[k] = from_bits<T>(o[e][0] >> (8 * S * k));
        }
    }
}

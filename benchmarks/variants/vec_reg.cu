// vec_reg.cu: an A/B candidate for vec_out on small matrices of 1- and 2-byte elements, with no
// shared memory at all (benchmarks/rounds.py small registers it as `reg`). The prototype of
// kernels/pieces.cu, kept because benchmarks/results/h100_2026-11-27_small records sweeps of its
// layouts (one and four columns per thread too); the course kernel is pieces.cu.
//
// Same template, tile and block as vec_out (a TILE x TILE tile per block of TILE x BLOCK_ROWS
// threads), so the catalog launches it unchanged. Each thread takes an 8 x W piece (W = 2 or 1
// elements across): 8 loads of W elements down eight rows of `in`, transposed in registers
// (__byte_perm, shifts) into W rows of 8 elements of `out`, stored with one 8- or 16-byte store each.
// No tile, no barrier: on a matrix whose every block runs in the first wave the kernel is a load
// round trip and a store. A piece that does not fit the fast path (odd cols with W = 2, rows not a
// multiple of 8, the matrix's edge, a 4- or 8-byte type) moves element by element.
//
// PAD (vec_out's padding has no meaning here) encodes the lanes' layout: G = PAD % 16 (0 as 1) row
// groups of 8 rows run fastest across lanes, then pieces along a row; PAD >= 16 makes W = 1, PAD >= 32
// W = 4 (two 2-element loads per row, four stores).
// G = 1: a warp loads 32 consecutive pieces of one row, its stores land in 32 W rows of `out`;
// G = 4: it loads from 4 row groups and its stores fill 32 consecutive bytes (bytes) of each row.

template <int N> struct Bits;
template <> struct Bits<1> { using row8 = uint2; };
template <> struct Bits<2> { using row8 = uint4; };
template <int N> struct Word;
template <> struct Word<1> { using type = unsigned char; };
template <> struct Word<2> { using type = unsigned short; };
template <> struct Word<4> { using type = unsigned int; };

template <typename T, int W>
__device__ __forceinline__ void piece_by_element(T* out, const T* in, int rows, int cols, int r, int c)
{
    for (int k = 0; k < 8; ++k)
        for (int j = 0; j < W; ++j)
            if (r + k < rows && c + j < cols)
                out[(size_t)(c + j) * rows + r + k] = in[(size_t)(r + k) * cols + c + j];
}

// 8 words of W S-byte elements (column j of the piece at bits [8 S j, 8 S (j + 1))) -> row j of `out`
template <int S, int W>
__device__ __forceinline__ typename Bits<S>::row8 column(const unsigned (&a)[8], int j)
{
    if constexpr (S == 1 && W == 2) {
        const unsigned w01 = a[0] | a[1] << 16, w23 = a[2] | a[3] << 16, w45 = a[4] | a[5] << 16, w67 = a[6] | a[7] << 16;
        const unsigned sel = j ? 0x7531 : 0x6420;
        return make_uint2(__byte_perm(w01, w23, sel), __byte_perm(w45, w67, sel));
    } else if constexpr (S == 1) {
        return make_uint2(a[0] | a[1] << 8 | a[2] << 16 | a[3] << 24, a[4] | a[5] << 8 | a[6] << 16 | a[7] << 24);
    } else if constexpr (W == 2) {
        const unsigned sel = j ? 0x7632 : 0x5410;
        return make_uint4(__byte_perm(a[0], a[1], sel), __byte_perm(a[2], a[3], sel),
                          __byte_perm(a[4], a[5], sel), __byte_perm(a[6], a[7], sel));
    } else {
        return make_uint4(a[0] | a[1] << 16, a[2] | a[3] << 16, a[4] | a[5] << 16, a[6] | a[7] << 16);
    }
}

template <typename T, int TILE, int BLOCK_ROWS, int PAD>
__global__ void vec_out(T* __restrict__ out, const T* __restrict__ in, int rows, int cols)
{
    constexpr int S = sizeof(T), W = PAD >= 32 ? 4 : PAD >= 16 ? 1 : 2, G = PAD % 16 < 1 ? 1 : PAD % 16;
    constexpr int ACROSS = TILE / W, UNITS = ACROSS * (TILE / 8), THREADS = TILE * BLOCK_ROWS;
    static_assert((TILE / 8) % G == 0, "PAD % 16 (row groups per lane run) must divide TILE / 8");
    const int r0 = blockIdx.y * TILE, c0 = blockIdx.x * TILE;
    const bool fits = S <= 2 && cols % (W < 2 ? 1 : 2) == 0 && rows % 8 == 0;
    for (int p = threadIdx.y * TILE + threadIdx.x; p < UNITS; p += THREADS) {
        const int g = p % G + p / (G * ACROSS) * G, cp = p / G % ACROSS;
        const int r = r0 + g * 8, c = c0 + cp * W;
        if (r >= rows || c >= cols)
            continue;
        if constexpr (S <= 2) {
            if (fits && r + 8 <= rows && c + W <= cols) {
                constexpr int WL = W < 2 ? W : 2;                  // elements per load
                using P = typename Word<S * WL>::type;
                using R = typename Bits<S>::row8;
                unsigned a[W / WL][8];
#pragma unroll
                for (int h = 0; h < W / WL; ++h)
#pragma unroll
                    for (int k = 0; k < 8; ++k)
                        a[h][k] = *reinterpret_cast<const P*>(in + (size_t)(r + k) * cols + c + h * WL);
#pragma unroll
                for (int j = 0; j < W; ++j)
                    *reinterpret_cast<R*>(out + (size_t)(c + j) * rows + r) = column<S, WL>(a[j / WL], j % WL);
                continue;
            }
        }
        piece_by_element<T, W>(out, in, rows, cols, r, c);
    }
}

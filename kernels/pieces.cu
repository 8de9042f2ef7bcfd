// pieces.cu — a transpose with no tile at all: each thread moves an 8 x 2 piece through its own
// registers. The kernel for small matrices of bytes and halves.
//
// On a small matrix every block runs in the first wave, and a tiled kernel's time is one round trip
// to memory for the loads, a barrier, shared-memory reads, and the stores. Here a thread reads two
// elements from each of 8 consecutive rows of `in` (8 loads of 2 or 4 bytes, all in flight at
// once), rearranges them in registers (__byte_perm for bytes, shifts for halves) into two runs of
// 8 elements — 8 consecutive elements of two rows of `out` — and stores each with one 8- or 16-byte
// store. No shared memory, no barrier, no bank conflicts.
//
// Which lanes take which pieces. A warp takes G row groups (8 rows each) of 32 / G column pairs:
// G = 8 (the default for bytes, with a 64 x 64 tile) means 64 rows x 8 columns. Each of its two store
// instructions then fills 64 consecutive bytes (bytes; 128 for halves) of 4 rows of `out`, 2 or 3
// sectors a row (10.8 sectors per request at uint8 1000 x 1030), while each load reads 8 bytes of
// 8 rows (9.3). The opposite layout (G = 1: 32 pairs along one row) reads whole sectors (2.8) but
// scatters every store over 32 rows of `out`, 8 bytes apiece (30.3); on an H100 it ran at 0.61 of a
// copy against 0.92 for G = 8 (uint8 1000 x 1030, benchmarks/results/h100_2026-11-27_small). Halves
// default to a 32 x 32 tile with G = 4 (64 threads a block, 8 blocks on every SM at 1000 x 1030),
// a point or two ahead of 64 x 64 in every run there; bytes the other way round.
//
// Why not one warp per patch over the whole matrix (no tile, a grid sized to fill every SM evenly)?
// Tried: on an H100 it ran 1-2 % behind the tiled launch for both types (same results folder).
//
// When the fast path applies: 1- or 2-byte elements, cols even (a pair never straddles a row) and
// rows % 8 == 0 (each 8-element run of `out` starts on an 8-element boundary, so the vector store is
// aligned for every row of `out`). 1000 x 1030 qualifies. Anything else — the pieces past the matrix's
// edge, odd cols, 4- and 8-byte elements — is moved element by element: correct, not fast.

template <int S> struct Pair;        // two S-byte elements as one load, eight as one store
template <> struct Pair<1> { using two = unsigned short; using eight = uint2; };
template <> struct Pair<2> { using two = unsigned int; using eight = uint4; };

// Row j (0 or 1) of `out` from the 8 pairs a[k] (row k of the piece: element 0 in the low bits).
template <int S>
__device__ __forceinline__ typename Pair<S>::eight column_of(const unsigned (&a)[8], int j)
{
    if constexpr (S == 1) {
        const unsigned w01 = a[0] | a[1] << 16, w23 = a[2] | a[3] << 16;
        const unsigned w45 = a[4] | a[5] << 16, w67 = a[6] | a[7] << 16;
        const unsigned sel = j ? 0x7531 : 0x6420;        // the odd or the even bytes of each word pair
        return make_uint2(__byte_perm(w01, w23, sel), __byte_perm(w45, w67, sel));
    } else {                                             // the low or the high half of each word
        const unsigned sh = j ? 16 : 0, keep = 0xffffu;
        return make_uint4((a[0] >> sh & keep) | (a[1] >> sh & keep) << 16, (a[2] >> sh & keep) | (a[3] >> sh & keep) << 16,
                          (a[4] >> sh & keep) | (a[5] >> sh & keep) << 16, (a[6] >> sh & keep) | (a[7] >> sh & keep) << 16);
    }
}

template <typename T, int TILE, int G>
__global__ void pieces(T* __restrict__ out, const T* __restrict__ in, int rows, int cols)
{
    constexpr int S = sizeof(T), PAIRS = TILE / 2;
    static_assert(TILE % 8 == 0 && (TILE / 8) % G == 0 && 32 % G == 0, "G must divide TILE / 8 and 32");
    // one piece per thread: the block is TILE * TILE / 16 threads (32 x TILE * TILE / 512)
    const int p = threadIdx.y * 32 + threadIdx.x;
    const int g = p % G + p / (G * PAIRS) * G, pair = p / G % PAIRS;
    const int r = blockIdx.y * TILE + g * 8, c = blockIdx.x * TILE + pair * 2;
    if (r >= rows || c >= cols)
        return;
    if constexpr (S <= 2) {
        if (cols % 2 == 0 && rows % 8 == 0) {               // then r + 8 <= rows and c + 2 <= cols
            using Two = typename Pair<S>::two;
            using Eight = typename Pair<S>::eight;
            unsigned a[8];
#pragma unroll
            for (int k = 0; k < 8; ++k)
                a[k] = *reinterpret_cast<const Two*>(in + (size_t)(r + k) * cols + c);
            *reinterpret_cast<Eight*>(out + (size_t)c * rows + r) = column_of<S>(a, 0);
            *reinterpret_cast<Eight*>(out + (size_t)(c + 1) * rows + r) = column_of<S>(a, 1);
            return;
        }
    }
    for (int k = 0; k < 8 && r + k < rows; ++k)
        for (int j = 0; j < 2 && c + j < cols; ++j)
            out[(size_t)(c + j) * rows + r + k] = in[(size_t)(r + k) * cols + c + j];
}

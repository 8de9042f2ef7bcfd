// fast.cu — the course's fastest transpose: 16-byte accesses on both sides, a swizzled tile.
//
// One block of THREADS threads moves a TR x TC tile (rows x columns of `in`) in two phases.
//
// Phase 1 — rows in. Each thread loads 16-byte chunks of the tile's rows (all its loads are
// issued before any is used, so several are in flight per thread) and stores them, still as
// 16-byte chunks, into shared memory. A warp reads 512 contiguous bytes: 16 sectors per request.
//
// Phase 2 — columns out. A thread takes one "unit" column (4 bytes: 1 float, 2 shorts or 4 bytes;
// or one 8-byte double) of RG consecutive rows, where RG rows make 16 bytes of one output row
// (4 floats, 2 doubles, 8 shorts, 16 bytes). Small elements are turned around inside registers
// with __byte_perm (pack.cuh): RG words of RG rows become 4 / sizeof(T) pieces, each 16 bytes of
// one row of `out`. Every store is 16 bytes; a warp writes 128 contiguous bytes of several rows.
//
// Bank conflicts. Phase 2 lanes read G row groups x (32 / G) unit columns. In a plain layout the
// rows of one column all start in the same bank (the tile is a whole number of 128-byte lines):
// 8-way for floats, like any 32-wide float4 tile. Padding cannot fix it: one extra vector per
// row moves rows four apart by 16 banks (still 4-way), one extra word breaks 16-byte alignment.
// So the tile is swizzled: unit u of a row in group g is stored at u ^ ((g mod G) * NB / G)
// (NB = units per 128 bytes). The XOR moves whole 16-byte chunks, so phase 1 stays conflict-free
// (a quarter-warp still fills 8 different chunk slots of one 128-byte line), and phase 2's lanes
// now spread over all 32 banks. SWZ = 0 turns it off to show the conflicts.
//
// Any shape. The kernel checks at run time that every row of `in` and `out` starts on a 16-byte
// boundary (cols * sizeof(T) and rows * sizeof(T) multiples of 16, aligned pointers). If not it
// runs the same two phases with narrower chunks: 4-byte words (8 for doubles), or single elements
// when rows are not even word-aligned (odd widths of bytes or shorts). Edges of the matrix are
// filled with zeros in shared memory and masked on the way out.
//
// Knobs: TR, TC (tile), THREADS (block size), SWZ (swizzle on/off), GROUP (GROUP > 1 walks
// the tiles GROUP tile-rows at a time, so blocks running together write neighbouring parts of
// the same rows of `out` — a DRAM-locality experiment), CACHE (1: streaming stores st.global.cs,
// which tell L2 the output will not be read again; 2: streaming loads ld.global.cs as well).
// Needs TC * sizeof(T) a multiple of 16.

#include "pack.cuh"

// A global load or store of one chunk, with the cache policy CACHE asks for.
template <int CACHE, typename C> __device__ __forceinline__ C load(const C* p)
{
    if constexpr (CACHE >= 2) return __ldcs(p);
    else return *p;
}
template <int CACHE, typename C> __device__ __forceinline__ void store(C* p, C v)
{
    if constexpr (CACHE >= 1) __stcs(p, v);
    else *p = v;
}

template <int BYTES> struct Chunk;
template <> struct Chunk<16> { using type = uint4; };
template <> struct Chunk<8> { using type = uint2; };
template <> struct Chunk<4> { using type = unsigned; };
template <> struct Chunk<2> { using type = unsigned short; };
template <> struct Chunk<1> { using type = unsigned char; };

__host__ __device__ constexpr int cmin(int a, int b) { return a < b ? a : b; }
__host__ __device__ constexpr int cmax(int a, int b) { return a > b ? a : b; }
__host__ __device__ constexpr bool pow2(int x) { return x > 0 && (x & (x - 1)) == 0; }

// Move one tile with VEC-byte global accesses (16, 8, 4, or sizeof(T)).
template <typename T, int TR, int TC, int THREADS, int SWZ, int CACHE, int VEC>
__device__ __forceinline__ void move_tile(T* __restrict__ out, const T* __restrict__ in, int rows,
                                          int cols, int r0, int c0, unsigned char* sh)
{
    constexpr int S = sizeof(T);
    constexpr int U = cmax(S, 4);                  // bytes per shared unit: a bank word, or a double
    constexpr int UE = U / S;                      // elements per unit
    constexpr int RG = cmax(VEC, U) / S;           // rows per group: one output piece
    constexpr int PU = TC / UE;                    // units per tile row
    constexpr int NB = 128 / U;                    // units one conflict-free phase covers
    constexpr int G = cmin(128 / cmax(VEC, U), TR / RG);   // row groups per warp in phase 2
    constexpr int XW = NB / G;                     // swizzle step, in units
    constexpr int VPR = TC * S / VEC;              // chunks per tile row
    constexpr int NV = TR * VPR;                   // chunks per tile
    constexpr int N1 = (NV + THREADS - 1) / THREADS;
    constexpr int TASKS = TR / RG * PU;            // phase-2 tasks: (row group, unit column)
    constexpr int N2 = (TASKS + THREADS - 1) / THREADS;
    static_assert(TC * S % 16 == 0 && TR % RG == 0, "tile rows must be whole 16-byte chunks");
    static_assert(pow2(G) && (TR / RG) % G == 0 && PU % (32 / G) == 0 && RG * PU % NB == 0,
                  "tile too small or not a power of two for this element size");
    using C = typename Chunk<VEC>::type;
    const int tid = threadIdx.x;
    auto slot = [](int unit, int g) { return SWZ ? unit ^ ((g & (G - 1)) * XW) : unit; };

    // Phase 1: all loads first (independent, in flight together), then the shared stores.
    C v[N1];
#pragma unroll
    for (int it = 0; it < N1; ++it) {
        int i = tid + it * THREADS;
        int r = i / VPR, gc = c0 + (i % VPR) * (VEC / S);
        v[it] = C{};                                   // zeros past the edge of the matrix
        if ((NV % THREADS == 0 || i < NV) && r0 + r < rows && gc < cols)
            v[it] = load<CACHE>(reinterpret_cast<const C*>(in + (size_t)(r0 + r) * cols + gc));
    }
#pragma unroll
    for (int it = 0; it < N1; ++it) {
        int i = tid + it * THREADS;
        if (NV % THREADS != 0 && i >= NV)
            break;
        int r = i / VPR, byte = r * TC * S + (i % VPR) * VEC;
        *reinterpret_cast<C*>(sh + slot(byte / U, r / RG) * U + byte % U) = v[it];
    }

    __syncthreads();

    // Phase 2: lanes take G row groups (fastest) x 32 / G unit columns.
#pragma unroll
    for (int it = 0; it < N2; ++it) {
        int j = tid + it * THREADS;
        if (TASKS % THREADS != 0 && j >= TASKS)
            break;
        int lane = j & 31, w = j >> 5;
        constexpr int GB = TR / (RG * G);              // warp tasks down one column block
        int g = (w % GB) * G + lane % G;               // row group
        int u = (w / GB) * (32 / G) + lane / G;        // unit column
        int ox = r0 + g * RG;                          // first column of out this piece covers
        if constexpr (S == 8) {
            uint2 a[RG];
#pragma unroll
            for (int k = 0; k < RG; ++k)
                a[k] = *reinterpret_cast<const uint2*>(sh + slot((g * RG + k) * PU + u, g) * U);
            int oy = c0 + u;                           // row of out = column of in
            if (oy < cols && ox < rows) {
                T* dst = out + (size_t)oy * rows + ox;
                if constexpr (RG == 2)
                    store<CACHE>(reinterpret_cast<uint4*>(dst), make_uint4(a[0].x, a[0].y, a[1].x, a[1].y));
                else
                    store<CACHE>(reinterpret_cast<uint2*>(dst), a[0]);
            }
        } else {
            unsigned a[RG], o[UE][(RG * S + 3) / 4];
#pragma unroll
            for (int k = 0; k < RG; ++k)
                a[k] = *reinterpret_cast<const unsigned*>(sh + slot((g * RG + k) * PU + u, g) * U);
            transpose_words<S, RG>(a, o);
#pragma unroll
            for (int e = 0; e < UE; ++e) {
                int oy = c0 + u * UE + e;
                if (oy >= cols)
                    continue;
                T* dst = out + (size_t)oy * rows + ox;
                if constexpr (VEC == 16) {
                    if (ox < rows)
                        store<CACHE>(reinterpret_cast<uint4*>(dst), make_uint4(o[e][0], o[e][1], o[e][2], o[e][3]));
                } else if constexpr (VEC == 4) {
                    if (ox < rows)
                        store<CACHE>(reinterpret_cast<unsigned*>(dst), o[e][0]);
                } else {                               // rows of out not word-aligned
#pragma unroll
                    for (int k = 0; k < RG; ++k)
                        if (ox + k < rows)
                            dst[k] = from_bits<T>(o[e][0] >> (8 * S * k));
                }
            }
        }
    }
}

template <typename T, int TR, int TC, int THREADS, int SWZ, int GROUP, int CACHE>
__global__ void __launch_bounds__(THREADS) fast(T* __restrict__ out, const T* __restrict__ in, int rows, int cols)
{
    constexpr int S = sizeof(T);
    __shared__ __align__(16) unsigned char sh[TR * TC * S];

    int bx = blockIdx.x, by = blockIdx.y;
    if constexpr (GROUP > 1) {                         // walk GROUP tile-rows, then the next column
        int pid = by * gridDim.x + bx, band = pid / (GROUP * gridDim.x);
        int first = band * GROUP, h = min(GROUP, (int)gridDim.y - first);
        int rest = pid - band * GROUP * gridDim.x;
        by = first + rest % h;
        bx = rest / h;
    }
    const int r0 = by * TR, c0 = bx * TC;

    // One check for the whole grid: can every row of in and out be moved in 16-byte chunks?
    const size_t lines = (size_t)cols * S | (size_t)rows * S | (size_t)in | (size_t)out;
    if ((lines & 15) == 0)
        move_tile<T, TR, TC, THREADS, SWZ, CACHE, 16>(out, in, rows, cols, r0, c0, sh);
    else if constexpr (S == 8)
        move_tile<T, TR, TC, THREADS, SWZ, CACHE, 8>(out, in, rows, cols, r0, c0, sh);
    else if constexpr (S == 4)
        move_tile<T, TR, TC, THREADS, SWZ, CACHE, 4>(out, in, rows, cols, r0, c0, sh);
    else if ((lines & 3) == 0)
        move_tile<T, TR, TC, THREADS, SWZ, CACHE, 4>(out, in, rows, cols, r0, c0, sh);
    else
        move_tile<T, TR, TC, THREADS, SWZ, CACHE, S>(out, in, rows, cols, r0, c0, sh);
}

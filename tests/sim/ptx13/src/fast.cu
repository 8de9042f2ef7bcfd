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
// Any shape, still 16 bytes at a time. When rows of `in` or `out` do not start on 16-byte
// boundaries (e.g. 8191 x 8193) every access is still an aligned 16-byte chunk:
//   - phase 1 loads the two aligned chunks a tile-row chunk straddles and shifts the bytes into
//     place (bytes_from: selects and __byte_perm), so the shared tile is exactly as above;
//   - phase 2 shifts each output piece by the output row's misalignment, taking the bytes that
//     spill over from the neighbouring lane's piece (__shfl_sync), and stores aligned chunks.
//     Only the first and last chunk of each output row segment are shared with the neighbouring
//     tile; those are written in the widest aligned pieces that fit (store_part).
// Edges of the matrix are zeros in shared memory and masked on the way out.
//
// Knobs: TR, TC (tile), THREADS (block size), SWZ (swizzle on/off), GROUP (GROUP > 1 walks
// the tiles GROUP tile-rows at a time, so blocks running together write neighbouring parts of
// the same rows of `out` — a DRAM-locality experiment, and for misaligned shapes it makes the
// two halves of each shared boundary chunk arrive close together), CACHE (1: streaming stores
// st.global.cs, the output will not be read again; 2: streaming loads ld.global.cs as well),
// MINB (__launch_bounds__ minimum blocks per SM: caps registers so that MINB blocks fit; the
// misaligned path alone would take ~100 registers for doubles and shorts, 2 blocks of 256
// threads per SM; MINB = 4 caps at 64 with no spills). Needs TC * sizeof(T) a multiple of 16.

#include "pack.cuh"

// A global load or store of one chunk, with the cache policy CACHE asks for. The intrinsics
// (rather than *p) also pin the 16-byte instruction: the optimizer once split a plain uint4
// store into four 4-byte ones.
template <int CACHE, typename C> __device__ __forceinline__ C load(const C* p)
{
    if constexpr (CACHE >= 2) return __ldcs(p);
    else return __ldg(p);                              // ld.global.nc: read-only path
}
template <int CACHE, typename C> __device__ __forceinline__ void store(C* p, C v)
{
    if constexpr (CACHE >= 1) __stcs(p, v);            // st.global.cs: evict first
    else __stwb(p, v);                                 // st.global.wb: the default policy
}

__host__ __device__ constexpr int cmin(int a, int b) { return a < b ? a : b; }
__host__ __device__ constexpr int cmax(int a, int b) { return a > b ? a : b; }
__host__ __device__ constexpr bool pow2(int x) { return x > 0 && (x & (x - 1)) == 0; }

// The 16 bytes that start at byte o (0..15) of the 32 bytes lo, hi (lo first in memory).
// Word selects instead of an indexed array keep everything in registers.
__device__ __forceinline__ uint4 bytes_from(uint4 lo, uint4 hi, int o)
{
    const unsigned w[8] = {lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w};
    const int q = o >> 2;
    unsigned x[5];
#pragma unroll
    for (int k = 0; k < 5; ++k) {                       // x[k] = w[q + k]
        unsigned a = (q & 1) ? w[k + 1] : w[k];
        unsigned b = (q & 1) ? w[k + 3] : w[k + 2];
        x[k] = (q & 2) ? b : a;
    }
    const unsigned sel = 0x3210u + 0x1111u * (unsigned)(o & 3);   // bytes r..r+3 of x[k]:x[k+1]
    return make_uint4(__byte_perm(x[0], x[1], sel), __byte_perm(x[1], x[2], sel),
                      __byte_perm(x[2], x[3], sel), __byte_perm(x[3], x[4], sel));
}

__device__ __forceinline__ unsigned word_of(uint4 v, int k)
{
    return k == 0 ? v.x : k == 1 ? v.y : k == 2 ? v.z : v.w;
}

// Load the aligned 16 bytes at base + off, or only those inside the array [0, size) (zeros elsewhere).
template <int CACHE>
__device__ __forceinline__ uint4 load_clipped(const unsigned char* __restrict__ base, long long off, long long size)
{
    if (off >= 0 && off + 16 <= size)
        return load<CACHE>(reinterpret_cast<const uint4*>(base + off));
    unsigned w[4] = {0, 0, 0, 0};                       // the first or last chunk of the array
#pragma unroll
    for (int b = 0; b < 16; ++b)
        if (off + b >= 0 && off + b < size)
            w[b / 4] |= (unsigned)base[off + b] << (8 * (b % 4));
    return make_uint4(w[0], w[1], w[2], w[3]);
}

// Store bytes [lo, hi) of the 16-byte chunk v to the aligned address p, widest aligned pieces first.
__device__ void store_part(unsigned char* p, uint4 v, int lo, int hi)
{
    while (lo < hi) {
        unsigned w = word_of(v, lo >> 2);
        if ((lo & 7) == 0 && lo + 8 <= hi) {
            *reinterpret_cast<uint2*>(p + lo) = make_uint2(w, word_of(v, (lo >> 2) + 1));
            lo += 8;
        } else if ((lo & 3) == 0 && lo + 4 <= hi) {
            *reinterpret_cast<unsigned*>(p + lo) = w;
            lo += 4;
        } else if ((lo & 1) == 0 && lo + 2 <= hi) {
            *reinterpret_cast<unsigned short*>(p + lo) = (unsigned short)(w >> (8 * (lo & 3)));
            lo += 2;
        } else {
            *reinterpret_cast<unsigned char*>(p + lo) = (unsigned char)(w >> (8 * (lo & 3)));
            lo += 1;
        }
    }
}

__device__ __forceinline__ uint4 shfl4(uint4 v, int src)
{
    return make_uint4(__shfl_sync(0xffffffffu, v.x, src), __shfl_sync(0xffffffffu, v.y, src),
                      __shfl_sync(0xffffffffu, v.z, src), __shfl_sync(0xffffffffu, v.w, src));
}
__device__ __forceinline__ uint4 shfl4_down(uint4 v)   // the value of the lane to the right
{
    return make_uint4(__shfl_down_sync(0xffffffffu, v.x, 1), __shfl_down_sync(0xffffffffu, v.y, 1),
                      __shfl_down_sync(0xffffffffu, v.z, 1), __shfl_down_sync(0xffffffffu, v.w, 1));
}

// Move one tile. REALIGN: rows of in or out do not start on 16-byte boundaries. Then the tile
// also holds HALO = RG rows of the next tile, so that it can write whole aligned output chunks
// up to the first 16-byte boundary past its own rows (the next tile starts writing there).
template <typename T, int TR, int TC, int THREADS, int SWZ, int CACHE, bool REALIGN>
__device__ __forceinline__ void move_tile(T* __restrict__ out, const T* __restrict__ in, int rows,
                                          int cols, int r0, int c0, unsigned char* sh)
{
    constexpr int S = sizeof(T);
    constexpr int U = cmax(S, 4);                  // bytes per shared unit: a bank word, or a double
    constexpr int UE = U / S;                      // elements per unit
    constexpr int RG = 16 / S;                     // rows per group: one 16-byte output piece
    constexpr int PU = TC / UE;                    // units per tile row
    constexpr int NB = 128 / U;                    // units one conflict-free phase covers
    constexpr int G = cmin(8, TR / RG);            // row groups per warp in phase 2
    constexpr int XW = NB / G;                     // swizzle step, in units
    constexpr int VPR = TC * S / 16;               // chunks per tile row
    constexpr int NV = (TR + (REALIGN ? RG : 0)) * VPR;   // chunks to load (with the halo rows)
    constexpr int N1 = (NV + THREADS - 1) / THREADS;
    constexpr int NW = THREADS / 32;
    constexpr int NCB = PU / (32 / G);             // phase 2: column blocks of 32 / G units
    constexpr int GB = TR / (RG * G);              //          group blocks down each of them
    static_assert(TC * S % 16 == 0 && TR % RG == 0, "tile rows must be whole 16-byte chunks");
    static_assert(pow2(G) && (TR / RG) % G == 0 && PU % (32 / G) == 0 && RG * PU % NB == 0,
                  "tile too small or not a power of two for this element size");
    const int tid = threadIdx.x, lane = tid & 31;
    auto slot = [](int unit, int g) { return SWZ ? unit ^ ((g & (G - 1)) * XW) : unit; };
    const unsigned char* inb = reinterpret_cast<const unsigned char*>(in);
    unsigned char* outb = reinterpret_cast<unsigned char*>(out);
    const long long in_size = (long long)rows * cols * S;
    const bool halo = REALIGN && (((size_t)rows * S | (size_t)out) & 15);   // out rows misaligned

    // Phase 1: all loads first (independent, in flight together), then the shared stores.
    uint4 v[N1];
#pragma unroll
    for (int it = 0; it < N1; ++it) {
        int i = tid + it * THREADS;
        int r = i / VPR, c = c0 + (i % VPR) * RG;     // RG = elements per 16 bytes
        bool live = (NV % THREADS == 0 || i < NV) && (r < TR || halo) && r0 + r < rows && c < cols;
        long long a = ((long long)(r0 + r) * cols + c) * S;             // byte offset in `in`
        v[it] = make_uint4(0, 0, 0, 0);                // zeros past the edge of the matrix
        if constexpr (!REALIGN) {
            if (live)
                v[it] = load<CACHE>(reinterpret_cast<const uint4*>(inb + a));
        } else {
            // the chunk straddles two aligned ones: this lane loads the first, the lane to its
            // right (the next chunk of the row) loaded the second; the last in a row loads both
            int o = (int)(((size_t)inb + a) & 15);
            uint4 lo = make_uint4(0, 0, 0, 0), hi;
            if (live)
                lo = load_clipped<CACHE>(inb, a - o, in_size);
            hi = shfl4_down(lo);
            bool right_has_it = lane < 31 && (i % VPR) < VPR - 1 && c + RG < cols;
            if (live && o && !right_has_it)
                hi = load_clipped<CACHE>(inb, a - o + 16, in_size);
            if (live)
                v[it] = bytes_from(lo, hi, o);
        }
    }
#pragma unroll
    for (int it = 0; it < N1; ++it) {
        int i = tid + it * THREADS;
        if (NV % THREADS != 0 && i >= NV)
            break;
        int r = i / VPR, byte = r * TC * S + (i % VPR) * 16;
        *reinterpret_cast<uint4*>(sh + slot(byte / U, r / RG) * U) = v[it];
    }

    __syncthreads();

    // Phase 2: a warp takes column blocks of 32 / G units and walks down them, G row groups
    // (the fastest lane index) at a time: lane gl holds piece g, its right neighbour piece g + 1.
    const int gl = lane % G, wl = lane / G;
    const int nrows = min(rows - r0, TR);              // rows of this tile inside the matrix

    // the UE output pieces (16 bytes each) of row group g, unit column u
    auto pieces = [&](int g, int u, uint4 (&piece)[UE]) {
        if constexpr (S == 8) {
            uint2 a0 = *reinterpret_cast<const uint2*>(sh + slot((g * RG) * PU + u, g) * U);
            uint2 a1 = *reinterpret_cast<const uint2*>(sh + slot((g * RG + 1) * PU + u, g) * U);
            piece[0] = make_uint4(a0.x, a0.y, a1.x, a1.y);
        } else {
            unsigned a[RG], o[UE][RG * S / 4];
#pragma unroll
            for (int k = 0; k < RG; ++k)
                a[k] = *reinterpret_cast<const unsigned*>(sh + slot((g * RG + k) * PU + u, g) * U);
            transpose_words<S, RG>(a, o);
#pragma unroll
            for (int e = 0; e < UE; ++e)
                piece[e] = make_uint4(o[e][0], o[e][1], o[e][2], o[e][3]);
        }
    };
    // REALIGN: write aligned chunk m of output row oy's segment, clipped to what this tile owns:
    // from its first 16-byte boundary (its start, in the first tile row) to the first boundary
    // past its end (the end of the output row, in the last tile row)
    auto emit = [&](int oy, int m, uint4 chunk) {
        const long long b0 = ((long long)oy * rows + r0) * S;          // segment start in `out`
        const int q = (int)(((size_t)outb + b0) & 15);                 // its misalignment
        const long long x = b0 - q + 16LL * m;                         // aligned chunk m
        const long long w0 = r0 == 0 ? b0 : b0 - q + (q ? 16 : 0);
        const long long w1 = min(b0 + (long long)(rows - r0) * S, b0 + TR * S - q + (q ? 16 : 0));
        if (x >= w0 && x + 16 <= w1)
            store<CACHE>(reinterpret_cast<uint4*>(outb + x), chunk);
        else if (x < w1 && x + 16 > w0)
            store_part(outb + x, chunk, (int)max(w0 - x, 0LL), (int)min(w1 - x, 16LL));
    };

#pragma unroll
    for (int cb = tid / 32; cb < NCB; cb += NW) {
        const int u = cb * (32 / G) + wl;              // unit column
        uint4 last[UE];                                // this lane's piece one round earlier
#pragma unroll
        for (int gb = 0; gb < GB; ++gb) {
            const int g = gb * G + gl;                 // row group
            uint4 piece[UE];
            pieces(g, u, piece);
#pragma unroll
            for (int e = 0; e < UE; ++e) {
                const int oy = c0 + u * UE + e;        // row of out = column of in
                if constexpr (!REALIGN) {
                    if (oy < cols && g * RG < nrows)
                        store<CACHE>(reinterpret_cast<uint4*>(out + (size_t)oy * rows + r0 + g * RG), piece[e]);
                } else {
                    uint4 next = shfl4_down(piece[e]);                  // piece g + 1
                    uint4 first = shfl4(piece[e], lane - gl);           // piece gb * G, this round
                    if (oy < cols) {
                        const int q = (int)(((size_t)outb + ((long long)oy * rows + r0) * S) & 15);
                        if (q == 0) {
                            emit(oy, g, piece[e]);
                        } else {
                            if (gl < G - 1)
                                emit(oy, g + 1, bytes_from(piece[e], next, 16 - q));
                            else if (gb > 0)               // last lane: chunk between the rounds
                                emit(oy, g - G + 1, bytes_from(last[e], first, 16 - q));
                            if (g == 0 && r0 == 0)         // head of the output row
                                emit(oy, 0, bytes_from(make_uint4(0, 0, 0, 0), piece[e], 16 - q));
                        }
                    }
                    last[e] = piece[e];
                }
            }
        }
        if constexpr (REALIGN) {                       // the chunk that reaches into the halo
            if (halo) {
                uint4 piece[UE];
                pieces(TR / RG, u, piece);             // the same group for every lane: broadcast
#pragma unroll
                for (int e = 0; e < UE; ++e) {
                    const int oy = c0 + u * UE + e;
                    const int q = (int)(((size_t)outb + ((long long)oy * rows + r0) * S) & 15);
                    if (oy < cols && q && gl == G - 1)
                        emit(oy, TR / RG, bytes_from(last[e], piece[e], 16 - q));
                }
            }
        }
    }
}

template <typename T, int TR, int TC, int THREADS, int SWZ, int GROUP, int CACHE, int MINB>
__global__ void __launch_bounds__(THREADS, MINB) fast(T* __restrict__ out, const T* __restrict__ in, int rows, int cols)
{
    constexpr int S = sizeof(T);
    __shared__ __align__(16) unsigned char sh[(TR + 16 / S) * TC * S];   // + halo rows (REALIGN)

    int bx = blockIdx.x, by = blockIdx.y;
    if constexpr (GROUP > 1) {                         // walk GROUP tile-rows, then the next column
        int pid = by * gridDim.x + bx, band = pid / (GROUP * gridDim.x);
        int first = band * GROUP, h = min(GROUP, (int)gridDim.y - first);
        int rest = pid - band * GROUP * gridDim.x;
        by = first + rest % h;
        bx = rest / h;
    }
    const int r0 = by * TR, c0 = bx * TC;

    // One check for the whole grid: does every row of in and out start on a 16-byte boundary?
    const size_t lines = (size_t)cols * S | (size_t)rows * S | (size_t)in | (size_t)out;
    if ((lines & 15) == 0)
        move_tile<T, TR, TC, THREADS, SWZ, CACHE, false>(out, in, rows, cols, r0, c0, sh);
    else
        move_tile<T, TR, TC, THREADS, SWZ, CACHE, true>(out, in, rows, cols, r0, c0, sh);
}

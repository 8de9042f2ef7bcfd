// warp_tile.cu — every warp transposes a 32x32 tile of its own: no __syncthreads() anywhere.
//
// The tiled kernels so far make a whole block wait at __syncthreads() between reading the tile
// and writing it out. The barrier waits for the block's slowest load; while it waits, none of
// the block's stores can start. When every row of the matrix starts on a 128-byte boundary that
// costs little (copy_shared, a copy with the same barrier, runs at the speed of a plain copy).
// When rows do not (e.g. 8191 x 8193: every 32-element row piece straddles two 128-byte lines,
// 5 sectors instead of 4, and its first and last sectors are shared with the neighbouring tiles)
// the slowest of a block's many loads is much slower, and on an H100 even copy_shared falls to
// ~0.74 of a device copy while the plain copy, with no barrier, stays at ~0.92.
//
// So here the unit of cooperation is the warp, whose 32 threads already run in step:
//
//   load:  lane l reads column l of the tile's 32 rows (32 loads in flight per thread; each
//          warp-wide load is one coalesced row piece) and writes them into its warp's own
//          [32][PITCH] shared tile;
//   sync:  __syncwarp() — only the warp's own lanes must have written, no other warp matters;
//   store: lane l collects row l of the tile column by column and writes 32 output rows, each a
//          coalesced piece. The pitch makes that column read conflict-free for every size: a
//          row is an odd number of 4-byte words for 1-, 2- and 4-byte elements (36, 34 and 33
//          elements: 9, 17, 33 words), so the 32 lanes' words fall in 32 different banks; for
//          8-byte elements 33 doubles put each half-warp phase on 16 different bank pairs.
//          (A pitch of 33 for bytes would leave the read 1.75 wavefronts per request.)
//
// A block is WX x WY warps, i.e. a (32 WX) x (32 WY) piece of `in`: WY > 1 puts the warps that
// write neighbouring pieces of the same output rows into one block (their shared boundary
// sectors are written at almost the same moment), WX > 1 does the same for the input rows.
// Warps never wait for each other, so a warp whose loads came back early writes early.
// `in` is rows x cols, `out` cols x rows; any shape works (partial tiles are bounds-checked,
// warps wholly outside the matrix return at once).

// One shared load per element, as written. For 1- and 2-byte elements ptxas would otherwise
// fuse neighbouring loads of a row into one 4-byte load (on the H100 the 2-byte column read then
// counts about half the wavefronts the PTX asks for); the course's simulator runs the PTX and
// counts what it says, so the kernel says exactly what it does. volatile forbids the fusion.
template <typename T> __device__ __forceinline__ T one_load(const T& x)
{
    if constexpr (sizeof(T) < 4) return *(const volatile T*)&x;
    else return x;
}

template <typename T, int WX, int WY>
__global__ void __launch_bounds__(32 * WX * WY)
warp_tile(T* __restrict__ out, const T* __restrict__ in, int rows, int cols)
{
    constexpr int PITCH = 32 + (sizeof(T) < 4 ? 4 / sizeof(T) : 1);
    __shared__ T tiles[WX * WY][32][PITCH];
    T (*t)[PITCH] = tiles[threadIdx.y];                   // this warp's tile

    const int lane = threadIdx.x;
    const int c0 = (blockIdx.x * WX + threadIdx.y % WX) * 32;   // first column of in (tile)
    const int r0 = (blockIdx.y * WY + threadIdx.y / WX) * 32;   // first row of in (tile)
    if (r0 >= rows || c0 >= cols)
        return;                                           // no block barrier: leaving is safe

    // All 32 loads are issued before any is used: a load that a branch guards cannot be moved
    // above the branch, so the guard selects the value instead (cells outside the matrix get
    // a zero that no store below reads).
    T v[32];
#pragma unroll
    for (int i = 0; i < 32; ++i)
        v[i] = (r0 + i < rows && c0 + lane < cols) ? in[(size_t)(r0 + i) * cols + c0 + lane] : T(0);
#pragma unroll
    for (int i = 0; i < 32; ++i)
        t[i][lane] = v[i];

    __syncwarp();                                         // the warp's tile is complete

#pragma unroll
    for (int i = 0; i < 32; ++i)
        v[i] = one_load(t[lane][i]);                      // all shared reads, then all stores
#pragma unroll
    for (int i = 0; i < 32; ++i)
        if (c0 + i < cols && r0 + lane < rows)
            out[(size_t)(c0 + i) * rows + r0 + lane] = v[i];
}

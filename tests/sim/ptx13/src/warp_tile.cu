// warp_tile.cu — every warp transposes a 32x32 tile of its own: no __syncthreads() anywhere.
//
// The tiled kernels so far make a whole block wait at __syncthreads() between reading the tile
// and writing it out. The barrier waits for the block's slowest load; while it waits, none of
// the block's stores can start. When every row of the matrix starts on a 128-byte boundary that
// costs little (copy_shared, a copy with the same barrier, runs at the speed of a plain copy).
// When rows do not (e.g. 8191 x 8193: every 32-element row piece straddles two 128-byte lines,
// 5 sectors instead of 4, and its first and last sectors are shared with the neighbouring tiles)
// copy_shared falls to ~0.73 of a device copy on an H100 while the plain copy, with no barrier,
// stays at ~0.93. The guess this kernel tests: the barrier is what misaligned rows cost.
//
// Measured (H100, benchmarks/results/h100_2026-11-23/transpose.json): the guess is at most a
// small part of it. On 8191 x 8193 the warp tile beats the 32x8 padded tile a little — floats
// 0.68 vs 0.60 of a copy, doubles 0.78 vs 0.74 (2340 vs 2200 GB/s) — and stays far below the
// plain copy; on aligned shapes it matches the padded tile (0.92-0.97).
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

// Lane l loads column l of the tile's 32 rows into v. All 32 loads are issued before any is
// used: a load that a branch guards cannot be moved above the branch, so the guard selects the
// value instead (cells outside the matrix get a zero that no store reads).
template <typename T>
__device__ __forceinline__ void load_tile(T (&v)[32], const T* __restrict__ in, int r0, int c0, int rows,
                                          int cols, int lane)
{
#pragma unroll
    for (int i = 0; i < 32; ++i)
        v[i] = (r0 + i < rows && c0 + lane < cols) ? in[(size_t)(r0 + i) * cols + c0 + lane] : T(0);
}

// Lane l writes row l of the shared tile (column c0 + i of in = row c0 + i of out) as element
// r0 + l of the out rows c0 .. c0 + 31: each store is one coalesced row piece.
template <typename T, int PITCH>
__device__ __forceinline__ void store_tile(T* __restrict__ out, T (*t)[PITCH], int r0, int c0, int rows,
                                           int cols, int lane)
{
#pragma unroll
    for (int i = 0; i < 32; ++i)
        if (c0 + i < cols && r0 + lane < rows)
            out[(size_t)(c0 + i) * rows + r0 + lane] = one_load(t[lane][i]);
}

template <typename T> __host__ __device__ constexpr int tile_pitch() { return 32 + (sizeof(T) < 4 ? 4 / sizeof(T) : 1); }

template <typename T, int WX, int WY>
__global__ void __launch_bounds__(32 * WX * WY)
warp_tile(T* __restrict__ out, const T* __restrict__ in, int rows, int cols)
{
    constexpr int PITCH = tile_pitch<T>();
    __shared__ T tiles[WX * WY][32][PITCH];
    T (*t)[PITCH] = tiles[threadIdx.y];                   // this warp's tile

    const int lane = threadIdx.x;
    const int c0 = (blockIdx.x * WX + threadIdx.y % WX) * 32;   // first column of in (tile)
    const int r0 = (blockIdx.y * WY + threadIdx.y / WX) * 32;   // first row of in (tile)
    if (r0 >= rows || c0 >= cols)
        return;                                           // no block barrier: leaving is safe

    T v[32];
    load_tile(v, in, r0, c0, rows, cols, lane);
#pragma unroll
    for (int i = 0; i < 32; ++i)
        t[i][lane] = v[i];
    __syncwarp();                                         // the warp's tile is complete
    store_tile(out, t, r0, c0, rows, cols, lane);
}

// warp_pipe: the same warp tiles, software-pipelined (double buffering through registers, the
// prefetching of the seed notes). A fixed number of blocks (BLOCKS, or fewer for small
// matrices) loop over all tiles; each warp issues the loads of its next tile *before* it writes
// out the current one, so the loads' latency hides behind the stores instead of stalling them.
// Tiles are numbered row by row (tile k: tile row k / tiles_x, tile column k % tiles_x) and warp
// w of block b takes tiles w + b * WARPS, then every (gridDim.x * WARPS)-th one after it.
//
// Measured on an H100 (benchmarks/results/h100_2026-11-23/warp_pipe_sweep.json): it does NOT pay.
// Every configuration tried (2-8 warps, 264-2112 blocks) is slower than warp_tile — floats
// 0.86-0.89 of a copy on 8192^2 (warp_tile 0.92), and 0.41-0.45 on 8191x8193 (warp_tile 0.68).
// The loads were not what the stores waited for; and once warps drift apart, tiles that share
// cache lines and DRAM pages are no longer moved at the same time. It stays as that lesson.
template <typename T, int WARPS>
__global__ void __launch_bounds__(32 * WARPS)
warp_pipe(T* __restrict__ out, const T* __restrict__ in, int rows, int cols)
{
    constexpr int PITCH = tile_pitch<T>();
    __shared__ T tiles[WARPS][32][PITCH];
    T (*t)[PITCH] = tiles[threadIdx.y];

    const int lane = threadIdx.x;
    const int tiles_x = (cols + 31) / 32;
    const long long ntiles = (long long)tiles_x * ((rows + 31) / 32);
    const long long step = (long long)gridDim.x * WARPS;
    long long k = (long long)blockIdx.x * WARPS + threadIdx.y;
    if (k >= ntiles)
        return;

    T v[32];
    int r0 = (int)(k / tiles_x) * 32, c0 = (int)(k % tiles_x) * 32;
    load_tile(v, in, r0, c0, rows, cols, lane);
    for (;;) {
#pragma unroll
        for (int i = 0; i < 32; ++i)
            t[i][lane] = v[i];                            // waits for this tile's loads
        __syncwarp();
        const long long next = k + step;
        const int r1 = (int)(next / tiles_x) * 32, c1 = (int)(next % tiles_x) * 32;
        if (next < ntiles)
            load_tile(v, in, r1, c1, rows, cols, lane);   // in flight during the stores below
        store_tile(out, t, r0, c0, rows, cols, lane);
        if (next >= ntiles)
            break;
        __syncwarp();                                     // all lanes have read t before it is refilled
        k = next; r0 = r1; c0 = c1;
    }
}

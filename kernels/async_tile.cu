// async_tile.cu — the padded tile of notebook 05, filled by asynchronous copies (cp.async, sm_80+).
//
// In tile.cu a thread loads an element into a register and stores it into shared memory: two
// instructions, and the store waits for the load. `cp.async` (cuda_pipeline.h:
// __pipeline_memcpy_async) copies global memory to shared memory directly, without a register,
// and without waiting: the thread goes on, and later waits for a *group* of its copies
// (__pipeline_commit closes a group, __pipeline_wait_prior(N) waits until at most N of its groups
// are still in flight). Its copies are 4, 8 or 16 bytes, so 1- and 2-byte elements travel as
// 4-byte words of 4 / sizeof(T) elements (rows of `in` must then be whole words: cols * sizeof(T)
// % 4 == 0; otherwise those blocks copy element by element as tile.cu does).
//
// A block moves TILES tiles, one below the other, through a ring of STAGES shared tiles:
// while it turns tile t around, the copies of tiles t + 1 .. t + STAGES - 1 are in flight.
//   STAGES = 1: staging only (copy, wait, transpose: what tile.cu does, minus the register);
//   STAGES = 2: double buffering; 3: triple.
// Each thread waits for its own copies; other threads' copies become visible at __syncthreads.
// Rows are padded to keep word alignment: PAD = 1 element for 4- and 8-byte T, 4 / sizeof(T)
// for smaller ones (rows of 9 or 17 words: the column reads stay conflict-free).

#include <cuda_pipeline.h>

template <typename T, int TILE, int BLOCK_ROWS, int STAGES, int TILES>
__global__ void async_tile(T* __restrict__ out, const T* __restrict__ in, int rows, int cols)
{
    constexpr int S = sizeof(T), E = S >= 4 ? 1 : 4 / S;     // elements per copy
    constexpr int PAD = E, W = S * E;                         // W: bytes per copy (4 or 8)
    __shared__ alignas(16) T t[STAGES][TILE][TILE + PAD];
    const bool words = E == 1 || ((size_t)cols * S % 4 == 0 && (size_t)in % 4 == 0);
    const int x = blockIdx.x * TILE;                            // first column of the tiles

    // issue the copies of tile number k of this block into stage k % STAGES, and close a group
    auto issue = [&](int k) {
        const int y = (blockIdx.y * TILES + k) * TILE;          // first row of tile k
        T(*s)[TILE + PAD] = t[k % STAGES];
        if (k < TILES && y < rows) {
            const int tid = threadIdx.y * blockDim.x + threadIdx.x;
            for (int i = tid; i < TILE * TILE / E; i += TILE * BLOCK_ROWS) {
                const int j = i / (TILE / E), c = i % (TILE / E) * E;   // row j, columns c .. c+E-1
                if (y + j >= rows || x + c >= cols)
                    continue;
                const T* src = in + (size_t)(y + j) * cols + x + c;
                if (words)
                    __pipeline_memcpy_async(&s[j][c], src, W);
                else
                    for (int e = 0; e < E && x + c + e < cols; ++e)
                        s[j][c + e] = src[e];
            }
        }
        __pipeline_commit();                                     // an empty group is fine too
    };

    for (int k = 0; k < STAGES - 1; ++k)
        issue(k);
    for (int k = 0; k < TILES; ++k) {
        issue(k + STAGES - 1);                                   // the tile STAGES - 1 ahead
        __pipeline_wait_prior(STAGES - 1);                       // this thread's copies of tile k
        __syncthreads();                                         // ... and everyone else's
        const int y = (blockIdx.y * TILES + k) * TILE;
        T(*s)[TILE + PAD] = t[k % STAGES];
        for (int j = threadIdx.y; j < TILE; j += BLOCK_ROWS)
            for (int c = threadIdx.x; c < TILE; c += blockDim.x)
                if (y + c < rows && x + j < cols)
                    out[(size_t)(x + j) * rows + y + c] = s[c][j];
        __syncthreads();                                         // stage k is free for tile k + STAGES
    }
}

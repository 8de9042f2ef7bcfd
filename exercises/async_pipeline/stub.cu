//! Generated from solution.cu (instructor-only) by `python -m course_lib instructor check --sync-stubs`: edit solution.cu, not this file.
#include <cuda_pipeline.h>

// Tile (tx, ty) of in: columns tx * TILE .., rows ty * TILE ..; the block's threads start its copies
// into `buf` and close them as one group (a group with no copies where the tile is outside in).
__device__ void fetch(T (*buf)[TILE + PAD], const T* in, int rows, int cols, int tx, int ty)
{
    int x = tx * TILE + threadIdx.x, y = ty * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += BY)
        if (x < cols && y + j < rows)
            __pipeline_memcpy_async(&buf[threadIdx.y + j][threadIdx.x], &in[(size_t)(y + j) * cols + x], sizeof(T));
    __pipeline_commit();
}

__global__ void transpose_pipeline(T* out, const T* in, int rows, int cols)
{
    __shared__ T buf[2][TILE][TILE + PAD];       // tile s lives in buf[s % 2]
    const int first = blockIdx.x * STEPS, ty = blockIdx.y;    // this block's tiles: first .. first + STEPS - 1
    for (int s = 0; s < STEPS; ++s) {
        fetch(buf[s % 2], in, rows, cols, first + s, ty);   // TODO: a pipeline (see the exercise)
        __pipeline_wait_prior(0);
        __syncthreads();                         // every thread's copies of tile s have landed
        int x = ty * TILE + threadIdx.x, y = (first + s) * TILE + threadIdx.y;
        for (int j = 0; j < TILE; j += BY)
            if (x < rows && y + j < cols)
                out[(size_t)(y + j) * rows + x] = buf[s % 2][threadIdx.x][threadIdx.y + j];
        __syncthreads();                         // everyone has read buf[s % 2] before it is refilled
    }
}

//! Exercise 'async_tile' (12_async_copies_and_tma.ipynb): the instructor's version of the exercise's %%cuda cell.
//! The notebook holds this file without the //! lines and with each BEGIN/END SOLUTION block
//! replaced by its //> stub lines; cl.exercises.reveal('async_tile') shows the solution.
#include <cuda_pipeline.h>
#define TILE 32
#define BLOCK_ROWS 8
extern "C" __global__ void transpose_async(float* out, const float* in, int rows, int cols)
{
    // BEGIN SOLUTION
    //>     // your kernel here
    __shared__ float tile[TILE][TILE + 1];
    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += BLOCK_ROWS)
        if (x < cols && y + j < rows)
            __pipeline_memcpy_async(&tile[threadIdx.y + j][threadIdx.x], &in[(size_t)(y + j) * cols + x], sizeof(float));
    __pipeline_commit();
    __pipeline_wait_prior(0);        // this thread's copies have landed
    __syncthreads();                 // ... and everyone else's
    x = blockIdx.y * TILE + threadIdx.x;
    y = blockIdx.x * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += BLOCK_ROWS)
        if (x < rows && y + j < cols)
            out[(size_t)(y + j) * rows + x] = tile[threadIdx.x][threadIdx.y + j];
    // END SOLUTION
}

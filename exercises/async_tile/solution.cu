//! Exercise 'async_tile' (12_async_copies_and_tma.ipynb): the instructor's version of the exercise's %%cuda cell.
//! The notebook holds this file without the //! lines and with each BEGIN/END SOLUTION block
//! replaced by its //> stub lines (stub.cu beside it, generated). Instructor-only: never in the wheel.
#include <cuda_pipeline.h>

__global__ void transpose_async(T* out, const T* in, int rows, int cols)
{
    __shared__ T tile[TILE][TILE + PAD];
    int x = blockIdx.x * TILE + threadIdx.x;       // column of in
    int y = blockIdx.y * TILE + threadIdx.y;       // first of this thread's {EACH} rows of in
    // BEGIN SOLUTION
    //> // 1. start one cp.async per row {ROWS} of this tile, into `tile`
    //> //    (__pipeline_memcpy_async(destination, source, bytes); test each row against rows and cols)
    //> __pipeline_commit();                         // 2. close this thread's group of copies,
    //> __pipeline_wait_prior(0);                    //    then wait until they have landed
    //> // 3. wait until every thread's copies have landed
    //> // 4. write {EACH} rows of out, reading `tile` by column (out is cols x rows)
    for (int j = 0; j < TILE; j += BY)
        if (x < cols && y + j < rows)
            __pipeline_memcpy_async(&tile[threadIdx.y + j][threadIdx.x], &in[(size_t)(y + j) * cols + x],
                                    sizeof(T));
    __pipeline_commit();
    __pipeline_wait_prior(0);                    // this thread's copies have landed
    __syncthreads();                             // ... and so have every other thread's

    x = blockIdx.y * TILE + threadIdx.x;           // column of out = row of in
    y = blockIdx.x * TILE + threadIdx.y;           // row of out = column of in
    for (int j = 0; j < TILE; j += BY)
        if (x < rows && y + j < cols)
            out[(size_t)(y + j) * rows + x] = tile[threadIdx.x][threadIdx.y + j];
    // END SOLUTION
}

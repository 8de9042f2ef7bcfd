//! Generated from solution.cu (instructor-only) by `python -m course_lib instructor check --sync-stubs`: edit solution.cu, not this file.
#include <cuda_pipeline.h>

__global__ void transpose_async(T* out, const T* in, int rows, int cols)
{
    __shared__ T tile[TILE][TILE + PAD];
    int x = blockIdx.x * TILE + threadIdx.x;       // column of in
    int y = blockIdx.y * TILE + threadIdx.y;       // first of this thread's {EACH} rows of in
    // 1. start one cp.async per row {ROWS} of this tile, into `tile`
    //    (__pipeline_memcpy_async(destination, source, bytes); test each row against rows and cols)
    __pipeline_commit();                         // 2. close this thread's group of copies,
    __pipeline_wait_prior(0);                    //    then wait until they have landed
    // 3. wait until every thread's copies have landed
    // 4. write {EACH} rows of out, reading `tile` by column (out is cols x rows)
}

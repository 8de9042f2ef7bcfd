//! Generated from solution.cu (instructor-only) by `python -m course_lib instructor check --sync-stubs`: edit solution.cu, not this file.
#include <cuda_pipeline.h>

__global__ void transpose_async(float* out, const float* in, int rows, int cols)
{
    __shared__ float tile[32][32 + 1];
    int x = blockIdx.x * 32 + threadIdx.x;       // column of in
    int y = blockIdx.y * 32 + threadIdx.y;       // first of this thread's four rows of in
    // 1. start one cp.async per row y, y + 8, y + 16, y + 24 of this tile, into `tile`
    //    (__pipeline_memcpy_async(destination, source, bytes); test each row against rows and cols)
    __pipeline_commit();                         // 2. close this thread's group of copies,
    __pipeline_wait_prior(0);                    //    then wait until they have landed
    // 3. wait until every thread's copies have landed
    // 4. write four rows of out, reading `tile` by column (out is cols x rows)
}

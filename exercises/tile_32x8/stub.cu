//! Generated from solution.cu (instructor-only) by `python -m course_lib instructor check --sync-stubs`: edit solution.cu, not this file.
__global__ void transpose_32x8(float* out, const float* in, int rows, int cols)
{
    __shared__ float tile[32][32 + 1];
    int x = blockIdx.x * 32 + threadIdx.x;       // column of in
    int y = blockIdx.y * 32 + threadIdx.y;       // first of this thread's four rows of in
    // 1. copy rows y, y + 8, y + 16, y + 24 of this tile into `tile` (test each against rows and cols)
    // 2. wait for the whole block
    // 3. write four rows of out, reading `tile` by column (out is cols x rows)
}

//! Generated from solution.cu (instructor-only) by `python -m course_lib instructor check --sync-stubs`: edit solution.cu, not this file.
__global__ void transpose_32x8(T* out, const T* in, int rows, int cols)
{
    __shared__ T tile[TILE][TILE + PAD];
    int x = blockIdx.x * TILE + threadIdx.x;       // column of in
    int y = blockIdx.y * TILE + threadIdx.y;       // first of this thread's {EACH} rows of in
    // 1. copy rows {ROWS} of this tile into `tile` (test each against rows and cols)
    // 2. wait for the whole block
    // 3. write {EACH} rows of out, reading `tile` by column (out is cols x rows)
}

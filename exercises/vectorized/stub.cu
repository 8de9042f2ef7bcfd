//! Generated from solution.cu (instructor-only) by `python -m course_lib instructor check --sync-stubs`: edit solution.cu, not this file.
__global__ void transpose_vec4(float* out, const float* in, int rows, int cols)
{
    __shared__ float tile[32][32];
    int c = blockIdx.x * 32 + threadIdx.x * 4;      // first of this thread's 4 columns of in
    int r = blockIdx.y * 32 + threadIdx.y;          // its row of in
    // 1. one float4 load from row r, columns c .. c+3 (if inside the matrix), into the tile
    // 2. wait for the block
    // 3. one float4 store to row blockIdx.x * 32 + threadIdx.y of out, columns
    //    blockIdx.y * 32 + threadIdx.x * 4 .. + 3, gathered from the tile by column
}

//! Generated from solution.cu (instructor-only) by `python -m course_lib instructor check --sync-stubs`: edit solution.cu, not this file.
// Blocks of 8 x 32 threads, one 32 x 32 tile each; rows and cols are multiples of 4.
__global__ void counted_transpose(float* out, const float* in, int rows, int cols)
{
    __shared__ float tile[32][32 + 1];
    int t = threadIdx.y * 8 + threadIdx.x;                 // 0..255: a warp is 32 consecutive t
    int k = t % 32;                                         // this thread's column of the tile
    for (int j = t / 32; j < 32; j += 8) {                  // rows j, j + 8, j + 16, j + 24: one float each
        int r = blockIdx.y * 32 + j, c = blockIdx.x * 32 + k;
        if (r < rows && c < cols)
            tile[j][k] = in[(size_t)r * cols + c];
    }
    __syncthreads();
    for (int j = t / 32; j < 32; j += 8) {
        int orow = blockIdx.x * 32 + j, oc = blockIdx.y * 32 + k;
        if (orow < cols && oc < rows)
            out[(size_t)orow * rows + oc] = tile[k][j];
    }
}

// naive.cu — the lower bound: one thread per element, straight from global to global.
//
// `in` is rows x cols, `out` is cols x rows, both row-major. A warp's 32 threads have
// consecutive threadIdx.x. Whichever side is indexed by x is coalesced, the other side is
// strided by a whole row, so each thread of the warp touches its own 32-byte sector.
//
//   naive_row: reads rows of `in` (coalesced, 4 sectors per request for floats) and writes
//              columns of `out` (32 sectors per request).
//   naive_col: reads columns of `in` (32 sectors per request) and writes rows of `out`
//              (coalesced). The strided side is now the load, which the L1/L2 caches soften.

template <typename T>
__global__ void naive_row(T* __restrict__ out, const T* __restrict__ in, int rows, int cols)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;   // column of in
    int y = blockIdx.y * blockDim.y + threadIdx.y;   // row of in
    if (x < cols && y < rows)
        out[(size_t)x * rows + y] = in[(size_t)y * cols + x];
}

template <typename T>
__global__ void naive_col(T* __restrict__ out, const T* __restrict__ in, int rows, int cols)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;   // column of out = row of in
    int y = blockIdx.y * blockDim.y + threadIdx.y;   // row of out = column of in
    if (x < rows && y < cols)
        out[(size_t)y * rows + x] = in[(size_t)x * cols + y];
}

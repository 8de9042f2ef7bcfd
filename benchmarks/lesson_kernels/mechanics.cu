// Kernels of benchmarks/mechanics.py: two mechanics a notebook words as a hypothesis until a GPU run decides.
//
// tile_order<ORDER>: the course's padded 32x32 tile with 32x8 threads (kernels/tile.cu's padded_32x8),
// except that a block first works out which tile it moves. The grid is the same in every order; only
// which blocks run at the same time changes, since a GPU usually starts blocks in the order of their
// linear index (blockIdx.x fastest; CUDA promises no order):
//   ORDER 0: row-major, as every course kernel: block (x, y) moves tile (x, y) of in, so the blocks
//            running together read tiles along one tile row of in and write tiles down one tile
//            column of out, rows of out apart.
//   ORDER 1: column-major: consecutive blocks go down a tile column of in (and along a tile row of out).
//   ORDER 2: diagonal (Ruetsch and Micikevicius, "Optimizing Matrix Transpose in CUDA", 2009): the k-th
//            block of tile row y moves tile ((k + y) mod tiles across, y), taken y-fastest, so the
//            blocks running together spread over tile rows of in and tile columns of out at once.
// Any shape works; partial tiles are bounds-checked.
//
// col_restrict / col_plain / col_ldg: kernels/naive.cu's naive_col (columns of in read, rows of out
// written; blocks of 32x8 threads, grid x over the rows of in) with `const float* __restrict__ in`
// (the machine code loads with LDG.E.CONSTANT, the read-only path), with plain pointers (LDG.E), and
// with plain pointers but __ldg() (LDG.E.CONSTANT again). The simulator counts the same sectors for
// all three; only a GPU can say whether the path changes the time.

template <int ORDER>
__global__ void tile_order(float* __restrict__ out, const float* __restrict__ in, int rows, int cols)
{
    __shared__ float t[32][33];
    int bx = blockIdx.x, by = blockIdx.y;
    const int lin = blockIdx.x + gridDim.x * blockIdx.y;          // the order blocks are started in
    if (ORDER == 1) {
        bx = lin / gridDim.y;
        by = lin % gridDim.y;
    } else if (ORDER == 2) {
        by = lin % gridDim.y;
        bx = (lin / gridDim.y + by) % gridDim.x;
    }
    int x = bx * 32 + threadIdx.x;                                 // column of in
    int y = by * 32 + threadIdx.y;                                 // row of in
#pragma unroll
    for (int j = 0; j < 32; j += 8)
        if (x < cols && y + j < rows)
            t[threadIdx.y + j][threadIdx.x] = in[(size_t)(y + j) * cols + x];
    __syncthreads();
    x = by * 32 + threadIdx.x;                                     // column of out = row of in
    y = bx * 32 + threadIdx.y;                                     // row of out = column of in
#pragma unroll
    for (int j = 0; j < 32; j += 8)
        if (x < rows && y + j < cols)
            out[(size_t)(y + j) * rows + x] = t[threadIdx.x][threadIdx.y + j];
}

__global__ void col_restrict(float* __restrict__ out, const float* __restrict__ in, int rows, int cols)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;                 // column of out = row of in
    int y = blockIdx.y * blockDim.y + threadIdx.y;                 // row of out = column of in
    if (x < rows && y < cols)
        out[(size_t)y * rows + x] = in[(size_t)x * cols + y];
}

__global__ void col_plain(float* out, const float* in, int rows, int cols)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < rows && y < cols)
        out[(size_t)y * rows + x] = in[(size_t)x * cols + y];
}

__global__ void col_ldg(float* out, const float* in, int rows, int cols)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < rows && y < cols)
        out[(size_t)y * rows + x] = __ldg(&in[(size_t)x * cols + y]);
}

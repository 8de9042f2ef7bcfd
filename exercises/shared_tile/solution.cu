//! Exercise 'shared_tile' (04_shared_memory_tiles.ipynb): the instructor's version of the exercise's %%cuda cell.
//! The notebook holds this file without the //! lines and with each BEGIN/END SOLUTION block
//! replaced by its //> stub lines (stub.cu beside it, generated). Instructor-only: never in the wheel.
__global__ void transpose_tile(T* out, const T* in, int rows, int cols)
{
    __shared__ T tile[TILE][TILE];
    // BEGIN SOLUTION
    //> // 1. copy this block's {TILE}x{TILE} tile of `in` into `tile` (one element per thread)
    //> // 2. wait until the whole tile is there
    //> // 3. write the tile, transposed, to the mirrored place in `out`
    int x = blockIdx.x * TILE + threadIdx.x;          // column of in
    int y = blockIdx.y * TILE + threadIdx.y;          // row of in
    if (x < cols && y < rows)
        tile[threadIdx.y][threadIdx.x] = in[(size_t)y * cols + x];
    __syncthreads();
    x = blockIdx.y * TILE + threadIdx.x;              // column of out
    y = blockIdx.x * TILE + threadIdx.y;              // row of out
    if (x < rows && y < cols)
        out[(size_t)y * rows + x] = tile[threadIdx.x][threadIdx.y];
    // END SOLUTION
}

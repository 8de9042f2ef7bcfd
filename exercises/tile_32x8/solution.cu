//! Exercise 'tile_32x8' (06_more_work_per_thread.ipynb): the instructor's version of the exercise's %%cuda cell.
//! The notebook holds this file without the //! lines and with each BEGIN/END SOLUTION block
//! replaced by its //> stub lines (stub.cu beside it, generated). Instructor-only: never in the wheel.
__global__ void transpose_32x8(T* out, const T* in, int rows, int cols)
{
    __shared__ T tile[TILE][TILE + PAD];
    int x = blockIdx.x * TILE + threadIdx.x;       // column of in
    int y = blockIdx.y * TILE + threadIdx.y;       // first of this thread's {EACH} rows of in
    // BEGIN SOLUTION
    //> // 1. copy rows {ROWS} of this tile into `tile` (test each against rows and cols)
    //> // 2. wait for the whole block
    //> // 3. write {EACH} rows of out, reading `tile` by column (out is cols x rows)
    for (int j = 0; j < TILE; j += BY)
        if (x < cols && y + j < rows)
            tile[threadIdx.y + j][threadIdx.x] = in[(size_t)(y + j) * cols + x];

    __syncthreads();

    x = blockIdx.y * TILE + threadIdx.x;           // column of out = row of in
    y = blockIdx.x * TILE + threadIdx.y;           // row of out = column of in
    for (int j = 0; j < TILE; j += BY)
        if (x < rows && y + j < cols)
            out[(size_t)(y + j) * rows + x] = tile[threadIdx.x][threadIdx.y + j];
    // END SOLUTION
}

//! Exercise 'tile_32x8' (06_more_work_per_thread.ipynb): the instructor's version of the exercise's %%cuda cell.
//! The notebook holds this file without the //! lines and with each BEGIN/END SOLUTION block
//! replaced by its //> stub lines (stub.cu beside it, generated). Instructor-only: never in the wheel.
__global__ void transpose_32x8(float* out, const float* in, int rows, int cols)
{
    __shared__ float tile[32][32 + 1];
    int x = blockIdx.x * 32 + threadIdx.x;       // column of in
    int y = blockIdx.y * 32 + threadIdx.y;       // first of this thread's four rows of in
    // BEGIN SOLUTION
    //> // 1. copy rows y, y + 8, y + 16, y + 24 of this tile into `tile` (test each against rows and cols)
    //> // 2. wait for the whole block
    //> // 3. write four rows of out, reading `tile` by column (out is cols x rows)
    for (int j = 0; j < 32; j += 8)
        if (x < cols && y + j < rows)
            tile[threadIdx.y + j][threadIdx.x] = in[(size_t)(y + j) * cols + x];

    __syncthreads();

    x = blockIdx.y * 32 + threadIdx.x;           // column of out = row of in
    y = blockIdx.x * 32 + threadIdx.y;           // row of out = column of in
    for (int j = 0; j < 32; j += 8)
        if (x < rows && y + j < cols)
            out[(size_t)(y + j) * rows + x] = tile[threadIdx.x][threadIdx.y + j];
    // END SOLUTION
}

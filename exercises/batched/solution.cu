//! Exercise 'batched' (10_real_shapes.ipynb): the instructor's version of the exercise's %%cuda cell.
//! The notebook holds this file without the //! lines and with each BEGIN/END SOLUTION block
//! replaced by its //> stub lines (stub.cu beside it, generated). Instructor-only: never in the wheel.
// A batch of matrices: in holds gridDim.z matrices of rows x cols, back to back; out as many
// of cols x rows. Block z transposes matrix z with the 32x8 padded tile of notebook 06.
__global__ void transpose_batched(float* out, const float* in, int rows, int cols)
{
    // BEGIN SOLUTION
    //> // move `in` and `out` to the start of matrix blockIdx.z (mind the type of the offset)
    const size_t matrix = (size_t)rows * cols;          // elements in one matrix, of in and of out
    in += blockIdx.z * matrix;
    out += blockIdx.z * matrix;
    // END SOLUTION
    __shared__ float tile[32][32 + 1];
    int x = blockIdx.x * 32 + threadIdx.x;
    int y = blockIdx.y * 32 + threadIdx.y;
    for (int j = 0; j < 32; j += 8)
        if (x < cols && y + j < rows)
            tile[threadIdx.y + j][threadIdx.x] = in[(size_t)(y + j) * cols + x];
    __syncthreads();
    x = blockIdx.y * 32 + threadIdx.x;
    y = blockIdx.x * 32 + threadIdx.y;
    for (int j = 0; j < 32; j += 8)
        if (x < rows && y + j < cols)
            out[(size_t)(y + j) * rows + x] = tile[threadIdx.x][threadIdx.y + j];
}

//! Exercise 'column_read' (03_naive_transpose.ipynb): the instructor's version of the exercise's %%cuda cell.
//! The notebook holds this file without the //! lines and with each BEGIN/END SOLUTION block
//! replaced by its //> stub lines (stub.cu beside it, generated). Instructor-only: never in the wheel.
__global__ void transpose_col(float* out, const float* in, int rows, int cols)
{
    // BEGIN SOLUTION
    //> int r = /* row of in: let threadIdx.x walk down a column */ 0;
    //> int c = /* column of in */ 0;
    int r = blockIdx.y * 32 + threadIdx.x;     // row of in    = column of out
    int c = blockIdx.x * 8 + threadIdx.y;      // column of in = row of out
    // END SOLUTION
    if (r < rows && c < cols)
        out[(size_t)c * rows + r] = in[(size_t)r * cols + c];
}

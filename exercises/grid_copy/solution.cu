//! Exercise 'grid_copy' (02_warps_and_coalescing.ipynb): the instructor's version of the exercise's %%cuda cell.
//! The notebook holds this file without the //! lines and with each BEGIN/END SOLUTION block
//! replaced by its //> stub lines (stub.cu beside it, generated). Instructor-only: never in the wheel.
__global__ void grid_copy(float* out, const float* in, int rows, int cols)
{
    size_t n = (size_t)rows * cols;             // in and out: n floats, row after row
    // BEGIN SOLUTION
    //> size_t first = 0;                           // TODO: this thread's number in the whole grid
    //> size_t step = n;                            // TODO: how many threads the grid has
    size_t first = ((size_t)blockIdx.x * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x;
    size_t step = (size_t)gridDim.x * blockDim.y * blockDim.x;
    // END SOLUTION
    for (size_t i = first; i < n; i += step)
        out[i] = in[i];
}

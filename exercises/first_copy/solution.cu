//! Exercise 'first_copy' (00_start_here.ipynb): the instructor's version of the exercise's %%cuda cell.
//! The notebook holds this file without the //! lines and with each BEGIN/END SOLUTION block
//! replaced by its //> stub lines (stub.cu beside it, generated). Instructor-only: never in the wheel.
// Copy in to out (both rows x cols): the same bytes a transpose moves, with both sides coalesced.
__global__ void first_copy(float* out, const float* in, int rows, int cols)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < cols && y < rows) {
        // BEGIN SOLUTION
        //> out[0] = in[0];    // which element does thread (x, y) copy?
        out[y * cols + x] = in[y * cols + x];
        // END SOLUTION
    }
}

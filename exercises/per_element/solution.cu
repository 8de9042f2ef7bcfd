//! Exercise 'per_element' (01_cpu_transpose.ipynb): the instructor's version of the exercise's %%cuda cell.
//! The notebook holds this file without the //! lines and with each BEGIN/END SOLUTION block
//! replaced by its //> stub lines (stub.cu beside it, generated). Instructor-only: never in the wheel.
// A 1D grid of BLOCK-thread blocks: thread i (its number in the grid) moves element i of in.
__global__ void per_element(T* out, const T* in, int rows, int cols)
{
    // BEGIN SOLUTION
    //> // 1. i = this thread's number in the whole grid (as size_t)
    //> // 2. if i is inside the matrix: its row r and column c in in, then out[c * rows + r] = in[i]
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < (size_t)rows * cols) {
        size_t r = i / cols, c = i % cols;       // i = r * cols + c
        out[c * rows + r] = in[i];
    }
    // END SOLUTION
}

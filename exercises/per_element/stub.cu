//! Generated from solution.cu (instructor-only) by `python -m course_lib instructor check --sync-stubs`: edit solution.cu, not this file.
// A 1D grid of BLOCK-thread blocks: thread i (its number in the grid) moves element i of in.
__global__ void per_element(T* out, const T* in, int rows, int cols)
{
    // 1. i = this thread's number in the whole grid (as size_t)
    // 2. if i is inside the matrix: its row r and column c in in, then out[c * rows + r] = in[i]
}

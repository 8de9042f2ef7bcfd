//! Generated from solution.cu (instructor-only) by `python -m course_lib instructor check --sync-stubs`: edit solution.cu, not this file.
__global__ void grid_copy(float* out, const float* in, int rows, int cols)
{
    size_t n = (size_t)rows * cols;             // in and out: n floats, row after row
    size_t first = 0;                           // TODO: this thread's number in the whole grid
    size_t step = n;                            // TODO: how many threads the grid has
    for (size_t i = first; i < n; i += step)
        out[i] = in[i];
}

//! Generated from solution.cu (instructor-only) by `python -m course_lib instructor check --sync-stubs`: edit solution.cu, not this file.
__global__ void transpose_tile(T* out, const T* in, int rows, int cols)
{
    __shared__ T tile[TILE][TILE];
    // 1. copy this block's {TILE}x{TILE} tile of `in` into `tile` (one element per thread)
    // 2. wait until the whole tile is there
    // 3. write the tile, transposed, to the mirrored place in `out`
}

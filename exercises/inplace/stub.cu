//! Generated from solution.cu (instructor-only) by `python -m course_lib instructor check --sync-stubs`: edit solution.cu, not this file.
__global__ void transpose_inplace(T* a, int n)
{
    __shared__ T mine[TILE][TILE + PAD];         // tile (ti, tj), on or above the diagonal
    __shared__ T theirs[TILE][TILE + PAD];       // its mirror (tj, ti), below it
    // block k of the launch takes the k-th tile of the upper triangle, row by row: row ti has t - ti tiles
    int t = (n + TILE - 1) / TILE, ti = 0, k = blockIdx.x;
    while (k >= t - ti) {
        k -= t - ti;
        ++ti;
    }
    int tj = ti + k;
    int x = threadIdx.x, y = threadIdx.y;
    // 1. load tile (ti, tj) into `mine` and, when ti != tj, tile (tj, ti) into `theirs`:
    //    rows {TILE} apart in a, {EACH} per thread, each element tested against n
    // 2. wait for the whole block
    // 3. write `mine` transposed at (tj, ti) and, when ti != tj, `theirs` transposed at (ti, tj)
}

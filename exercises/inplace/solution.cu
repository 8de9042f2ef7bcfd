//! Exercise 'inplace' (06_more_work_per_thread.ipynb): the instructor's version of the exercise's %%cuda cell.
//! The notebook holds this file without the //! lines and with each BEGIN/END SOLUTION block
//! replaced by its //> stub lines (stub.cu beside it, generated). Instructor-only: never in the wheel.
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
    // BEGIN SOLUTION
    //> // 1. load tile (ti, tj) into `mine` and, when ti != tj, tile (tj, ti) into `theirs`:
    //> //    rows {TILE} apart in a, {EACH} per thread, each element tested against n
    //> // 2. wait for the whole block
    //> // 3. write `mine` transposed at (tj, ti) and, when ti != tj, `theirs` transposed at (ti, tj)
    for (int j = 0; j < TILE; j += BY) {
        int r = ti * TILE + y + j, c = tj * TILE + x;
        if (r < n && c < n)
            mine[y + j][x] = a[(size_t)r * n + c];
        if (ti != tj) {
            r = tj * TILE + y + j;
            c = ti * TILE + x;
            if (r < n && c < n)
                theirs[y + j][x] = a[(size_t)r * n + c];
        }
    }
    __syncthreads();                             // both tiles are in shared memory: now overwrite them in a
    for (int j = 0; j < TILE; j += BY) {
        int r = tj * TILE + y + j, c = ti * TILE + x;      // tile (tj, ti) gets mine, transposed
        if (r < n && c < n)
            a[(size_t)r * n + c] = mine[x][y + j];
        if (ti != tj) {
            r = ti * TILE + y + j;
            c = tj * TILE + x;                   // tile (ti, tj) gets theirs, transposed
            if (r < n && c < n)
                a[(size_t)r * n + c] = theirs[x][y + j];
        }
    }
    // END SOLUTION
}

// copy.cu — the upper bound for every transpose in the course.
//
// A copy reads and writes rows, so both its loads and its stores are coalesced: a warp's
// 32 consecutive 4-byte elements fill exactly 4 sectors of 32 bytes. It moves the same bytes a
// transpose moves, so its bandwidth is the ceiling a transpose is measured against.
//
// It walks the matrix with the same tiles as the tiled transposes (TILE x TILE elements per
// block, BLOCK_ROWS rows of threads, each thread copying TILE / BLOCK_ROWS elements), so the
// comparison is fair. `in` and `out` are both rows x cols, row-major.

template <typename T, int TILE, int BLOCK_ROWS>
__global__ void copy(T* __restrict__ out, const T* __restrict__ in, int rows, int cols)
{
    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;

#pragma unroll
    for (int j = 0; j < TILE; j += BLOCK_ROWS) {
        if (x < cols && y + j < rows) {
            size_t i = (size_t)(y + j) * cols + x;   // size_t: no overflow past 2^31 elements
            out[i] = in[i];
        }
    }
}

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

// copy_shared: the same copy, but every element goes through a shared-memory tile and the block
// waits at __syncthreads() in between — everything a tiled transpose does except the transpose.
// Its bandwidth against plain copy shows what the barrier and the shared round trip cost (the
// seed's slides found: almost nothing). Each thread reads back what it wrote itself, so there
// are no bank conflicts and no races; the barrier is there only to be measured.
template <typename T, int TILE, int BLOCK_ROWS>
__global__ void copy_shared(T* __restrict__ out, const T* __restrict__ in, int rows, int cols)
{
    __shared__ T tile[TILE][TILE];

    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;

#pragma unroll
    for (int j = 0; j < TILE; j += BLOCK_ROWS)
        if (x < cols && y + j < rows)
            tile[threadIdx.y + j][threadIdx.x] = in[(size_t)(y + j) * cols + x];

    __syncthreads();

#pragma unroll
    for (int j = 0; j < TILE; j += BLOCK_ROWS)
        if (x < cols && y + j < rows)
            out[(size_t)(y + j) * cols + x] = tile[threadIdx.y + j][threadIdx.x];
}

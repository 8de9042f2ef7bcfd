// tile.cu — transpose through a shared-memory tile.
//
// Each block moves one TILE x TILE tile. It reads the tile's rows from `in` (coalesced) into
// shared memory, waits for the whole block (__syncthreads), then writes the tile's columns
// as rows of `out` (coalesced too). The strided access now happens in shared memory, which
// has no sectors — but it has 32 banks, and reading a column of a [TILE][TILE] float array
// hits one bank 32 times. PAD extra elements per row shift each row by PAD banks:
//
//   PAD = 0  -> 32-way bank conflicts on the column read (TILE = 32, 4-byte T)
//   PAD = 1  -> conflict-free
//
// A block has TILE x BLOCK_ROWS threads; each thread moves TILE / BLOCK_ROWS elements
// (BLOCK_ROWS = TILE: one element each; BLOCK_ROWS = 8: four, the classic 32x8 block).
// `in` is rows x cols, `out` is cols x rows; any shape works, partial tiles are bounds-checked.

template <typename T, int TILE, int BLOCK_ROWS, int PAD>
__global__ void tile(T* __restrict__ out, const T* __restrict__ in, int rows, int cols)
{
    __shared__ T t[TILE][TILE + PAD];

    int x = blockIdx.x * TILE + threadIdx.x;         // column of in
    int y = blockIdx.y * TILE + threadIdx.y;         // row of in
#pragma unroll
    for (int j = 0; j < TILE; j += BLOCK_ROWS)
        if (x < cols && y + j < rows)
            t[threadIdx.y + j][threadIdx.x] = in[(size_t)(y + j) * cols + x];

    __syncthreads();                                  // the whole tile is in shared memory

    x = blockIdx.y * TILE + threadIdx.x;             // column of out = row of in
    y = blockIdx.x * TILE + threadIdx.y;             // row of out = column of in
#pragma unroll
    for (int j = 0; j < TILE; j += BLOCK_ROWS)
        if (x < rows && y + j < cols)
            out[(size_t)(y + j) * rows + x] = t[threadIdx.x][threadIdx.y + j];
}

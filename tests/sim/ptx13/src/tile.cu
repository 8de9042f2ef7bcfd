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
// Other sizes and types (what the simulator counts, wavefronts per request):
//   TILE = 16, 16x16 threads: a warp is two 16-element rows of threads. PAD = 0: the column read
//     hits 4 banks with 8 words each -> 8. PAD = 1 (pitch 17): lane 31 reads word 15*17 + 1 = 256
//     and lane 0 word 0 — same bank — so the read is still 2-way, and so is the row store (lane 16
//     writes word 17 + 15 = 32, bank 0 again). Padding by one only clears a tile 32 words wide.
//   8-byte T (double): accesses run in two half-warp phases of 16 threads x 8 bytes = 128 bytes.
//     PAD = 0: a column of a [32][32] double tile puts all 16 threads of a phase on the same two
//     banks -> 16 per phase, 32 per request where 2 is the minimum. PAD = 1 -> 2.
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

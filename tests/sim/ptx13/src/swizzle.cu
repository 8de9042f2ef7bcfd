// swizzle.cu — a conflict-free tile without padding: XOR the column with the row.
//
// Padding shifts each row of the tile by one bank; swizzling instead permutes the elements
// within each row. Element (r, c) of the tile is stored at  t[r][c ^ f(r)]:
//
//   - a warp writing row r writes the same row, just in another order: still conflict-free;
//   - a warp reading column c visits t[r][c ^ f(r)] for 32 rows r; with f(r) = r the positions
//     c ^ r are 32 different columns, hence (4-byte elements, TILE = 32) 32 different banks.
//
// No memory is wasted and the tile keeps power-of-two rows (handy for 16-byte accesses, where
// padding by one element would break alignment). TILE must be a power of two.
//
// Elements narrower than 4 bytes share a bank word (E = 4 / sizeof(T) per word). Swizzling by
// whole words keeps each word's elements together, so f(r) = r with its low log2(E) bits cleared;
// then a column read still touches 32 different words in 32 different banks. 8-byte elements
// are read in two half-warp phases; f(r) = r also spreads each half-warp over all 32 banks.
//
// Expected with TILE = 32: every shared load and store 1 wavefront per request (4-byte T),
// 2 for 8-byte T (two phases), 0 bank conflicts; global loads and stores fully coalesced.
// Block: TILE x BLOCK_ROWS threads, each moving TILE / BLOCK_ROWS elements. Any shape works.

template <typename T, int TILE, int BLOCK_ROWS>
__global__ void swizzle(T* __restrict__ out, const T* __restrict__ in, int rows, int cols)
{
    static_assert((TILE & (TILE - 1)) == 0, "TILE must be a power of two so that c ^ f(r) stays in the row");
    constexpr int E = sizeof(T) < 4 ? 4 / sizeof(T) : 1;     // elements per 4-byte bank word
    constexpr int MASK = (TILE - 1) & ~(E - 1);               // f(r) = r & MASK: whole words only
    __shared__ T t[TILE][TILE];

    int x = blockIdx.x * TILE + threadIdx.x;         // column of in
    int y = blockIdx.y * TILE + threadIdx.y;         // row of in
#pragma unroll
    for (int j = 0; j < TILE; j += BLOCK_ROWS) {
        int r = threadIdx.y + j;                     // row of the tile
        if (x < cols && y + j < rows)
            t[r][threadIdx.x ^ (r & MASK)] = in[(size_t)(y + j) * cols + x];
    }

    __syncthreads();

    x = blockIdx.y * TILE + threadIdx.x;             // column of out = row of in
    y = blockIdx.x * TILE + threadIdx.y;             // row of out = column of in
    int r = threadIdx.x;                             // the tile row this thread reads
#pragma unroll
    for (int j = 0; j < TILE; j += BLOCK_ROWS)
        if (x < rows && y + j < cols)
            out[(size_t)(y + j) * rows + x] = t[r][(threadIdx.y + j) ^ (r & MASK)];
}

// unrolled.cu — the rectangular block of rect.cu doing the work of UNROLL blocks.
//
// Each block of BX x BY threads moves UNROLL tiles that sit side by side along the row
// (CUDA_Freshman's unrolling uses UNROLL = 2: a 64-wide, 16-tall piece with 32 x 16 threads).
// Every thread issues its UNROLL loads before any of them is needed, so more bytes are in flight
// per thread and half as many blocks are launched; the shared tile is UNROLL * BX + PAD wide.
//
// The read-out is rect.cu's remapping (irow = tid / BY, icol = tid % BY), repeated UNROLL times
// BX columns apart. With 4-byte elements and BX = 32 the column read costs the same as in rect:
// PAD = 0 -> 16-way conflict (pitch 64 words), PAD = 1 -> 2-way, PAD = 2 -> conflict-free.
// Global loads and stores stay coalesced: 4 and 4 sectors per request for floats.
//
// Whether unrolling pays depends on the GPU: the seed measured no gain on its card. On recent
// GPUs enough blocks are resident that one load per thread already keeps memory busy.

template <typename T, int BX, int BY, int UNROLL, int PAD>
__global__ void unrolled(T* __restrict__ out, const T* __restrict__ in, int rows, int cols)
{
    constexpr int W = UNROLL * BX;                    // columns one block covers
    __shared__ T tile[BY][W + PAD];

    int x = blockIdx.x * W + threadIdx.x;             // column of in, first tile
    int y = blockIdx.y * BY + threadIdx.y;            // row of in
#pragma unroll
    for (int u = 0; u < UNROLL; ++u)
        if (x + u * BX < cols && y < rows)
            tile[threadIdx.y][threadIdx.x + u * BX] = in[(size_t)y * cols + x + u * BX];

    int tid = threadIdx.y * BX + threadIdx.x;
    int irow = tid / BY;                              // column of the tile (within one BX piece)
    int icol = tid % BY;                              // row of the tile

    __syncthreads();

    int ox = blockIdx.y * BY + icol;                  // column of out = row of in
    int oy = blockIdx.x * W + irow;                   // row of out = column of in, first piece
#pragma unroll
    for (int u = 0; u < UNROLL; ++u)
        if (ox < rows && oy + u * BX < cols)
            out[(size_t)(oy + u * BX) * rows + ox] = tile[icol][irow + u * BX];
}

// rect.cu — a rectangular block (CUDA_Freshman's 32x16) and the remapped read-out.
//
// One block of BX x BY threads (default 32 x 16) moves a BX-wide, BY-tall tile of `in`: thread
// (x, y) reads in[row y][column x] — a warp reads 32 consecutive elements of one row, coalesced —
// and puts it in shared memory at tile[y][x].
//
// The tile is not square, so the threads cannot simply swap x and y for the write-out. Instead
// each thread takes its linear number in the block, tid = y * BX + x, and reads it column-first:
//
//     irow = tid / BY      (which column of the tile  = which row of `out`)
//     icol = tid % BY      (which row of the tile     = which column of `out`)
//
// so consecutive threads walk down a column of the tile and write consecutive elements of a row
// of `out` (coalesced: a warp writes two 16-element pieces of two rows, 4 sectors for floats).
//
// The price is in shared memory. A warp's 32 threads read tile[icol][irow] for icol = 0..15 and
// two values of irow. With 4-byte elements the row pitch is BX + PAD words:
//
//   PAD = 0: pitch 32 words, every icol hits the same bank -> 16 words per bank: 16-way conflict
//   PAD = 1: pitch 33, bank = icol + irow: irow = 1 collides with the next icol -> 2-way
//   PAD = 2: pitch 34, bank = 2*icol + irow: 32 different banks -> conflict-free
//
// Stores into the tile are row-wise and conflict-free for every PAD. `in` is rows x cols,
// `out` is cols x rows, both row-major; partial tiles at the edges are bounds-checked.

template <typename T, int BX, int BY, int PAD>
__global__ void rect(T* __restrict__ out, const T* __restrict__ in, int rows, int cols)
{
    __shared__ T tile[BY][BX + PAD];

    int x = blockIdx.x * BX + threadIdx.x;            // column of in
    int y = blockIdx.y * BY + threadIdx.y;            // row of in
    if (x < cols && y < rows)
        tile[threadIdx.y][threadIdx.x] = in[(size_t)y * cols + x];

    int tid = threadIdx.y * BX + threadIdx.x;         // this thread's number in the block
    int irow = tid / BY;                              // column of the tile it will read
    int icol = tid % BY;                              // row of the tile it will read

    __syncthreads();                                  // outside any `if`: every thread must arrive

    int ox = blockIdx.y * BY + icol;                  // column of out = row of in
    int oy = blockIdx.x * BX + irow;                  // row of out = column of in
    if (ox < rows && oy < cols)
        out[(size_t)oy * rows + ox] = tile[icol][irow];
}

// vec.cu — 16-byte global accesses (float4 for floats) through a shared tile.
//
// Each thread loads one 16-byte vector (V = 16 / sizeof(T) elements: 4 floats, 2 doubles,
// 8 shorts, 16 bytes) from a row of `in`, so a warp of 8 threads per row moves 128 bytes per row
// and 16 sectors per request: four times the bytes of a float load per instruction. The block is
// (TILE / V) x BLOCK_ROWS threads and moves a TILE x TILE tile.
//
// Writing `out` the thread needs V consecutive rows of one column: it reads them one element at
// a time from the tile, packs them and stores one 16-byte vector.
//
// Shared memory. Stores into the tile are 16-byte vectors when each row of the tile is a whole
// number of vectors (PAD a multiple of V): they run in four quarter-warp phases of 8 threads,
// each phase 128 contiguous bytes -> 4 wavefronts per request, the minimum for 16-byte accesses.
// The column read is where it goes wrong. With TILE = 32 floats a warp is 8 threads across x 4
// across y; thread x reads row 4x + i, so the 8 threads of one y read rows 4 apart — 4 * 32 words,
// a multiple of 32: all in one bank. 8 threads, 8 different words, one bank: 8-way conflict.
//
//   PAD = 0 (or any multiple of 32 floats):  8-way on the column read
//   PAD = 4 (one vector): row pitch 36 words, rows 4 apart are 16 banks apart -> 4-way
//   PAD = 1: rows are 33 words, no longer whole vectors, so the tile is written one element at a
//            time (conflict-free); the column read becomes bank 4x + i + y -> conflict-free
//
// Any shape works: a vector that sticks out of the matrix, or rows not starting on a 16-byte
// boundary (cols * sizeof(T) not a multiple of 16), fall back to element-by-element accesses.

template <typename T, int V>
union Pack {
    uint4 v;
    T e[V];
};

template <typename T, int TILE, int BLOCK_ROWS, int PAD>
__global__ void vec(T* __restrict__ out, const T* __restrict__ in, int rows, int cols)
{
    constexpr int V = 16 / sizeof(T);                          // elements per 16-byte vector
    static_assert(TILE % V == 0, "a tile row must be a whole number of vectors");
    constexpr bool VEC_SHARED = (TILE + PAD) % V == 0;         // tile rows are whole vectors
    __shared__ __align__(16) T t[TILE][TILE + PAD];

    const int x = threadIdx.x * V;                             // first column of this thread's vector
    const bool in_vec = (size_t)cols * sizeof(T) % 16 == 0;
    const bool out_vec = (size_t)rows * sizeof(T) % 16 == 0;

    int c = blockIdx.x * TILE + x;                             // column of in
    for (int j = threadIdx.y; j < TILE; j += BLOCK_ROWS) {
        int r = blockIdx.y * TILE + j;                         // row of in
        Pack<T, V> p;
        const T* src = in + (size_t)r * cols + c;
        if (r < rows && in_vec && c + V <= cols) {
            p.v = *reinterpret_cast<const uint4*>(src);
        } else {
            p.v = make_uint4(0, 0, 0, 0);                      // zeros past the edge
            for (int e = 0; e < V; ++e)
                if (r < rows && c + e < cols)
                    p.e[e] = src[e];
        }
        if constexpr (VEC_SHARED) {
            *reinterpret_cast<uint4*>(&t[j][x]) = p.v;
        } else {
#pragma unroll
            for (int e = 0; e < V; ++e)
                t[j][x + e] = p.e[e];
        }
    }

    __syncthreads();

    int ox = blockIdx.y * TILE + x;                            // first column of out (row of in)
    for (int j = threadIdx.y; j < TILE; j += BLOCK_ROWS) {
        int oy = blockIdx.x * TILE + j;                        // row of out = column of in
        if (oy >= cols)
            continue;
        Pack<T, V> p;
#pragma unroll
        for (int e = 0; e < V; ++e)
            p.e[e] = t[x + e][j];                              // the column read
        T* dst = out + (size_t)oy * rows + ox;
        if (out_vec && ox + V <= rows) {
            *reinterpret_cast<uint4*>(dst) = p.v;
        } else {
            for (int e = 0; e < V; ++e)
                if (ox + e < rows)
                    dst[e] = p.e[e];
        }
    }
}

// aos.cu — structs of I elements through shared memory: Mike Giles's conflict-free mapping.
//
// An array of N structs of I floats is an N x I matrix (one struct per row); turning it into
// I arrays of N floats (struct-of-arrays) is its transpose. A warp handles 32 structs:
//
//   load:  the warp reads the 32 * I elements n = i + j*I (field i of struct j) as one
//          contiguous run — lane l takes n = l, l + 32, ... — fully coalesced, and writes each
//          into a per-warp shared array at position k(i, j);
//   read:  after __syncwarp, lane j collects field i of its own struct from k(i, j), for
//          i = 0 .. I-1, and stores it to out[i][j]: 32 consecutive elements per store.
//
// The mapping k decides the bank conflicts of the read (lanes j = 0..31, one i):
//
//   MAP = 0  k = i + j*I             banks j*I mod 32: gcd(I, 32)-way (I odd: none; I = 8: 8-way)
//   MAP = 1  Giles: write I = P*F (P a power of two, F odd) and
//              k = n + n / (32F)  if P <= 32     (one word of padding after every 32F elements)
//              k = n + j          if P > 32
//            conflict-free for every I, on the load side too (the padding falls between warps'
//            32-element pieces, so each 32 consecutive n still hit 32 different banks)
//   MAP = 2  k = i + j*(I + 1)       no division, more padding; the read is conflict-free for
//            even I, but the load now skips a word at every struct boundary inside a 32-run
//
// The bank arithmetic above is for 4-byte elements; other sizes are moved correctly.
//
// The kernel keeps the course's contract: `in` is rows x cols, `out` cols x rows. A block
// covers I columns and 32 * WARPS rows; with cols == I every warp's 32 structs are contiguous
// (the AoS case). Other widths also work — each row's I-element pieces are then not contiguous.

__host__ __device__ constexpr int odd_part(int x) { while (x > 0 && x % 2 == 0) x /= 2; return x; }   // F of I = P*F

template <int I, int MAP>
__device__ __forceinline__ int aos_slot(int n, int j)    // n = i + j*I
{
    constexpr int F = odd_part(I);
    constexpr int P = I / F;
    if constexpr (MAP == 0) return n;
    else if constexpr (MAP == 2) return n + j;          // i + j*(I+1)
    else if constexpr (P <= 32) return n + n / (32 * F);
    else return n + j;
}

template <int I, int MAP>
__host__ __device__ constexpr int aos_words()                                // shared elements one warp needs
{
    return MAP == 0 ? 32 * I : MAP == 2 ? 32 * (I + 1) : 32 * I + 32;
}

template <typename T, int I, int WARPS, int MAP>
__global__ void aos(T* __restrict__ out, const T* __restrict__ in, int rows, int cols)
{
    static_assert(I >= 1 && MAP >= 0 && MAP <= 2, "I >= 1; MAP is 0, 1 or 2");
    __shared__ T s[WARPS][aos_words<I, MAP>()];
    T* mine = s[threadIdx.y];
    const int lane = threadIdx.x;
    const int r0 = (blockIdx.y * WARPS + threadIdx.y) * 32;      // first struct of this warp
    const int c0 = blockIdx.x * I;                               // first field of this tile
    if (r0 >= rows)
        return;                                                  // no __syncthreads below: safe

#pragma unroll
    for (int m = 0; m < I; ++m) {
        int n = lane + 32 * m;                                   // n = i + j*I
        int j = n / I, i = n % I;
        T v = T(0);                                              // zeros past the edge
        if (r0 + j < rows && c0 + i < cols)
            v = in[(size_t)(r0 + j) * cols + c0 + i];
        mine[aos_slot<I, MAP>(n, j)] = v;
    }

    __syncwarp();                                                // the warp's tile is complete

    const bool have = r0 + lane < rows;
#pragma unroll
    for (int i = 0; i < I; ++i) {
        T v = mine[aos_slot<I, MAP>(i + lane * I, lane)];
        if (have && c0 + i < cols)
            out[(size_t)(c0 + i) * rows + r0 + lane] = v;
    }
}

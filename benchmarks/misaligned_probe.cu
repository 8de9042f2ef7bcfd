// misaligned_probe.cu — experiments on why misaligned shapes cost tiled transposes (issue 13).
// Not course kernels: one generic tiled kernel whose tile, block, padding and row pitches are
// knobs, so that one run can separate the causes.
//
//   in  is rows x cols with a row pitch of IP elements (IP = cols: the real, misaligned matrix;
//       IP rounded up to 32: the same logical matrix with every row starting on a 128-byte line)
//   out is cols x rows with a row pitch of OP elements (MODE 0), or rows x cols with pitch OP
//
// MODE 0: transpose through a TR x TC shared tile (rows x columns of `in`), __syncthreads()
// MODE 1: copy through the same tile and barrier (every global access of a transpose's load
//         phase, and loads-shaped stores)
// MODE 2: copy, no shared memory, no barrier
// Every thread issues all its loads before its first shared store (registers hold them).

template <typename T, int TR, int TC, int BX, int BY, int PAD, int MODE>
__global__ void __launch_bounds__(BX * BY) probe(T* __restrict__ out, const T* __restrict__ in, int rows,
                                                 int cols, long long ip, long long op)
{
    constexpr int NI = TR / BY, NJ = TC / BX;
    __shared__ T t[MODE == 2 ? 1 : TR][MODE == 2 ? 1 : TC + PAD];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int r0 = blockIdx.y * TR, c0 = blockIdx.x * TC;
    T v[NI][NJ];
#pragma unroll
    for (int i = 0; i < NI; ++i)
#pragma unroll
        for (int j = 0; j < NJ; ++j) {
            const int r = r0 + ty + i * BY, c = c0 + tx + j * BX;
            v[i][j] = (r < rows && c < cols) ? in[r * ip + c] : T(0);
        }
    if constexpr (MODE == 2) {
#pragma unroll
        for (int i = 0; i < NI; ++i)
#pragma unroll
            for (int j = 0; j < NJ; ++j) {
                const int r = r0 + ty + i * BY, c = c0 + tx + j * BX;
                if (r < rows && c < cols) out[r * op + c] = v[i][j];
            }
        return;
    } else {
#pragma unroll
        for (int i = 0; i < NI; ++i)
#pragma unroll
            for (int j = 0; j < NJ; ++j)
                t[ty + i * BY][tx + j * BX] = v[i][j];
        __syncthreads();
        if constexpr (MODE == 1) {
#pragma unroll
            for (int i = 0; i < NI; ++i)
#pragma unroll
                for (int j = 0; j < NJ; ++j) {
                    const int r = r0 + ty + i * BY, c = c0 + tx + j * BX;
                    if (r < rows && c < cols) out[r * op + c] = t[ty + i * BY][tx + j * BX];
                }
        } else {
            constexpr int MI = TC / BY, MJ = TR / BX;     // out: TC rows x TR columns of the tile
#pragma unroll
            for (int i = 0; i < MI; ++i)
#pragma unroll
                for (int j = 0; j < MJ; ++j) {
                    const int c = c0 + ty + i * BY, r = r0 + tx + j * BX;
                    if (c < cols && r < rows) out[c * op + r] = t[tx + j * BX][ty + i * BY];
                }
        }
    }
}

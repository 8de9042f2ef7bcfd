// ldgsts_probe.cu — kernels whose cp.async copies conflict on the shared side (issue 35), for
// benchmarks/ldgsts_check.py: what Nsight Compute counts under
// l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ldgsts, against the simulator's rule (the copies'
// destinations cost what a shared store of the copy's width to them would).
//
// column_in: a transpose that turns the tile around on its way in. Each warp copies 32 consecutive
//   elements of a row of `in` (coalesced) into a *column* of the tile, tile[lane][j]; the tile is then read
//   by rows and written to rows of `out` (coalesced). Unpadded (PAD = 0) the column is 32 elements one row
//   apart: for 4-byte elements every lane in one bank, 32 wavefronts per copy (31 conflicts); for 8-byte
//   elements two half-warp phases of 16 lanes in one bank pair, 32 wavefronts (30 conflicts). PAD = 1 moves
//   each row one bank on (4 bytes) or two (8 bytes): 1 or 2 wavefronts, no conflict.
// chunk_column: 16-byte copies, lane l copying 16 bytes of row l of `in` into row l of a tile whose rows are
//   ROW bytes apart: with ROW = 128 the eight lanes of a quarter-warp hit the same four banks, 8 wavefronts
//   per quarter-warp, 32 per copy (28 conflicts, as run 1's probe pattern measured); with ROW = 144 none.
//   The tile is copied back to `out` (a staged copy of the first 4 floats of each row, not a transpose).

#include <cuda_pipeline.h>

template <typename T, int PAD>
__global__ void column_in(T* __restrict__ out, const T* __restrict__ in, int rows, int cols)
{
    __shared__ alignas(16) T tile[32][32 + PAD];
    const int x0 = blockIdx.x * 32, y0 = blockIdx.y * 32;
    for (int j = threadIdx.y; j < 32; j += blockDim.y) {          // row y0 + j of in -> column j of the tile
        const int y = y0 + j, x = x0 + threadIdx.x;
        if (y < rows && x < cols)
            __pipeline_memcpy_async(&tile[threadIdx.x][j], &in[(size_t)y * cols + x], sizeof(T));
    }
    __pipeline_commit();
    __pipeline_wait_prior(0);
    __syncthreads();
    for (int j = threadIdx.y; j < 32; j += blockDim.y) {          // row j of the tile is row x0 + j of out
        const int oy = x0 + j, ox = y0 + threadIdx.x;
        if (oy < cols && ox < rows)
            out[(size_t)oy * rows + ox] = tile[j][threadIdx.x];
    }
}

template <int ROW>
__global__ void chunk_column(float* __restrict__ out, const float* __restrict__ in, int rows, int cols)
{
    __shared__ alignas(16) unsigned char tile[32 * ROW];
    const int r = blockIdx.x * 32 + threadIdx.x;                   // one row of in per lane, its first 16 bytes
    if (r < rows && cols >= 4)
        __pipeline_memcpy_async(&tile[threadIdx.x * ROW], &in[(size_t)r * cols], 16);
    __pipeline_commit();
    __pipeline_wait_prior(0);
    if (r < rows && cols >= 4)
        *reinterpret_cast<float4*>(&out[(size_t)r * cols]) = *reinterpret_cast<const float4*>(&tile[threadIdx.x * ROW]);
}

// zero_fill: every lane's 4-byte copy reads nothing and zero-fills its destination (src-size 0), the
//   destinations a column of a [32][32] float tile. The simulator counts the zeros' writes like any copy's
//   (32 wavefronts, 31 conflicts per warp) and no global request; whether the H100 does is what this asks.
__global__ void zero_fill(float* __restrict__ out, const float* __restrict__ in, int rows, int cols)
{
    __shared__ float tile[32][32];
    __pipeline_memcpy_async(&tile[threadIdx.x][0], &in[threadIdx.x], sizeof(float), sizeof(float));
    __pipeline_commit();
    __pipeline_wait_prior(0);
    if (threadIdx.x < rows * cols)
        out[threadIdx.x] = tile[threadIdx.x][0];
}

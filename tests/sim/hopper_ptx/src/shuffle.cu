// shuffle.cu — a transpose with no shared memory at all: a warp turns a 32 x 32 tile around in
// its registers with __shfl_xor_sync.
//
// Each lane loads one column of the tile: v[i] = in[r0 + i][c0 + lane] (32 coalesced loads: the
// warp reads row i whole). The tile is then a 32 x 32 matrix spread over the warp, lane = column,
// register = row. Transposing it means lane l must end up with row l. Five butterfly rounds do
// it: in round m (16, 8, 4, 2, 1) every lane swaps half of its registers with lane ^ m — the
// registers whose index has bit m different from the lane's own bit m. The register indices are
// constants (no run-time index: a run-time index would move v[] to local memory), and which half
// a lane sends is a select on its lane bit. 5 x 16 = 80 shuffles move 32 elements per lane.
// Then v[i] = in[r0 + lane][c0 + i], and store i writes row c0 + i of out, coalesced again.
//
// WARPS warps per block, each with its own tile (a column of tiles). 8-byte elements shuffle as
// two 32-bit halves (__shfl_xor_sync does that for them).

template <typename T, int WARPS>
__global__ void __launch_bounds__(32 * WARPS) shuffle(T* __restrict__ out, const T* __restrict__ in, int rows, int cols)
{
    const int lane = threadIdx.x, c0 = blockIdx.x * 32, r0 = (blockIdx.y * WARPS + threadIdx.y) * 32;
    T v[32];
#pragma unroll
    for (int i = 0; i < 32; ++i)
        v[i] = (r0 + i < rows && c0 + lane < cols) ? in[(size_t)(r0 + i) * cols + c0 + lane] : T();
#pragma unroll
    for (int m = 16; m >= 1; m /= 2) {
        const bool upper = lane & m;              // this lane keeps the registers with bit m set
#pragma unroll
        for (int i = 0; i < 32; ++i) {
            if (i & m)
                continue;                         // pairs (i, i + m): one is sent, the other kept
            T send = upper ? v[i] : v[i + m];
            T got = __shfl_xor_sync(0xffffffffu, send, m);
            if (upper)
                v[i] = got;
            else
                v[i + m] = got;
        }
    }
#pragma unroll
    for (int i = 0; i < 32; ++i)
        if (c0 + i < cols && r0 + lane < rows)
            out[(size_t)(c0 + i) * rows + r0 + lane] = v[i];
}

//! Generated from solution.cu (instructor-only) by `python -m course_lib instructor check --sync-stubs`: edit solution.cu, not this file.
#define I FIELDS                                 // fields per struct: I = P * F = {AOS_P} * {AOS_F}
#define WARPS 4                              // warps per block, 32 structs each

__device__ int slot(int n, int j)            // the shared word of element n = i + j*I (field i of struct j)
{
    return n;                            // k = i + j*I: right answer, but is it conflict-free for I = {FIELDS}?
}

__global__ void aos_to_soa(float* out, const float* in, int rows, int cols)
{
    __shared__ float s[WARPS][32 * I + 8];   // one warp's 32 structs, and room for padding
    float* mine = s[threadIdx.y];
    const int lane = threadIdx.x;
    const int first = (blockIdx.y * WARPS + threadIdx.y) * 32;   // this warp's first struct (row of in)

    // 1. coalesced: the warp reads its 32 * I consecutive floats; lane l takes n = l, l + 32, ...
    for (int m = 0; m < I; ++m) {
        int n = lane + 32 * m, j = n / I;
        if (first + j < rows)
            mine[slot(n, j)] = in[(size_t)first * I + n];
    }
    __syncwarp();

    // 2. lane j owns struct first + j: its field i goes to row i of out
    if (first + lane < rows)
        for (int i = 0; i < I; ++i)
            out[(size_t)i * rows + first + lane] = mine[slot(i + lane * I, lane)];
}

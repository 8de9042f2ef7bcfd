//! Exercise 'aos_struct' (08_aos_struct_loading.ipynb): the instructor's version of the exercise's %%cuda cell.
//! The notebook holds this file without the //! lines and with each BEGIN/END SOLUTION block
//! replaced by its //> stub lines (stub.cu beside it, generated). Instructor-only: never in the wheel.
//! Why I = 40: with k = n, NVRTC 13.0's ptxas for sm_90 turns each lane's 40 loads into ten LDS.128
//! (its row is a multiple of 16 bytes), and 16-byte loads leave P / 4 = 2-way conflicts; Giles's
//! k = n + n / 160 is 40 conflict-free LDS. For I = 4, 6 or 12 the vectors alone remove them.
#define I FIELDS                                 // fields per struct: I = P * F = {AOS_P} * {AOS_F}
#define WARPS 4                              // warps per block, 32 structs each

__device__ int slot(int n, int j)            // the shared word of element n = i + j*I (field i of struct j)
{
    // BEGIN SOLUTION
    //> return n;                            // k = i + j*I: right answer, but is it conflict-free for I = {FIELDS}?
    return n + n / GILES;                      // Giles: one word of padding after every 32F = {GILES} elements
    // END SOLUTION
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

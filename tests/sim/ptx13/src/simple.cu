// simple.cu — the first GPU transposes: one thread for everything, then one thread per row.
//
// serial: launched with a single thread (grid 1, block 1). It is the CPU loop moved to the GPU
//   and runs about a hundred times slower than the CPU: one thread of a GPU is slow, and a GPU
//   is fast only when tens of thousands of threads work at once.
//
// per_row: one thread per column of `in` (= one row of `out`), blocks of BLOCK threads. Thread c
//   walks down column c of `in` and writes row c of `out`. At each step the warp's 32 threads
//   read 32 neighbouring elements of one row of `in` (coalesced: 4 sectors per request for
//   floats) but write 32 elements that are a whole row of `out` apart (32 sectors per request).
//   Far better than serial, yet only `cols` threads exist — too few to hide memory latency.
//
// The next step (naive.cu) gives every element its own thread.

template <typename T>
__global__ void serial(T* __restrict__ out, const T* __restrict__ in, int rows, int cols)
{
    for (int r = 0; r < rows; ++r)
        for (int c = 0; c < cols; ++c)
            out[(size_t)c * rows + r] = in[(size_t)r * cols + c];
}

template <typename T>
__global__ void per_row(T* __restrict__ out, const T* __restrict__ in, int rows, int cols)
{
    int c = blockIdx.x * blockDim.x + threadIdx.x;   // column of in = row of out
    if (c >= cols)
        return;
    for (int r = 0; r < rows; ++r)
        out[(size_t)c * rows + r] = in[(size_t)r * cols + c];
}

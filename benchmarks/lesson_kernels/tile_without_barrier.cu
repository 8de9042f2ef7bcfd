// Notebook 04's tile without its barrier, as a file a profiler can launch:
//   compute-sanitizer --tool racecheck python -m course_lib run \
//       benchmarks/lesson_kernels/tile_without_barrier.cu:tile_without_barrier --block 32x32 --tile 32 --shape 64x64
#define TILE 32
__global__ void tile_without_barrier(float* out, const float* in, int rows, int cols)
{
    __shared__ float tile[TILE][TILE];
    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
    if (x < cols && y < rows)
        tile[threadIdx.y][threadIdx.x] = in[(size_t)y * cols + x];
    // (no __syncthreads() here)
    x = blockIdx.y * TILE + threadIdx.x;
    y = blockIdx.x * TILE + threadIdx.y;
    if (x < rows && y < cols)
        out[(size_t)y * rows + x] = tile[threadIdx.x][threadIdx.y];
}

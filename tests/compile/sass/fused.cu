// Kernels whose neighbouring accesses ptxas fuses (or loads once), for tests/test_sass.py.
// fused.ptx and fused.sass are what NVRTC 13.0 (sm_90, -lineinfo) and nvdisasm -c -gp made of
// this file: python tests/test_sass.py --regenerate

// AoS -> SoA with k = i + j*I (notebook 08's plain mapping), 4 warps of 32 structs per block
template <int I>
__global__ void struct_read(float* out, const float* in, int rows)
{
    __shared__ float s[4][32 * I];
    float* mine = s[threadIdx.y];
    const int lane = threadIdx.x;
    const int first = (blockIdx.y * 4 + threadIdx.y) * 32;
    for (int m = 0; m < I; ++m) {
        int n = lane + 32 * m, j = n / I;
        if (first + j < rows)
            mine[n] = in[(size_t)first * I + n];
    }
    __syncwarp();
    if (first + lane < rows)
        for (int i = 0; i < I; ++i)
            out[(size_t)i * rows + first + lane] = mine[i + lane * I];
}

// SoA -> AoS: the fused accesses are the shared stores
template <int I>
__global__ void struct_write(float* out, const float* in, int rows)
{
    __shared__ float s[4][32 * I];
    float* mine = s[threadIdx.y];
    const int lane = threadIdx.x;
    const int first = (blockIdx.y * 4 + threadIdx.y) * 32;
    if (first + lane < rows)
        for (int i = 0; i < I; ++i)
            mine[i + lane * I] = in[(size_t)i * rows + first + lane];
    __syncwarp();
    for (int m = 0; m < I; ++m) {
        int n = lane + 32 * m, j = n / I;
        if (first + j < rows)
            out[(size_t)first * I + n] = mine[n];
    }
}

// One warp, fields summed: field 0 goes through its own register, so ptxas leaves it a plain
// LDS and fuses the rest (I = 6: LDS + LDS.64 + LDS.64 around a plain LDS of field 1)
template <int I>
__global__ void struct_sum(float* out, const float* in)
{
    __shared__ float buf[32 * I];
    const int lane = threadIdx.x;
    for (int i = 0; i < I; i++) buf[lane + i * 32] = in[lane + i * 32];
    __syncthreads();
    float s = 0;
#pragma unroll
    for (int i = 0; i < I; i++) s += buf[i + lane * I];
    out[lane] = s;
}

// Each field stored apart: ptxas loads fields 1..3 with one LDS.128 at field 0's address
template <int I>
__global__ void struct_copy(float* out, const float* in)
{
    __shared__ float buf[32 * I];
    const int lane = threadIdx.x;
    for (int i = 0; i < I; i++) buf[lane + i * 32] = in[lane + i * 32];
    __syncthreads();
#pragma unroll
    for (int i = 0; i < I; i++) out[i * 32 + lane] = buf[i + lane * I];
}

// A row of 2-byte elements into registers (15 LDS + 2 LDS.U16 for 32 loads)
template <typename T, int PITCH>
__global__ void row_read(T* out, const T* in, int n)
{
    __shared__ T t[4][32][PITCH];
    T (*w)[PITCH] = t[threadIdx.y];
    const int lane = threadIdx.x;
    for (int i = 0; i < 32; ++i)
        w[i][lane] = in[(threadIdx.y * 32 + i) * 32 + lane];
    __syncwarp();
    T v[32];
#pragma unroll
    for (int i = 0; i < 32; ++i)
        v[i] = w[lane][i];
#pragma unroll
    for (int i = 0; i < 32; ++i)
        if (i < n)
            out[(threadIdx.y * 32 + i) * 32 + lane] = v[i];
}

// One address loaded on two lines: one LDG.E
__global__ void load_twice(float* out, const float* in, int n)
{
    int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= n) return;
    float a = in[k];
    asm volatile("");
    float b = in[k];
    out[k] = a * b;
}

// Neighbours at a run-time stride: not fusable
__global__ void strided_pair(float* out, const float* in, int stride)
{
    __shared__ float t[1024];
    int k = threadIdx.x;
    for (int i = k; i < 1024; i += blockDim.x)
        t[i] = in[i];
    __syncthreads();
    out[k] = t[k * stride] + t[k * stride + 1];
}

// Only the sign of b is used: ptxas loads the high word of each double alone
// (LDG.E.CONSTANT [R+0x4] for an 8-byte ld.global.nc)
__global__ void sign_of(double* __restrict__ out, const double* __restrict__ a, const double* __restrict__ b, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    double r;
    asm volatile("copysign.f64 %0, %1, %2;" : "=d"(r) : "d"(b[i]), "d"(a[i]));
    out[i] = r;
}

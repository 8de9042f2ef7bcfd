// Access patterns for checking the simulator's counting rules against Nsight Compute.
// One warp-sized pattern per launch: thread t touches element t*stride + offset, through
// global memory and through shared memory, with 4-, 8- and 16-byte elements.

template <typename T>
__global__ void global_pattern(T* out, const T* in, int stride, int offset)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    out[t * stride + offset] = in[t * stride + offset];
}

template <typename T>
__global__ void shared_pattern(T* out, const T* in, int stride, int offset)
{
    extern __shared__ __align__(16) unsigned char raw[];
    T* s = reinterpret_cast<T*>(raw);
    int t = threadIdx.x;
    s[t * stride + offset] = in[t];            // shared store with the pattern
    __syncthreads();
    out[t] = s[t * stride + offset];           // shared load with the pattern
}

// Even lanes at byte 0, odd lanes at byte 128 of shared memory: pins rule 2 (t^1 pairs).
template <typename T>
__global__ void shared_pairs(T* out, const T* in)
{
    extern __shared__ __align__(16) unsigned char raw[];
    T* s = reinterpret_cast<T*>(raw);
    int t = threadIdx.x;
    int i = (t & 1) * (128 / sizeof(T));
    s[i] = in[t];                               // store: rule 2 never applies
    __syncthreads();
    out[t] = s[i];                              // load: t and t^1 share an address
}

// ---------------------------------------------------------------------------- fused accesses
// ptxas merges neighbouring narrow accesses into one wider machine instruction where it can
// prove the alignment (shared arrays: it places them itself), and loads one address once; the
// simulator reads that from the SASS (course_lib/sim/fusion.py). One warp per 32 structs of I
// floats, 4 warps per block, as in notebook 08 with the plain mapping k = i + j*I.

// AoS -> SoA: lane j reads the I fields of its struct, mine[i + j*I]. NVRTC 13 for sm_90:
// I = 2 one LDS.64, 4 one LDS.128, 6 three LDS.64, 8 two LDS.128, 64 sixteen LDS.128; I = 3 none.
// PAD = 2 (notebook 08's array, 32*I + 2 floats per warp): a warp's array is only 8-byte
// aligned, so I = 4 becomes two LDS.64 (2-way conflicts) instead of one LDS.128.
template <int I, int PAD = 0>
__global__ void struct_read(float* out, const float* in, int rows)
{
    __shared__ float s[4][32 * I + PAD];
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

// SoA -> AoS: the same with the roles swapped; the fused accesses are stores (STS.128, STS.64).
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

// A warp's 32 x 32 tile; lane l reads row l of it into registers, then stores them where i < n.
// 2-byte elements, pitch 34: 15 LDS (4 bytes) + 2 LDS.U16 for the 32 loads; bytes, pitch 36:
// 32 LDS.U8 (no fusion); floats, pitch 36: 8 LDS.128; floats, pitch 33: 32 LDS (odd pitch).
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

// One address loaded on two lines (the empty asm keeps NVVM from merging them): ptxas loads it
// once (one LDG.E for two PTX loads). Through __restrict__ const NVVM merges them itself: one
// ld.global.nc, one LDG.E.CONSTANT (a control: nothing for the SASS to change).
__global__ void load_twice(float* out, const float* in, int n)
{
    int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= n) return;
    float a = in[k];
    asm volatile("");
    float b = in[k];
    out[k] = a * b;
}

__global__ void load_twice_nc(float* __restrict__ out, const float* __restrict__ in, int n)
{
    int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= n) return;
    float a = in[k];
    asm volatile("");
    float b = in[k];
    out[k] = a * b;
}

// Not fusable: neighbours at a stride known only at run time (alignment unprovable).
__global__ void strided_pair(float* out, const float* in, int stride)
{
    __shared__ float t[1024];
    int k = threadIdx.x;
    for (int i = k; i < 1024; i += blockDim.x)
        t[i] = in[i];
    __syncthreads();
    out[k] = t[k * stride] + t[k * stride + 1];
}

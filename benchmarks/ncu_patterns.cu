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

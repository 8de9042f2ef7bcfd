
extern "C" __global__ void misc(float* out, const float* in, int n)
{
    float local[8];                                   // indexed at run time: a .local depot
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    for (int j = 0; j < 8; ++j) local[j] = in[(i + j * 3) % n];
    int idx = (int)in[i] & 7;
    if (i < 2) printf("thread %d value %f idx %d\n", i, local[idx], idx);   // a call sequence
    __shared__ int counter;
    if (threadIdx.x == 0) counter = 0;
    __syncthreads();
    atomicAdd(&counter, 1);
    __syncthreads();
    out[i] = local[idx] + counter;
}

//! Exercise 'aos_split' (08_aos_struct_loading.ipynb): the instructor's version of the exercise's %%cuda cell.
//! The notebook holds this file without the //! lines and with each BEGIN/END SOLUTION block
//! replaced by its //> stub lines (stub.cu beside it, generated). Instructor-only: never in the wheel.
struct P { T x, y, z; };                        // one point: three values side by side

__global__ void split_xyz(T* xs, T* ys, T* zs, const P* in, int n)
{
    __shared__ T s[3 * BLOCK];                  // the block's BLOCK points as 3 * BLOCK values
    int i = blockIdx.x * BLOCK + threadIdx.x;   // this thread's point
    // BEGIN SOLUTION
    //> if (i < n) {                            // one point per thread: right, but lanes of a warp
    //>     P p = in[i];                        // read x (then y, then z) 12 bytes apart
    //>     xs[i] = p.x;
    //>     ys[i] = p.y;
    //>     zs[i] = p.z;
    //> }
    const T* first = reinterpret_cast<const T*>(in) + (size_t)blockIdx.x * 3 * BLOCK;   // the block's values
    int have = 3 * (n - blockIdx.x * BLOCK);    // how many of them the array holds (fewer in the last block)
    for (int k = threadIdx.x; k < 3 * BLOCK; k += BLOCK)    // consecutive threads, consecutive values
        if (k < have)
            s[k] = first[k];
    __syncthreads();
    if (i < n) {
        xs[i] = s[3 * threadIdx.x];
        ys[i] = s[3 * threadIdx.x + 1];
        zs[i] = s[3 * threadIdx.x + 2];
    }
    // END SOLUTION
}

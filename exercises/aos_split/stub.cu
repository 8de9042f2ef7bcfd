//! Generated from solution.cu (instructor-only) by `python -m course_lib instructor check --sync-stubs`: edit solution.cu, not this file.
struct P { T x, y, z; };                        // one point: three values side by side

__global__ void split_xyz(T* xs, T* ys, T* zs, const P* in, int n)
{
    __shared__ T s[3 * BLOCK];                  // the block's BLOCK points as 3 * BLOCK values
    int i = blockIdx.x * BLOCK + threadIdx.x;   // this thread's point
    if (i < n) {                            // one point per thread: right, but lanes of a warp
        P p = in[i];                        // read x (then y, then z) 12 bytes apart
        xs[i] = p.x;
        ys[i] = p.y;
        zs[i] = p.z;
    }
}

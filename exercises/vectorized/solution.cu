//! Exercise 'vectorized' (07_vectorized_access.ipynb): the instructor's version of the exercise's %%cuda cell.
//! The notebook holds this file without the //! lines and with each BEGIN/END SOLUTION block
//! replaced by its //> stub lines (stub.cu beside it, generated). Instructor-only: never in the wheel.
__global__ void transpose_vec4(float* out, const float* in, int rows, int cols)
{
    // BEGIN SOLUTION
    //> __shared__ float tile[32][32];
    __shared__ float tile[32][32 + 1];              // PAD = 1: conflict-free column reads
    // END SOLUTION
    int c = blockIdx.x * 32 + threadIdx.x * 4;      // first of this thread's 4 columns of in
    int r = blockIdx.y * 32 + threadIdx.y;          // its row of in
    // BEGIN SOLUTION
    //> // 1. one float4 load from row r, columns c .. c+3 (if inside the matrix), into the tile
    //> // 2. wait for the block
    //> // 3. one float4 store to row blockIdx.x * 32 + threadIdx.y of out, columns
    //> //    blockIdx.y * 32 + threadIdx.x * 4 .. + 3, gathered from the tile by column
    if (r < rows && c < cols) {                     // cols % 4 == 0, so c + 3 < cols as well
        float4 v = *reinterpret_cast<const float4*>(in + (size_t)r * cols + c);
        float* row = tile[threadIdx.y] + threadIdx.x * 4;
        row[0] = v.x; row[1] = v.y; row[2] = v.z; row[3] = v.w;
    }
    __syncthreads();
    int oc = blockIdx.y * 32 + threadIdx.x * 4;     // first of 4 columns of out (= rows of in)
    int orow = blockIdx.x * 32 + threadIdx.y;       // row of out (= a column of in)
    if (orow < cols && oc < rows) {
        int k = threadIdx.x * 4;
        float4 v = make_float4(tile[k][threadIdx.y], tile[k + 1][threadIdx.y],
                               tile[k + 2][threadIdx.y], tile[k + 3][threadIdx.y]);
        *reinterpret_cast<float4*>(out + (size_t)orow * rows + oc) = v;
    }
    // END SOLUTION
}

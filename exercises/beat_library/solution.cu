//! Exercise 'beat_library' (11_capstone.ipynb): the instructor's version of the exercise's %%cuda cell.
//! The notebook holds this file without the //! lines and with each BEGIN/END SOLUTION block
//! replaced by its //> stub lines (stub.cu beside it, generated). Instructor-only: never in the wheel.
// Blocks of 8 x 32 threads, one 32 x 32 tile each; rows and cols are multiples of 4.
__global__ void counted_transpose(float* out, const float* in, int rows, int cols)
{
    __shared__ float tile[32][32 + 1];
    // BEGIN SOLUTION
    //> int t = threadIdx.y * 8 + threadIdx.x;                 // 0..255: a warp is 32 consecutive t
    //> int k = t % 32;                                         // this thread's column of the tile
    //> for (int j = t / 32; j < 32; j += 8) {                  // rows j, j + 8, j + 16, j + 24: one float each
    //>     int r = blockIdx.y * 32 + j, c = blockIdx.x * 32 + k;
    //>     if (r < rows && c < cols)
    //>         tile[j][k] = in[(size_t)r * cols + c];
    //> }
    //> __syncthreads();
    //> for (int j = t / 32; j < 32; j += 8) {
    //>     int orow = blockIdx.x * 32 + j, oc = blockIdx.y * 32 + k;
    //>     if (orow < cols && oc < rows)
    //>         out[(size_t)orow * rows + oc] = tile[k][j];
    //> }
    int c = blockIdx.x * 32 + threadIdx.x * 4;      // first of this thread's 4 columns of in
    int r = blockIdx.y * 32 + threadIdx.y;          // its row of in
    if (r < rows && c < cols) {                     // one 16-byte load instead of four
        float4 v = *reinterpret_cast<const float4*>(in + (size_t)r * cols + c);
        float* row = tile[threadIdx.y] + threadIdx.x * 4;
        row[0] = v.x; row[1] = v.y; row[2] = v.z; row[3] = v.w;
    }
    __syncthreads();
    int oc = blockIdx.y * 32 + threadIdx.x * 4;     // first of 4 columns of out (= rows of in)
    int orow = blockIdx.x * 32 + threadIdx.y;       // row of out (= a column of in)
    if (orow < cols && oc < rows) {                 // one 16-byte store instead of four
        int k = threadIdx.x * 4;
        *reinterpret_cast<float4*>(out + (size_t)orow * rows + oc) =
            make_float4(tile[k][threadIdx.y], tile[k + 1][threadIdx.y], tile[k + 2][threadIdx.y], tile[k + 3][threadIdx.y]);
    }
    // END SOLUTION
}

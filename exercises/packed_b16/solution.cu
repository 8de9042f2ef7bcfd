//! Exercise 'packed_b16' (09_data_types.ipynb): the instructor's version of the exercise's %%cuda cell.
//! The notebook holds this file without the //! lines and with each BEGIN/END SOLUTION block
//! replaced by its //> stub lines (stub.cu beside it, generated). Instructor-only: never in the wheel.
// 16-bit elements moved as 32-bit words (two elements each). A block of 32x8 threads moves
// 32 rows x 64 columns of in: 32 rows x 32 words. rows and cols are even (see the exercise).
__global__ void transpose_b16(unsigned short* out, const unsigned short* in, int rows, int cols)
{
    __shared__ unsigned w[32][32 + 1];           // 32 rows x 32 words, padded by one word
    const int r0 = blockIdx.y * 32, c0 = blockIdx.x * 64;

    // 1. rows in: thread x loads word x (columns c0 + 2x and c0 + 2x + 1) of four rows
    for (int j = threadIdx.y; j < 32; j += 8) {
        int r = r0 + j, c = c0 + 2 * threadIdx.x;
        unsigned v = 0;
        if (r < rows && c < cols)                // cols is even, so c + 1 < cols too
            v = *reinterpret_cast<const unsigned*>(in + (size_t)r * cols + c);
        w[j][threadIdx.x] = v;
    }
    __syncthreads();

    // 2. a thread takes word column `col` of rows 2g and 2g + 1: a 2x2 block of elements
    for (int t = threadIdx.y * 32 + threadIdx.x; t < 16 * 32; t += 256) {
        int g = t % 16, col = t / 16;
        unsigned a = w[2 * g][col];              // elements (2g, 2col) and (2g, 2col + 1): a0 (low half), a1
        unsigned b = w[2 * g + 1][col];          // the row below: b0, b1
        unsigned lo, hi;                         // lo = (a0, b0) and hi = (a1, b1): two words of out
        // BEGIN SOLUTION
        //> lo = a;  hi = b;                     // TODO: build lo and hi with __byte_perm(a, b, selector)
        lo = __byte_perm(a, b, 0x5410);          // bytes 0,1 of a, then bytes 0,1 of b
        hi = __byte_perm(a, b, 0x7632);          // bytes 2,3 of a, then bytes 2,3 of b
        // END SOLUTION
        int orow = c0 + 2 * col, ocol = r0 + 2 * g;    // lo goes to row orow of out, hi to orow + 1
        if (ocol < rows) {                       // rows is even, so ocol + 1 < rows too
            if (orow < cols)
                *reinterpret_cast<unsigned*>(out + (size_t)orow * rows + ocol) = lo;
            if (orow + 1 < cols)
                *reinterpret_cast<unsigned*>(out + (size_t)(orow + 1) * rows + ocol) = hi;
        }
    }
}

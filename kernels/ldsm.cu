// ldsm.cu — 16-bit tiles turned around by ldmatrix / stmatrix (sm_75 / sm_90), as tensor-core
// code prepares its operands.
//
// `ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16` loads four 8 x 8 matrices of 16-bit values:
// lanes 8m .. 8m + 7 give the addresses of the 8 rows (16 bytes each) of matrix m, and every
// lane receives, in register m, two values of matrix m — transposed with .trans: lane l gets
// row l / 4, columns 2 (l % 4) and 2 (l % 4) + 1 of the matrix's transpose. `stmatrix` (no
// .trans) writes such fragments back as rows, to the 8 addresses lanes 8m .. 8m + 7 give. So
// ldmatrix.trans + stmatrix moves an 8 x 8 block to shared memory turned around, 16 bytes per
// row, and by choosing the store addresses the block lands at its transposed place.
//
// One block moves a 64 x 64 tile (128-byte rows): 16-byte coalesced loads into a tile `a`,
// swizzled as the TMA's 128-byte mode does (chunk c of row r at chunk c ^ (r % 8)), so that the
// 8 rows one ldmatrix matrix reads sit in 8 different chunk slots: no bank conflicts; then each
// warp moves 8 x 8 blocks from `a` to `b` (swizzled the same way) with ldmatrix.trans and
// stmatrix; then 16-byte coalesced stores of b's rows. Needs rows and cols multiples of 8 and
// 16-byte aligned arrays (whole 16-byte chunks everywhere); 2-byte T only.

template <typename T, int THREADS>
__global__ void __launch_bounds__(THREADS) ldsm(T* __restrict__ out, const T* __restrict__ in, int rows, int cols)
{
    static_assert(sizeof(T) == 2, "ldmatrix moves 16-bit elements");
    constexpr int N = 64;                              // tile: 64 x 64 elements, 8 chunks a row
    __shared__ alignas(128) uint4 a[N * 8], b[N * 8];
    auto at = [](int r, int c) { return r * 8 + (c ^ (r % 8)); };   // chunk c of row r, swizzled
    const int r0 = blockIdx.y * N, c0 = blockIdx.x * N, tid = threadIdx.x, lane = tid % 32;

    for (int i = tid; i < N * 8; i += THREADS) {       // rows of in -> a
        const int r = i / 8, c = i % 8;
        uint4 v = make_uint4(0, 0, 0, 0);
        if (r0 + r < rows && c0 + 8 * c < cols)
            v = *reinterpret_cast<const uint4*>(in + (size_t)(r0 + r) * cols + c0 + 8 * c);
        a[at(r, c)] = v;
    }
    __syncthreads();

    // 8 x 8 blocks: block (br, bc) of a -> block (bc, br) of b; a warp takes 4 blocks of a column
    for (int q = tid / 32; q < 16; q += THREADS / 32) {
        const int bc = q % 8, br = q / 8 * 4;          // blocks (br .. br + 3, bc)
        const int m = lane / 8, r = lane % 8;          // this lane's row of matrix m
        unsigned src = (unsigned)__cvta_generic_to_shared(&a[at(8 * (br + m) + r, bc)]);
        unsigned dst = (unsigned)__cvta_generic_to_shared(&b[at(8 * bc + r, br + m)]);
        unsigned x0, x1, x2, x3;
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];"
                     : "=r"(x0), "=r"(x1), "=r"(x2), "=r"(x3) : "r"(src));
        asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};"
                     :: "r"(dst), "r"(x0), "r"(x1), "r"(x2), "r"(x3) : "memory");
    }
    __syncthreads();

    for (int i = tid; i < N * 8; i += THREADS) {       // rows of b -> out
        const int r = i / 8, c = i % 8;                // row c0 + r of out, columns r0 + 8c ..
        if (c0 + r < cols && r0 + 8 * c < rows)
            *reinterpret_cast<uint4*>(out + (size_t)(c0 + r) * rows + r0 + 8 * c) = b[at(r, c)];
    }
}

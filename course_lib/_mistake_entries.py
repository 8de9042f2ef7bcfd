"""The entries of course_lib.mistakes: data only (kernel, launch, expected diagnosis, explanation).

Kernels are written the way a student writes them, with a student's comments and no marker
on the bug. Launches use small shapes so the whole catalog runs in seconds; in them ``src``
is the kernel's source, and ``random_matrix(rows, cols)`` / ``poisoned(*shape)`` make random
input and a NaN-filled output.
"""
from .mistakes import _add

# ----------------------------------------------------------------------------- synchronisation

_add("missing_syncthreads", "No __syncthreads() between writing the tile and reading it", "RAW race", r'''
#define TILE 32
extern "C" __global__ void transpose(float* out, const float* in, int rows, int cols)
{
    __shared__ float tile[TILE][TILE + 1];
    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
    if (x < cols && y < rows)
        tile[threadIdx.y][threadIdx.x] = in[y * cols + x];

    x = blockIdx.y * TILE + threadIdx.x;
    y = blockIdx.x * TILE + threadIdx.y;
    if (x < rows && y < cols)
        out[y * rows + x] = tile[threadIdx.x][threadIdx.y];
}
''', '''
k = cl.RawModule(code=src, filename="cell.cu").get_function("transpose")
a, out = random_matrix(64, 96), poisoned(96, 64)
k.simulate((3, 2), (32, 32), (out, a, np.int32(64), np.int32(96)))
''', points_at=("tile[threadIdx.y][threadIdx.x] = in[", "= tile[threadIdx.x][threadIdx.y]"),
     mentions=("tile", "thread (", "block ("),
     explanation="Each thread reads an element of the tile that *another* thread wrote. Without a barrier "
                 "nothing makes the reader wait for the writer: warps run in any order, so on a GPU the "
                 "result is right most of the time and wrong now and then. The simulator runs warps in "
                 "lock-step, so its output may even look right — which is why it reports the race itself.",
     fix="Put `__syncthreads();` between the loop that fills the tile and the loop that reads it, outside "
         "any `if`, so every thread of the block reaches it.")

_add("reduction_without_sync", "Tree reduction without __syncthreads() inside the loop", "RAW race", r'''
extern "C" __global__ void block_sum(float* sums, const float* in, int n)
{
    __shared__ float s[256];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    s[threadIdx.x] = i < n ? in[i] : 0.0f;
    __syncthreads();
    for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
        if (threadIdx.x < stride)
            s[threadIdx.x] += s[threadIdx.x + stride];
    }
    if (threadIdx.x == 0)
        sums[blockIdx.x] = s[0];
}
''', '''
k = cl.RawModule(code=src, filename="cell.cu").get_function("block_sum")
x = np.random.rand(1000).astype(np.float32)
sums = np.zeros(4, np.float32)
k.simulate((4,), (256,), (sums, x, np.int32(1000)))
''', points_at=("s[threadIdx.x] += s[threadIdx.x + stride]",) * 2, mentions=("'s'", "thread (", "block ("),
     explanation="Each round reads partial sums that other threads wrote in the round before. Without a "
                 "barrier at the end of each round, a fast warp starts the next round before a slow one "
                 "has finished this one, and adds a stale value.",
     fix="Add `__syncthreads();` at the end of the loop body — after the `if`, so that every thread "
         "reaches it, also those with nothing left to add.")

_add("loop_without_second_sync", "Reusing a shared buffer in a loop without a barrier at the end", "WAR race", r'''
extern "C" __global__ void reverse_chunks(float* out, const float* in, int n)
{
    __shared__ float buf[256];
    for (int base = blockIdx.x * 256; base < n; base += gridDim.x * 256) {
        buf[threadIdx.x] = in[base + threadIdx.x];
        __syncthreads();
        out[base + threadIdx.x] = buf[255 - threadIdx.x];
    }
}
''', '''
k = cl.RawModule(code=src, filename="cell.cu").get_function("reverse_chunks")
x, out = np.random.rand(2048).astype(np.float32), np.zeros(2048, np.float32)
k.simulate((2,), (256,), (out, x, np.int32(2048)))
''', points_at=("= buf[255 - threadIdx.x]", "buf[threadIdx.x] = in["), mentions=("buf", "thread (", "block ("),
     explanation="One barrier per iteration is not enough: in the next iteration a thread overwrites "
                 "`buf[threadIdx.x]` while another thread may still be reading that element of the "
                 "previous chunk (a write-after-read hazard).",
     fix="Add a second `__syncthreads();` at the end of the loop body, after the last read of `buf`.")

_add("sync_in_branch", "__syncthreads() inside a branch that not every thread takes", "BarrierError", r'''
#define TILE 16
extern "C" __global__ void matmul(float* C, const float* A, const float* B, int n)
{
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];
    int row = blockIdx.y * TILE + threadIdx.y;
    int col = blockIdx.x * TILE + threadIdx.x;
    float sum = 0.0f;
    for (int t = 0; t < (n + TILE - 1) / TILE; ++t) {
        if (row < n && col < n) {
            As[threadIdx.y][threadIdx.x] = A[row * n + t * TILE + threadIdx.x];
            Bs[threadIdx.y][threadIdx.x] = B[(t * TILE + threadIdx.y) * n + col];
            __syncthreads();          // wait until both tiles are loaded
            for (int k = 0; k < TILE; ++k)
                sum += As[threadIdx.y][k] * Bs[k][threadIdx.x];
        }
        __syncthreads();
    }
    if (row < n && col < n)
        C[row * n + col] = sum;
}
''', '''
k = cl.RawModule(code=src, filename="cell.cu").get_function("matmul")
n = 20
A, B, C = random_matrix(n, n), random_matrix(n, n), poisoned(n, n)
k.simulate((2, 2), (16, 16), (C, A, B, np.int32(n)))
''', points_at=("wait until both tiles are loaded",), mentions=("different __syncthreads()", "thread (", "block ("),
     explanation="In the edge blocks the threads outside the matrix skip the first barrier and wait at the "
                 "second one, while the others wait at the first: the block is split across two barriers. "
                 "On a GPU that hangs or, worse, lets the two groups release each other at the wrong place.",
     fix="Keep every `__syncthreads()` outside conditions that depend on the thread. Do the bounds test "
         "on the loads instead: `As[ty][tx] = (row < n && t*TILE + tx < n) ? A[...] : 0.0f;`.")

_add("sync_in_bounds_check", "__syncthreads() inside the bounds test of a tiled transpose", "BarrierError", r'''
#define TILE 32
extern "C" __global__ void transpose(float* out, const float* in, int rows, int cols)
{
    __shared__ float tile[TILE][TILE + 1];
    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
    if (x < cols && y < rows) {
        tile[threadIdx.y][threadIdx.x] = in[y * cols + x];
        __syncthreads();          // wait for the whole tile
        int ox = blockIdx.y * TILE + threadIdx.x;
        int oy = blockIdx.x * TILE + threadIdx.y;
        if (ox < rows && oy < cols)
            out[oy * rows + ox] = tile[threadIdx.x][threadIdx.y];
    }
}
''', '''
k = cl.RawModule(code=src, filename="cell.cu").get_function("transpose")
a, out = random_matrix(40, 70), poisoned(70, 40)
k.simulate((3, 2), (32, 32), (out, a, np.int32(40), np.int32(70)))
''', points_at=("wait for the whole tile",), mentions=("never reach", "if (x < cols && y < rows) {", "thread (", "block ("),
     explanation="On a 40x70 matrix the blocks at the right and bottom edges hang over it: their threads outside "
                 "the matrix skip the whole `if`, barrier included, and finish while the others wait at the "
                 "barrier. The CUDA Programming Guide allows `__syncthreads()` in conditional code only if the "
                 "condition is the same for the whole block. On a GPU this can hang, or release the waiting "
                 "threads before the tile is complete. On shapes that are multiples of 32 nothing goes wrong, "
                 "which is why the bug survives its first tests (it is in the CUDA_Freshman transpose).",
     fix="Close the `if` before the barrier and open a second one after it: every thread reaches "
         "`__syncthreads()`, and only the loads and stores are conditional.")

_add("assert_block_shape", "A kernel that assumes its block shape, launched with another", "AssertionFailed", r'''
#define TILE 32
extern "C" __global__ void transpose(float* out, const float* in, int rows, int cols)
{
    assert(blockDim.x == TILE && blockDim.y == TILE);   // one thread per tile element
    __shared__ float tile[TILE][TILE + 1];
    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
    if (x < cols && y < rows)
        tile[threadIdx.y][threadIdx.x] = in[y * cols + x];
    __syncthreads();
    x = blockIdx.y * TILE + threadIdx.x;
    y = blockIdx.x * TILE + threadIdx.y;
    if (x < rows && y < cols)
        out[y * rows + x] = tile[threadIdx.x][threadIdx.y];
}
''', '''
k = cl.RawModule(code=src, filename="cell.cu").get_function("transpose")
a, out = random_matrix(64, 96), poisoned(96, 64)
k.simulate((3, 2), (32, 8), (out, a, np.int32(64), np.int32(96)))
''', points_at=("assert(blockDim.x == TILE",), mentions=("Assertion `", "failed", "thread (", "block ("),
     explanation="The kernel moves a 32x32 tile with one thread per element, and says so with an `assert`; the "
                 "launch uses 32x8 blocks (the shape of notebook 06's kernels). Without the assert, three "
                 "quarters of every tile would never be loaded and the output would be quietly wrong; with "
                 "it, the first thread of the first block stops the kernel. On a GPU a failed assert prints "
                 "the assertion and makes every later CUDA call of the process fail (device-side assert "
                 "triggered), so the notebook must be restarted.",
     fix="Launch with `block=(32, 32)`, or let each thread of a 32x8 block move four elements "
         "(`for (int j = 0; j < TILE; j += 8)`, notebook 06) and assert that shape instead.")

# ----------------------------------------------------------------------------- memory accesses

_add("off_by_one", "Off-by-one bound: i <= n", "MemoryAccessError", r'''
extern "C" __global__ void scale(float* out, const float* in, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i <= n)
        out[i] = 2.0f * in[i];
}
''', '''
k = cl.RawModule(code=src, filename="cell.cu").get_function("scale")
x, out = np.random.rand(1000).astype(np.float32), np.zeros(1000, np.float32)
k.simulate(((1000 + 255) // 256,), (256,), (out, x, np.int32(1000)))
''', points_at=("out[i] = 2.0f * in[i];",), mentions=("'in'", "element 1000", "past the end", "thread (232, 0, 0)", "block (3, 0, 0)"),
     explanation="Valid indexes run from 0 to n-1. With `<=`, thread i = n reads one element past the end of "
                 "`in` (and would write one past the end of `out`). On a GPU such an access usually goes "
                 "unnoticed — it lands in memory CuPy's pool owns — and corrupts someone else's data.",
     fix="`if (i < n)`.")

_add("missing_bounds_check", "No bounds test when the shape is not a multiple of the block", "MemoryAccessError", r'''
extern "C" __global__ void transpose(float* out, const float* in, int rows, int cols)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;   // column of in
    int y = blockIdx.y * blockDim.y + threadIdx.y;   // row of in
    out[x * rows + y] = in[y * cols + x];
}
''', '''
k = cl.RawModule(code=src, filename="cell.cu").get_function("transpose")
rows, cols = 100, 70
a, out = random_matrix(rows, cols), poisoned(cols, rows)
k.simulate(((cols + 31) // 32, (rows + 7) // 8), (32, 8), (out, a, np.int32(rows), np.int32(cols)))
''', points_at=("out[x * rows + y] = in[y * cols + x];",), mentions=("'in'", "past the end", "thread (", "block ("),
     explanation="The grid is rounded up to whole blocks (here 96 x 104 threads for 70 x 100 elements), so the "
                 "last blocks have threads outside the matrix. Without a bounds test they read and write "
                 "outside the arrays. With square, multiple-of-32 test shapes the bug stays hidden.",
     fix="`if (x < cols && y < rows) out[x * rows + y] = in[y * cols + x];` — and test with shapes like "
         "1000 x 1030, 1 x N and N x 1.")

_add("shared_halo_overflow", "Shared array declared without room for the halo", "MemoryAccessError", r'''
#define R 1
extern "C" __global__ void blur(float* out, const float* in, int n)
{
    __shared__ float s[256];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int t = threadIdx.x + R;
    s[t] = in[i];
    if (threadIdx.x == 0) s[0] = i > 0 ? in[i - 1] : 0.0f;
    if (threadIdx.x == blockDim.x - 1) s[t + 1] = i + 1 < n ? in[i + 1] : 0.0f;
    __syncthreads();
    out[i] = (s[t - 1] + s[t] + s[t + 1]) / 3.0f;
}
''', '''
k = cl.RawModule(code=src, filename="cell.cu").get_function("blur")
x, out = np.random.rand(1024).astype(np.float32), np.zeros(1024, np.float32)
k.simulate((4,), (256,), (out, x, np.int32(1024)))
''', points_at=("s[t] = in[i];",), mentions=("'s'", "element 256", "thread (255, 0, 0)", "block ("),
     explanation="The block has 256 threads and each stores at `threadIdx.x + R`, so the array needs "
                 "256 + 2R elements: one halo cell on each side. Thread 255 stores at s[256], past the end. "
                 "On a GPU this silently overwrites the next shared variable, or faults.",
     fix="`__shared__ float s[256 + 2 * R];`")

_add("misaligned_float4", "float4 loads from rows whose length is not a multiple of 4", "MemoryAccessError", r'''
extern "C" __global__ void copy_rows(float* out, const float* in, int rows, int cols)
{
    int row = blockIdx.x;
    const float4* src = reinterpret_cast<const float4*>(in + row * cols);
    float4* dst = reinterpret_cast<float4*>(out + row * cols);
    for (int j = threadIdx.x; j < cols / 4; j += blockDim.x)
        dst[j] = src[j];
}
''', '''
k = cl.RawModule(code=src, filename="cell.cu").get_function("copy_rows")
a, out = random_matrix(10, 30), poisoned(10, 30)
k.simulate((10,), (32,), (out, a, np.int32(10), np.int32(30)))
''', points_at=("dst[j] = src[j];",), mentions=("Misaligned", "'in'", "element 30", "thread (", "block (1, 0, 0)"),
     explanation="A float4 access must start at an address that is a multiple of 16 bytes. Row 1 starts at "
                 "element 30 = byte 120, which is not, so the GPU raises a misaligned-address error (and "
                 "the CUDA context is lost). Besides, `cols / 4` drops the last `cols % 4` elements.",
     fix="Use float4 only when `cols % 4 == 0` (pad the rows, or fall back to float), and handle the "
         "remainder with scalar loads.")

_add("shared_per_block", "Reading another block's part of a __shared__ array", "uninitialized read", r'''
extern "C" __global__ void transpose(float* out, const float* in, int n)
{
    __shared__ float m[64][64];       // the whole 64 x 64 matrix, shared by everyone
    int x = blockIdx.x * 16 + threadIdx.x;
    int y = blockIdx.y * 16 + threadIdx.y;
    m[y][x] = in[y * n + x];
    __syncthreads();
    out[y * n + x] = m[x][y];
}
''', '''
k = cl.RawModule(code=src, filename="cell.cu").get_function("transpose")
a, out = random_matrix(64, 64), poisoned(64, 64)
k.simulate((4, 4), (16, 16), (out, a, np.int32(64)))
''', points_at=("out[y * n + x] = m[x][y];",), mentions=("'m'", "per block", "thread (", "block ("),
     explanation="Every block has its own private copy of `m`; `__syncthreads()` only waits for the "
                 "threads of one block. Block (1, 0) reads `m[x][y]` from the part that block (0, 1) "
                 "filled — in block (0, 1)'s copy. In its own copy that element was never written.",
     fix="Let each block load the tile it needs (the transposed tile, read from global memory) into its "
         "own shared memory — the tiled transpose of lesson 4.")

_add("uninitialized_shared", "Filling only part of the tile (32x8 threads for a 32x32 tile)", "uninitialized read", r'''
#define TILE 32
extern "C" __global__ void transpose(float* out, const float* in, int rows, int cols)
{
    __shared__ float tile[TILE][TILE + 1];
    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
    if (x < cols && y < rows)
        tile[threadIdx.y][threadIdx.x] = in[y * cols + x];
    __syncthreads();
    x = blockIdx.y * TILE + threadIdx.x;
    y = blockIdx.x * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += 8)
        if (x < rows && y + j < cols)
            out[(y + j) * rows + x] = tile[threadIdx.x][threadIdx.y + j];
}
''', '''
k = cl.RawModule(code=src, filename="cell.cu").get_function("transpose")
a, out = random_matrix(64, 64), poisoned(64, 64)
k.simulate((2, 2), (32, 8), (out, a, np.int32(64), np.int32(64)))
''', points_at=("= tile[threadIdx.x][threadIdx.y + j];",), mentions=("'tile'", "no thread of this block", "thread (", "block ("),
     explanation="With 32 x 8 threads, one store per thread fills only 8 of the tile's 32 rows, but the "
                 "second loop reads all 32. The other rows hold whatever was in shared memory before.",
     fix="Fill the tile with the same loop: `for (int j = 0; j < TILE; j += 8) if (x < cols && y + j < rows) "
         "tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * cols + x];`")

_add("int_overflow", "int index overflow on a huge matrix (50000 x 50000)", "MemoryAccessError", r'''
extern "C" __global__ void transpose(float* out, const float* in, int rows, int cols)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < cols && y < rows)
        out[x * rows + y] = in[y * cols + x];
}
''', '''
k = cl.RawModule(code=src, filename="cell.cu").get_function("transpose")
rows = cols = 50_000                            # 2.5e9 elements: 10 GB per matrix
a, out = guard.Shape((rows, cols), np.float32), guard.Shape((cols, rows), np.float32)
# what k(grid, block, args) on a GPU does before launching: simulate the corner blocks
guard.check(k, ((cols + 31) // 32, (rows + 7) // 8), (32, 8), (out, a, np.int32(rows), np.int32(cols)))
''', points_at=("out[x * rows + y] = in[y * cols + x];",), mentions=("'in'", "2^31", "wrapped", "thread (", "block (", "refused"),
     explanation="`y * cols + x` is computed in 32-bit `int`. For y near 50000 it passes 2^31 - 1 = "
                 "2147483647, wraps around to a negative number, and the kernel reads gigabytes *before* the "
                 "array. The guard shows it without a GPU and without allocating 10 GB: `guard.Shape` stands "
                 "for an array, and only the corner blocks are simulated.",
     fix="Compute indexes in 64 bits: `in[(size_t)y * cols + x]`, `out[(size_t)x * rows + y]`.")

# ----------------------------------------------------------------------------- wrong results

_add("swapped_rows_cols", "rows and cols swapped in the output index", "wrong result", r'''
extern "C" __global__ void transpose(float* out, const float* in, int rows, int cols)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;   // column of in
    int y = blockIdx.y * blockDim.y + threadIdx.y;   // row of in
    if (x < cols && y < rows)
        out[x * cols + y] = in[y * cols + x];
}
''', '''
k = cl.RawModule(code=src, filename="cell.cu").get_function("transpose")
def run(rows, cols):
    a, out = random_matrix(rows, cols), poisoned(cols, rows)
    k.simulate(((cols + 31) // 32, (rows + 7) // 8), (32, 8), (out, a, np.int32(rows), np.int32(cols)))
    return verify.compare(out, a.T)
print("64 x 64:", run(64, 64))
run(96, 40)
''', mentions=("64 x 64: correct", "elements are wrong", "never written"),
     hint="correct on a square matrix, wrong on a non-square one: a row length (rows vs cols) is swapped "
          "somewhere in an index",
     explanation="`out` is cols x rows, so one of its rows is `rows` elements long: element (x, y) is at "
                 "`x * rows + y`. Using `cols` is invisible on square matrices — always test a non-square "
                 "one. (With more columns than rows the same bug writes past the end of `out`.)",
     fix="`out[x * rows + y] = in[y * cols + x];`")

_add("floor_grid", "Grid computed with floor division", "wrong result", r'''
extern "C" __global__ void scale(float* out, const float* in, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = 2.0f * in[i];
}
''', '''
k = cl.RawModule(code=src, filename="cell.cu").get_function("scale")
n = 1000
x, out = np.random.rand(n).astype(np.float32), poisoned(n)
k.simulate((n // 256,), (256,), (out, x, np.int32(n)))
verify.compare(out.reshape(1, n), 2 * x.reshape(1, n))
''', mentions=("232 of 1000 elements are wrong", "never written", "columns 768..999"),
     hint="the last elements were never written: the grid has fewer threads than elements",
     explanation="`n // 256` rounds down: 3 blocks = 768 threads for 1000 elements, so the last 232 are "
                 "never computed. Nothing faults; the output just keeps whatever it held.",
     fix="Round up: `grid = ((n + 255) // 256,)` (ceiling division), and keep the `if (i < n)`.")

# ----------------------------------------------------------------------------- infinite loop

_add("infinite_loop", "Grid-stride loop that never advances", "SimulationLimit", r'''
extern "C" __global__ void scale(float* out, const float* in, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i + blockDim.x * gridDim.x)
        out[i] = 2.0f * in[i];
}
''', '''
k = cl.RawModule(code=src, filename="cell.cu").get_function("scale")
x, out = np.random.rand(4096).astype(np.float32), np.zeros(4096, np.float32)
k.simulate((4,), (256,), (out, x, np.int32(4096)))
''', points_at=("for (int i = blockIdx.x",), mentions=("infinite loop", "the loop at line", "thread (", "block ("),
     explanation="`i + blockDim.x * gridDim.x` computes a value and throws it away (NVRTC only warns): `i` "
                 "never changes, so the loop never ends. On a GPU the kernel runs until the process is "
                 "killed; the simulator stops it (after 8 s of one batch, or 100,000 steps) and names the loop.",
     fix="`i += blockDim.x * gridDim.x`.")

# ----------------------------------------------------------------------------- launch configuration

_NAIVE = r'''
extern "C" __global__ void transpose(float* out, const float* in, int rows, int cols)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;   // column of in
    int y = blockIdx.y * blockDim.y + threadIdx.y;   // row of in
    if (x < cols && y < rows)
        out[x * rows + y] = in[y * cols + x];
}
'''

_add("block_too_large", "A block of more than 1024 threads", "LaunchError", _NAIVE, '''
k = cl.RawModule(code=src, filename="cell.cu").get_function("transpose")
a, out = random_matrix(256, 256), poisoned(256, 256)
k.simulate((8, 4), (32, 64), (out, a, np.int32(256), np.int32(256)))
''', mentions=("block (32, 64)", "2048 threads", "at most 1024"),
     explanation="A block can have at most 1024 threads (x * y * z), on every GPU since 2010. On a GPU the "
                 "launch fails with `invalid configuration argument` and nothing runs.",
     fix="Use a block of at most 1024 threads — 32 x 8 or 32 x 32 — and let each thread handle several "
         "elements if a block should cover more.")

_add("too_much_shared", "A __shared__ tile larger than 48 KiB", "LaunchError", r'''
#define TILE 128
extern "C" __global__ void transpose(float* out, const float* in, int rows, int cols)
{
    __shared__ float tile[TILE][TILE + 1];      // bigger tiles = more reuse?
    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += 8)
        if (x < cols && y + j < rows)
            tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * cols + x];
    __syncthreads();
    x = blockIdx.y * TILE + threadIdx.x;
    y = blockIdx.x * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += 8)
        if (x < rows && y + j < cols)
            out[(y + j) * rows + x] = tile[threadIdx.x][threadIdx.y + j];
}
''', '''
k = cl.RawModule(code=src, filename="cell.cu").get_function("transpose")
a, out = random_matrix(256, 256), poisoned(256, 256)
k.simulate((2, 2), (128, 8), (out, a, np.int32(256), np.int32(256)))
''', mentions=("66048 bytes", "49152", "static shared memory"),
     explanation="128 x 129 floats are 66,048 bytes. Static `__shared__` arrays are limited to 48 KiB per "
                 "block (ptxas refuses the kernel); more needs dynamic shared memory and an opt-in — and a "
                 "block that big leaves room for only a few blocks per SM, so it is rarely faster.",
     fix="Keep the 32 x 33 tile. If you really need more: `extern __shared__ float tile[];` and pass "
         "`shared_mem=` bytes at launch (up to 227 KiB on an H100).")

_add("grid_too_large", "One block per row: grid.y above 65535", "LaunchError", r'''
extern "C" __global__ void row_sums(float* sums, const float* a, int rows, int cols)
{
    __shared__ float s[256];
    int row = blockIdx.y;
    float acc = 0.0f;
    for (int j = threadIdx.x; j < cols; j += blockDim.x)
        acc += a[(size_t)row * cols + j];
    s[threadIdx.x] = acc;
    __syncthreads();
    for (int stride = 128; stride > 0; stride /= 2) {
        if (threadIdx.x < stride)
            s[threadIdx.x] += s[threadIdx.x + stride];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        sums[row] = s[0];
}
''', '''
k = cl.RawModule(code=src, filename="cell.cu").get_function("row_sums")
rows, cols = 100_000, 8
a, sums = random_matrix(rows, cols), np.zeros(rows, np.float32)
k.simulate((1, rows), (256,), (sums, a, np.int32(rows), np.int32(cols)))
''', mentions=("grid dimension y = 100000", "65535"),
     explanation="grid.y and grid.z are limited to 65,535 blocks; only grid.x goes up to 2^31 - 1. The launch "
                 "fails before anything runs.",
     fix="Put the long dimension on x: `grid = (rows,)` and `int row = blockIdx.x;` — or let each block "
         "handle several rows in a loop.")

# ----------------------------------------------------------------------------- arguments

_SCALE = r'''
extern "C" __global__ void scale(float* out, const float* in, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = 2.0f * in[i];
}
'''

_add("wrong_argument_count", "Forgetting an argument", "ArgumentError", _SCALE, '''
k = cl.RawModule(code=src, filename="cell.cu").get_function("scale")
x, out = np.random.rand(1000).astype(np.float32), np.zeros(1000, np.float32)
k.simulate((4,), (256,), (out, x))
''', mentions=("takes 3 argument(s)", "int n", "but 2 were given"),
     explanation="A kernel launch passes raw bytes: with CuPy a missing argument is not always caught, and "
                 "the kernel then reads garbage for `n`. course_lib compares against the kernel's parameter "
                 "list first.",
     fix="`k.simulate((4,), (256,), (out, x, np.int32(1000)))`")

_add("wrong_dtype", "A float64 array for a float* parameter", "ArgumentError", _SCALE, '''
k = cl.RawModule(code=src, filename="cell.cu").get_function("scale")
x = np.random.rand(1000)                      # numpy's default: float64
out = np.zeros(1000, np.float32)
k.simulate((4,), (256,), (out, x, np.int32(1000)))
''', mentions=("'in'", "float64", "4-byte float"),
     explanation="`np.random.rand` and `np.zeros` make float64 arrays unless told otherwise. The kernel "
                 "reads 4-byte floats, so it would see each double as two meaningless floats — no error on "
                 "a GPU, just garbage.",
     fix="`x = np.random.rand(1000).astype(np.float32)` (or `dtype=np.float32` when creating it).")

_add("non_contiguous", "Passing a transposed view (a.T) to a kernel", "ArgumentError", _NAIVE, '''
k = cl.RawModule(code=src, filename="cell.cu").get_function("transpose")
a = random_matrix(64, 96)
out = poisoned(64, 96)
k.simulate((2, 12), (32, 8), (out, a.T, np.int32(96), np.int32(64)))
''', mentions=("'in'", "not contiguous"),
     explanation="`a.T` is a view: same memory, different strides. A kernel only gets a pointer, so it "
                 "would read `a` in its original layout — silently not the matrix you meant.",
     fix="`np.ascontiguousarray(a.T)` (a real copy in the transposed layout).")

_add("float_for_int_parameter", "Arguments in the wrong order (a float where an int goes)", "ArgumentError", r'''
extern "C" __global__ void axpy(float* y, const float* x, int n, float alpha)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] += alpha * x[i];
}
''', '''
k = cl.RawModule(code=src, filename="cell.cu").get_function("axpy")
x, y = np.random.rand(1000).astype(np.float32), np.ones(1000, np.float32)
k.simulate((4,), (256,), (y, x, 0.5, 1000))
''', mentions=("'n' (int)", "0.5", "order"),
     explanation="Arguments go by position. Here `alpha` and `n` are swapped; CuPy would pass 0.5 as the bits "
                 "of a double into an `int` and 1000 into a `float`, and the kernel would run on garbage.",
     fix="`(y, x, np.int32(1000), np.float32(0.5))` — the order of the kernel's parameter list.")

# ----------------------------------------------------------------------------- compiling

_add("missing_semicolon", "Missing semicolon", "CompileError", r'''
extern "C" __global__ void scale(float* out, const float* in, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x
    if (i < n)
        out[i] = 2.0f * in[i];
}
''', '''
k = cl.RawModule(code=src, filename="cell.cu").get_function("scale")
''', points_at=("if (i < n)",), mentions=('expected a ";"', "^", "probably missing here"),
     explanation="The compiler notices the missing `;` only at the next token, so it points at the start "
                 "of the following line; the `;` belongs at the end of the line before.",
     fix="`int i = blockIdx.x * blockDim.x + threadIdx.x;`")

_add("undeclared_variable", "Undeclared variable (N instead of n)", "CompileError", r'''
extern "C" __global__ void scale(float* out, const float* in, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N)
        out[i] = 2.0f * in[i];
}
''', '''
k = cl.RawModule(code=src, filename="cell.cu").get_function("scale")
''', points_at=("if (i < N)",), mentions=('"N" is undefined', "^", "did you mean 'n'"),
     explanation="C++ is case-sensitive: the parameter is `n`, and there is no `N` (a `#define N` from another "
                 "cell does not exist in this one).",
     fix="`if (i < n)`")

_add("wrong_type", "Dropping const: float* p = in", "CompileError", r'''
extern "C" __global__ void scale(float* out, const float* in, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float* src = in;
    if (i < n)
        out[i] = 2.0f * src[i];
}
''', '''
k = cl.RawModule(code=src, filename="cell.cu").get_function("scale")
''', points_at=("float* src = in;",), mentions=('"const float *"', "^", "const float* p"),
     explanation="`in` points to read-only data; a plain `float*` would allow writing through it, so the "
                 "compiler refuses the conversion.",
     fix="`const float* src = in;`")

_add("write_to_input", "Writing to in instead of out", "CompileError", r'''
extern "C" __global__ void scale(float* out, const float* in, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        in[i] = 2.0f * in[i];
}
''', '''
k = cl.RawModule(code=src, filename="cell.cu").get_function("scale")
''', points_at=("in[i] = 2.0f * in[i];",), mentions=("modifiable lvalue", "^", "output array"),
     explanation="A slip of the pen: the result goes to `in`. Because the input is declared `const`, the "
                 "compiler catches it — one reason to mark inputs `const`. Without `const` it would compile, "
                 "overwrite the input and leave `out` untouched.",
     fix="`out[i] = 2.0f * in[i];`")

_add("kernel_name_typo", "Asking for a kernel name the module does not have", "KernelNotFound", _SCALE.replace(
    "void scale(", "void scale_kernel("), '''
mod = cl.RawModule(code=src, filename="cell.cu")
k = mod.get_function("scale_kernal")
''', mentions=("scale_kernal", "did you mean 'scale_kernel'"),
     explanation="`get_function` looks the name up exactly. (Without `extern \"C\"` the compiled name is "
                 "mangled, e.g. `_Z5scalePfPKfi`; course_lib also accepts the plain C++ name.)",
     fix="`mod.get_function(\"scale_kernel\")`")

"""Issue 10's "diagnoses that are wrong today": each mistake gets the right error, at the right line,
with the thread and a hint; each legitimate kernel next to it runs clean and exact."""
import numpy as np
import pytest

import course_lib as cl
from course_lib.transposes import poisoned, random_matrix


def module(src):
    return cl.RawModule(code=src, filename="cell.cu")


def line_of(src, text):
    hits = [n for n, s in enumerate(src.splitlines(), 1) if text in s]
    assert len(hits) == 1, (text, hits)
    return hits[0]


# ----------------------------------------------------------------------------- skipped barriers

SKIPPERS = r'''
__global__ void early_return(float* out, const float* in, int n) {
    __shared__ float s[64];
    int i = threadIdx.x;
    if (i >= n) return;
    s[i] = in[i];
    __syncthreads();
    out[i] = s[n - 1 - i];
}
__global__ void sync_in_if(float* out, const float* in, int n) {
    __shared__ float s[64];
    int i = threadIdx.x;
    if (i < 16) {
        s[i] = in[i];
        __syncthreads();
        out[i] = s[15 - i];
    }
}
'''


@pytest.mark.parametrize("name, skipper, waiting, waiters", [
    ("early_return", "if (i >= n) return;", 24, 40),
    ("sync_in_if", "if (i < 16) {", 48, 16)])
def test_a_barrier_some_threads_skip_is_a_barrier_error_at_its_line(name, skipper, waiting, waiters):
    x = random_matrix(1, 64, np.float32)[0]
    with pytest.raises(cl.BarrierError) as e:
        module(SKIPPERS).get_function(name).simulate(1, 64, (poisoned(64, np.float32), x, np.int32(40)))
    err = e.value
    bar = [n for n, s in enumerate(SKIPPERS.splitlines(), 1) if "__syncthreads" in s]
    assert err.line in bar and err.filename == "cell.cu" and "__syncthreads" in err.source_line
    assert f"{waiting} thread(s) of this block never reach the __syncthreads() on line {err.line}" in err.message
    assert f"the other {waiters} thread(s) wait at" in err.message
    assert f"line {line_of(SKIPPERS, skipper)} (`{skipper}`)" in err.message   # where they went around it
    assert "race" not in str(err) and "add __syncthreads" not in str(err)   # not the old wrong diagnosis
    assert err.thread[0] in (16, 40) and err.block == (0, 0, 0)
    assert "do not return early" in err.hint


# The CUDA_Freshman shared-memory transpose (seeds/000): the barrier inside the bounds test.
FRESHMAN = r'''
#define BDIMX 32
#define BDIMY 32
__global__ void transformSmem(float * in,float* out,int nx,int ny)
{
__shared__ float tile[BDIMY][BDIMX];
unsigned int ix,iy,transform_in_idx,transform_out_idx;
ix=threadIdx.x+blockDim.x*blockIdx.x;
iy=threadIdx.y+blockDim.y*blockIdx.y;
transform_in_idx=iy*nx+ix;
unsigned int bidx,irow,icol;
bidx=threadIdx.y*blockDim.x+threadIdx.x;
irow=bidx/blockDim.y;
icol=bidx%blockDim.y;
ix=blockIdx.y*blockDim.y+icol;
iy=blockIdx.x*blockDim.x+irow;
transform_out_idx=iy*ny+ix;
if(ix<nx&& iy<ny)
{
tile[threadIdx.y][threadIdx.x]=in[transform_in_idx];
__syncthreads();
out[transform_out_idx]=tile[icol][irow];
}
}
'''

# The same bug with a correct bounds test, the way a student fixes the indices but not the barrier.
BARRIER_IN_BOUNDS = r'''
__global__ void tile_t(float* out, const float* in, int rows, int cols) {
    __shared__ float t[32][33];
    int x = blockIdx.x * 32 + threadIdx.x, y = blockIdx.y * 32 + threadIdx.y;
    if (x < cols && y < rows) {
        t[threadIdx.y][threadIdx.x] = in[y * cols + x];
        __syncthreads();
        int ox = blockIdx.y * 32 + threadIdx.x, oy = blockIdx.x * 32 + threadIdx.y;
        if (ox < rows && oy < cols) out[oy * rows + ox] = t[threadIdx.x][threadIdx.y];
    }
}
'''
BARRIER_OUTSIDE = BARRIER_IN_BOUNDS.replace(
    "        t[threadIdx.y][threadIdx.x] = in[y * cols + x];\n        __syncthreads();\n",
    "        t[threadIdx.y][threadIdx.x] = in[y * cols + x];\n    }\n    __syncthreads();\n    {\n")


def test_freshman_tile_barrier_inside_the_bounds_test_is_a_barrier_error():
    n = 1000                                       # square, not a multiple of 32: edge blocks split
    a = random_matrix(n, n, np.float32)
    with pytest.raises(cl.BarrierError) as e:
        module(FRESHMAN).get_function("transformSmem").simulate(
            (32, 32), (32, 32), (a, poisoned((n, n), np.float32), np.int32(n), np.int32(n)))
    assert e.value.line == line_of(FRESHMAN, "__syncthreads();")
    assert f"line {line_of(FRESHMAN, 'if(ix<nx&& iy<ny)')} (`if(ix<nx&& iy<ny)`)" in e.value.message


def test_barrier_inside_the_bounds_test_on_1000x1030_and_the_fix():
    rows, cols = 1000, 1030
    a = random_matrix(rows, cols, np.float32)
    grid = (-(-cols // 32), -(-rows // 32))
    with pytest.raises(cl.BarrierError) as e:
        module(BARRIER_IN_BOUNDS).get_function("tile_t").simulate(
            grid, (32, 32), (poisoned((cols, rows), np.float32), a, np.int32(rows), np.int32(cols)))
    assert e.value.line == line_of(BARRIER_IN_BOUNDS, "__syncthreads();")
    assert e.value.block in {(32, y, 0) for y in range(32)} | {(x, 31, 0) for x in range(33)}   # an edge block
    out = poisoned((cols, rows), np.float32)
    run = module(BARRIER_OUTSIDE).get_function("tile_t").simulate(
        grid, (32, 32), (out, a, np.int32(rows), np.int32(cols)))
    assert (out == a.T).all() and not run.races and not run.warnings


LEGIT_EXITS = r'''
__global__ void exit_after_last_barrier(float* out, const float* in, int n) {
    __shared__ float s[100];
    int i = threadIdx.x;
    s[i] = i < n ? in[i] : 0.0f;
    __syncthreads();
    if (i >= n) return;                 // leaving after the last barrier is fine
    out[i] = s[n - 1 - i];
}
__global__ void whole_block_leaves(float* out, const float* in, int n) {
    __shared__ float s[100];
    if (blockIdx.x * blockDim.x >= n) return;   // the same for every thread of a block
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    s[threadIdx.x] = i < n ? in[i] : 0.0f;
    __syncthreads();
    if (i < n) out[i] = s[blockDim.x - 1 - threadIdx.x] + 1.0f;
}
'''


def test_threads_leaving_after_the_last_barrier_or_whole_blocks_leaving_are_fine():
    n = 77
    x = random_matrix(1, 100, np.float32)[0]
    out = poisoned(100, np.float32)
    mod = module(LEGIT_EXITS)
    run = mod.get_function("exit_after_last_barrier").simulate(1, 100, (out, x, np.int32(n)))   # 4 warps, the last partial
    assert (out[:n] == x[:n][::-1]).all() and np.isnan(out[n:]).all() and not run.races
    out = poisoned(100, np.float32)
    mod.get_function("whole_block_leaves").simulate(5, 20, (out, x, np.int32(n)))              # 20 threads: one partial warp
    s = np.where(np.arange(100) < n, x, 0).reshape(5, 20)     # each block's tile, zero past n
    expect = (s[:, ::-1] + 1.0).reshape(-1)
    assert (out[:n] == expect[:n]).all() and np.isnan(out[n:]).all()


def test_partial_last_warp_skipping_a_barrier_is_still_caught():
    x = random_matrix(1, 64, np.float32)[0]
    with pytest.raises(cl.BarrierError) as e:                      # 40 threads: warp 1 has 8 live lanes
        module(SKIPPERS).get_function("early_return").simulate(1, 40, (poisoned(64, np.float32), x, np.int32(36)))
    assert "4 thread(s) of this block never reach" in e.value.message
    assert "the other 36 thread(s)" in e.value.message and e.value.thread == (36, 0, 0)


# ----------------------------------------------------------------------------- races over many batches

NO_BARRIER = BARRIER_OUTSIDE.replace("    __syncthreads();\n", "")


def test_a_race_in_every_batch_of_blocks_is_one_race_counted_over_all_of_them():
    n = 512                                     # 256 blocks of 1024 threads: 4 batches of 64 blocks
    a = random_matrix(n, n, np.float32)
    out = poisoned((n, n), np.float32)
    run = module(NO_BARRIER).get_function("tile_t").simulate((16, 16), (32, 32), (out, a, np.int32(n), np.int32(n)))
    (race,) = run.races
    assert race.kind == "RAW" and race.scope == "block" and race.variable == "t"
    assert race.lines == (line_of(NO_BARRIER, "t[threadIdx.y][threadIdx.x] = in["),
                          line_of(NO_BARRIER, "= t[threadIdx.x][threadIdx.y]"))
    assert race.count == 256 * (1024 - 32)      # every read of another warp's element, in every block
    assert race.block == (0, 0, 0)              # the example is the first batch's
    one = module(NO_BARRIER).get_function("tile_t").simulate((16, 16), (32, 32), (out, a, np.int32(n), np.int32(n)),
                                                             blocks=[(3, 5)])
    assert one.races[0].count == 1024 - 32


# ----------------------------------------------------------------------------- assert, trap, null pointers

ASSERTS = r'''
#include <assert.h>
__global__ void checked_scale(float* out, const float* in, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    assert(i < n);
    out[i] = 2.0f * in[i];
}
__global__ void stop_on_negative(float* out, const float* in) {
    int i = threadIdx.x;
    if (in[i] < 0.0f) __trap();
    out[i] = in[i];
}
__global__ void through_null(float* out) {
    float* p = nullptr;
    out[threadIdx.x] = p[threadIdx.x];
}
__global__ void through_pointer(float* out, const float* in, unsigned long long address) {
    float* p = (float*)address;
    p[threadIdx.x] = in[threadIdx.x];
    out[threadIdx.x] = p[threadIdx.x + 1];
}
'''


def test_a_passing_assert_runs_and_costs_no_memory_traffic():
    mod = module(ASSERTS)
    x = random_matrix(1, 256, np.float32)[0]
    out = poisoned(256, np.float32)
    run = mod.get_function("checked_scale").simulate(2, 128, (out, x, np.int32(256)))
    assert (out == 2 * x).all() and run.metrics == module(ASSERTS.replace("    assert(i < n);\n", "")).get_function(
        "checked_scale").simulate(2, 128, (poisoned(256, np.float32), x, np.int32(256))).metrics


def test_a_failed_assert_says_which_assertion_where_and_for_which_thread():
    x = random_matrix(1, 256, np.float32)[0]
    with pytest.raises(cl.AssertionFailed) as e:
        module(ASSERTS).get_function("checked_scale").simulate(2, 128, (poisoned(256, np.float32), x, np.int32(200)))
    err = e.value
    assert isinstance(err, cl.KernelTrap) and isinstance(err, cl.KernelError)
    assert err.message.startswith("Assertion `i < n` failed (56 threads failed it together")
    assert err.line == line_of(ASSERTS, "assert(i < n);") and err.filename == "cell.cu"
    assert err.thread == (72, 0, 0) and err.block == (1, 0, 0)       # i = 200, the first failing thread
    # what CUDA itself prints for that thread, so a student recognises it on a GPU
    assert (f"cell.cu:{err.line}: void checked_scale(float *, const float *, int): block: [1,0,0], "
            "thread: [72,0,0] Assertion `i < n` failed.") in err.message
    assert "device-side assert triggered" in err.message and "`i < n` is false" in err.hint


def test_trap_and_null_pointers_have_their_own_messages():
    mod = module(ASSERTS)
    x = random_matrix(1, 64, np.float32)[0]
    x[37] = -1.0
    with pytest.raises(cl.KernelTrap) as e:
        mod.get_function("stop_on_negative").simulate(1, 64, (poisoned(64, np.float32), x))
    assert "called __trap()" in e.value.message and e.value.thread == (37, 0, 0)
    assert e.value.line == line_of(ASSERTS, "__trap();") and not isinstance(e.value, cl.AssertionFailed)
    # NVRTC compiles a load through nullptr to a trap: say why the line became one
    with pytest.raises(cl.KernelTrap) as e:
        mod.get_function("through_null").simulate(1, 32, (poisoned(32, np.float32),))
    assert "null pointer" in e.value.message and "compiled it to a trap" in e.value.message
    assert e.value.line == line_of(ASSERTS, "out[threadIdx.x] = p[threadIdx.x];")
    # a pointer that is null only at run time: the store, then (with a store that works) the load
    for address, what in ((0, "Null pointer store"), (8, "Null pointer store")):
        with pytest.raises(cl.MemoryAccessError) as e:
            mod.get_function("through_pointer").simulate(1, 32, (poisoned(32, np.float32), x, np.uint64(address)))
        assert e.value.message.startswith(what) and f"address {address:#x} is a null pointer" in e.value.message
        assert e.value.line == line_of(ASSERTS, "p[threadIdx.x] = in[threadIdx.x];") and e.value.thread == (0, 0, 0)
        assert "point into an array" in e.value.hint


def test_the_launch_guard_refuses_a_failing_assert_and_a_trap():
    from course_lib import guard
    mod = module(ASSERTS)
    x = random_matrix(1, 256, np.float32)[0]
    with pytest.raises(cl.AssertionFailed) as e:
        guard.check(mod.get_function("checked_scale"), 2, 128, (poisoned(256, np.float32), x, np.int32(200)))
    assert e.value.refused and "GPU launch refused" in e.value.message
    x[3] = -2.0
    with pytest.raises(cl.KernelTrap):
        guard.check(mod.get_function("stop_on_negative"), 1, 64, (poisoned(64, np.float32), x[:64]))


# ----------------------------------------------------------------------------- kernels from outside the course

def test_calls_the_simulator_cannot_follow_name_the_function_the_file_and_the_thread():
    src = r'''
__device__ int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
__global__ void fibs(int* out) { out[threadIdx.x] = fib(threadIdx.x % 10); }
__global__ void scratch(int* out) {
    int* p = (int*)malloc(16);
    p[0] = threadIdx.x; out[threadIdx.x] = p[0]; free(p);
}
'''
    mod = module(src)
    with pytest.raises(cl.UnsupportedInstruction) as e:
        mod.get_function("fibs").simulate(1, 32, (np.zeros(32, np.int32),))
    assert "device function fib() as a real call" in e.value.message and "recursive" in e.value.message
    assert e.value.filename == "cell.cu" and e.value.line == 3 and e.value.thread == (0, 0, 0)
    assert "__forceinline__" in e.value.hint
    with pytest.raises(cl.UnsupportedInstruction) as e:
        mod.get_function("scratch").simulate(1, 32, (np.zeros(32, np.int32),))
    assert "malloc" in e.value.message and "pass it as an argument" in e.value.hint
    assert "int* p = (int*)malloc(16);" in e.value.source_line


def test_extern_shared_without_shared_mem_says_to_pass_it():
    src = r'''
__global__ void reverse(float* out, const float* in) {
    extern __shared__ float s[];
    s[threadIdx.x] = in[threadIdx.x];
    __syncthreads();
    out[threadIdx.x] = s[blockDim.x - 1 - threadIdx.x];
}
'''
    fn = module(src).get_function("reverse")
    x = random_matrix(1, 96, np.float32)[0]
    with pytest.raises(cl.MemoryAccessError) as e:
        fn.simulate(1, 96, (poisoned(96, np.float32), x))
    assert "extern __shared__ array 's' has 0 bytes" in e.value.message and "shared_mem=" in e.value.hint
    out = poisoned(96, np.float32)
    fn.simulate(1, 96, (out, x), shared_mem=96 * 4)
    assert (out == x[::-1]).all()

"""Issue 10's "diagnoses that are wrong today": each mistake gets the right error, at the right line,
with the thread and a hint; each legitimate kernel next to it runs clean and exact."""
import io
import re

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
    from course_lib.kernel import guard
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
__device__ __noinline__ int twice(int n) { return 2 * n; }
__global__ void twices(int* out) { out[threadIdx.x] = twice(threadIdx.x); }
'''
    mod = module(src)
    with pytest.raises(cl.UnsupportedInstruction) as e:
        mod.get_function("fibs").simulate(1, 32, (np.zeros(32, np.int32),))
    assert "device function fib() as a real call: fib() is recursive (it calls itself at line 2)" in e.value.message
    assert "stack" in e.value.message
    assert e.value.filename == "cell.cu" and e.value.line == 3 and e.value.thread == (0, 0, 0)
    assert "turn the recursion in fib() into a loop" in e.value.hint
    with pytest.raises(cl.UnsupportedInstruction) as e:
        mod.get_function("twices").simulate(1, 32, (np.zeros(32, np.int32),))
    assert "device function twice() as a real call" in e.value.message and "__forceinline__" in e.value.hint
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


# ----------------------------------------------------------------------------- limits

LONG = r'''
__global__ void long_straight(float* out, const float* in) {
    float v = in[threadIdx.x];
    #pragma unroll
    for (int i = 0; i < 3000; i++) v = v * 1.0001f + 0.5f;
    out[threadIdx.x] = v;
}
__global__ void never_ends(float* out, int n) {
    for (int i = threadIdx.x; i < n; i + 1)
        out[i] = 1.0f;
}
'''


def test_a_long_straight_kernel_is_not_called_an_infinite_loop():
    fn = module(LONG).get_function("long_straight")
    assert len(fn.kernel.instructions) > 3000
    x = random_matrix(1, 64, np.float32)[0]
    with pytest.raises(cl.SimulationLimit) as e:
        fn.simulate(1, 64, (poisoned(64, np.float32), x), max_steps=2000)
    err = e.value
    assert "infinite loop" not in str(err) and err.reason == "steps" and not err.timed_out
    assert "max_steps=2,000" in err.message and "not looping" in err.message and "not stuck" in err.message
    assert "max_steps=1_000_000" in err.hint
    with pytest.raises(cl.SimulationLimit) as e:
        fn.simulate(1, 64, (poisoned(64, np.float32), x), timeout=1e-9)
    assert "infinite loop" not in str(e.value) and e.value.reason == "time" and e.value.timed_out
    assert "timeout=1e-09 seconds per batch" in e.value.message and "timeout=30" in e.value.hint
    out = poisoned(64, np.float32)
    fn.simulate(1, 64, (out, x))                               # within the limits it runs, exactly
    want = x.copy()
    for _ in range(3000):
        want = (want * np.float32(1.0001) + np.float32(0.5)).astype(np.float32)
    assert np.allclose(out, want, rtol=1e-5)


def test_a_loop_that_keeps_running_is_still_named_as_one():
    with pytest.raises(cl.SimulationLimit) as e:
        module(LONG).get_function("never_ends").simulate(1, 64, (poisoned(64, np.float32), np.int32(64)),
                                                         max_steps=5000)
    err = e.value
    assert "probably an infinite loop" in err.message and err.reason == "loop"
    assert err.line == line_of(LONG, "for (int i = threadIdx.x")


DEEP = r'''
__device__ int depth(int n) {
    if (n == 0) return 0;
    return 1 + depth(n - 1);
}
__global__ void recurse(int* out, int n) {
    out[threadIdx.x] = depth(n);
}
'''


def test_a_deep_recursion_is_named_as_one_with_its_depth_and_line():
    """NVRTC turns depth() into a loop; a million calls deep runs past max_steps inside that loop."""
    with pytest.raises(cl.SimulationLimit) as e:
        module(DEEP).get_function("recurse").simulate(1, 32, (np.zeros(32, np.int32), np.int32(1_000_000)))
    err = e.value
    assert "infinite loop" not in err.message and err.reason == "loop"
    m = re.search(r"a recursion at least ([\d,]+) calls deep", err.message)
    assert m and int(m[1].replace(",", "")) >= 10_000
    assert "depth() (line 2) calls itself at line 4" in err.message and "stack" in err.message
    assert err.line == 4 and "return 1 + depth(n - 1);" in err.source_line
    assert "base case" in err.hint and "max_steps=" in err.hint
    out = np.zeros(32, np.int32)                 # a shallow one finishes, with the right answer
    module(DEEP).get_function("recurse").simulate(1, 32, (out, np.int32(1000)))
    assert (out == 1000).all()


def test_setup_does_not_count_against_the_time_limit(monkeypatch):
    """Building the instructions' closures (and compiling) happen before the clock starts."""
    import time
    from course_lib.sim import executor
    build = executor.build

    def slow_build(ins, program):
        time.sleep(0.02)                           # far over the timeout for this kernel
        return build(ins, program)
    monkeypatch.setattr(executor, "build", slow_build)
    src = SKIPPERS.replace("__global__ void early_return", "__global__ void unused")
    fn = module(src + LEGIT_EXITS).get_function("exit_after_last_barrier")
    assert len(fn.kernel.instructions) * 0.02 > 2 * 0.2
    x = random_matrix(1, 100, np.float32)[0]
    out = poisoned(100, np.float32)
    fn.simulate(1, 100, (out, x, np.int32(100)), timeout=0.2)
    assert (out == x[::-1]).all()


def test_a_huge_grid_is_refused_before_it_starts_with_what_to_do_instead():
    src = "__global__ void touch(float* out) { if (blockIdx.x + blockIdx.y == 0) out[threadIdx.x] = 1.0f; }"
    fn = module(src).get_function("touch")
    out = poisoned(32, np.float32)
    with pytest.raises(cl.SimulationLimit) as e:
        fn.simulate((65536, 65535), 1, (out,))
    assert np.isnan(out).all()                                 # refused before block (0, 0) ran
    err = e.value
    assert err.reason == "work" and err.message.startswith("Not started: a grid of 65536 x 65535 = 4,294,901,760 blocks")
    from course_lib.sim import plan
    assert "minutes of simulation" in err.message and f"max_work={plan.MAX_WORK:,.0f}" in err.message
    assert "blocks=[(0, 0, 0), (65535, 65534, 0)]" in err.hint and "smaller shape" in err.hint
    out = poisoned(32, np.float32)                             # the suggested part runs
    run = fn.simulate((65536, 65535), 1, (out, ), blocks=[(0, 0, 0), (65535, 65534, 0)])
    assert out[0] == 1.0 and run.grid == (65536, 65535, 1)


FIRST_TRANSPOSE = r'''
__global__ void first_transpose(float* out, const float* in, int rows, int cols)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < cols && y < rows)
        out[x * rows + y] = in[y * cols + x];
}'''


def test_a_naive_transpose_too_big_to_simulate_is_refused_up_front_with_its_time_and_the_way_out():
    """65536 x 65536 with one thread per element: minutes of simulation, most of it the loads and
    stores (the estimate weighs them above arithmetic). Refused before its first instruction."""
    from course_lib.sim import cost, plan
    fn = module(FIRST_TRANSPOSE).get_function("first_transpose")
    n = 65536
    out = poisoned(64, np.float32)           # the launch never gets to touch it
    args = (out, random_matrix(8, 8, np.float32), np.int32(n), np.int32(n))
    with pytest.raises(cl.SimulationLimit) as e:
        fn.simulate((n // 32, n // 8), (32, 8), args)
    err = e.value
    assert err.reason == "work" and err.message.startswith("Not started: a grid of 2048 x 8192 = 16,777,216 blocks")
    m = re.search(r"would take about (\d+) (seconds|minutes) of simulation", err.message)
    assert m and int(m[1]) * (60 if m[2] == "minutes" else 1) > plan.MAX_SECONDS
    assert "blocks=[(0, 0, 0), (2047, 8191, 0)]" in err.hint and "smaller shape" in err.hint and "max_work=" in err.hint
    assert np.isnan(out).all()
    kernel = fn.kernel
    memory = [i for i in kernel.instructions if i.opcode in ("ld", "st") and "global" in i.mods]
    add = next(i for i in kernel.instructions if i.opcode == "add")
    assert memory and all(cost.weight(i) > 10 * cost.weight(add) for i in memory)
    with pytest.raises(cl.MemoryAccessError):    # allowed more work, it starts (and leaves the small arrays)
        fn.simulate((n // 32, n // 8), (32, 8), args, max_work=10 * plan.MAX_WORK)


def test_a_launch_whose_first_batch_projects_past_the_limit_stops_after_it():
    src = r'''
__global__ void busy(float* out, int n) {
    float v = 0.0f;
    for (int i = 0; i < n; i++) v += i;
    out[blockIdx.x * blockDim.x + threadIdx.x] = v;
}'''
    fn = module(src).get_function("busy")
    out = poisoned(16384 * 256, np.float32)
    with pytest.raises(cl.SimulationLimit) as e:               # ~600 instructions x 64 batches: ~5e9 thread-steps
        fn.simulate(16384, 256, (out, np.int32(100)), max_work=10**9, timeout=120)
    assert e.value.reason == "work" and e.value.message.startswith("Stopped after the first 256 of a grid of 16,384 blocks")
    assert np.isnan(out[256 * 256:]).all()                   # nothing after the first batch ran
    fn.simulate(4, 256, (out, np.int32(100)), max_work=10**9)   # a part of it runs
    assert (out[:1024] == np.float32(sum(range(100)))).all()


# ----------------------------------------------------------------------------- memory

def test_a_batch_is_bounded_by_memory_not_only_by_threads():
    import tracemalloc
    from course_lib.sim import plan
    src = r'''
__global__ void big_tile(float* out) {
    extern __shared__ float s[];
    s[threadIdx.x] = threadIdx.x;
    __syncthreads();
    out[blockIdx.x * 32 + threadIdx.x] = s[31 - threadIdx.x];
}'''
    fn = module(src).get_function("big_tile")
    out = poisoned(512 * 32, np.float32)
    tracemalloc.start()
    try:
        fn.simulate(512, 32, (out,), shared_mem=227 * 1024)     # 512 blocks x 227 KB + their shadow: 1.2 GB at once
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < plan.BATCH_BYTES * 1.5, f"{peak / 2**20:.0f} MiB"
    assert (out.reshape(512, 32) == np.arange(32)[::-1]).all()


def test_running_out_of_memory_anyway_is_a_simulation_limit_with_advice(monkeypatch):
    from course_lib.sim import executor

    def no_memory(*a, **k):
        raise MemoryError()
    monkeypatch.setattr(executor, "Batch", no_memory)
    with pytest.raises(cl.SimulationLimit) as e:
        module(NO_BARRIER).get_function("tile_t").simulate(
            (2, 2), (32, 32), (poisoned((64, 64), np.float32), random_matrix(64, 64, np.float32), np.int32(64), np.int32(64)))
    assert e.value.reason == "memory" and e.value.message.startswith("Out of memory: a batch of 4 block(s)")
    assert "check_races=False" in e.value.hint and "blocks=[...]" in e.value.hint


# ----------------------------------------------------------------------------- progress

class _Terminal:
    def __init__(self):
        self.text = ""

    def write(self, s):
        self.text += s

    def flush(self):
        pass

    def isatty(self):
        return True


@pytest.fixture
def progress_on(monkeypatch):
    """nbval's conftest turns progress off for the notebooks' kernels (COURSE_LIB_PROGRESS=0); not here."""
    monkeypatch.delenv("COURSE_LIB_PROGRESS", raising=False)


def test_progress_is_off_where_stored_outputs_are_made(monkeypatch):
    from course_lib.sim.progress import Progress
    monkeypatch.setenv("COURSE_LIB_PROGRESS", "0")
    stream = io.StringIO()
    p = Progress("simulating", delay=0.0, stream=stream)
    p(1, 10)
    p.close()
    assert stream.getvalue() == "" and p.shown is None


def test_progress_shows_only_for_long_runs_and_is_removed_at_the_end(progress_on):
    from course_lib.sim.progress import Progress
    a = random_matrix(512, 512, np.float32)
    fn = module(BARRIER_OUTSIDE).get_function("tile_t")
    args = (poisoned((512, 512), np.float32), a, np.int32(512), np.int32(512))
    quiet = _Terminal()
    fn.simulate((16, 16), (32, 32), args, progress=Progress(stream=quiet))       # under 2 s: nothing
    assert quiet.text == ""
    shown = _Terminal()
    fn.simulate((16, 16), (32, 32), args, progress=Progress("simulating tile_t", delay=0, stream=shown))
    assert "\rsimulating tile_t: 64 of 256 blocks (25%)" in shown.text and "left" in shown.text
    assert shown.text.endswith("\r") and shown.text.split("\r")[-2].strip() == ""   # the line is wiped
    piped = _Terminal()
    piped.isatty = lambda: False
    fn.simulate((16, 16), (32, 32), args, progress=Progress(delay=0, stream=piped))   # a log file: nothing
    assert piped.text == ""


def test_progress_in_a_notebook_is_a_widget_closed_at_the_end(monkeypatch, progress_on):
    pytest.importorskip("ipywidgets")
    from course_lib.sim import progress
    shown = []
    monkeypatch.setattr(progress, "_in_notebook", lambda: True)
    monkeypatch.setattr("IPython.display.display", lambda w, **k: shown.append(w))
    p = progress.Progress(delay=0)
    module(BARRIER_OUTSIDE).get_function("tile_t").simulate(
        (16, 16), (32, 32), (poisoned((512, 512), np.float32), random_matrix(512, 512, np.float32),
                             np.int32(512), np.int32(512)), progress=p)
    (widget,) = shown
    bar, label = widget.children
    assert bar.max == 256 and bar.value == 192 and "192 of 256 blocks" in label.value
    assert p.shown == "closed"
    assert _open_parts(widget) == []          # before: HBox.close() left its bar, label, layouts and styles open


def _open_parts(widget) -> list:
    """The widgets of a progress display still in ipywidgets' registry (what a kernel keeps for its life)."""
    from ipywidgets import Widget
    from ipywidgets.widgets.widget import _instances
    parts = [widget, widget.layout] + [w for c in widget.children for w in (c, c.layout, c.style)]
    assert all(isinstance(w, Widget) for w in parts) and len(parts) == 8
    return [type(w).__name__ for w in parts if any(w is open_ for open_ in _instances.values())]


def test_progress_stopped_as_it_opens_is_removed(monkeypatch, progress_on):
    """Ctrl-C (the stop button) inside display(): the bar is closed all the same, not left frozen in the output."""
    pytest.importorskip("ipywidgets")
    from course_lib.sim import progress
    shown = []

    def display_then_stop(widget, **kw):
        shown.append(widget)
        raise KeyboardInterrupt
    monkeypatch.setattr(progress, "_in_notebook", lambda: True)
    monkeypatch.setattr("IPython.display.display", display_then_stop)
    p = progress.Progress(delay=0)
    with pytest.raises(KeyboardInterrupt):
        module(BARRIER_OUTSIDE).get_function("tile_t").simulate(
            (16, 16), (32, 32), (poisoned((512, 512), np.float32), random_matrix(512, 512, np.float32),
                                 np.int32(512), np.int32(512)), progress=p)
    (widget,) = shown
    assert p.shown == "closed" and _open_parts(widget) == []     # before: shown stayed None and nothing closed


# ----------------------------------------------------------------------------- silent misreads

SCALE = r'''
__global__ void scale(float* out, const float* in, int n, float s) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[i] * s;
}
'''


def _launch_error(fn, *launch, **kw):
    with pytest.raises(cl.ArgumentError) as e:
        fn.simulate(*launch, **kw)
    return e.value


@pytest.mark.parametrize("grid, block, what", [
    (1, "32", "block='32': dimension x is a str, not a number"),
    (1, (32, "8"), "dimension y is a str"),
    (1, 32.0, "block=32.0: dimension x is a float"),
    (1000 / 256, 256, "dimension x is a float (/ divides to a float in Python)"),
    (1, True, "block=True: dimension x is a bool"),
    ((4, np.float32(1)), 256, "dimension y is a float"),
    (1, (0, 1), "every dimension must be at least 1"),
    (-3, 32, "every dimension must be at least 1"),
    (1, (1, 2, 3, 4), "give 1 to 3 dimensions"),
    (1, None, "dimension x is None"),
])
def test_grid_and_block_sizes_must_be_ints(grid, block, what):
    fn = module(SCALE).get_function("scale")
    x = random_matrix(1, 64, np.float32)[0]
    err = _launch_error(fn, grid, block, (poisoned(64, np.float32), x, 64, 2.0))
    assert what in err.message
    assert "//" in err.hint or "ceiling" in err.hint or "e.g." in err.hint


def test_numpy_integers_and_arrays_of_sizes_are_ints():
    fn = module(SCALE).get_function("scale")
    x = random_matrix(1, 512, np.float32)[0]
    out = poisoned(512, np.float32)
    fn.simulate(np.int64(2), np.array([256]), (out, x, np.array(512), np.float32(2)), shared_mem=np.int32(0))
    assert (out == 2 * x).all()


@pytest.mark.parametrize("shared_mem", [1.5, 1024.0, True, -4, "1024"])
def test_shared_mem_must_be_an_int_number_of_bytes(shared_mem):
    fn = module(SCALE).get_function("scale")
    x = random_matrix(1, 64, np.float32)[0]
    err = _launch_error(fn, 1, 64, (poisoned(64, np.float32), x, 64, 2.0), shared_mem=shared_mem)
    assert "shared_mem must be an int number of bytes" in err.message


def test_arrays_a_kernel_would_misread_are_refused():
    fn = module(SCALE).get_function("scale")
    x = random_matrix(1, 64, np.float32)[0]
    out = poisoned(64, np.float32)
    err = _launch_error(fn, 1, 64, (out, x.astype(">f4"), 64, 2.0))
    assert "argument 1 'in' (const float*): the array is big-endian (>f4)" in err.message and "newbyteorder" in err.hint
    err = _launch_error(fn, 1, 64, (out, np.array(list(x), dtype=object), 64, 2.0))
    assert "Python objects" in err.message
    frozen = out.copy()
    frozen.setflags(write=False)
    err = _launch_error(fn, 1, 64, (frozen, x, 64, 2.0))
    assert "argument 0 'out' (float*): the array is read-only" in err.message and "np.array(a)" in err.hint
    assert np.isnan(frozen).all()
    x.setflags(write=False)                                   # a read-only input for a const pointer is fine
    fn.simulate(1, 64, (out, x, 64, 2.0))
    assert (out == 2 * x).all()


def test_a_read_only_array_the_kernel_writes_through_a_cast_is_caught_at_the_store():
    src = "__global__ void sneaky(const float* in) { ((float*)in)[threadIdx.x] = 0.0f; }"
    x = random_matrix(1, 32, np.float32)[0]
    x.setflags(write=False)
    with pytest.raises(cl.MemoryAccessError) as e:
        module(src).get_function("sneaky").simulate(1, 32, (x,))
    assert "read-only" in e.value.message and e.value.line == 1
    assert (x > 0).all()


@pytest.mark.parametrize("n, s, what", [
    (float("nan"), 2.0, "argument 2 'n' (int) is an integer parameter but got nan, which no integer can hold"),
    (np.float64("inf"), 2.0, "which no integer can hold"),
    (64.5, 2.0, "is an integer parameter but got 64.5"),
    (2**31, 2.0, "2147483648 does not fit in int32 (-2147483648..2147483647)"),
    (-1 - 2**31, 2.0, "does not fit in int32"),
    (64, 1e300, "argument 3 's' (float): 1e+300 is too large for float32"),
    (64, 10**400, "a 401-digit integer is too large for float32"),
    (64, 1 + 2j, "got the complex number (1+2j)"),
    ("64", 2.0, "argument 2 'n' (int) needs a number, not str"),
    (None, 2.0, "needs a number, not NoneType"),
    (np.zeros(1, np.int32), 2.0, "is a scalar parameter but got an array"),
])
def test_scalars_that_cannot_be_what_the_kernel_expects_are_refused(n, s, what):
    fn = module(SCALE).get_function("scale")
    x = random_matrix(1, 64, np.float32)[0]
    err = _launch_error(fn, 1, 64, (poisoned(64, np.float32), x, n, s))
    assert what in err.message and err.hint


def test_zero_dimensional_arrays_and_integral_floats_are_numbers():
    fn = module(SCALE).get_function("scale")
    x = random_matrix(1, 64, np.float32)[0]
    out = poisoned(64, np.float32)
    fn.simulate(1, 64, (out, x, np.array(64), np.array(3.0)))
    assert (out == 3 * x).all()
    out = poisoned(64, np.float32)
    fn.simulate(1, 64, (out, x, 40.0, True))
    assert (out[:40] == x[:40]).all() and np.isnan(out[40:]).all()


def test_pointer_to_pointer_parameters_are_refused_with_a_reason():
    src = "__global__ void rows_of(float** rows) { rows[0][threadIdx.x] = 1.0f; }"
    err = _launch_error(module(src).get_function("rows_of"), 1, 32, (np.zeros(4, np.uint64),))
    assert "pointer to pointers" in err.message and "a[row * cols + col]" in err.hint


@pytest.mark.parametrize("kw, what", [
    (dict(options="-std=c++17"), "options='-std=c++17' is one string"),
    (dict(name_expressions="scale"), "name_expressions='scale' is one string"),
    (dict(options=("-std=c++17", 17)), "every item must be a str, but 17 is a int"),
    (dict(options=5), "options must be a tuple or list of strings, not int"),
    (dict(defines=["TILE=32"]), "defines= must be a dict"),
    (dict(code=b"__global__ void k() {}"), "code= must be the CUDA source as a str, not bytes"),
])
def test_raw_module_arguments_that_would_be_split_or_misread(kw, what):
    with pytest.raises(cl.ArgumentError) as e:
        cl.RawModule(**{"code": SCALE, **kw})
    assert what in e.value.message and e.value.hint


def test_raw_module_takes_lists_none_and_a_str_name():
    mod = cl.RawModule(code=SCALE, options=["-std=c++17"], name_expressions=None)
    assert mod.get_function("scale").name == "scale"
    with pytest.raises(cl.ArgumentError) as e:
        mod.get_function(0)
    assert "a str, not int" in e.value.message and "scale" in e.value.hint


@pytest.mark.parametrize("kw, what", [
    (dict(blocks="a"), "blocks='a': give a list of block coordinates"),
    (dict(blocks=5), "blocks=5: give a list of block coordinates"),
    (dict(blocks=[(0, "x")]), "(0, 'x') is not a block's coordinates"),
    (dict(blocks=[1.5]), "1.5 is not a block's coordinates"),
    (dict(blocks=[]), "blocks=[] names no block"),
    (dict(trace_block="a"), "trace_block='a'"),
    (dict(timeout=-1), "timeout=-1: a limit must be a number above 0"),
    (dict(max_steps=0), "max_steps=0"),
    (dict(max_work="lots"), "max_work='lots'"),
    (dict(progress="yes"), "progress='yes'"),
])
def test_simulate_options_are_checked(kw, what):
    fn = module(SCALE).get_function("scale")
    x = random_matrix(1, 64, np.float32)[0]
    err = _launch_error(fn, 2, 32, (poisoned(64, np.float32), x, 64, 2.0), **kw)
    assert what in err.message

"""On a real GPU: the guarded launch refuses a faulting kernel and the CUDA context stays usable.

    python benchmarks/gpu_guard_check.py

Steps (each prints PASS/FAIL/INFO; the script always exits 0 and takes well under a minute):
1. an off-by-one kernel launched on CuPy arrays is refused by the guard (the simulator ran its
   corner blocks, reading the device data page by page), and nothing was written;
2. the same with numpy arrays (the path that copies to the device);
3. a gather through a device index array with one bad index: refused (the guard read the real
   device data, so data-dependent addresses are checked);
4. the next launch of a correct kernel works and its result is verified: the context is usable;
5. a transpose over two 50000 x 50000 float32 matrices (10 GB each) with an int index: refused
   (the index overflows 2^31); the 64-bit version passes the guard and is verified on samples;
6. guard cost per first launch of a new configuration (seconds, on this machine's CPU);
7. unguarded (guard=False): the off-by-one write on CuPy's memory pool — is it noticed, and does
   it change a neighbouring array? Run last, because it may break the context.
"""
from __future__ import annotations

import os
import sys
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np  # noqa: E402

os.environ.pop("COURSE_LIB_BACKEND", None)
import course_lib as cl  # noqa: E402
from course_lib.kernel import guard  # noqa: E402

SRC = r'''
extern "C" __global__ void scale_bad(float* out, const float* in, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i <= n)
        out[i] = 2.0f * in[i];
}
extern "C" __global__ void scale(float* out, const float* in, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = 2.0f * in[i];
}
extern "C" __global__ void gather(float* out, const float* in, const int* idx, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = in[idx[i]];
}
extern "C" __global__ void transpose32(float* out, const float* in, int rows, int cols)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < cols && y < rows)
        out[x * rows + y] = in[y * cols + x];
}
extern "C" __global__ void transpose64(float* out, const float* in, int rows, int cols)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < cols && y < rows)
        out[(size_t)x * rows + y] = in[(size_t)y * cols + x];
}
'''

results = []


def report(status, what, detail=""):
    results.append(status)
    print(f"[{status}] {what}" + (f"\n       {detail}" if detail else ""), flush=True)


def step(fn):
    try:
        fn()
    except Exception as exc:  # keep going: every step says what it saw
        report("FAIL", f"{fn.__name__} raised {type(exc).__name__}: {exc}", traceback.format_exc(limit=3))


def main():
    t_start = time.perf_counter()
    if not cl.gpu_available():
        print("No NVIDIA GPU visible to CuPy: nothing to check here (run this on the GPU machine).")
        return
    import cupy as cp
    print(f"GPU: {cl.gpu.info().name}, CuPy {cp.__version__}, driver for CUDA {cl.gpu.driver_major()}")
    mod = cl.RawModule(code=SRC, filename="cell.cu")
    n = 1024
    grid_bad = (n // 256 + 1,)                 # a grid with more threads than elements
    host_x = np.random.default_rng(0).random(n).astype(np.float32) + 0.5

    def refused_on_cupy_arrays():
        x, out = cp.asarray(host_x), cp.full(n, -1.0, cp.float32)
        try:
            mod.get_function("scale_bad")(grid_bad, (256,), (out, x, np.int32(n)))
        except cl.MemoryAccessError as exc:
            untouched = bool((out == -1).all())
            report("PASS" if getattr(exc, "refused", False) and untouched else "FAIL",
                   f"guarded launch on CuPy arrays refused (output untouched: {untouched}); guard took "
                   f"{guard.last.elapsed * 1e3 if guard.last else float('nan'):.0f} ms", str(exc).replace("\n", "\n       "))
            return
        report("FAIL", "the guarded off-by-one launch on CuPy arrays was NOT refused")

    def refused_on_numpy_arrays():
        out = np.full(n, -1.0, np.float32)
        try:
            mod.get_function("scale_bad")(grid_bad, (256,), (out, host_x, np.int32(n)))
        except cl.MemoryAccessError as exc:
            report("PASS" if exc.refused and (out == -1).all() else "FAIL", "guarded launch on numpy arrays refused")
            return
        report("FAIL", "the guarded off-by-one launch on numpy arrays was NOT refused")

    def refused_on_device_index_data():
        idx = np.arange(n, dtype=np.int32)[::-1].copy()
        idx[n - 1] = n + 3                     # one bad index, in the last block
        x, out, d_idx = cp.asarray(host_x), cp.zeros(n, cp.float32), cp.asarray(idx)
        try:
            mod.get_function("gather")((n // 256,), (256,), (out, x, d_idx, np.int32(n)))
        except cl.MemoryAccessError as exc:
            report("PASS" if exc.refused else "FAIL", "gather with a bad index in device memory refused "
                   "(the guard read the device data)", str(exc).splitlines()[1])
            return
        report("FAIL", "the gather with a bad device index was NOT refused")

    def context_still_usable():
        x, out = cp.asarray(host_x), cp.zeros(n, cp.float32)
        mod.get_function("scale")((n // 256,), (256,), (out, x, np.int32(n)))
        cp.cuda.Device().synchronize()
        ok = bool(cp.array_equal(out, 2 * x))
        report("PASS" if ok else "FAIL", "next launch of a correct kernel ran and its result is exact: "
               "the CUDA context is usable")

    def huge_matrix_overflow():
        rows = cols = 50_000
        try:
            a = cp.empty((rows, cols), cp.float32)
            out = cp.empty((cols, rows), cp.float32)
        except cp.cuda.memory.OutOfMemoryError:
            report("INFO", "not enough GPU memory for two 10 GB matrices: step skipped")
            return
        try:
            a[-1, -3:] = cp.asarray([1.0, 2.0, 3.0], cp.float32)
            a[0, :3] = cp.asarray([4.0, 5.0, 6.0], cp.float32)
            grid = ((cols + 31) // 32, (rows + 7) // 8)
            args = (out, a, np.int32(rows), np.int32(cols))
            try:
                mod.get_function("transpose32")(grid, (32, 8), args)
                report("FAIL", "the int-index transpose of a 50000 x 50000 matrix was NOT refused")
            except cl.MemoryAccessError as exc:
                report("PASS" if exc.refused else "FAIL", f"int index overflow on 50000 x 50000 refused in "
                       f"{guard.last.elapsed * 1e3 if guard.last else float('nan'):.0f} ms",
                       str(exc).splitlines()[1][:200])
            t = time.perf_counter()
            mod.get_function("transpose64")(grid, (32, 8), args)
            cp.cuda.Device().synchronize()
            ok = bool((out[-3:, -1] == cp.asarray([1.0, 2.0, 3.0])).all() and (out[:3, 0] == cp.asarray([4.0, 5.0, 6.0])).all())
            report("PASS" if ok else "FAIL", f"the size_t version passed the guard and ran "
                   f"({time.perf_counter() - t:.2f} s incl. guard); corner samples verified: {ok}")
        finally:
            del a, out
            cp.get_default_memory_pool().free_all_blocks()

    def guard_cost():
        rows, cols = 4096, 4097
        a, out = cp.asarray(np.random.rand(rows, cols).astype(np.float32)), cp.empty((cols, rows), cp.float32)
        for name in ("transpose32", "transpose64"):
            t = time.perf_counter()
            mod.get_function(name)(((cols + 31) // 32, (rows + 7) // 8), (32, 8), (out, a, np.int32(rows), np.int32(cols)))
            cp.cuda.Device().synchronize()
            report("INFO", f"{name} 4096 x 4097: first guarded launch {time.perf_counter() - t:.3f} s "
                   f"(guard {guard.last.elapsed:.3f} s: {guard.last.note})")
        t = time.perf_counter()
        for _ in range(10):
            mod.get_function("transpose64")(((cols + 31) // 32, (rows + 7) // 8), (32, 8), (out, a, np.int32(rows), np.int32(cols)))
        cp.cuda.Device().synchronize()
        report("INFO", f"10 repeated launches of the same configuration: {(time.perf_counter() - t) / 10 * 1e3:.1f} ms "
               f"each (already checked: {guard.last.note})")

    def unguarded_pool_write():
        pool = cp.get_default_memory_pool()
        x = cp.asarray(host_x)
        out = cp.full(n, -1.0, cp.float32)             # 4096 bytes: no rounding slack in the pool
        victim = cp.full(n, 7.0, cp.float32)           # allocated right after, often adjacent
        gap = victim.data.ptr - out.data.ptr
        try:
            mod.get_function("scale_bad")(grid_bad, (256,), (out, x, np.int32(n)), guard=False)
            cp.cuda.Device().synchronize()
        except Exception as exc:
            report("INFO", f"unguarded off-by-one launch: the GPU reported {type(exc).__name__}: {exc}")
            return
        changed = int((victim != 7.0).sum())
        report("INFO", f"unguarded off-by-one launch: no error reported by CUDA; the neighbouring pool "
               f"allocation starts {gap} bytes after `out`; elements of it changed: {changed}"
               + (f" (victim[0] is now {float(victim[0])}, = 2 * in[n], which was read past the end of `in`)"
                  if changed else " (the write landed in memory nobody uses — unnoticed)"),
               f"pool: {pool.used_bytes()} bytes used, {pool.total_bytes()} held")

    for fn in (refused_on_cupy_arrays, refused_on_numpy_arrays, refused_on_device_index_data, context_still_usable,
               huge_matrix_overflow, guard_cost, context_still_usable, unguarded_pool_write):
        step(fn)
    fails = results.count("FAIL")
    print(f"\n{results.count('PASS')} passed, {fails} failed, in {time.perf_counter() - t_start:.1f} s"
          + ("" if not fails else "  <-- see FAIL lines above"))


if __name__ == "__main__":
    main()
    sys.exit(0)

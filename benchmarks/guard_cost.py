"""What the guarded GPU launch costs: guard.check time per launch, on this machine's CPU.

    python benchmarks/guard_cost.py

The guard simulates a launch's corner blocks before the GPU runs it (course_lib/guard.py). This
prints, for student-style kernels and the course's kernels at several sizes, the time of the
first check of a configuration (compilation excluded; later identical launches are not checked
again) and what the check concluded. The budget is guard.BUDGET_S: a kernel whose corner blocks
have not finished by then is launched without a verdict.
"""
from __future__ import annotations

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np  # noqa: E402

import course_lib as cl  # noqa: E402
from course_lib.kernel import guard
from course_lib.teach import mistakes
from course_lib import transposes  # noqa: E402

MATMUL = mistakes.get("sync_in_branch").source.replace(
    """        if (row < n && col < n) {
            As[threadIdx.y][threadIdx.x] = A[row * n + t * TILE + threadIdx.x];
            Bs[threadIdx.y][threadIdx.x] = B[(t * TILE + threadIdx.y) * n + col];
            __syncthreads();          // wait until both tiles are loaded
            for (int k = 0; k < TILE; ++k)
                sum += As[threadIdx.y][k] * Bs[k][threadIdx.x];
        }
        __syncthreads();""",
    """        int ka = t * TILE + threadIdx.x, kb = t * TILE + threadIdx.y;
        As[threadIdx.y][threadIdx.x] = (row < n && ka < n) ? A[row * n + ka] : 0.0f;
        Bs[threadIdx.y][threadIdx.x] = (kb < n && col < n) ? B[kb * n + col] : 0.0f;
        __syncthreads();
        for (int k = 0; k < TILE; ++k)
            sum += As[threadIdx.y][k] * Bs[k][threadIdx.x];
        __syncthreads();""")


def timed(fn, grid, block, args):
    guard.check(fn, grid, block, args)                 # warm: compile, build
    best, report = 1e9, None
    for _ in range(3):
        t = time.perf_counter()
        report = guard.check(fn, grid, block, args)
        best = min(best, time.perf_counter() - t)
    return best, report


def main():
    rows_out = []
    scale = cl.RawModule(code=mistakes.get("floor_grid").source, filename="cell.cu").get_function("scale")
    for n in (1 << 20, 1 << 26):
        x = guard.Shape((n,), np.float32)
        rows_out.append((f"scale 1D n={n}", *timed(scale, ((n + 255) // 256,), (256,), (x, x, np.int32(n)))))
    naive = cl.RawModule(code=mistakes.get("block_too_large").source, filename="cell.cu").get_function("transpose")
    for r, c in ((1000, 1030), (8192, 8192)):
        a, o = transposes.random_matrix(r, c, np.float32), np.empty((c, r), np.float32)
        rows_out.append((f"naive transpose {r}x{c}", *timed(naive, ((c + 31) // 32, (r + 7) // 8), (32, 8),
                                                             (o, a, np.int32(r), np.int32(c)))))
    for key in ("tile", "padded_32x8"):
        t = transposes.kernel(key, np.float32)
        for r, c in ((1000, 1030), (8192, 8192)):
            a, o = transposes.random_matrix(r, c, np.float32), np.empty((c, r), np.float32)
            grid, block = t.config(r, c)
            rows_out.append((f"course {key} {r}x{c}", *timed(t.function, grid, block, t.args(o, a))))
    mm = cl.RawModule(code=MATMUL, filename="cell.cu").get_function("matmul")
    for n in (256, 1000, 4096):
        A = guard.Shape((n, n), np.float32)
        rows_out.append((f"tiled matmul n={n}", *timed(mm, ((n + 15) // 16, (n + 15) // 16), (16, 16),
                                                       (A, A, A, np.int32(n)))))
    print(f"guard.check cost per launch (best of 3), budget {guard.BUDGET_S} s, {os.cpu_count()} CPUs\n")
    print(f"{'launch':32s} {'seconds':>8s}  verdict")
    for name, sec, rep in rows_out:
        print(f"{name:32s} {sec:8.3f}  {rep.note} ({len(rep.blocks)} blocks)")


if __name__ == "__main__":
    main()

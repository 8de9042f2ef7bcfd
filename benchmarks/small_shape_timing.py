#!/usr/bin/env python
"""Is the event timing of small launches fair to CuPy-launched kernels? 1000x1030, float32 and uint8:
the course's padded_32x8 against torch.compile, timed (a) as benchmarks/transpose.py does (L2 flushed,
events around one launch), (b) the same with a 200 us busy kernel queued after the flush (so no host
launch latency can reach the GPU clock), (c) 50 back-to-back launches between two events.
Prints microseconds per launch. A benchmark helper; asserts nothing."""
import statistics
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from course_lib import gpu, transposes  # noqa: E402

SPIN = r'''extern "C" __global__ void spin(long long cycles) {
    long long t0 = clock64(); while (clock64() - t0 < cycles) { } }'''


def main():
    import cupy as cp
    import torch
    spin = cp.RawKernel(SPIN, "spin")
    flush = gpu._L2Flusher()
    start, end = cp.cuda.Event(), cp.cuda.Event()

    def one(run, busy):
        times = []
        for _ in range(30):
            flush()
            if busy:
                spin((1,), (1,), (np.int64(400_000),))       # about 200 us at 1.98 GHz
            start.record(); run(); end.record(); end.synchronize()
            times.append(cp.cuda.get_elapsed_time(start, end) * 1e3)
        return statistics.median(times)

    def many(run, n=50):
        flush()
        start.record()
        for _ in range(n):
            run()
        end.record(); end.synchronize()
        return cp.cuda.get_elapsed_time(start, end) * 1e3 / n

    for dt in (np.float32, np.uint8):
        a = cp.asarray(transposes.random_matrix(1000, 1030, dt))
        out = cp.empty((1030, 1000), dt)
        t = transposes.kernel("padded_32x8", dt)
        fn, (g, b) = t.function, t.config(1000, 1030)
        func, g, b, args, _ = gpu.prepare(fn, g, b, t.args(out, a))
        course = lambda: func(g, b, tuple(args))
        x = torch.as_tensor(a, device="cuda")
        comp = torch.compile(lambda v: v.t().contiguous(), dynamic=False)
        for _ in range(3):
            comp(x); course()
        torch.cuda.synchronize()
        peer = lambda: comp(x)
        for name, run in (("padded_32x8", course), ("torch.compile", peer)):
            print(f"{np.dtype(dt).name:8s} {name:14s} flushed {one(run, False):6.2f} us   flushed+busy {one(run, True):6.2f} us"
                  f"   50 in a row {many(run):6.2f} us", flush=True)


if __name__ == "__main__":
    main()

#!/usr/bin/env python
"""Why do library transposes beat the course's on 1000x1030 (about 4 MB)? Device time from Nsight
Compute, not events: run under

    ncu --clock-control none --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,\
launch__grid_size,launch__block_size,launch__registers_per_thread python benchmarks/small_shape_probe.py

Launches, each once: torch.compile of x.t().contiguous() and the course kernels padded_32x8,
sector, fast, on float32 and uint8 1000x1030 (the L2 is not flushed: ncu flushes caches between
kernels by default). A benchmark helper; asserts nothing.
"""
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from course_lib import transposes  # noqa: E402


def main():
    import cupy as cp
    import torch
    for dt, tdt in ((np.float32, torch.float32), (np.uint8, torch.uint8)):
        a = cp.asarray(transposes.random_matrix(1000, 1030, dt))
        x = torch.as_tensor(a, device="cuda")
        f = torch.compile(lambda t: t.t().contiguous(), dynamic=False)
        for _ in range(3):
            f(x)
        torch.cuda.synchronize()
        for key in ("padded_32x8", "sector", "fast"):
            t = transposes.kernel(key, dt)
            out = cp.empty((1030, 1000), dt)
            t.run(a, out)
        cp.cuda.runtime.deviceSynchronize()


if __name__ == "__main__":
    main()

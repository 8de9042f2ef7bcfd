"""Where do the bytes go? DRAM and L2 traffic of a few kernels, aligned vs misaligned shapes.

    ncu --clock-control none --metrics dram__bytes_read.sum,dram__bytes_write.sum,\
lts__t_sectors_op_read.sum,lts__t_sectors_op_write.sum,gpu__time_duration.sum \
        --csv python benchmarks/ncu_dram.py --worker
    python benchmarks/ncu_dram.py              # runs the line above and prints a table

A transpose must read and write each byte once; anything above 1.0x of the matrix size in DRAM
traffic is overhead (e.g. partially written sectors that L2 has to fill from DRAM).
"""
from __future__ import annotations

import csv
import io
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from course_lib import transposes  # noqa: E402

METRICS = ["dram__bytes_read.sum", "dram__bytes_write.sum", "lts__t_sectors_op_read.sum",
           "lts__t_sectors_op_write.sum", "gpu__time_duration.sum"]
CASES = [(k, dt, shape) for dt in (np.float32, np.uint8) for shape in ((8192, 8192), (8191, 8193))
         for k in ("copy", "copy_shared", "padded_32x8", "fast")]


def worker():
    import cupy as cp
    for key, dt, (rows, cols) in CASES:
        t = transposes.kernel(key, dt)
        inp = cp.asarray(transposes.random_matrix(rows, cols, dt))
        out = cp.asarray(np.zeros(t.out_shape(rows, cols), dt))
        t.run(inp, out)
    cp.cuda.runtime.deviceSynchronize()


def main():
    if "--worker" in sys.argv:
        return worker()
    ncu = shutil.which("ncu") or "/usr/local/cuda/bin/ncu"
    proc = subprocess.run([ncu, "--clock-control", "none", "--metrics", ",".join(METRICS), "--csv",
                           "--print-units", "base", sys.executable, __file__, "--worker"],
                          capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parent.parent)))
    text = proc.stdout[proc.stdout.find('"ID"'):]
    rows = {}
    for r in csv.DictReader(io.StringIO(text)):
        rows.setdefault(int(r["ID"]), {})[r["Metric Name"]] = float(r["Metric Value"].replace(",", "") or 0)
    print(f"{'kernel':<12}{'dtype':<9}{'shape':<11}{'DRAM rd/size':>13}{'DRAM wr/size':>13}{'L2 rd/size':>11}{'L2 wr/size':>11}{'us':>8}")
    for (key, dt, (r_, c_)), (_, m) in zip(CASES, sorted(rows.items())):
        size = r_ * c_ * np.dtype(dt).itemsize
        print(f"{key:<12}{np.dtype(dt).name:<9}{f'{r_}x{c_}':<11}{m['dram__bytes_read.sum'] / size:13.3f}"
              f"{m['dram__bytes_write.sum'] / size:13.3f}{m['lts__t_sectors_op_read.sum'] * 32 / size:11.3f}"
              f"{m['lts__t_sectors_op_write.sum'] * 32 / size:11.3f}{m['gpu__time_duration.sum'] / 1e3:8.1f}")
    if proc.returncode:
        print(proc.stderr[-2000:])


if __name__ == "__main__":
    main()

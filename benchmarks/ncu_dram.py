"""Where do the bytes go? DRAM and L2 traffic of a few kernels, aligned vs misaligned shapes.

    ncu --clock-control none --metrics dram__bytes_read.sum,dram__bytes_write.sum,\
lts__t_sectors_op_read.sum,lts__t_sectors_op_write.sum,gpu__time_duration.sum \
        --csv python benchmarks/ncu_dram.py --worker
    python benchmarks/ncu_dram.py              # runs the line above and prints a table

A transpose must read and write each byte once; anything above 1.0x of the matrix size in DRAM
traffic is overhead (e.g. partially written sectors that L2 has to fill from DRAM).

    python benchmarks/ncu_dram.py --full DIR [--kernels copy,copy_shared,warp] [--dtype float32]

collects every metric of ncu's full set for those kernels on 8192x8192 and 8191x8193, writes
DIR/full.csv (one row per metric, one column per launch) and prints the metrics whose
misaligned/aligned ratio differs most between the first kernel (the baseline that does not slow
down) and the others: leads for why misaligned shapes cost tiled kernels what a copy does not pay.
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


def worker(cases=None):
    import cupy as cp
    for key, dt, (rows, cols) in cases or CASES:
        t = transposes.kernel(key, dt)
        inp = cp.asarray(transposes.random_matrix(rows, cols, dt))
        out = cp.asarray(np.zeros(t.out_shape(rows, cols), dt))
        t.run(inp, out)
    cp.cuda.runtime.deviceSynchronize()


def full_cases(argv):
    kernels = _opt(argv, "--kernels", "copy,copy_shared,warp").split(",")
    dt = np.dtype(_opt(argv, "--dtype", "float32"))
    return [(k, dt, shape) for k in kernels for shape in ((8192, 8192), (8191, 8193))]


def _opt(argv, name, default):
    return argv[argv.index(name) + 1] if name in argv else default


def full(argv):
    """ncu's full set on full_cases(argv): every metric, and the ones that tell kernels apart."""
    out_dir = Path(argv[argv.index("--full") + 1])
    out_dir.mkdir(parents=True, exist_ok=True)
    cases = full_cases(argv)
    ncu = shutil.which("ncu") or "/usr/local/cuda/bin/ncu"
    proc = subprocess.run([ncu, "--clock-control", "none", "--set", "full", "--csv", "--print-units", "base",
                           sys.executable, __file__, "--worker", *argv[1:]], capture_output=True, text=True,
                          env=dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parent.parent)))
    text = proc.stdout[proc.stdout.find('"ID"'):]
    values = {}
    for r in csv.DictReader(io.StringIO(text)):
        try:
            v = float(r["Metric Value"].replace(",", ""))
        except ValueError:
            continue
        values.setdefault(f"{r['Section Name']}: {r['Metric Name']}", {})[int(r["ID"])] = v
    labels = [f"{k} {np.dtype(d).name} {r_}x{c_}" for k, d, (r_, c_) in cases]
    with open(out_dir / "full.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["metric", *labels])
        for name, per in sorted(values.items()):
            w.writerow([name, *(per.get(i, "") for i in range(len(cases)))])
    leads = []
    for name, per in values.items():
        if len(per) != len(cases):
            continue
        ratios = [per[i + 1] / per[i] if per[i] else float("nan") for i in range(0, len(cases), 2)]
        base = ratios[0]
        spread = max(abs(r - base) for r in ratios[1:]) if base == base else 0.0
        if spread == spread and spread > 0.15:
            leads.append((spread, name, ratios))
    kernels = [k for k, _, _ in cases[::2]]
    print(f"misaligned / aligned, per kernel ({', '.join(kernels)}); metrics where they differ by > 0.15:")
    for spread, name, ratios in sorted(leads, reverse=True)[:60]:
        print(f"  {name[:90]:<90}" + "".join(f"{r:9.2f}" for r in ratios))
    print(f"wrote {out_dir / 'full.csv'} ({len(values)} metrics x {len(cases)} launches)")
    if proc.returncode:
        print(proc.stderr[-2000:])


def main():
    if "--worker" in sys.argv:
        return worker(full_cases(sys.argv) if "--full" in sys.argv else None)
    if "--full" in sys.argv:
        return full(sys.argv)
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

#!/usr/bin/env python
"""Small shapes under Nsight Compute, with the L2 left as transpose.py's timing leaves it (issue 13).

Each kernel runs three times after a cudaMemset flush (L2 full of dirty lines, as in transpose.py)
and three times after a read flush (L2 full of clean lines), and ncu is told not to flush caches
itself (--cache-control none), so its device time and DRAM bytes are those of the timed launches.

    python benchmarks/ncu_small_probe.py --out DIR          # runs ncu on --worker, writes DIR/ncu_small.csv
    python benchmarks/ncu_small_probe.py --out DIR --detail uint8:padded_32x8,vec_out
        (ncu flushes caches itself; instructions, registers, occupancy and requests as well)

Prints per kernel and flush kind: device time (us), DRAM bytes read/written (MB), L2 sectors.
"""
from __future__ import annotations

import csv
import io
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

DETAIL = ["smsp__inst_executed.sum", "launch__registers_per_thread", "sm__warps_active.avg.pct_of_peak_sustained_active",
          "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
          "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
          "l1tex__data_pipe_lsu_wavefronts_mem_shared.sum", "launch__shared_mem_per_block_static",
          "launch__shared_mem_per_block_dynamic", "smsp__cycles_active.avg"]
METRICS = ["gpu__time_duration.sum", "dram__bytes_read.sum", "dram__bytes_write.sum",
           "lts__t_sectors_op_read.sum", "lts__t_sectors_op_write.sum", "launch__grid_size", "launch__block_size"]
CASES = [("float32", ("padded_32x8", "warp", "sector")), ("uint8", ("padded_32x8", "packed", "warp"))]
SHAPE = (1000, 1030)
FLUSHES = ("memset", "rflush")


def detail_worker(spec):
    """Three launches of each kernel and of torch.compile's, no flushes of our own (ncu flushes)."""
    import cupy as cp
    import torch
    from benchmarks.transpose import random_device
    from course_lib import transposes
    dname, keys = spec.split(":")
    a = random_device(*SHAPE, np.dtype(dname), seed=1)
    for k in keys.split(","):
        t = transposes.kernel(k, dname)
        out = cp.empty(t.out_shape(*SHAPE), dname)
        for _ in range(3):
            t.run(a, out)
    compiled = torch.compile(lambda x: x.t().contiguous(), dynamic=False)
    x = torch.as_tensor(a, device="cuda")
    for _ in range(3):
        compiled(x)
    cp.cuda.runtime.deviceSynchronize()


def run_ncu(flags, metrics, kernels, worker_args, csv_path):
    """ncu FLAGS on this script's worker; the CSV kept at csv_path; {launch ID: {name, metric: value}}
    in launch order, values as ncu printed them (base units)."""
    cmd = ["ncu", *flags, "--clock-control", "none", "--csv", "--print-units", "base", "--metrics",
           ",".join(metrics), "-k", f"regex:{kernels}", sys.executable, __file__, *worker_args]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    text = proc.stdout[proc.stdout.find('"ID"'):]
    csv_path.parent.mkdir(parents=True, exist_ok=True)
    csv_path.write_text(text)
    if proc.returncode:
        print(proc.stderr[-2000:])
    launches = {}
    for r in csv.DictReader(io.StringIO(text)):
        launches.setdefault(int(r["ID"]), {"name": r["Kernel Name"].split("(")[0][:40]})[r["Metric Name"]] = \
            r["Metric Value"]
    return [launches[i] for i in sorted(launches)], proc.returncode


def detail(spec, out):
    launches, rc = run_ncu([], METRICS + DETAIL, "tile|vec_out|packed|sector|triton|fast",
                           ["--detail-worker", spec], out / "ncu_detail.csv")
    for i, launch in enumerate(launches):
        print(f"launch {i}: {launch['name']}")
        for m in METRICS + DETAIL:
            print(f"    {m:58s} {launch.get(m, '-')}")
    return rc


def worker():
    import cupy as cp
    import torch
    from benchmarks.transpose import random_device
    from course_lib import nvrtc, transposes
    buf = cp.empty(2 * nvrtc.device_info().l2_bytes, np.uint8)
    flush = {"memset": lambda: buf.fill(1), "rflush": lambda: buf.view(np.float32).sum()}
    compiled = torch.compile(lambda x: x.t().contiguous(), dynamic=False)
    for dname, _ in CASES:       # compile both graphs first: main() drops these len(CASES) launches
        compiled(torch.as_tensor(random_device(*SHAPE, np.dtype(dname), seed=1), device="cuda"))
    for dname, keys in CASES:
        a = random_device(*SHAPE, np.dtype(dname), seed=1)
        runs = []
        for k in keys:
            t = transposes.kernel(k, dname)
            out = cp.empty(t.out_shape(*SHAPE), dname)
            runs.append(lambda t=t, out=out: t.run(a, out))
        x = torch.as_tensor(a, device="cuda")
        runs.append(lambda: compiled(x))
        for run in runs:
            for f in FLUSHES:
                for _ in range(3):
                    flush[f]()
                    run()
        cp.cuda.runtime.deviceSynchronize()


def main(argv):
    if "--worker" in argv:
        worker()
        return 0
    if "--detail-worker" in argv:
        detail_worker(argv[argv.index("--detail-worker") + 1])
        return 0
    out = Path(argv[argv.index("--out") + 1]) if "--out" in argv else Path("/tmp")
    if not shutil.which("ncu"):
        print("ncu is not on PATH: nothing to measure")
        return 0
    if "--detail" in argv:
        return detail(argv[argv.index("--detail") + 1], out)
    launches, rc = run_ncu(["--cache-control", "none"], METRICS, "tile|packed|sector|triton", ["--worker"],
                           out / "ncu_small.csv")
    order = [{k: (v if k == "name" else float(v.replace(",", ""))) for k, v in launch.items()}
             for launch in launches[len(CASES):]]      # after the compiling launches
    # the worker's order: per dtype, per kernel, per flush kind, three launches
    i = 0
    for dname, keys in CASES:
        print(f"\n{dname} {SHAPE[0]}x{SHAPE[1]}: device us, DRAM MB read/write, L2 sectors read/write (median of 3)")
        for k in (*keys, "torch.compile"):
            for f in FLUSHES:
                group = order[i:i + 3]
                i += 3
                if not group:
                    continue
                med = {m: float(np.median([g.get(m, np.nan) for g in group])) for m in METRICS}
                print(f"  {k:<14}{f:<8}{med['gpu__time_duration.sum'] / 1e3:8.2f}"
                      f"{med['dram__bytes_read.sum'] / 1e6:9.2f}{med['dram__bytes_write.sum'] / 1e6:9.2f}"
                      f"{med['lts__t_sectors_op_read.sum']:10.0f}{med['lts__t_sectors_op_write.sum']:10.0f}"
                      f"   {group[0]['name'][:40]}")
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

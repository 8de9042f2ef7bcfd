"""``python -m course_lib bench``: every course kernel, measured.

On a GPU: effective bandwidth (2 * bytes / median time), the fraction of a device-to-device
copy of the same bytes measured in the same run, the fraction of the datasheet peak, and
whether every element of the result is right (random input, poisoned output).

Without a GPU it says so and runs the simulator instead: exact memory metrics per kernel
(sectors per request, shared wavefronts and bank conflicts) and correctness — no timings.
"""
from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from .. import gpu
from ..errors import KernelError, SimulationLimit
from . import backend, verify
from .catalog import SPECS
from .data import poisoned, random_matrix
from .transpose import kernel

DTYPES = {"f32": np.float32, "f64": np.float64, "f16": np.float16, "u8": np.uint8}


def parse_size(text: str) -> tuple[int, int]:
    parts = text.lower().replace("*", "x").split("x")
    try:
        dims = [int(p) for p in parts]
    except ValueError:
        raise argparse.ArgumentTypeError(f"size must look like 8192 or 8192x2048, not {text!r}") from None
    if len(dims) == 1:
        dims *= 2
    if len(dims) != 2 or min(dims) < 1:
        raise argparse.ArgumentTypeError(f"size must be ROWSxCOLS with positive numbers, not {text!r}")
    return dims[0], dims[1]


def progress(i, n, label, stream=sys.stderr):
    if not (hasattr(stream, "isatty") and stream.isatty()):   # a log file: one line at the end, no \r bars
        if i == n:
            stream.write(f"{n} launches done\n")
        return
    width = 30
    done = int(width * i / max(n, 1))
    stream.write(f"\r[{'#' * done}{'.' * (width - done)}] {i}/{n} {label:<40.40s}")
    if i == n:
        stream.write("\n")
    stream.flush()


def _kernels(names):
    if names in (None, "all"):
        return list(SPECS)
    keys = [k.strip() for k in names.split(",")]
    for k in keys:
        kernel(k)  # raises a helpful KeyError for a typo
    return keys


def bench_gpu(keys, dtypes, size, repeat):
    import cupy as cp
    rows, cols = size
    info = gpu.info()
    print(f"GPU: {info.name} (sm_{info.arch}), peak {info.peak_bandwidth / 1e9:.0f} GB/s")
    table = []
    jobs = [(k, d) for d in dtypes for k in keys]
    for i, (key, dt) in enumerate(jobs):
        progress(i, len(jobs), f"{key} {np.dtype(dt).name}")
        try:
            t = kernel(key, dt)
        except ValueError as exc:        # this kernel does not handle this dtype
            table.append((key, np.dtype(dt).name, None, None, None, None, str(exc)))
            continue
        if t.refuses(rows, cols):        # nor this shape (a TMA kernel: rows of whole 16-byte pieces)
            table.append((key, np.dtype(dt).name, None, None, None, None, t.refuses(rows, cols)))
            continue
        nbytes = rows * cols * np.dtype(dt).itemsize
        copy_bw = gpu.copy_bandwidth(nbytes, repeat=repeat)
        inp = cp.asarray(random_matrix(rows, cols, dt))
        out = cp.asarray(poisoned(t.out_shape(rows, cols), dt))
        seconds = t.time(inp, out, repeat=repeat)
        out.fill(0)
        out[...] = cp.asarray(poisoned(t.out_shape(rows, cols), dt))
        t.run(inp, out)
        expected = inp if t.is_copy else inp.T
        ok = bool(cp.array_equal(out, expected)) if dt != np.float16 else bool(cp.array_equal(out.view(cp.uint16), expected.view(cp.uint16)))
        note = "" if ok else str(verify.compare(out.get(), cp.ascontiguousarray(expected).get()))
        bw = 2 * nbytes / seconds
        table.append((key, np.dtype(dt).name, seconds * 1e3, bw / 1e9, bw / copy_bw, bw / info.peak_bandwidth,
                      "correct" if ok else "WRONG: " + note))
    progress(len(jobs), len(jobs), "done")
    print(f"\n{rows}x{cols}, median of {repeat} launches, inputs read from DRAM; GB/s = 2 * bytes / time\n")
    print(f"{'kernel':<14}{'dtype':<9}{'ms':>9}{'GB/s':>9}{'vs copy':>9}{'vs peak':>9}  result")
    for key, dt, ms, gbs, fc, fp, res in table:
        if ms is None:
            print(f"{key:<14}{dt:<9}{'':>9}{'':>9}{'':>9}{'':>9}  skipped: {res}")
        else:
            print(f"{key:<14}{dt:<9}{ms:9.3f}{gbs:9.0f}{fc:9.2f}{fp:9.2f}  {res}")
    return table


def bench_sim(keys, dtypes, size):
    rows, cols = size
    backend.room_for(rows, cols, max(dtypes, key=lambda d: np.dtype(d).itemsize),
                     elsewhere="this command", option=None)   # before any matrix is made
    print("No NVIDIA GPU here: running the CPU simulator instead (exact memory metrics; no timings).")
    table = []
    jobs = [(k, d) for d in dtypes for k in keys]
    for i, (key, dt) in enumerate(jobs):
        progress(i, len(jobs), f"{key} {np.dtype(dt).name}")
        try:
            t = kernel(key, dt)
        except ValueError as exc:
            table.append((key, np.dtype(dt).name, None, str(exc)))
            continue
        if t.refuses(rows, cols):
            table.append((key, np.dtype(dt).name, None, t.refuses(rows, cols)))
            continue
        inp = random_matrix(rows, cols, dt)
        start = time.perf_counter()
        try:
            out, run = t.simulate(inp)
        except SimulationLimit as exc:      # too long at this size (the TMA kernels at 8192 x 8192): the rest run
            table.append((key, np.dtype(dt).name, None, exc.message.split(". ")[0]))
            continue
        res = verify.compare(out, t.expected(inp))
        table.append((key, np.dtype(dt).name, (run, time.perf_counter() - start), "correct" if res else "WRONG: " + str(res)))
    progress(len(jobs), len(jobs), "done")
    print(f"\n{rows}x{cols}; sectors and wavefronts per request, as Nsight Compute counts them\n")
    print(f"{'kernel':<14}{'dtype':<9}{'ld sect/req':>12}{'st sect/req':>12}{'smem ld wf/req':>15}"
          f"{'smem st wf/req':>15}{'conflicts':>10}{'sim s':>7}  result")
    for key, dt, r, res in table:
        if r is None:
            print(f"{key:<14}{dt:<9}  skipped: {res}")
            continue
        run, secs = r
        conflicts = sum(x["conflicts"] for x in run.instructions)
        print(f"{key:<14}{dt:<9}{run.ratio('global', 'ld'):12.1f}{run.ratio('global', 'st'):12.1f}"
              f"{run.ratio('shared', 'ld'):15.1f}{run.ratio('shared', 'st'):15.1f}{conflicts:10d}{secs:7.2f}  {res}")
    return table


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m course_lib bench", description=__doc__.split("\n\n")[0])
    p.add_argument("--size", type=parse_size, default=None,
                   help="ROWSxCOLS or N (default: 8192 on a GPU, 512 in the simulator)")
    p.add_argument("--dtype", default="f32", help="f32, f64, f16, u8, a comma list, or all (default f32)")
    p.add_argument("--kernel", default="all", help=f"one or more of: {', '.join(SPECS)} (comma-separated), or all")
    p.add_argument("--backend", choices=("auto", "gpu", "sim"), default="auto")
    p.add_argument("--repeat", type=int, default=20, help="timed launches per kernel (GPU)")
    a = p.parse_args(argv)
    names = list(DTYPES) if a.dtype == "all" else [d.strip() for d in a.dtype.split(",")]
    bad = [d for d in names if d not in DTYPES]
    if bad:
        p.error(f"unknown dtype {', '.join(bad)}; use {', '.join(DTYPES)} or all")
    try:
        keys = _kernels(a.kernel)
    except KeyError as exc:
        p.error(str(exc).strip("'\""))
    dtypes = [DTYPES[d] for d in names]
    use_gpu = a.backend == "gpu" or (a.backend == "auto" and gpu.available())
    if a.backend == "gpu" and not gpu.available():
        p.error("--backend gpu: no NVIDIA GPU is available here")
    try:
        if use_gpu:
            bench_gpu(keys, dtypes, a.size or (8192, 8192), a.repeat)
        else:
            bench_sim(keys, dtypes, a.size or (512, 512))
    except KernelError as exc:              # a size too big for this machine's memory
        print(f"python -m course_lib bench: {exc}", file=sys.stderr)
        return 2
    return 0

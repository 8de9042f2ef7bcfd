"""``python -m course_lib run``: launch one transpose once, so a profiler can watch it.

    ncu --metrics l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum python -m course_lib run naive_row
    python -m course_lib run padded_32x8 --dtype f64 --shape 8191x8193
    python -m course_lib run tile --param PAD=1 --param BLOCK_ROWS=8
    compute-sanitizer --tool racecheck python -m course_lib run racy.cu:my_tile --block 32x32 --tile 32

A course kernel by its key (``course_lib.transposes``), or a kernel of your own from a ``.cu``
file (``FILE.cu:NAME``, with the course's contract ``T* out, const T* in, int rows, int cols``;
``--block`` says its threads and ``--tile`` how many elements of ``in`` one block covers, when
that is not one per thread). On a GPU it launches ``--launches`` times (1 by default: ncu then
profiles exactly one launch), checks every element and prints one line. It times nothing:
profilers measure; ``python -m course_lib bench`` times.

Without a GPU there is nothing for a profiler to see: it says so and runs the simulator
instead, printing the same memory metrics that Nsight Compute would count.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from .. import gpu
from ..errors import KernelError
from . import backend, verify
from .bench import DTYPES, parse_size
from .data import poisoned, random_matrix
from .transpose import as_kernel, kernel


def _shape(text):
    return parse_size(text)


def _param(text):
    name, eq, value = text.partition("=")
    if not eq:
        raise argparse.ArgumentTypeError(f"--param takes NAME=VALUE, not {text!r}")
    try:
        return name.strip(), int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--param {name}: {value!r} is not an integer") from None


def resolve(target: str, dtype, block=None, tile=None, params=None):
    """A Transpose for a course key, or a CellKernel for FILE.cu:NAME."""
    if ":" in target and target.split(":", 1)[0].endswith(".cu"):
        path, name = target.split(":", 1)
        if block is None:
            raise SystemExit(f"{target}: say how to launch your kernel, e.g. --block 32x8 --tile 32")
        from ..kernel.module import RawModule
        mod = RawModule(code=Path(path).read_text(), filename=Path(path).name)
        return as_kernel(mod.get_function(name), block=block, tile=tile)
    return kernel(target, dtype, **(params or {}))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m course_lib run", description=__doc__.splitlines()[0])
    ap.add_argument("kernel", help="a course kernel (e.g. padded_32x8) or FILE.cu:NAME")
    ap.add_argument("--dtype", default="f32", choices=sorted(DTYPES))
    ap.add_argument("--shape", type=_shape, default=(4096, 4096), help="ROWSxCOLS of in (default 4096x4096)")
    ap.add_argument("--param", type=_param, action="append", default=[], help="template knob NAME=VALUE")
    ap.add_argument("--block", type=_shape, default=None, help="threads per block, XxY (own kernels)")
    ap.add_argument("--tile", type=int, default=None, help="elements of in per block side (own kernels)")
    ap.add_argument("--launches", type=int, default=1)
    args = ap.parse_args(argv)
    try:
        return _run(args)
    except KernelError as exc:          # a shape too big for this machine, a kernel that does not compile...
        print(f"python -m course_lib run: {exc}", file=sys.stderr)
        return 2


def _run(args) -> int:
    dt = DTYPES[args.dtype]
    k = resolve(args.kernel, dt, args.block, args.tile, dict(args.param))
    rows, cols = args.shape
    if not gpu.available():             # the simulator's limit, before the matrices are made
        backend.room_for(rows, cols, dt, elsewhere="this command", option=None)
    a = random_matrix(rows, cols, dt, seed=1)
    expected = a if getattr(getattr(k, "spec", None), "is_copy", False) else np.ascontiguousarray(a.T)
    if not gpu.available():
        print("No GPU here: a profiler has nothing to measure. The simulator's count instead:")
        out, run = k.simulate(a)
        print(run.summary() if hasattr(run, "summary") else run.metrics)
        print("correct" if verify.compare(out, expected).ok else "WRONG")
        return 0
    import cupy as cp
    inp = cp.asarray(a)
    out = cp.asarray(poisoned(expected.shape, dt))
    for _ in range(max(1, args.launches)):
        k.run(inp, out)
    cp.cuda.runtime.deviceSynchronize()
    m = verify.compare(out.get(), expected)
    grid, block = k.config(rows, cols)
    print(f"{args.kernel} {np.dtype(dt).name} {rows}x{cols}: grid {grid}, block {block}, "
          f"{args.launches} launch(es), {'correct' if m.ok else m}")
    return 0 if m.ok else 1


if __name__ == "__main__":
    sys.exit(main())

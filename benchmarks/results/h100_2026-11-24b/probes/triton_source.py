#!/usr/bin/env python
"""The Triton kernel torch.compile generates for x.t().contiguous(), per dtype and shape.

transpose.py's peer 'torch.compile' is this kernel. Reading it (tile sizes, warps, grid order,
vector widths it can prove) tells what the course kernels are compared with, instead of guessing.

    python benchmarks/triton_source.py --out DIR --size 1000x1030,2048x8192 --dtype f32,u8

Writes DIR/triton_<dtype>_<rows>x<cols>.py (inductor's output code, the kernel and its launch).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from benchmarks.transpose import parse_sizes  # noqa: E402

TORCH_DTYPES = {"f32": "float32", "f64": "float64", "f16": "float16", "u8": "uint8"}


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--size", type=parse_sizes, default=[(1000, 1030)])
    p.add_argument("--dtype", default="f32,f64,f16,u8")
    args = p.parse_args(argv)
    try:
        import torch
        from torch._inductor.utils import run_and_get_code
    except ImportError:
        print("torch is not installed: nothing to show")
        return 0
    if not torch.cuda.is_available():
        print("no GPU: nothing to show")
        return 0
    args.out.mkdir(parents=True, exist_ok=True)
    for d in args.dtype.split(","):
        for rows, cols in args.size:
            torch._dynamo.reset()
            x = torch.ones(rows, cols, dtype=getattr(torch, TORCH_DTYPES[d]), device="cuda")
            fn = torch.compile(lambda t: t.t().contiguous(), dynamic=False)
            _, code = run_and_get_code(fn, x)
            path = args.out / f"triton_{d}_{rows}x{cols}.py"
            path.write_text("\n\n# ----\n\n".join(code))
            kernel = [line for src in code for line in src.splitlines()
                      if "triton_meta" in line or "@triton.jit" in line or "XBLOCK" in line or ".run(" in line]
            print(f"== {d} {rows}x{cols}: {path.name}")
            print("\n".join(kernel[:12]))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Sweep the knobs of kernels/fast.cu on a GPU and print the best setting per dtype and size.

    python benchmarks/tune_fast.py [--dtype f32,f64,f16,u8] [--size 8192,16384,8191x8193] [--json FILE]

Stage 1 sweeps GROUP x CACHE at the registry's tile and block size; stage 2 sweeps the tile,
THREADS and MINB around the best of stage 1. Every variant's output is checked bit for bit
once; times are medians of CUDA-event-timed launches with inputs read from DRAM, reported as the
fraction of a device-to-device memcpy of the same bytes measured in the same run. Reference
rows (copy kernels, the scalar padded 32x8 tile) are timed alongside.
"""
from __future__ import annotations

import argparse
import itertools
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from course_lib import gpu  # noqa: E402
from course_lib import transposes  # noqa: E402
from course_lib.transposes.bench import DTYPES, parse_size  # noqa: E402

TILES = {4: [(64, 64), (32, 128), (128, 32), (64, 128), (128, 64)], 8: [(64, 64), (32, 64), (64, 32), (32, 128), (128, 32)],
         2: [(128, 128), (64, 128), (128, 64), (64, 256)], 1: [(128, 128), (64, 256), (256, 64), (128, 256)]}


def measure(t, inp, out, expected, repeat):
    import cupy as cp
    out.fill(0)
    t.run(inp, out)
    ok = bool(cp.array_equal(out.view(cp.uint8), expected.view(cp.uint8)))
    return t.time(inp, out, repeat=repeat), ok


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--dtype", default="f32,f64,f16,u8")
    p.add_argument("--size", default="8192,16384,8191x8193")
    p.add_argument("--repeat", type=int, default=10)
    p.add_argument("--json")
    a = p.parse_args()
    if not gpu.available():
        print("No NVIDIA GPU here: nothing to tune.")
        return 0
    import cupy as cp
    results = []
    for dname in a.dtype.split(","):
        dt = np.dtype(DTYPES[dname])
        for size in a.size.split(","):
            rows, cols = parse_size(size)
            nbytes = rows * cols * dt.itemsize
            inp = cp.asarray(transposes.random_matrix(rows, cols, dt))
            expected = cp.ascontiguousarray(inp.T)
            out = cp.empty((cols, rows), dt)
            memcpy = gpu.copy_bandwidth(nbytes, repeat=a.repeat)
            row = dict(dtype=dt.name, size=f"{rows}x{cols}", memcpy_gbps=memcpy / 1e9, variants=[])

            def run(key, **params):
                try:
                    t = transposes.kernel(key, dt, **params)
                except (ValueError, TypeError) as exc:
                    return None
                o = cp.empty(rows * cols, dt).reshape(t.out_shape(rows, cols))
                exp = inp if t.is_copy else expected
                secs, ok = measure(t, inp, o, exp, a.repeat)
                frac = 2 * nbytes / secs / memcpy
                row["variants"].append(dict(key=key, params=params, frac=frac, ok=ok))
                print(f"  {dt.name:8s} {rows}x{cols}  {key:12s} {params}  {frac:.3f}{'' if ok else '  WRONG'}", flush=True)
                return frac if ok else 0.0

            for ref in ("copy", "copy_shared", "padded_32x8", "swizzle"):
                run(ref)
            base = transposes.kernel("fast", dt).params
            stage1 = {(g, c): run("fast", GROUP=g, CACHE=c) for g, c in itertools.product((1, 4, 8, 16, 32), (0, 1))}
            g, c = max((k for k in stage1 if stage1[k] is not None), key=lambda k: stage1[k])
            for (tr, tc), threads, minb in itertools.product(TILES[dt.itemsize], (256, 512), (2, 4)):
                if (tr, tc, threads, minb) == (base["TR"], base["TC"], base["THREADS"], base["MINB"]):
                    continue
                run("fast", GROUP=g, CACHE=c, TR=tr, TC=tc, THREADS=threads, MINB=minb)
            best = max((v for v in row["variants"] if v["key"] == "fast" and v["ok"]), key=lambda v: v["frac"])
            row["best"] = best
            print(f"BEST {dt.name} {rows}x{cols}: {best['params']} -> {best['frac']:.3f} of memcpy", flush=True)
            results.append(row)
            del inp, expected, out
            cp.get_default_memory_pool().free_all_blocks()
    print("\nsummary (fraction of same-run memcpy)")
    for r in results:
        refs = {v["key"]: v["frac"] for v in r["variants"] if v["key"] != "fast"}
        default = next((v["frac"] for v in r["variants"] if v["key"] == "fast" and v["params"] == dict(GROUP=1, CACHE=0)), float("nan"))
        print(f"{r['dtype']:8s} {r['size']:12s} default {default:.3f}  best {r['best']['frac']:.3f} {r['best']['params']}  "
              + "  ".join(f"{k} {v:.3f}" for k, v in refs.items()))
    if a.json:
        Path(a.json).write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())

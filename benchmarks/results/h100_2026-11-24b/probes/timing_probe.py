#!/usr/bin/env python
"""Does the way transpose.py times a launch decide who wins on small shapes? (issue 13)

At 1000x1030 a transpose takes about 5 us, so what happens around the kernel matters as much as
the kernel. transpose.py's CUDA events measure from the end of the L2 flush (a cudaMemset) to the
end of the kernel; Nsight Compute's gpu__time_duration measures the kernel alone. On 2026-11-24 the
two disagreed on the order: events put torch.compile's Triton kernel 25% ahead of padded_32x8 for
floats, ncu put padded_32x8 ahead. This script times the same launches several ways, in one run:

  memset    transpose.py's method: cudaMemset flush, event, launch, event
  kflush    the flush is an ordinary kernel (a CuPy elementwise fill), not a memset
  spin      a 200 us spin kernel first, then memset flush, event, launch, event: every host call
            is enqueued while the GPU is busy, so no host-side gap can be inside the events
  primer    memset flush, then 1056 blocks of a kernel that uses 32 KiB of shared memory, then the
            events: the SMs are already configured for shared memory when the kernel starts
  rflush    the flush reads the buffer (a sum) instead of writing it: L2 is left full of clean
            lines, as after Nsight Compute's cache flush, instead of dirty ones to write back
  warm      200 launches back to back between two events, no flush (L2-warm steady state)

    python benchmarks/timing_probe.py --out DIR [--size 1000x1030] [--dtype f32,u8]

Writes DIR/timing_probe.json and prints a table per case. A benchmark: nothing here asserts.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from benchmarks.transpose import DTYPES, parse_kernels, parse_sizes, peers, random_device, same_bits  # noqa: E402
from course_lib import nvrtc, transposes  # noqa: E402

SPIN = r"""
extern "C" __global__ void spin(long long cycles) {
    long long t0 = clock64();
    while (clock64() - t0 < cycles) { }
}
extern "C" __global__ void primer(float* sink) {
    extern __shared__ float s[];
    s[threadIdx.x] = threadIdx.x;
    __syncthreads();
    if (threadIdx.x == 0) sink[0] = s[31];
}
"""


class Harness:
    def __init__(self):
        import cupy as cp
        self.cp = cp
        l2 = nvrtc.device_info().l2_bytes
        self.buf = cp.empty(2 * l2, np.uint8)
        self.fbuf = self.buf.view(np.float32)
        mod = cp.RawModule(code=SPIN)
        self.spin_k, self.primer_k = mod.get_function("spin"), mod.get_function("primer")
        self.primer_k.max_dynamic_shared_size_bytes = 32 * 1024
        self.sink = cp.zeros(1, np.float32)
        self.fill_k = cp.ElementwiseKernel("", "float32 x", "x = 1.0f", "flush_fill")
        self.start, self.end = cp.cuda.Event(), cp.cuda.Event()

    def _time(self, run, before, repeat):
        times = []
        for _ in range(repeat):
            before()
            self.start.record()
            run()
            self.end.record()
            self.end.synchronize()
            times.append(self.cp.cuda.get_elapsed_time(self.start, self.end) * 1e3)   # us
        return statistics.median(times)

    def methods(self, run, repeat):
        for _ in range(3):
            run()
        memset = lambda: self.buf.fill(1)
        kflush = lambda: self.fill_k(self.fbuf)
        rflush = lambda: self.fbuf.sum()
        spin = lambda: (self.spin_k((1,), (1,), (np.int64(400_000),)), memset())
        primer = lambda: (memset(), self.primer_k((1056,), (256,), (self.sink,), shared_mem=32 * 1024))
        out = {"memset": self._time(run, memset, repeat), "kflush": self._time(run, kflush, repeat),
               "spin": self._time(run, spin, repeat), "primer": self._time(run, primer, repeat), "rflush": self._time(run, rflush, repeat)}
        n = 200
        self.start.record()
        for _ in range(n):
            run()
        self.end.record()
        self.end.synchronize()
        out["warm"] = self.cp.cuda.get_elapsed_time(self.start, self.end) * 1e3 / n
        return out


def case(h, rows, cols, dtype, keys, repeat, no_compile):
    cp = h.cp
    dt = np.dtype(dtype)
    a = random_device(rows, cols, dt, seed=rows * 31 + cols)
    nbytes = a.nbytes
    dst = cp.empty_like(a)
    rows_out = []

    def add(name, run, ok):
        m = h.methods(run, repeat)
        rows_out.append(dict(name=name, ok=ok, us=m))

    add("memcpy", lambda: cp.cuda.runtime.memcpyAsync(dst.data.ptr, a.data.ptr, nbytes,
                                                       cp.cuda.runtime.memcpyDeviceToDevice, 0), True)
    for label, key, params in keys:
        try:
            t = transposes.kernel(key, dt, **params)
        except ValueError as exc:
            rows_out.append(dict(name=label, skipped=str(exc)))
            continue
        out = cp.empty(t.out_shape(rows, cols), dt)
        out.view(np.uint8).fill(0xA5)
        t.run(a, out)
        ok = same_bits(out, a)
        grid, block = t.config(rows, cols)
        fn = __import__("course_lib.gpu", fromlist=["prepare"]).prepare(t.function, grid, block, t.args(out, a))
        func, g, b, dev_args = fn[0], fn[1], fn[2], tuple(fn[3])
        add(label, lambda: func(g, b, dev_args), ok)
    for name, make in peers(dt, no_compile):
        try:
            f = make(a)
            ok = same_bits(cp.asarray(f()), a)
            add(name, f, ok)
        except Exception as exc:
            rows_out.append(dict(name=name, skipped=f"{type(exc).__name__}: {exc}"[:200]))
    return dict(dtype=dt.name, rows=rows, cols=cols, bytes=nbytes, results=rows_out)


def show(c):
    print(f"\n{c['dtype']} {c['rows']}x{c['cols']}  (us, median; /copy = memcpy us / kernel us per column)")
    cols = ["memset", "kflush", "spin", "primer", "rflush", "warm"]
    copy = next(r["us"] for r in c["results"] if r["name"] == "memcpy")
    print(f"  {'name':<26}" + "".join(f"{k:>9}" for k in cols) + "   " + "".join(f"{k + '/c':>10}" for k in cols))
    for r in c["results"]:
        if "skipped" in r:
            print(f"  {r['name']:<26}skipped: {r['skipped'][:80]}")
            continue
        print(f"  {r['name']:<26}" + "".join(f"{r['us'][k]:9.2f}" for k in cols) + "   "
              + "".join(f"{copy[k] / r['us'][k]:10.3f}" for k in cols) + ("" if r["ok"] else "  WRONG"))


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--size", type=parse_sizes, default=[(1000, 1030)])
    p.add_argument("--dtype", default="f32,f64,f16,u8")
    p.add_argument("--kernel", default="padded_32x8,swizzle,packed,warp,fast,sector")
    p.add_argument("--repeat", type=int, default=30)
    p.add_argument("--no-compile", action="store_true")
    args = p.parse_args(argv)
    if not nvrtc.gpu_available():
        print("no GPU: nothing to time")
        return 0
    h = Harness()
    cases = []
    for dname in args.dtype.split(","):
        for rows, cols in args.size:
            c = case(h, rows, cols, DTYPES[dname], parse_kernels(args.kernel), args.repeat, args.no_compile)
            show(c)
            cases.append(c)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "timing_probe.json").write_text(json.dumps(dict(device=nvrtc.device_info().name, cases=cases),
                                                           indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())

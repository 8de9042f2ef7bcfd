#!/usr/bin/env python
"""Why do misaligned shapes cost tiled transposes? One run, many knobs (issue 13).

    python benchmarks/misaligned_probe.py --out DIR            # timings (a few minutes on an H100)
    python benchmarks/misaligned_probe.py --list               # the variants, no GPU needed
    ncu --clock-control none --metrics ... python benchmarks/misaligned_probe.py --worker SUBSET

Every variant is the generic kernel of misaligned_probe.cu: a TR x TC tile, BX x BY threads,
MODE 0 transpose / 1 copy through the tile with a barrier / 2 plain copy, and the row pitches of
`in` and `out`: M (misaligned: the real matrix, pitch = its row length) or A (aligned: the same
logical matrix with every row padded to a multiple of 32 elements, so each row starts a 128-byte
line). Timed like benchmarks/transpose.py (CUDA events, inputs from DRAM, median) against a same-run
cudaMemcpy of the same logical bytes; every output checked element for element. A benchmark:
it asserts nothing about time.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

DT = {"f32": (np.float32, "float"), "f64": (np.float64, "double"), "f16": (np.uint16, "unsigned short"),
      "u8": (np.uint8, "unsigned char")}


def variants():
    """(label, dtype key, (TR, TC, BX, BY, PAD, MODE), pitches, shape)"""
    mis, al = (8191, 8193), (8192, 8192)
    out = []

    def add(dt, cfg, pitches="MM", shape=mis):
        tr, tc, bx, by, pad, mode = cfg
        name = {0: "tr", 1: "copy_sh", 2: "copy"}[mode]
        out.append((f"{dt} {name} {tr}x{tc}/{bx}x{by} {pitches} {shape[0]}x{shape[1]}", dt, cfg, pitches, shape))

    for dt in ("f32", "f64"):
        for mode in (2, 1, 0):
            for p in ("MM", "AA"):
                add(dt, (32, 32, 32, 8, 1, mode), p)
            add(dt, (32, 32, 32, 8, 1, mode), "MM", al)
        for p in ("MA", "AM"):
            add(dt, (32, 32, 32, 8, 1, 0), p)
        tiles = [(32, 64, 32, 8), (64, 32, 32, 8), (64, 64, 32, 8), (64, 64, 32, 16), (32, 128, 32, 8),
                 (128, 32, 32, 8), (64, 64, 64, 4), (32, 32, 32, 32)]
        if dt == "f64":
            tiles = [t for t in tiles if t[0] * (t[1] + 1) * 8 <= 48 * 1024]
        for t in tiles:
            add(dt, (*t, 1, 0), "MM")
            add(dt, (*t, 1, 0), "AA")
        for p in ("MA", "AM"):
            add(dt, (64, 64, 32, 8, 1, 0), p)
        add(dt, (64, 64, 32, 8, 1, 0), "MM", al)
    return out


def pitch(n, kind):
    return n if kind == "M" else -(-n // 32) * 32


def name_expr(ctype, cfg):
    return f"probe<{ctype}, {', '.join(map(str, cfg))}>"


def build(selected):
    import cupy as cp
    src = (ROOT / "benchmarks" / "misaligned_probe.cu").read_text()
    names = sorted({name_expr(DT[dt][1], cfg) for _, dt, cfg, _, _ in selected})
    mod = cp.RawModule(code=src, options=("-std=c++17",), name_expressions=names)
    return {n: mod.get_function(n) for n in names}


def prepare(v, seed=1):
    import cupy as cp
    label, dt, cfg, pitches, (rows, cols) = v
    npt = DT[dt][0]
    tr, tc, bx, by, pad, mode = cfg
    ip = pitch(cols, pitches[0])
    op = pitch(rows if mode == 0 else cols, pitches[1])
    rs = cp.random.RandomState(seed)
    a = rs.randint(1, 250, size=(rows, ip), dtype=np.int32).astype(npt) if npt != np.float32 and npt != np.float64 \
        else (rs.random_sample((rows, ip)) + 0.5).astype(npt)
    orow = cols if mode == 0 else rows
    out = cp.empty((orow, op), npt)
    grid = (-(-cols // tc), -(-rows // tr))
    args = (out, a, np.int32(rows), np.int32(cols), np.int64(ip), np.int64(op))
    return a, out, grid, (bx, by), args


def check(v, a, out):
    import cupy as cp
    _, _, cfg, _, (rows, cols) = v
    want = a[:, :cols] if cfg[5] else a[:, :cols].T
    got = out[:, :want.shape[1]]
    bits = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[a.dtype.itemsize]
    return bool(cp.array_equal(got.view(bits), cp.ascontiguousarray(want).view(bits)))


def time_all(selected, repeat):
    import cupy as cp
    from course_lib import gpu
    fns = build(selected)
    rows_out, copies = [], {}
    for v in selected:
        label, dt, cfg, pitches, (rows, cols) = v
        nbytes = rows * cols * np.dtype(DT[dt][0]).itemsize
        if (dt, rows, cols) not in copies:
            copies[(dt, rows, cols)] = gpu.copy_bandwidth(nbytes, repeat=repeat)
        fn = fns[name_expr(DT[dt][1], cfg)]
        a, out, grid, block, args = prepare(v)
        out.view(np.uint8).fill(0xA5)
        fn(grid, block, args)
        ok = check(v, a, out)
        t = gpu.time_cold(lambda x: lambda: fn(grid, block, (args[0], x) + tuple(args[2:])), args[1], repeat=repeat)
        bw = 2 * nbytes / t
        r = dict(label=label, dtype=dt, cfg=cfg, pitches=pitches, shape=[rows, cols], ms=t * 1e3, gbps=bw / 1e9,
                 frac_copy=bw / copies[(dt, rows, cols)], correct=ok)
        rows_out.append(r)
        print(f"{label:44s} {r['gbps']:7.0f} GB/s {r['frac_copy']:.3f} {'ok' if ok else 'WRONG'}", flush=True)
        del a, out
    return rows_out, {f"{k[0]} {k[1]}x{k[2]}": v / 1e9 for k, v in copies.items()}


def cublas_peer(selected, repeat):
    import cupy as cp
    from course_lib import gpu
    res = []
    for dt in sorted({v[1] for v in selected} & {"f32", "f64"}):
        for rows, cols in ((8191, 8193), (8192, 8192)):
            a = cp.random.random_sample((rows, cols)).astype(DT[dt][0]) + 0.5
            nbytes = a.nbytes
            t = gpu.time_cold(lambda x: lambda: cp.asfortranarray(x), a, repeat=repeat)
            res.append(dict(label=f"{dt} cublas {rows}x{cols}", gbps=2 * nbytes / t / 1e9))
            print(f"{res[-1]['label']:44s} {res[-1]['gbps']:7.0f} GB/s", flush=True)
    return res


def worker(subset):
    """Launch each selected variant once (for ncu), then cuBLAS geam on the misaligned shapes."""
    import cupy as cp
    selected = [v for v in variants() if any(s in v[0] for s in subset.split("|"))]
    fns = build(selected)
    for v in selected:
        a, out, grid, block, args = prepare(v)
        fns[name_expr(DT[v[1]][1], v[2])](grid, block, args)
        cp.cuda.runtime.deviceSynchronize()
        del a, out
    if "cublas" in subset:
        for dt in ("f32", "f64"):
            a = cp.random.random_sample((8191, 8193)).astype(DT[dt][0]) + 0.5
            cp.asfortranarray(a)
            cp.cuda.runtime.deviceSynchronize()


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path)
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--only", default="", help="'|'-separated substrings of labels to keep")
    ap.add_argument("--repeat", type=int, default=15)
    ap.add_argument("--worker", default=None)
    args = ap.parse_args(argv)
    selected = [v for v in variants() if not args.only or any(s in v[0] for s in args.only.split("|"))]
    if args.list:
        print("\n".join(v[0] for v in selected))
        return 0
    if args.worker is not None:
        worker(args.worker)
        return 0
    from course_lib import gpu
    if not gpu.available():
        print("no GPU: nothing to time (--list shows the variants)")
        return 0
    t0 = time.time()
    res, copies = time_all(selected, args.repeat)
    peers = cublas_peer(selected, args.repeat)
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        meta = dict(device=gpu.info().name, date=time.strftime("%Y-%m-%dT%H:%M:%S"),
                    seconds=round(time.time() - t0, 1), repeat=args.repeat, memcpy_gbps=copies)
        (args.out / "misaligned_probe.json").write_text(json.dumps(dict(meta=meta, results=res, peers=peers), indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())

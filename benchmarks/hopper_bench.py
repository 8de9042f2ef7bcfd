"""The new kernels of issue 19 on a GPU: bit-exact checks, then timings beside the course's best.

    python benchmarks/hopper_bench.py check              # every new kernel x dtype x shape, poisoned output
    python benchmarks/hopper_bench.py time OUT.json [--quick] [--tma | --band]
                                      # --tma: TMA kernels, aligned shapes; --band: band variants, 1000x1030 and 8191x8193
    python benchmarks/hopper_bench.py sanitize           # each new kernel once, 96x160 (under compute-sanitizer)

Timings use the course's timer (course_lib.gpu.time_callable: inputs rotated through 3 x L2 of
copies, so every launch reads DRAM) and give each kernel's effective bandwidth as a fraction of
a cudaMemcpy of the same bytes in the same run, like benchmarks/transpose.py.
"""
from __future__ import annotations

import json
import sys
import time

import numpy as np

import hopper_common as hc
from course_lib import gpu, transposes  # noqa: E402

DTYPES = (np.float32, np.float64, np.float16, np.uint8)
CHECK_SHAPES = [(1, 4097), (4097, 1), (100, 130), (96, 160), (208, 272), (1000, 1030), (1024, 2048), (2048, 1040)]
SHAPES = [(8192, 8192), (8192, 2048), (8191, 8193), (1000, 1030)]
TMA_SHAPES = [(8192, 8192), (8192, 2048), (2048, 8192), (4096, 4096), (1000, 1030), (16384, 16384)]
BITS = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def variants(dtype, which="all"):
    s = np.dtype(dtype).itemsize
    pipes = [("tma_pipe", dict(BOX_R=r, WARPS=w, STAGES=st, ORDER=o, BPS=b))
             for r, w, st, o, b in ((64, 4, 2, 0, 8), (64, 4, 3, 0, 8), (64, 4, 2, 1, 8), (64, 4, 4, 0, 8),
                                    (128, 8, 2, 0, 4), (128, 8, 2, 1, 4), (64, 4, 2, 0, 16), (128, 4, 2, 0, 4))]
    outs = [("tma_out", dict(WARPS=w, NB=nb)) for w, nb in ((2, 1), (4, 1), (4, 2), (8, 4))
            if 2 * nb * 128 * (128 // s) <= 48 * 1024]
    wides = [("tma_wide", dict(NB=2, ORDER=o)) for o in (0, 1)] + [("tma_wide", dict(BOX_R=128, WARPS=8, NB=2))]
    if which == "tma":
        return [("tma_tile", {}), ("tma_tile", dict(BOX_R=128)), ("tma_copy", {})] + pipes[:2] + outs + wides
    if which == "band":
        rs = {1: (8, 16), 2: (4, 8), 4: (2, 4), 8: (1, 2)}[s]
        return [("band", dict(R=r, THREADS=t)) for r in rs for t in (128, 256, 512)]
    out = [("tma_tile", dict(BOX_R=r, WARPS=w)) for r, w in ((64, 4), (128, 4), (128, 8), (256, 8))] + pipes + outs + wides
    out += [("tma_tile", dict(SW=0)), ("tma_copy", {}), ("tma_both", {})]
    out += [("async_tile", dict(STAGES=st, TILES=4)) for st in (1, 2, 3)]
    out += [("shuffle", {}), ("band", {})] + ([("ldsm", {})] if s == 2 else [])
    return out


COURSE = ["fast", "vec64", "padded_32x8", "padded_32x16", "vec_out", "sector", "swizzle"]


def random(rows, cols, dtype, cp, seed=0):
    rs = cp.random.RandomState(seed)
    if np.dtype(dtype).kind == "f":
        return (rs.random_sample((rows, cols), dtype=np.float32) + 0.5).astype(dtype)
    return rs.randint(1, 255, size=(rows, cols), dtype=np.int32).astype(dtype)


def prepare_all(which="all"):
    hc.prepare([(key, dt, params) for dt in DTYPES for key, params in variants(dt, which)])


def check():
    import cupy as cp
    prepare_all()
    bad, n = [], 0
    for dtype in DTYPES:
        for key, params in variants(dtype):
            run = hc.launcher(key, dtype, **params)
            for rows, cols in CHECK_SHAPES:
                if hc.applies(key, rows, cols, dtype):
                    continue
                a = random(rows, cols, dtype, cp, seed=rows + cols)
                out = cp.empty((rows, cols) if run.is_copy else (cols, rows), dtype)
                out.view(np.uint8).fill(0xA5)
                run(out, a)
                u = BITS[np.dtype(dtype).itemsize]
                want = a if run.is_copy else a.T
                ok = bool(cp.array_equal(out.view(u), cp.ascontiguousarray(want).view(u)))
                n += 1
                if not ok:
                    bad.append(f"{hc.label(key, params)} {np.dtype(dtype).name} {rows}x{cols}")
    print(f"check: {n - len(bad)} of {n} launches bit-exact" + (f"; WRONG: {bad}" if bad else ""))
    return not bad


def time_case(rows, cols, dtype, quick, which="all"):
    import cupy as cp
    dt = np.dtype(dtype)
    nbytes = rows * cols * dt.itemsize
    a = random(rows, cols, dt, cp, seed=rows * 31 + cols)
    copy_bw = gpu.copy_bandwidth(nbytes, repeat=10 if quick else 20)
    res = []
    copies = gpu.input_copies(a)
    for key, params in variants(dt, which):
        if hc.applies(key, rows, cols, dt):
            continue
        run = hc.launcher(key, dt, **params)
        out = cp.empty((rows, cols) if run.is_copy else (cols, rows), dt)
        calls = [(lambda x=x, m=run.maps_for(out, x): run(out, x, m)) for x in copies]
        t = gpu.time_callable(calls, repeat=10 if quick else 20)
        res.append(dict(name=hc.label(key, params), ratio=2 * nbytes / t / copy_bw, us=t * 1e6))
    extra = [("vec_out", dict(TILE=t, BLOCK_ROWS=b)) for t, b in ((32, 2), (32, 8), (64, 8), (64, 16))] \
        if (rows, cols) == (1000, 1030) and dt.itemsize <= 2 and which == "all" else []
    for key, params in [(k, {}) for k in COURSE] + extra:
        try:
            k = transposes.kernel(key, dt, **params)
        except ValueError:
            continue
        out = cp.empty(k.out_shape(rows, cols), dt)
        t = k.time(a, out, repeat=10 if quick else 20)
        name = key + "".join(f" {p}={v}" for p, v in params.items())
        res.append(dict(name=name, ratio=2 * nbytes / t / copy_bw, us=t * 1e6, course=not params))
    if (rows, cols) == (1000, 1030) and which in ("all", "band"):
        import transpose as tr
        for name, make in tr.peers(dt, False):
            try:
                make(a)()
                t = gpu.time_cold(make, a, repeat=20)
                res.append(dict(name=name, ratio=2 * nbytes / t / copy_bw, us=t * 1e6, peer=True))
            except Exception as exc:              # a peer that cannot run here
                res.append(dict(name=name, skipped=str(exc)[:100]))
    del copies, a
    cp.get_default_memory_pool().free_all_blocks()
    return dict(dtype=dt.name, rows=rows, cols=cols, copy_gbps=copy_bw / 1e9, results=res)


def main():
    what = sys.argv[1]
    if what == "check":
        sys.exit(0 if check() else 1)
    if what == "sanitize":
        import cupy as cp
        rows, cols = (96, 160)
        todo = [(k, dt, {}) for k in hc.NEW for dt in (np.float32, np.float16) if not hc.applies(k, rows, cols, dt)]
        hc.prepare(todo)
        for key, dtype, _ in todo:
            a = random(rows, cols, dtype, cp)
            run = hc.launcher(key, dtype)
            out = cp.zeros((rows, cols) if run.is_copy else (cols, rows), dtype)
            run(out, a)
            cp.cuda.runtime.deviceSynchronize()
            print(key, np.dtype(dtype).name, "ran", flush=True)
        return
    out_path, quick = sys.argv[2], "--quick" in sys.argv
    which = "tma" if "--tma" in sys.argv else "band" if "--band" in sys.argv else "all"
    shapes = TMA_SHAPES if which == "tma" else [(1000, 1030), (8191, 8193)] if which == "band" else SHAPES
    prepare_all(which)
    cases, t0 = [], time.time()
    for rows, cols in shapes:
        for dtype in DTYPES:
            if which == "tma" and not hc.tma_ok(rows, cols, np.dtype(dtype).itemsize):
                continue
            case = time_case(rows, cols, dtype, quick, which)
            cases.append(case)
            best = max((r for r in case["results"] if r.get("course")), key=lambda r: r["ratio"])
            new = sorted((r for r in case["results"] if not r.get("course") and "ratio" in r and not r.get("peer")),
                         key=lambda r: -r["ratio"])[:3]
            peers = [f"{r['name']} {r['ratio']:.3f}" for r in case["results"] if r.get("peer") and "ratio" in r]
            print(f"{case['dtype']:8} {rows}x{cols}: course best {best['name']} {best['ratio']:.3f}; new "
                  + ", ".join(f"{r['name']} {r['ratio']:.3f}" for r in new) + (f"; peers {peers}" if peers else ""),
                  flush=True)
            open(out_path, "w").write(json.dumps(cases, indent=1))
    print(f"wrote {out_path} in {time.time() - t0:.0f} s")


if __name__ == "__main__":
    main()

#!/usr/bin/env python
"""Time every course transpose and the library transposes a student would otherwise call.

    python benchmarks/transpose.py --out benchmarks/results/transpose_h100     # all (~6 min, H100)
    python benchmarks/transpose.py --quick --out /tmp/bench                    # 2 sizes, 3 kernels
    python benchmarks/transpose.py --dtype f32,u8 --size 8192,8191x8193 --kernel fast,vec64 --out DIR
    python benchmarks/transpose.py --kernel "fast,fast[GROUP=8],fast[TR=32;TC=128;CACHE=1]" --out DIR
                                   (a course kernel with parameters other than its defaults)
    python benchmarks/transpose.py --variant sb=fast@/tmp/fast_sector.cu \
                                   --kernel fast,sb --out DIR
                                   (an A/B: a kernel's template compiled from another file)

For each dtype and size the reference is a device-to-device copy (cudaMemcpy) of the same bytes,
measured in the same run; every result is reported as effective bandwidth (2 * bytes / median
time) and as a fraction of that copy. Every timed call reads its input from DRAM: calls rotate
through copies of the input, 3 x L2 in all (course_lib.gpu.cold_copies; a cache flush was not
enough, see course_lib/gpu.py). Peers, when importable:
CuPy ``ascontiguousarray(a.T)``, cuBLAS geam through ``cupy.asfortranarray(a)`` (a C-contiguous
2-D array made Fortran-ordered is a real transposed copy; CuPy uses geam for f32/f64 only),
PyTorch eager ``x.t().contiguous()`` and ``torch.compile`` of the same function.

Every output is checked bit for bit against the input (random data; course kernels write into a
poisoned buffer). Writes ``transpose.json`` and ``transpose.html`` (plotly, plotly.js from its
CDN) into --out. Without a GPU it says so and exits 0. A benchmark, not a test: nothing here
asserts a time.
"""
from __future__ import annotations

import argparse
import datetime
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from course_lib import gpu  # noqa: E402
from course_lib import transposes
from course_lib.transposes import verify  # noqa: E402
from library_peers import peers  # noqa: E402  (benchmarks/library_peers.py)

DTYPES = {"f32": np.float32, "f64": np.float64, "f16": np.float16, "u8": np.uint8}
BITS = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
SIZES = [(4096, 4096), (8192, 8192), (16384, 16384), (8192, 2048), (2048, 8192), (8191, 8193), (1000, 1030)]
QUICK = dict(sizes=[(4096, 4096), (8191, 8193)], kernels=["padded_32x8", "vec64", "fast"], repeat=5)


def parse_kernels(text):
    """'fast,fast[GROUP=8;TR=32]' -> [(label, key, params)]"""
    out = []
    for part in (p.strip() for p in text.split(",")):
        key, _, rest = part.partition("[")
        params = {}
        for item in filter(None, rest.rstrip("]").split(";")):
            name, _, value = item.partition("=")
            params[name.strip()] = int(value)
        out.append((part, key.strip(), params))
    return out


def register_variant(text):
    """'NAME=KEY@FILE': course kernel KEY's spec (template, tile, block) compiled from FILE, as NAME
    (in transposes.DEMOS). False when KEY or FILE does not exist."""
    import dataclasses
    name, _, rest = text.partition("=")
    key, _, file = rest.partition("@")
    if not (name and key in transposes.SPECS and Path(file).exists()):
        return False
    transposes.register(dataclasses.replace(transposes.SPECS[key], key=name, file=str(Path(file).resolve())),
                        transposes.DEMOS)
    return True


def parse_sizes(text):
    sizes = []
    for part in text.split(","):
        dims = [int(x) for x in part.lower().replace("*", "x").split("x")]
        sizes.append((dims[0], dims[0]) if len(dims) == 1 else (dims[0], dims[1]))
    return sizes


# ----------------------------------------------------------------------------- one size
def random_device(rows, cols, dtype, seed):
    """Random, never-zero data made on the device (a 2 GiB host array would dominate the run)."""
    import cupy as cp
    rs = cp.random.RandomState(seed)
    if np.dtype(dtype).kind == "f":
        return (rs.random_sample((rows, cols), dtype=np.float32) + 0.5).astype(dtype)
    a = rs.randint(1, 256, size=(rows, cols), dtype=np.int32).astype(dtype)
    a[a == 0xA5] = 1                                    # never the poison byte
    return a


def same_bits(got, a):
    import cupy as cp
    u = BITS[a.dtype.itemsize]
    return got.shape == (a.shape[1], a.shape[0]) and bool(cp.array_equal(got.view(u), a.view(u).T))


def bench_size(rows, cols, dtype, keys, args):
    import cupy as cp
    dt = np.dtype(dtype)
    nbytes = rows * cols * dt.itemsize
    a = random_device(rows, cols, dt, seed=rows * 31 + cols)
    copy_bw = gpu.copy_bandwidth(nbytes, repeat=args.repeat)
    results = [dict(name="memcpy", kind="copy", ms=2 * nbytes / copy_bw * 1e3, gbps=copy_bw / 1e9, ratio=1.0,
                    correct=True, note="cudaMemcpy device to device")]

    def record(name, kind, seconds, ok, note=""):
        bw = 2 * nbytes / seconds
        results.append(dict(name=name, kind=kind, ms=seconds * 1e3, gbps=bw / 1e9, ratio=bw / copy_bw,
                            correct=ok, note=note))

    for label, key, params in keys:
        try:
            t = transposes.kernel(key, dt, **params)
        except ValueError as exc:                       # this kernel does not move this dtype
            results.append(dict(name=label, kind="course", skipped=str(exc)))
            continue
        out = cp.empty(t.out_shape(rows, cols), dt)
        try:
            seconds = t.time(a, out, repeat=args.repeat)
        except ValueError as exc:                       # this kernel does not move this shape (TMA pitches)
            results.append(dict(name=label, kind="course", skipped=str(exc).splitlines()[0]))
            continue
        if dt.kind == "f":
            out.fill(np.nan)                             # poison: no correct kernel writes it
        else:
            out.view(np.uint8).fill(0xA5)
        t.run(a, out)
        ok = bool(cp.array_equal(out.view(BITS[dt.itemsize]), a.view(BITS[dt.itemsize]))) if t.is_copy \
            else same_bits(out, a)
        note = "" if ok else str(verify.compare(cp.asnumpy(out), t.expected(cp.asnumpy(a))))
        record(label, "copy-kernel" if t.is_copy else "course", seconds, ok,
               note or (f"{t.name}" if params else ""))
        del out
    for name, make in peers(dt, args.no_compile) if getattr(args, "peers", True) else []:
        try:
            fn = make(a)
            start = time.perf_counter()
            got = cp.asarray(fn())                       # first call: compiles (torch.compile)
            first = time.perf_counter() - start
            ok = same_bits(got, a)
            del got
            del fn
            seconds = gpu.time_cold(make, a, repeat=args.repeat)
            record(name, "peer", seconds, ok, f"first call {first:.1f} s" if first > 1 else "")
        except Exception as exc:                         # a peer that cannot run this case
            results.append(dict(name=name, kind="peer", skipped=f"{type(exc).__name__}: {exc}"[:200]))
    del a
    cp.get_default_memory_pool().free_all_blocks()
    if "torch" in sys.modules:
        sys.modules["torch"].cuda.empty_cache()
    return dict(dtype=dt.name, rows=rows, cols=cols, copy_gbps=copy_bw / 1e9, results=results)


# ----------------------------------------------------------------------------- output
def print_case(case, out=sys.stdout):
    print(f"\n{case['dtype']} {case['rows']}x{case['cols']}   (memcpy {case['copy_gbps']:.0f} GB/s)", file=out)
    n = max(16, *(len(r["name"]) + 2 for r in case["results"]))
    print(f"  {'name':<{n}}{'kind':<12}{'ms':>9}{'GB/s':>8}{'/copy':>8}  check", file=out)
    for r in case["results"]:
        if "skipped" in r:
            print(f"  {r['name']:<{n}}{r['kind']:<12}  skipped: {r['skipped']}", file=out)
            continue
        check = "ok" if r["correct"] else "WRONG " + r["note"]
        extra = f"  ({r['note']})" if r["correct"] and r["note"] and r["kind"] == "peer" else ""
        print(f"  {r['name']:<{n}}{r['kind']:<12}{r['ms']:9.3f}{r['gbps']:8.0f}{r['ratio']:8.3f}  {check}{extra}",
              file=out)


def summary(cases, out=sys.stdout):
    """Best course kernel per case against each peer: what issue 5's table asks for."""
    print("\nBest course transpose vs peers (fraction of same-run memcpy)", file=out)
    names = sorted({r["name"] for c in cases for r in c["results"] if r["kind"] == "peer" and "skipped" not in r})
    w = max(14, *(len(r["name"]) + 2 for c in cases for r in c["results"]))
    print(f"  {'dtype':<8}{'size':<12}{'best course':<{w}}{'/copy':>7}" + "".join(f"{n:>15}" for n in names), file=out)
    for c in cases:
        ok = [r for r in c["results"] if r["kind"] == "course" and "skipped" not in r and r["correct"]]
        if not ok:
            continue
        best = max(ok, key=lambda r: r["ratio"])
        peer = {r["name"]: r for r in c["results"] if r["kind"] == "peer" and "skipped" not in r}
        cells = "".join(f"{peer[n]['ratio']:15.3f}" if n in peer else f"{'-':>15}" for n in names)
        size = f"{c['rows']}x{c['cols']}"
        print(f"  {c['dtype']:<8}{size:<12}{best['name']:<{w}}{best['ratio']:7.3f}{cells}", file=out)
    tma_summary(cases, out)


def tma_summary(cases, out=sys.stdout):
    """Issue 19's goal: the best TMA kernel against the best of the course's other kernels."""
    lines = []
    for c in cases:
        ok = [r for r in c["results"] if r["kind"] == "course" and "skipped" not in r and r["correct"]]
        tma = [r for r in ok if r["name"].startswith("tma") and r["name"] != "tma_copy"]
        rest = [r for r in ok if not r["name"].startswith("tma")]
        if tma and rest:
            a, b = max(tma, key=lambda r: r["ratio"]), max(rest, key=lambda r: r["ratio"])
            size = f"{c['rows']}x{c['cols']}"
            lines.append(f"  {c['dtype']:<8}{size:<12}{a['name']:<14}{a['ratio']:7.3f}   {b['name']:<14}{b['ratio']:7.3f}"
                         f"   {'at or above' if a['ratio'] >= b['ratio'] else 'behind'}")
    if lines:
        print("\nBest TMA transpose vs the best other course transpose (fraction of same-run memcpy)", file=out)
        print("\n".join(lines), file=out)


def chart(cases, path):
    try:
        import plotly.graph_objects as go
        from plotly.subplots import make_subplots
    except ImportError:
        print("plotly is not installed: no chart written")
        return None
    dtypes = list(dict.fromkeys(c["dtype"] for c in cases))
    fig = make_subplots(rows=len(dtypes), cols=1, subplot_titles=dtypes, shared_xaxes=False)
    seen = set()
    for i, dt in enumerate(dtypes, 1):
        mine = [c for c in cases if c["dtype"] == dt]
        names = list(dict.fromkeys(r["name"] for c in mine for r in c["results"] if "skipped" not in r))
        for name in names:
            xs, ys, text = [], [], []
            for c in mine:
                r = next((r for r in c["results"] if r["name"] == name and "skipped" not in r), None)
                if r:
                    xs.append(f"{c['rows']}x{c['cols']}")
                    ys.append(r["ratio"])
                    text.append(f"{r['gbps']:.0f} GB/s" + ("" if r["correct"] else " WRONG"))
            fig.add_trace(go.Bar(name=name, x=xs, y=ys, hovertext=text, legendgroup=name,
                                 showlegend=name not in seen), row=i, col=1)
            seen.add(name)
        fig.update_yaxes(title_text="fraction of memcpy", row=i, col=1)
    fig.update_layout(barmode="group", height=320 * len(dtypes), title="Transpose bandwidth vs same-run memcpy")
    fig.write_html(str(path), include_plotlyjs="cdn")
    return path


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", type=Path, default=Path("benchmarks/results/transpose"), help="directory for JSON + HTML")
    p.add_argument("--dtype", default="all", help="f32,f64,f16,u8 (comma list) or all")
    p.add_argument("--size", type=parse_sizes, default=None, help="e.g. 8192,8192x2048,8191x8193")
    p.add_argument("--kernel", default=None, help=f"course kernels, comma list (default: all benchable of "
                   f"{', '.join(transposes.SPECS)})")
    p.add_argument("--repeat", type=int, default=None, help="timed launches per measurement (median)")
    p.add_argument("--quick", action="store_true", help="2 sizes, 3 kernels, 5 repeats")
    p.add_argument("--no-compile", action="store_true", help="skip torch.compile (its compiles take a while)")
    p.add_argument("--variant", action="append", default=[], metavar="NAME=KEY@FILE",
                   help="register NAME: course kernel KEY's template compiled from FILE (an A/B of a change)")
    args = p.parse_args(argv)
    for v in args.variant:
        if not register_variant(v):
            p.error(f"--variant {v!r}: want NAME=KEY@FILE with a course kernel KEY and an existing FILE")
    dtypes = list(DTYPES) if args.dtype == "all" else [d.strip() for d in args.dtype.split(",")]
    if any(d not in DTYPES for d in dtypes):
        p.error(f"--dtype takes {', '.join(DTYPES)} or all")
    benchable = [k for k, s in transposes.SPECS.items() if s.bench]
    keys = parse_kernels(args.kernel) if args.kernel else \
        [(k, k, {}) for k in (QUICK["kernels"] if args.quick else benchable)]
    for label, k, params in keys:
        try:
            transposes.kernel(k, **params)
        except (KeyError, TypeError) as exc:
            p.error(f"{label}: " + str(exc).strip("'\""))
        except ValueError:
            pass
    sizes = args.size or (QUICK["sizes"] if args.quick else SIZES)
    args.repeat = args.repeat or (QUICK["repeat"] if args.quick else 15)
    if not gpu.available():
        print("benchmarks/transpose.py: no NVIDIA GPU is available here (or COURSE_LIB_BACKEND=sim), so there "
              "is nothing to time. Run it on a GPU machine; for exact memory metrics without a GPU use "
              "`python -m course_lib bench`.")
        return 0
    info = gpu.info()
    print(f"{info.name} (sm_{info.arch}), datasheet peak {info.peak_bandwidth / 1e9:.0f} GB/s; "
          f"{len(keys)} course kernels, {len(dtypes)} dtypes, {len(sizes)} sizes, median of {args.repeat}")
    start, cases = time.perf_counter(), []
    for d in dtypes:
        for rows, cols in sizes:
            case = bench_size(rows, cols, DTYPES[d], keys, args)
            cases.append(case)
            print_case(case)
            sys.stdout.flush()
    summary(cases)
    args.out.mkdir(parents=True, exist_ok=True)
    meta = dict(device=info.name, arch=info.arch, peak_gbps=info.peak_bandwidth / 1e9,
                date=datetime.datetime.now().isoformat(timespec="seconds"), repeat=args.repeat,
                seconds=round(time.perf_counter() - start, 1), versions=_versions())
    (args.out / "transpose.json").write_text(json.dumps(dict(meta=meta, cases=cases), indent=1))
    html = chart(cases, args.out / "transpose.html")
    print(f"\nwrote {args.out / 'transpose.json'}" + (f" and {html}" if html else "") +
          f" in {meta['seconds']:.0f} s")
    return 0


def _versions():
    v = {"numpy": np.__version__}
    for mod in ("cupy", "torch", "plotly"):
        try:
            v[mod] = __import__(mod).__version__
        except ImportError:
            pass
    return v


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python
"""The same benchmark several times over: median and spread of every result the notebooks compare.

    python benchmarks/rounds.py prose --out DIR      # the cases the notebooks' prose rests on (~4 min, H100)
    python benchmarks/rounds.py blocks --out DIR     # CUDA_Freshman's block shapes and notebook 06's
                                                     # BLOCK_ROWS sweep, 8192^2 and 4096^2 floats (~1 min)
    python benchmarks/rounds.py hopper --out DIR     # notebook 12: its kernels beside the leaders, every case
    python benchmarks/rounds.py prose --dtype f64 --size 8192 --rounds 5 --out DIR     # a subset
    python benchmarks/rounds.py small --out DIR      # 1000 x 1030 bytes and halves: tiles and blocks (issue 28)
    python benchmarks/rounds.py small --kernel vec_out,fast --out DIR    # the preset's cases, these kernels
    python benchmarks/rounds.py --list prose         # the cases of a preset, anywhere

A sentence that says one kernel is faster than another, first, or a new leader needs more than
one measurement: kernels a percent or two apart trade places between runs. This script runs
benchmarks/transpose.py's measurement of a case (``bench_size``: a same-run ``cudaMemcpy`` of the
same bytes, then each kernel and library, every output checked bit for bit) ROUNDS times, the
cases in turn within each round (so a slow spell of the machine shows in every case, not in one),
and keeps every round's value. The JSON it writes (DIR/rounds_<preset>.json, rewritten after
every round, so a run cut short keeps the rounds it finished) holds for each case and contestant
the lists of fractions of that round's memcpy, GB/s and ms, and their median, min and max.

Presets. ``prose``: at 8192 x 8192 every course kernel and library for each dtype (notebooks
03-09 quote them); at the other sizes of benchmarks/transpose.py the kernels the notebooks and
the capstone table compare (``CORE``) and the libraries. ``blocks``: ``rect`` (CUDA_Freshman's
remapped 32 x 16 block) and ``unrolled`` over the tutorial's block shapes and paddings, and the
padded tile over every ``BLOCK_ROWS`` (notebook 06's explorer), without libraries. ``hopper``: every
dtype and size, ``CORE`` and notebook 12's kernels (TMA, cp.async at three pipeline depths, shuffles,
ldmatrix, band; a few TMA variants) with the libraries: notebook 12's figures and the 28-case tally.

Without a GPU it says so and exits 0. Nothing here asserts a time.
"""
from __future__ import annotations

import argparse
import datetime
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import transpose as tr  # noqa: E402  (benchmarks/transpose.py)
from course_lib import gpu, transposes  # noqa: E402

CORE = ["copy", "copy_shared", "padded_32x8", "padded_32x16", "swizzle", "packed", "vec64", "fast", "warp", "pieces",
        "sector", "vec_out"]
MISALIGNED_ONLY = ["warp_pipe"]            # notebook 10's refuted prefetch, on 8191 x 8193
BLOCKS = [(32, 32), (32, 16), (32, 8), (16, 16), (16, 8), (8, 8)]


def prose_cases(dtypes, sizes):
    """[(dtype key, (rows, cols), [kernel labels], libraries?)] of the `prose` preset."""
    every = [k for k, s in transposes.SPECS.items() if s.bench]
    cases = []
    for d in dtypes:
        for size in sizes:
            keys = every if size == (8192, 8192) else CORE + (MISALIGNED_ONLY if size == (8191, 8193) else [])
            cases.append((d, size, [k for k in keys if _moves(k, d)], True))
    return cases


def block_labels():
    """Kernel labels of the `blocks` preset: rect and unrolled over BLOCKS, the padded tile over BLOCK_ROWS."""
    labels = [f"rect[BX={bx};BY={by};PAD={pad}]" for bx, by in BLOCKS for pad in (0, 1, 2)]
    labels += [f"unrolled[BX={bx};BY={by};UNROLL=2;PAD=2]" for bx, by in BLOCKS]
    labels += [f"tile[TILE=32;BLOCK_ROWS={r};PAD=1]" for r in (1, 2, 4, 8, 16, 32)]
    labels += [f"tile[TILE=16;BLOCK_ROWS={r};PAD=1]" for r in (1, 2, 4, 8, 16)]
    return ["copy"] + labels


def block_cases(dtypes, sizes):
    return [(d, size, block_labels(), False) for d in dtypes for size in sizes]


# notebook 12 (issue 19): its kernels, the pipeline depths of its cp.async tile, and a few TMA variants (the
# attempt at "a TMA kernel at or above the course's best"), beside every kernel that leads a case somewhere
HOPPER = ["tma", "tma[BOX_R=128]", "tma_out", "tma_out[WARPS=8;NB=4]", "tma_pipe", "tma_pipe[STAGES=4;ORDER=1]",
          "tma_copy", "async[STAGES=1]", "async", "async[STAGES=3]", "shuffle", "ldsm", "band"]


def hopper_cases(dtypes, sizes):
    """[(dtype key, (rows, cols), labels, libraries?)] of the `hopper` preset: every size and dtype, the
    course's leading kernels (CORE) and notebook 12's, with the libraries (the 28-case tally)."""
    return [(d, size, [lab for lab in CORE + HOPPER if _moves(tr.parse_kernels(lab)[0][1], d)], True)
            for d in dtypes for size in sizes]


# issue 28: the small byte and half matrices where torch.compile led or drew (1000 x 1030): the shape's
# kernels over tiles, block rows and paddings, and fast.cu with tiles small enough to fill 132 SMs
SMALL = ["copy", "copy_shared", "vec_out", "packed", "padded_32x8", "sector"]
SMALL += [f"vec_out[TILE={t};BLOCK_ROWS={r};PAD={p}]" for t, rows in ((32, (1, 2)), (64, (1, 2, 4, 8)), (128, (2, 4, 8)))
          for r in rows for p in (2, 4, 8)]
SMALL += [f"fast[TR={tr};TC={tc};THREADS={n}]" for tr, tc in ((32, 64), (64, 64), (32, 128), (64, 128))
          for n in (64, 128, 256)]
# an A/B candidate without shared memory (benchmarks/variants/vec_reg.cu: 8 x 2 pieces moved in registers)
REG = "reg=vec_out@" + str(Path(__file__).resolve().parent / "variants" / "vec_reg.cu")
SMALL += [f"reg[TILE={t};BLOCK_ROWS={r};PAD={g}]" for t, r in ((32, 2), (64, 4)) for g in (1, 2, 4, 8) if g <= t // 8]
SMALL += [f"reg[TILE={t};BLOCK_ROWS={r};PAD={16 + g}]" for t, r in ((32, 4), (64, 8)) for g in (1, 2, 4)]


def small_cases(dtypes, sizes):
    tr.register_variant(REG)
    return [(d, size, SMALL, True) for d in dtypes for size in sizes]


PRESETS = {"prose": (prose_cases, list(tr.DTYPES), tr.SIZES),
           "small": (small_cases, ["u8", "f16"], [(1000, 1030)]),
           "blocks": (block_cases, ["f32"], [(8192, 8192), (4096, 4096)]),
           "hopper": (hopper_cases, list(tr.DTYPES), tr.SIZES)}


def _moves(key, dtype_key):
    """Does course kernel `key` move elements of this dtype (its spec's element sizes)?"""
    spec = transposes.SPECS.get(key) or transposes.DEMOS[key]
    return np.dtype(tr.DTYPES[dtype_key]).itemsize in spec.itemsizes


def summarize(values):
    """median, min, max (and the list) of one contestant's values over the rounds."""
    return dict(values=values, median=statistics.median(values), min=min(values), max=max(values))


def merge(rounds):
    """One case's bench_size results from several rounds -> one result per contestant, with lists."""
    first = rounds[0]
    out = dict(dtype=first["dtype"], rows=first["rows"], cols=first["cols"],
               copy_gbps=summarize([r["copy_gbps"] for r in rounds]), results=[])
    for res in first["results"]:
        same = [next(x for x in r["results"] if x["name"] == res["name"]) for r in rounds]
        if any("skipped" in x for x in same):
            out["results"].append(dict(name=res["name"], kind=res["kind"],
                                       skipped=next(x["skipped"] for x in same if "skipped" in x)))
            continue
        out["results"].append(dict(name=res["name"], kind=res["kind"], correct=all(x["correct"] for x in same),
                                   note=next((x["note"] for x in same if x["note"]), ""),
                                   **{k: summarize([x[k] for x in same]) for k in ("ratio", "gbps", "ms")}))
    return out


def run(cases, rounds, repeat, out_path, meta, budget=None, log=sys.stdout):
    """ROUNDS passes over `cases`; rewrites `out_path` after each round. Stops early (and says so)
    when another round would not fit in `budget` seconds."""
    per_case = [[] for _ in cases]
    start = time.perf_counter()
    for rnd in range(rounds):
        t0 = time.perf_counter()
        for i, (d, (rows, cols), labels, libs) in enumerate(cases):
            args = argparse.Namespace(repeat=repeat, no_compile=False, peers=libs)
            per_case[i].append(tr.bench_size(rows, cols, tr.DTYPES[d], tr.parse_kernels(",".join(labels)), args))
        took = time.perf_counter() - t0
        meta.update(rounds=rnd + 1, seconds=round(time.perf_counter() - start, 1))
        out_path.write_text(json.dumps(dict(meta=meta, cases=[merge(r) for r in per_case]), indent=1))
        print(f"round {rnd + 1} of {rounds}: {took:.0f} s", file=log, flush=True)
        if budget and rnd + 1 < rounds and time.perf_counter() - start + took > budget:
            print(f"stopping after {rnd + 1} rounds: another would pass the {budget:.0f} s budget", file=log)
            break
    return per_case


def print_summary(path, log=sys.stdout):
    data = json.loads(Path(path).read_text())
    for c in data["cases"]:
        print(f"\n{c['dtype']} {c['rows']}x{c['cols']}  memcpy {c['copy_gbps']['median']:.0f} GB/s "
              f"({c['copy_gbps']['min']:.0f}-{c['copy_gbps']['max']:.0f}), {data['meta']['rounds']} rounds", file=log)
        for r in c["results"]:
            if "skipped" in r:
                continue
            q = r["ratio"]
            flag = "" if r["correct"] else "  WRONG"
            print(f"  {r['name']:<36}{q['median']:7.3f}  [{q['min']:.3f}-{q['max']:.3f}]{flag}", file=log)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("preset", choices=sorted(PRESETS))
    p.add_argument("--out", type=Path, default=Path("/tmp/rounds"), help="directory for rounds_<preset>.json")
    p.add_argument("--rounds", type=int, default=5, help="passes over every case (median and spread of these)")
    p.add_argument("--repeat", type=int, default=10, help="timed launches per measurement within a round (median)")
    p.add_argument("--dtype", default=None, help="f32,f64,f16,u8: only these (default: the preset's)")
    p.add_argument("--size", type=tr.parse_sizes, default=None, help="only these sizes, e.g. 8192,8191x8193")
    p.add_argument("--budget", type=float, default=None, help="seconds: start no round that would end after it")
    p.add_argument("--kernel", default=None, help="these kernel labels instead of the preset's, e.g. "
                   "'vec_out,vec_out[TILE=64;BLOCK_ROWS=4;PAD=4]' (the preset's libraries stay)")
    p.add_argument("--list", action="store_true", help="print the cases and exit")
    args = p.parse_args(argv)
    make, dtypes, sizes = PRESETS[args.preset]
    dtypes = args.dtype.split(",") if args.dtype else dtypes
    if any(d not in tr.DTYPES for d in dtypes):
        p.error(f"--dtype takes {', '.join(tr.DTYPES)}")
    if args.rounds < 1:
        p.error("--rounds must be at least 1")
    cases = make(dtypes, args.size or sizes)
    if args.kernel:
        cases = [(d, size, [lab for lab in args.kernel.split(",") if _moves(tr.parse_kernels(lab)[0][1], d)], libs)
                 for d, size, _, libs in cases]
    if args.list:
        for d, (rows, cols), labels, libs in cases:
            print(f"{d} {rows}x{cols}: {', '.join(labels)}" + (" + libraries" if libs else ""))
        return 0
    if not gpu.available():
        print("benchmarks/rounds.py: no NVIDIA GPU is available here (or COURSE_LIB_BACKEND=sim), so there is "
              "nothing to time. Run it on a GPU machine (`--list` shows the cases).")
        return 0
    info = gpu.info()
    args.out.mkdir(parents=True, exist_ok=True)
    out_path = args.out / f"rounds_{args.preset}.json"
    meta = dict(device=info.name, arch=info.arch, sm_count=info.sm_count, peak_gbps=info.peak_bandwidth / 1e9,
                date=datetime.datetime.now().isoformat(timespec="seconds"), preset=args.preset,
                repeat=args.repeat, rounds_asked=args.rounds, versions=tr._versions(),
                command="python benchmarks/rounds.py " + " ".join(argv if argv is not None else sys.argv[1:]))
    print(f"{info.name}: {len(cases)} cases, {args.rounds} rounds, median of {args.repeat} per round")
    run(cases, args.rounds, args.repeat, out_path, meta, budget=args.budget)
    print_summary(out_path)
    print(f"\nwrote {out_path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python
"""Two mechanics the notebooks word as hypotheses until a GPU run decides: block order and the read-only path.

    python benchmarks/mechanics.py --out DIR                    # both studies, 5 rounds (about a minute on an H100)
    python benchmarks/mechanics.py order --size 2048,8192 --rounds 3 --out DIR
    python benchmarks/mechanics.py --list                       # the cases, anywhere
    python benchmarks/mechanics.py --check                      # every kernel simulated on awkward shapes (CPU)

``order`` (notebook 05, partition camping): the padded 32x32 tile with 32x8 threads with its blocks
taken row-major (as every course kernel), column-major and in the diagonal order of Ruetsch and
Micikevicius's transpose paper (benchmarks/lesson_kernels/mechanics.cu says how), on float squares
whose rows are a multiple of 2 KiB (8 partitions x 256 bytes: the sizes the paper saw camp on its
GPU), a square that is not, a thin rectangle and the misaligned 8191x8193. If partition camping
still mattered, row-major would trail diagonal on the power-of-two squares and not elsewhere.

``readonly`` (notebook 03, the read-only path): naive_col, whose column reads the L1 absorbs, with
``const float* __restrict__ in`` (LDG.E.CONSTANT), plain pointers (LDG.E) and ``__ldg`` (LDG.E.CONSTANT).

Each round times a cudaMemcpy of the same bytes (course_lib.gpu.copy_bandwidth) and then every variant
(course_lib.gpu.time_launch: the median of --repeat launches, each reading a fresh copy of its input
from DRAM); the cases take turns within a round, so a slow spell shows in every case. The first round
checks every element of every output. DIR/mechanics.json holds, per case, each variant's fractions of
the round's memcpy and GB/s, with median, min and max; the run's README says which differences are
beyond the spread. Without a GPU it says so and exits 0. Nothing here asserts a time.
"""
from __future__ import annotations

import argparse
import datetime
import json
import statistics
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
import course_lib as cl  # noqa: E402
from course_lib import gpu  # noqa: E402

SOURCE = HERE / "lesson_kernels" / "mechanics.cu"
STUDIES = {
    "order": ({"row-major": "tile_order<0>", "column-major": "tile_order<1>", "diagonal": "tile_order<2>"},
              [(2048, 2048), (4096, 4096), (8192, 8192), (6016, 6016), (8192, 2048), (8191, 8193)]),
    "readonly": ({"__restrict__ (LDG.E.CONSTANT)": "col_restrict", "plain pointers (LDG.E)": "col_plain",
                  "__ldg (LDG.E.CONSTANT)": "col_ldg"},
                 [(8192, 8192), (4096, 4096), (8191, 8193)]),
}
CHECK_SHAPES = [(100, 70), (64, 96), (33, 257), (1, 300), (300, 1)]


def functions() -> dict:
    """{kernel name: course_lib Function} of mechanics.cu (the simulator and the GPU launch the same ones)."""
    names = [n for variants, _ in STUDIES.values() for n in variants.values()]
    module = cl.RawModule(path=str(SOURCE), name_expressions=[n for n in names if "<" in n])
    return {n: module.get_function(n) for n in names}


def launch(name: str, rows: int, cols: int) -> tuple:
    """(grid, block): the tiles cover in by 32x32 (x along its columns); naive_col's grid x runs over its rows."""
    if name.startswith("tile_order"):
        return (-(-cols // 32), -(-rows // 32)), (32, 8)
    return (-(-rows // 32), -(-cols // 8)), (32, 8)


def check() -> list[str]:
    """Every kernel simulated on awkward shapes, every element compared: [] when all are right."""
    problems = []
    for name, fn in functions().items():
        for rows, cols in CHECK_SHAPES:
            a = cl.transposes.random_matrix(rows, cols, np.float32)
            out = cl.transposes.poisoned((cols, rows), np.float32)
            grid, block = launch(name, rows, cols)
            fn.simulate(grid, block, (out, a, np.int32(rows), np.int32(cols)), progress=False)
            if not np.array_equal(out, a.T):
                problems.append(f"{name} on {rows}x{cols}: {int((out != a.T).sum())} elements wrong")
    return problems


def _summary(values) -> dict:
    return dict(values=values, median=statistics.median(values), min=min(values), max=max(values))


def measure(cases, rounds: int, repeat: int, out_path: Path, meta: dict) -> dict:
    """Run `rounds` passes over `cases` ([(study, (rows, cols))]), writing the JSON after every round."""
    import cupy as cp
    fns = functions()
    got = {}
    for r in range(rounds):
        for study, (rows, cols) in cases:
            nbytes = rows * cols * 4
            a = cl.transposes.random_matrix(rows, cols, np.float32)
            dev_in, dev_out = cp.asarray(a), cp.empty((cols, rows), np.float32)
            memcpy = gpu.copy_bandwidth(nbytes) / 1e9
            row = got.setdefault((study, rows, cols), {"memcpy gbps": []})
            row["memcpy gbps"].append(memcpy)
            for label, name in STUDIES[study][0].items():
                grid, block = launch(name, rows, cols)
                args = (dev_out, dev_in, np.int32(rows), np.int32(cols))
                if r == 0:
                    dev_out.fill(np.nan)
                    fns[name](grid, block, args)
                    if not bool((dev_out == dev_in.T).all()):
                        raise SystemExit(f"{name} {rows}x{cols}: wrong result on the GPU")
                seconds = gpu.time_launch(fns[name], grid, block, args, repeat=repeat)
                gbps = 2 * nbytes / seconds / 1e9
                row.setdefault(label, []).append(gbps)
            print(f"round {r + 1}: {study} {rows}x{cols}: " + ", ".join(
                f"{k} {v[-1] / memcpy:.3f}" for k, v in row.items() if k != "memcpy gbps"), flush=True)
        data = dict(meta=dict(meta, rounds=r + 1), cases=[
            dict(study=s, rows=rw, cols=cl_, memcpy_gbps=_summary(v["memcpy gbps"]), results=[
                dict(label=k, gbps=_summary(g), frac_copy=_summary([x / m for x, m in zip(g, v["memcpy gbps"])]))
                for k, g in v.items() if k != "memcpy gbps"]) for (s, rw, cl_), v in got.items()])
        out_path.write_text(json.dumps(data, indent=1))
    return data


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("study", nargs="?", choices=sorted(STUDIES), help="one study (default: both)")
    p.add_argument("--out", type=Path, default=Path("/tmp/mechanics"), help="directory for mechanics.json")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--repeat", type=int, default=20, help="timed launches per measurement (median)")
    p.add_argument("--size", default=None, help="only these sizes, e.g. 2048,8191x8193")
    p.add_argument("--list", action="store_true", help="print the cases and exit")
    p.add_argument("--check", action="store_true", help="simulate every kernel on awkward shapes and exit")
    args = p.parse_args(argv)
    wanted = None
    if args.size:
        wanted = {tuple(int(n) for n in (s.split("x") if "x" in s else (s, s))) for s in args.size.split(",")}
    cases = [(s, size) for s in ([args.study] if args.study else STUDIES) for size in STUDIES[s][1]
             if wanted is None or size in wanted]
    if args.list:
        for s, (rows, cols) in cases:
            print(f"{s} float32 {rows}x{cols}: {', '.join(STUDIES[s][0])}")
        return 0
    if args.check:
        problems = check()
        print("\n".join(problems) or f"all {len(functions())} kernels right on {len(CHECK_SHAPES)} shapes (simulated)")
        return 1 if problems else 0
    if not gpu.available():
        print("benchmarks/mechanics.py: no NVIDIA GPU is available here (or COURSE_LIB_BACKEND=sim), so there is "
              "nothing to time. Run it on a GPU machine (`--list` shows the cases, `--check` simulates the kernels).")
        return 0
    info = gpu.info()
    args.out.mkdir(parents=True, exist_ok=True)
    meta = dict(device=info.name, arch=info.arch, sm_count=info.sm_count, repeat=args.repeat,
                date=datetime.datetime.now().isoformat(timespec="seconds"),
                command="python benchmarks/mechanics.py " + " ".join(argv if argv is not None else sys.argv[1:]))
    print(f"{info.name}: {len(cases)} cases, {args.rounds} rounds, median of {args.repeat} launches per measurement")
    measure(cases, args.rounds, args.repeat, args.out / "mechanics.json", meta)
    print(f"wrote {args.out / 'mechanics.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

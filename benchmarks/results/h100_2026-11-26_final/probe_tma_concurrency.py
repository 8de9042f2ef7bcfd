"""One-off probe: does ncu count extra shared-memory bank conflicts when several blocks share an SM
and one block's TMA or cp.async writes shared memory while another block's threads read or write it?

    python benchmarks/results/h100_2026-11-26_final/probe_tma_concurrency.py --out DIR   # GPU + ncu

Prompted by benchmarks/ncu_compare.py on 2026-11-26: tma_both float64 256x256 (256 blocks on 132 SMs)
was the one launch of 387 where ncu and the simulator differed (4186 vs 4096 shared load wavefronts,
90 vs 0 conflicts), while every tma_both launch of at most 132 blocks agreed. Each case below is
launched three times under ncu, with the same launch again where 150 KiB of extra dynamic shared
memory allows only one block per SM (control), and simulated once.
"""
import argparse, csv, io, json, os, shutil, subprocess, sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(REPO))
from course_lib import transposes  # noqa: E402
from course_lib.sim.results.metrics import METRIC_NAMES  # noqa: E402

METRICS = list(METRIC_NAMES.values())
REPEATS = 3
ALONE = 150 * 1024
CASES = [("tma_both", "float64", (256, 256)), ("tma_both", "float64", (128, 256)), ("tma_both", "float64", (1024, 1024)),
         ("tma_both", "float32", (512, 512)), ("tma_both", "float16", (1024, 1024)), ("tma_out", "float64", (512, 512)),
         ("tma", "float32", (1024, 1024)), ("async", "float32", (1024, 1024)), ("async", "float64", (1024, 1024)),
         ("padded", "float64", (512, 512))]


def runs():
    for key, dt, shape in CASES:
        for alone in (False, True):
            yield key, dt, shape, alone


def launch(key, dt, shape, alone, xp):
    t = transposes.kernel(key, np.dtype(dt))
    inp = transposes.random_matrix(*shape, t.dtype, seed=7)
    out = transposes.poisoned(t.out_shape(*shape), t.dtype)
    grid, block = t.config(*shape)
    shared = t.shared_mem(*shape) + (ALONE if alone else 0)
    return t.function, grid, block, t.args(xp.asarray(out), xp.asarray(inp)), shared


def worker():
    import cupy as cp
    for case in runs():
        fn, grid, block, args, shared = launch(*case, cp)
        for _ in range(REPEATS):
            fn(grid, block, args, shared_mem=shared)
    cp.cuda.runtime.deviceSynchronize()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--worker", action="store_true")
    p.add_argument("--out", default="/tmp/probe")
    a = p.parse_args()
    if a.worker:
        return worker()
    cmd = [shutil.which("ncu") or "/usr/local/cuda/bin/ncu", "--clock-control", "none", "--metrics",
           ",".join(METRICS), "--csv", "--print-units", "base", sys.executable, __file__, "--worker"]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=str(REPO)))
    if proc.returncode:
        raise SystemExit(proc.stdout[-3000:] + proc.stderr[-3000:])
    by_id = {}
    for row in csv.DictReader(io.StringIO(proc.stdout[proc.stdout.find('"ID"'):])):
        v = row["Metric Value"].replace(",", "")
        by_id.setdefault(int(row["ID"]), {})[row["Metric Name"]] = int(float(v)) if v not in ("", "n/a") else 0
    hw = [by_id[k] for k in sorted(by_id)]
    short = ["sld.wf", "sst.wf", "sld.conf", "sst.conf"]
    names = [m for m in METRICS if "shared" in m]
    lines = ["| launch | blocks | one block per SM | simulator " + " / ".join(short) + " | ncu, three launches |",
             "|---|---|---|---|---|"]
    records = []
    for i, (key, dt, shape, alone) in enumerate(runs()):
        fn, grid, block, args, shared = launch(key, dt, shape, False, np)
        sim = fn.simulate(grid, block, args, shared_mem=shared, check_races=False, echo=False).metrics
        s = [int(sim[m]) for m in names]
        h = [[r.get(m) for m in names] for r in hw[i * REPEATS:(i + 1) * REPEATS]]
        glob_ok = all(int(sim[m]) == r.get(m) for r in hw[i * REPEATS:(i + 1) * REPEATS] for m in METRICS if "global" in m)
        records.append(dict(key=key, dtype=dt, shape=shape, alone=alone, blocks=int(np.prod(grid)), sim=s, ncu=h,
                            global_agrees=glob_ok))
        lines.append(f"| {key} {dt} {shape[0]}x{shape[1]} | {int(np.prod(grid))} | {'yes' if alone else 'no'} | "
                     f"{s} | {'; '.join(str(x) + ('' if x == s else ' *') for x in h)} |")
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "probe_tma_concurrency.json").write_text(json.dumps(records, indent=1))
    (out / "probe_tma_concurrency.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()

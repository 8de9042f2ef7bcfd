"""Refit course_lib.model to a GPU run of ``python -m course_lib bench --dtype all``.

    python benchmarks/calibrate_model.py benchmarks/results/h100_2026-11-23/b_bench.txt [--size 256]

Simulates every benchmarked course kernel x dtype at SIZE x SIZE (a multiple of every tile, so
counts scale to 8192^2), fits the model's constants (model.calibrate), and prints them with the
fit's errors and, per dtype, the kernel pairs more than 10% apart on the GPU that the model
orders the other way (a tie in the model is not counted: kernels with the same traffic get the
same figure) — what model.STATUS reports. Left out, as the model cannot describe them: per_row
(one thread per row, latency-bound) and warp_pipe (persistent blocks whose warps drift apart:
the model sees their traffic, not when it happens). Changes nothing; paste what it prints into
model.py (GPUS, Knobs, STATUS) by hand.
"""
from __future__ import annotations

import argparse
import itertools
import math
import sys
from dataclasses import fields
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from course_lib.transposes import model
from course_lib import transposes  # noqa: E402
from course_lib.lessons import measured  # noqa: E402

LEFT_OUT = ("per_row", "warp_pipe")


def simulate_all(bench, size):
    runs = {}
    for (key, dt) in bench.rows:
        if key in LEFT_OUT or key not in transposes.SPECS:
            continue
        t = transposes.kernel(key, np.dtype(dt))
        _, runs[(key, dt)] = t.simulate(transposes.random_matrix(size, size, dt), check_races=False, echo=False)
    return runs


def misordered(values, predicted, apart=0.10):
    """Pairs more than `apart` apart in `values` that `predicted` strictly orders the other way."""
    return [(a, b) for a, b in itertools.combinations(values, 2)
            if abs(values[a] / values[b] - 1) > apart and (values[a] - values[b]) * (predicted[a] - predicted[b]) < 0]


def summary(bench, runs, g=None, k=None) -> dict:
    """How close the model is to the bench: typical and largest error, the worst kernel, and per
    dtype the pairs more than 10% apart on the GPU (`apart`) and those it misorders (`misordered`)."""
    g, k = g or model.GPUS["H100"], k or model.KNOBS
    gbps = {n: bench[n].gbps for n in runs}
    pred = {n: model.predict(r, g, k) for n, r in runs.items()}
    worst = max(runs, key=lambda n: abs(pred[n] / gbps[n] - 1))
    out = dict(typical=math.exp(math.sqrt(sum(math.log(pred[n] / gbps[n]) ** 2 for n in runs) / len(runs))) - 1,
               largest=abs(pred[worst] / gbps[worst] - 1), worst=worst, apart={}, misordered={})
    for dt in dict.fromkeys(d for _, d in runs):
        keys = [n[0] for n in runs if n[1] == dt]
        values = {key: gbps[(key, dt)] for key in keys}
        out["apart"][dt] = sum(abs(values[a] / values[b] - 1) > 0.10 for a, b in itertools.combinations(keys, 2))
        out["misordered"][dt] = misordered(values, {key: pred[(key, dt)] for key in keys})
    return out


def report(bench, runs, g, k):
    s = summary(bench, runs, g, k)
    for dt, bad in s["misordered"].items():
        print(f"  {dt:8s} misordered pairs (>10% apart on the GPU): {len(bad)} of {s['apart'][dt]} {bad}")
    print(f"  typical error {s['typical']:.0%}; largest: {s['worst'][0]} {s['worst'][1]} {s['largest']:.0%}")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("bench", type=Path)
    p.add_argument("--size", type=int, default=256)
    args = p.parse_args(argv)
    bench = measured.first_bench(args.bench)
    runs = simulate_all(bench, args.size)
    copy = max(bench[n].gbps for n in bench.rows if n[0] in ("copy", "copy_shared"))
    print(f"{len(runs)} measurements from {args.bench}; best copy {copy:.0f} GB/s")
    print("current constants:")
    report(bench, runs, model.GPUS["H100"], model.KNOBS)
    g, k, text = model.calibrate({n: bench[n].gbps for n in runs}, runs, "H100", copy=copy)
    print("refitted:", text)
    report(bench, runs, g, k)
    print(f"  GPU: dram_efficiency={g.dram_efficiency:.3f} l2_gbps={g.l2_gbps:.0f}")
    print("  Knobs(" + ", ".join(f"{f.name}={getattr(k, f.name):.3g}" for f in fields(k)) + ")")


if __name__ == "__main__":
    main()

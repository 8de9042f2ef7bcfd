"""Probe how the hardware counts shared-memory wavefronts for arbitrary warp patterns.

    python benchmarks/ncu_shared_probe.py --out DIR     # on a GPU with ncu
    python benchmarks/ncu_shared_probe.py --check FILE  # here: compare a saved probe with the simulator

Each launch is one warp doing one shared load (or store) of 4, 8 or 16 bytes where lane i is
active when idx[i] >= 0 and touches element idx[i] of a shared array. Patterns: full and
partial warps, random masks, random addresses in a small range (conflicts), broadcasts and
the pairs that rule 2 of memory-rules.md is about. ncu's shared wavefronts and conflicts per
launch are saved with the patterns, so rules can be fitted and checked without a GPU.
"""
from __future__ import annotations

import argparse
import csv
import io
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))

from course_lib import RawModule  # noqa: E402

SRC = r"""
template <typename T>
__global__ void probe_ld(T* out, const int* idx)
{
    __shared__ __align__(16) T s[1024];
    for (int i = threadIdx.x; i < 1024; i += 32) s[i] = T();
    __syncthreads();
    int k = idx[threadIdx.x];
    if (k >= 0) out[threadIdx.x] = s[k];
}
template <typename T>
__global__ void probe_st(T* out, const int* idx)
{
    __shared__ __align__(16) T s[1024];
    int k = idx[threadIdx.x];
    if (k >= 0) s[k] = out[threadIdx.x];
    __syncthreads();
    if (threadIdx.x == 0) out[0] = s[threadIdx.x];
}
"""
TYPES = {4: "float", 8: "double", 16: "float4"}
NP = {4: np.float32, 8: np.float64, 16: np.float32}


def patterns(seed=0):
    rng = np.random.default_rng(seed)
    lanes = np.arange(32)
    out = []
    def add(idx, tag):
        out.append(([int(v) for v in idx], tag))
    for stride in (0, 1, 2, 3, 4, 8, 16, 17, 32, 33):
        add(lanes * stride, f"full stride {stride}")
    for group in ([0, 16], [0, 8], [0, 8, 16, 24], [0, 1], [0, 2], [15, 16], [0, 31], [7, 8], list(range(16)),
                  list(range(16, 32)), list(range(8)), [0, 4, 8, 12, 16, 20, 24, 28]):
        for stride in (0, 1, 2, 32):
            idx = np.full(32, -1)
            idx[group] = np.array(group) * stride
            add(idx, f"lanes {group[:4]}{'...' if len(group) > 4 else ''} stride {stride}")
    for pair in (1, 2, 4):
        add(np.where(lanes & pair, 32, 0) + (lanes & ~(pair | 1)) * 0, f"t^{pair} share, two addresses")
        add((lanes // (2 * pair)) * (2 * pair) + (lanes % pair), f"t and t^{pair} same address, unit")
    for density in (0.1, 0.25, 0.5, 0.75, 1.0):
        for spread in (8, 32, 64, 256):
            for _ in range(3):
                idx = rng.integers(0, spread, 32)
                idx[rng.random(32) > density] = -1
                if (idx >= 0).any():
                    add(idx, f"random density {density} spread {spread}")
    return out


def cases():
    return [(w, op, idx, tag) for w in (4, 8, 16) for op in ("ld", "st") for idx, tag in patterns()]


_mod = None


def function(w, op):
    global _mod
    if _mod is None:
        _mod = RawModule(code=SRC, options=("-std=c++17",), filename="probe.cu",
                         name_expressions=[f"probe_{o}<{t}>" for o in ("ld", "st") for t in TYPES.values()])
    return _mod.get_function(f"probe_{op}<{TYPES[w]}>")


def args(w, idx, xp):
    per = w // np.dtype(NP[w]).itemsize
    out = xp.asarray(np.ones(32 * per, NP[w]))
    return (out, xp.asarray(np.array(idx, np.int32)))


def worker():
    import cupy as cp
    for w, op, idx, _ in cases():
        function(w, op)((1,), (32,), args(w, idx, cp))
    cp.cuda.runtime.deviceSynchronize()


METRICS = ["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
           "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum", "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum"]


def measure():
    ncu = shutil.which("ncu") or "/usr/local/cuda/bin/ncu"
    proc = subprocess.run([ncu, "--clock-control", "none", "--metrics", ",".join(METRICS), "--csv", "--print-units", "base",
                           sys.executable, __file__, "--worker"], capture_output=True, text=True,
                          env=dict(os.environ, PYTHONPATH=str(HERE.parent)))
    if proc.returncode:
        raise SystemExit(proc.stderr[-3000:])
    by_id = {}
    for r in csv.DictReader(io.StringIO(proc.stdout[proc.stdout.find('"ID"'):])):
        by_id.setdefault(int(r["ID"]), {})[r["Metric Name"]] = int(float(r["Metric Value"].replace(",", "") or 0))
    return [by_id[k] for k in sorted(by_id)]


def simulate(w, op, idx):
    run = function(w, op).simulate((1,), (32,), args(w, idx, np), check_races=False, echo=False)
    return {m: int(run.metrics[m]) for m in METRICS}


def compare(records):
    bad = 0
    for r in records:
        sim = simulate(r["width"], r["op"], r["idx"])
        # the probe's fill loop/stores add fixed traffic: compare the whole launch
        if sim != r["ncu"]:
            bad += 1
            print(f"{r['width']:2d}B {r['op']} {r['tag']:<40s} ncu {[r['ncu'][m] for m in METRICS]} sim {[sim[m] for m in METRICS]}"
                  f"  idx {r['idx']}")
    print(f"{len(records) - bad} of {len(records)} patterns agree")
    return bad


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--out")
    p.add_argument("--check")
    a = p.parse_args()
    if a.worker:
        return worker()
    if a.check:
        return 1 if compare(json.loads(Path(a.check).read_text())) else 0
    hw = measure()
    records = [dict(width=w, op=op, idx=idx, tag=tag, ncu=h) for (w, op, idx, tag), h in zip(cases(), hw)]
    out = Path(a.out or ".")
    out.mkdir(parents=True, exist_ok=True)
    (out / "shared_probe.json").write_text(json.dumps(records))
    return 1 if compare(records) else 0


if __name__ == "__main__":
    sys.exit(main())

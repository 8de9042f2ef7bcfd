"""Check the simulator against Nsight Compute on a real GPU, metric by metric.

    python benchmarks/ncu_compare.py --out DIR          # on a machine with a GPU and ncu
    python benchmarks/ncu_compare.py --dry-run [--only fused]   # anywhere: the simulator alone

It launches every course kernel (every registered Spec x dtype x a few shapes) and the
access patterns of benchmarks/ncu_patterns.cu once each under
``ncu --clock-control none`` collecting the eight memory metrics, simulates the same launches
on the CPU, and prints one row per launch: simulator vs ncu for global load/store requests
and sectors, shared load/store wavefronts and bank conflicts. Writes compare.json and
compare.md to DIR. Exit code 0 when every metric agrees.

The ``fused`` cases are kernels whose neighbouring narrow accesses ptxas fuses into one wider
machine instruction (or loads once); the simulator counts what the SASS does. ``--dry-run``
simulates every case without a GPU and prints, where they differ, the counts of the PTX alone
(CuPy's NVRTC, COURSE_LIB_SASS=0: what the simulator counted before it read machine code) next
to the machine-code counts, with the fused SASS instructions: the list of what reading the
machine code changed. The simulator must read machine code here (NVRTC 13 and nvdisasm
installed) or the comparison with ncu is of the PTX; the script says which at the start.

The worker process launches only the kernels under test (inputs are copied with memcpy, never
filled by a CuPy kernel), so ncu's launch IDs line up with the case list.
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

from course_lib import RawModule, transposes  # noqa: E402
from course_lib.sim.results.async_result import SHARED_BY_BLOCKS_NOTE  # noqa: E402
from course_lib.sim.results.metrics import METRIC_NAMES  # noqa: E402

METRICS = list(METRIC_NAMES.values())
SHAPES = [(256, 256), (100, 130), (1, 300)]
DTYPES = [np.float32, np.float64, np.float16, np.uint8]
PATTERN_TYPES = {"4B": "float", "8B": "double", "16B": "float4"}
PATTERNS = [(s, o) for s, o in ((1, 0), (1, 1), (2, 0), (32, 0), (0, 0), (33, 0), (4, 0), (8, 0), (16, 0))]
STRUCTS = 1000        # the AoS -> SoA example: 1000 structs, 31 full warps and 8 lanes
FUSED = ([f"struct_read<{i}>" for i in (2, 3, 4, 6, 8, 64)] + ["struct_read<4, 2>"]
         + [f"struct_write<{i}>" for i in (4, 6)]
         + ["row_read<unsigned short, 34>", "row_read<unsigned char, 36>", "row_read<float, 36>",
            "row_read<float, 33>", "load_twice", "load_twice_nc", "strided_pair"])


def cases():
    out = []
    for key in transposes.SPECS:
        for dt in DTYPES:
            try:
                t = transposes.kernel(key, dt)
            except ValueError:
                continue
            for shape in SHAPES:
                if not t.refuses(*shape):              # a TMA kernel takes whole 16-byte rows only
                    out.append(dict(kind="transpose", key=key, dtype=np.dtype(dt).name, shape=shape))
    for tname in PATTERN_TYPES:
        for stride, offset in PATTERNS:
            out.append(dict(kind="global_pattern", T=tname, stride=stride, offset=offset))
            out.append(dict(kind="shared_pattern", T=tname, stride=stride, offset=offset))
        out.append(dict(kind="shared_pairs", T=tname))
    out += [dict(kind="fused", name=name) for name in FUSED]
    return out


_pattern_module = None


def pattern_function(case):
    global _pattern_module
    if _pattern_module is None:
        names = [f"{k}<{t}>" for k in ("global_pattern", "shared_pattern", "shared_pairs") for t in PATTERN_TYPES.values()]
        names += [n for n in FUSED if "<" in n]
        _pattern_module = RawModule(code=(HERE / "ncu_patterns.cu").read_text(), options=("-std=c++17",),
                                    name_expressions=names, filename="ncu_patterns.cu")
    if case["kind"] == "fused":
        return _pattern_module.get_function(case["name"])
    return _pattern_module.get_function(f"{case['kind']}<{PATTERN_TYPES[case['T']]}>")


def fused_args(case, fn, xp):
    """(grid, block, args, shared_mem) of a fused case; inputs random, outputs poisoned."""
    name = case["name"]
    rng = np.random.default_rng(7)
    if name.startswith("struct_"):
        I = int(name.split("<")[1].rstrip(">").split(",")[0])
        aos = rng.random((STRUCTS, I)).astype(np.float32) + 1
        inp = aos if name.startswith("struct_read") else np.ascontiguousarray(aos.T)
        out = np.full(inp.T.shape, -1, np.float32)
        return (1, -(-STRUCTS // 128)), (32, 4), (xp.asarray(out), xp.asarray(inp), np.int32(STRUCTS)), 0
    if name.startswith("row_read"):
        dt = {"unsigned short": np.uint16, "unsigned char": np.uint8, "float": np.float32}[name[9:].split(",")[0]]
        inp = (rng.random(4 * 32 * 32) * 100 + 1).astype(dt)
        return (1,), (32, 4), (xp.asarray(np.zeros_like(inp)), xp.asarray(inp), np.int32(32)), 0
    if name == "strided_pair":
        inp = rng.random(1024).astype(np.float32) + 1
        return (1,), (256,), (xp.asarray(np.zeros(256, np.float32)), xp.asarray(inp), np.int32(2)), 0
    inp = rng.random(STRUCTS).astype(np.float32) + 1             # load_twice, load_twice_nc
    return (8,), (128,), (xp.asarray(np.zeros_like(inp)), xp.asarray(inp), np.int32(STRUCTS)), 0


def launch_args(case, xp):
    """(function, grid, block, args, shared_mem) for one case, arrays from numpy via memcpy."""
    if case["kind"] == "transpose":
        t = transposes.kernel(case["key"], np.dtype(case["dtype"]))
        rows, cols = case["shape"]
        inp = transposes.random_matrix(rows, cols, t.dtype, seed=rows + cols)
        out = transposes.poisoned(t.out_shape(rows, cols), t.dtype)
        grid, block = t.config(rows, cols)
        # TensorMaps over the arrays for a TMA kernel; dynamic shared memory where the kernel asks for it
        return t.function, grid, block, t.args(xp.asarray(out), xp.asarray(inp)), t.shared_mem(rows, cols)
    fn = pattern_function(case)
    if case["kind"] == "fused":
        return (fn, *fused_args(case, fn, xp))
    width = {"4B": 4, "8B": 8, "16B": 16}[case["T"]]
    dtype = np.float64 if width == 8 else np.float32
    per = width // np.dtype(dtype).itemsize          # array elements per accessed element
    rng = np.random.default_rng(1)
    if case["kind"] == "shared_pairs":
        inp, out = rng.random(32 * per).astype(dtype) + 1, np.zeros(32 * per, dtype)
        return fn, (1,), (32,), (xp.asarray(out), xp.asarray(inp)), 256
    count = 32 * max(case["stride"], 1) + case["offset"] + 1
    inp, out = rng.random(count * per).astype(dtype) + 1, np.zeros(count * per, dtype)
    shared = count * width if case["kind"] == "shared_pattern" else 0
    return fn, (1,), (32,), (xp.asarray(out), xp.asarray(inp), np.int32(case["stride"]), np.int32(case["offset"])), shared


def worker():
    import cupy as cp
    for case in cases():
        fn, grid, block, args, shared = launch_args(case, cp)
        fn(grid, block, args, shared_mem=shared)
    cp.cuda.runtime.deviceSynchronize()


def simulate_all():
    """Each case's eight counts, and whether its result notes timing-dependent shared counts on a GPU."""
    rows = []
    for case in cases():
        fn, grid, block, args, shared = launch_args(case, np)
        run = fn.simulate(grid, block, args, shared_mem=shared, check_races=False, echo=False)
        noted = any(w.message == SHARED_BY_BLOCKS_NOTE for w in run.warnings)
        rows.append(({m: int(run.metrics[m]) for m in METRICS}, noted))
    return rows


def timing_dependent(diff, noted):
    """ncu's extra shared wavefronts where TMA stores meet other blocks' shared accesses (the note)."""
    return noted and all(k.startswith("s") and ncu > sim for k, (sim, ncu) in diff.items())


def run_ncu():
    ncu = shutil.which("ncu") or "/usr/local/cuda/bin/ncu"
    cmd = [ncu, "--clock-control", "none", "--metrics", ",".join(METRICS), "--csv",
           "--print-units", "base", sys.executable, __file__, "--worker"]
    env = dict(os.environ, PYTHONPATH=str(HERE.parent))
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        raise SystemExit(f"ncu failed ({proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    text = proc.stdout[proc.stdout.find('"ID"'):]
    by_id = {}
    for row in csv.DictReader(io.StringIO(text)):
        value = row["Metric Value"].replace(",", "")
        by_id.setdefault(int(row["ID"]), {})[row["Metric Name"]] = int(float(value)) if value not in ("", "n/a") else 0
        by_id[int(row["ID"])]["kernel"] = row["Kernel Name"]
    return [by_id[k] for k in sorted(by_id)]


def label(case):
    if case["kind"] == "transpose":
        return f"{case['key']} {case['dtype']} {case['shape'][0]}x{case['shape'][1]}"
    if case["kind"] == "fused":
        return f"fused {case['name']}"
    if case["kind"] == "shared_pairs":
        return f"shared_pairs {case['T']}"
    return f"{case['kind']} {case['T']} stride {case['stride']} offset {case['offset']}"


SHORT = {m: ("g" if "global" in m else "s") + ("ld" if m.endswith("ld.sum") else "st") + "." +
         ("req" if "requests" in m else "sect" if "sectors" in m else "wf" if "wavefronts" in m else "conf")
         for m in METRICS}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--out", default="ncu_compare_out")
    p.add_argument("--dry-run", action="store_true", help="simulate only (no GPU, no ncu); list what machine code changed")
    p.add_argument("--only", default="", help="cases whose label contains this text (with --dry-run)")
    a = p.parse_args()
    if a.worker:
        return worker()
    from course_lib.compile import nvrtc
    missing = nvrtc.machine_code_missing()
    print("simulator counts the machine code (NVRTC 13 + nvdisasm)" if not missing else
          f"WARNING: the simulator counts the PTX, not the machine code: {missing}", flush=True)
    if a.dry_run:
        from ncu_sass_effect import report
        return report([c for c in cases() if a.only in label(c)], launch_args, label, METRICS, SHORT)
    all_cases = cases()
    print(f"{len(all_cases)} launches; profiling with ncu...", flush=True)
    hw = run_ncu()
    if len(hw) != len(all_cases):
        raise SystemExit(f"ncu reported {len(hw)} launches for {len(all_cases)} cases")
    print("simulating...", flush=True)
    sim = simulate_all()
    records, mismatches, timing = [], 0, 0
    lines = ["| launch | " + " | ".join(SHORT[m] for m in METRICS) + " | agree |", "|---" * (len(METRICS) + 2) + "|"]
    for case, h, (s, noted) in zip(all_cases, hw, sim):
        diff = {SHORT[m]: (s[m], h.get(m)) for m in METRICS if s[m] != h.get(m)}
        noted_diff = bool(diff) and timing_dependent(diff, noted)
        mismatches += bool(diff) and not noted_diff
        timing += noted_diff
        records.append(dict(case={k: (list(v) if isinstance(v, tuple) else v) for k, v in case.items()},
                            kernel=h.get("kernel"), ncu={m: h.get(m) for m in METRICS}, sim=s, agree=not diff,
                            timing_dependent=noted_diff))
        cells = [str(h.get(m)) if s[m] == h.get(m) else f"**{s[m]} vs {h.get(m)}**" for m in METRICS]
        verdict = "yes" if not diff else "timing (noted)" if noted_diff else "NO"
        lines.append(f"| {label(case)} | " + " | ".join(cells) + f" | {verdict} |")
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "compare.json").write_text(json.dumps(records, indent=1))
    (out / "compare.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    print(f"\n{len(all_cases) - mismatches - timing} of {len(all_cases)} launches agree on all {len(METRICS)} "
          f"metrics; {timing} differ only by the extra shared wavefronts of TMA stores meeting other blocks' "
          "shared accesses, which the simulator's result notes (cells show ncu's value; mismatches as 'sim vs ncu')")
    return 0 if mismatches == 0 else 1


if __name__ == "__main__":
    sys.exit(main())

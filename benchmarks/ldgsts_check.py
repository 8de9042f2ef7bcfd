"""cp.async's writes into shared memory, Nsight Compute against the simulator (issue 35); and what CuPy's
transpose spends, beside the kernel that stands in for it in notebook 11's beat_library.

    python benchmarks/ldgsts_check.py --out DIR        (a GPU with ncu: both stages, about two minutes)
    python benchmarks/ldgsts_check.py --simulate       (anywhere: the simulator's side of the table only)
    python benchmarks/ldgsts_check.py --worker ldgsts  (what ncu runs: every launch, REPEAT times each)

Stage ``ldgsts``: the course's async kernels (kernels/async_tile.cu at 1-3 stages, 4 tiles and 1 per block,
four element sizes; the solutions of exercises async_tile and async_pipeline; notebook 12's staged_copy)
and the kernels made to conflict on the copies' shared side (benchmarks/ldgsts_probe.cu: column_in, which
turns the tile around on its way in, unpadded and padded, 4- and 8-byte; chunk_column, 16-byte copies
into rows 128 or 144 bytes apart; zero_fill, copies that read nothing and zero-fill a column), each on a few shapes and alone in one warp or one block where it can
be. ``ncu --clock-control none`` counts each launch REPEAT times: l1tex__data_bank_conflicts_pipe_lsu_mem_
shared_op_ldgsts (the counter the simulator models), its smsp__sass_ form, the LDGSTS shared wavefronts
(smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ldgsts, which the simulator also reports: never
measured before this script) and the LDGSTS instructions. The simulator runs every launch on the same
inputs. The verdict per launch: "exact" when every repetition equals the model; "above, varies" when ncu
counts more, differently in different repetitions (the timing-dependent part the simulator's note
describes: other warps' shared traffic at the same time); "WRONG" otherwise.

Stage ``library``: ncu on CuPy's ascontiguousarray(a.T) and on naive_col (the stand-in, launched as the
course launches it) at 1024 x 1024 float32: sectors, shared wavefronts, smsp__inst_executed.sum (SASS
instructions) per 1024 elements, beside the simulator's counts for naive_col (its instructions are PTX, so
the table shows how far the two counts are apart). DIR/ldgsts_check.json and .md hold both stages.
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
sys.path.insert(0, str(HERE.parent))

from course_lib.sim.results.metrics import LDGSTS_NAMES  # noqa: E402

PROBE = HERE / "ldgsts_probe.cu"
REPEAT = 3
CONFLICTS, WAVEFRONTS = LDGSTS_NAMES["conflicts"], LDGSTS_NAMES["wavefronts"]
LDGSTS_METRICS = [CONFLICTS, "smsp__sass_l1tex_data_bank_conflicts_pipe_lsu_mem_shared_op_ldgsts.sum", WAVEFRONTS,
                  "smsp__sass_inst_executed_op_ldgsts.sum", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
                  "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"]
LIBRARY_METRICS = ["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
                   "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
                   "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum", "smsp__inst_executed.sum"]
STAGED_COPY = """#include <cuda_pipeline.h>
extern "C" __global__ void staged_copy(float* out, const float* in, int n)
{
    __shared__ float s[256];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        __pipeline_memcpy_async(&s[threadIdx.x], &in[i], sizeof(float));
    __pipeline_commit();
    __pipeline_wait_prior(0);
    if (i < n)
        out[i] = s[threadIdx.x];
}
"""
C_NAME = {1: "unsigned char", 2: "unsigned short", 4: "float", 8: "double"}
cdiv = lambda a, b: -(-a // b)          # noqa: E731


def _sources(tmp: Path) -> dict:
    """{source key: (path, kernel names, launch(name, rows, cols) -> (grid, block, kind))}."""
    from course_lib.teach import exercises, solutions
    tmp.mkdir(parents=True, exist_ok=True)
    out = {}
    names = [f"async_tile<{C_NAME[s]}, 32, 8, {st}, {ti}>" for s in (4, 8, 2, 1) for st, ti in ((1, 4), (2, 4), (3, 4), (1, 1))]
    out["async_tile.cu"] = (HERE.parent / "kernels" / "async_tile.cu", names,
                            lambda n, r, c: ((cdiv(c, 32), cdiv(r, 32 * int(n.split(",")[-1].strip(" >")))), (32, 8)))
    probes = [f"column_in<{t}, {p}>" for t in ("float", "double") for p in (0, 1)] + ["chunk_column<128>", "chunk_column<144>",
                                                                                    "zero_fill"]
    out["ldgsts_probe.cu"] = (PROBE, probes, lambda n, r, c: (((cdiv(r, 32),), (32,)) if n.startswith(("chunk", "zero")) else
                                                             ((cdiv(c, 32), cdiv(r, 32)), (32, 8))))
    for key in ("async_tile", "async_pipeline"):
        ex = exercises.get(key)
        path = tmp / f"{key}.cu"
        path.write_text(solutions.body(key, dict(ex.params)))
        out[key] = (path, [ex.kernel], lambda n, r, c, ex=ex: ex.launch(r, c))
    path = tmp / "staged_copy.cu"
    path.write_text(STAGED_COPY)
    out["staged_copy"] = (path, ["staged_copy"], lambda n, r, c: ((cdiv(r * c, 256),), (256,)))
    return out


def launches(tmp: Path) -> list[tuple]:
    """(label, source key, kernel name, rows, cols, itemsize) of every launch of stage ldgsts, in order."""
    out = []
    for name in _sources(tmp)["async_tile.cu"][1]:
        size = {v: k for k, v in C_NAME.items()}[name.split("<")[1].split(",")[0]]
        for rows, cols in ((128, 32), (100, 130), (96, 160)):          # one block (4 tiles), the recorded one, aligned
            if size < 4 and (cols * size) % 4:
                continue
            out.append((f"{name} {rows}x{cols}", "async_tile.cu", name, rows, cols, size))
    for name in ("column_in<float, 0>", "column_in<float, 1>", "column_in<double, 0>", "column_in<double, 1>"):
        size = 4 if "float" in name else 8
        for rows, cols in ((32, 32), (100, 130), (256, 256)):
            out.append((f"{name} {rows}x{cols}", "ldgsts_probe.cu", name, rows, cols, size))
    for name in ("chunk_column<128>", "chunk_column<144>"):
        for rows in (32, 1024):
            out.append((f"{name} {rows}x4", "ldgsts_probe.cu", name, rows, 4, 4))
    out.append(("zero_fill 1x32", "ldgsts_probe.cu", "zero_fill", 1, 32, 4))
    for key, shapes in (("async_tile", ((32, 32), (100, 130), (96, 160))), ("async_pipeline", ((32, 128), (96, 256)))):
        for rows, cols in shapes:
            out.append((f"{key} (solution) {rows}x{cols}", key, None, rows, cols, 4))
    out.append(("staged_copy 1x1000", "staged_copy", "staged_copy", 1, 1000, 4))
    return out


def _arrays(xp, rows, cols, size, seed=1):
    rng = np.random.default_rng(seed)
    a = rng.integers(1, 200, (rows, cols)).astype({1: np.uint8, 2: np.uint16, 4: np.float32, 8: np.float64}[size])
    return xp.asarray(a), xp.zeros((cols, rows) if cols > 1 and rows > 1 else (rows * cols,), a.dtype)


def _args(key, rows, cols, a, out):
    if key == "staged_copy":
        return (out, a, np.int32(rows * cols))
    return (out, a, np.int32(rows), np.int32(cols))


def _resolve(tmp, item):
    label, key, name, rows, cols, size = item
    path, names, launch = _sources(tmp)[key]
    name = name or names[0]
    grid, block = launch(name, rows, cols)
    return path, name, tuple(grid), tuple(block)


def simulate_all(tmp: Path) -> dict:
    """{label: {metric: simulated count}} of stage ldgsts (and naive_col's counts for stage library)."""
    import course_lib as cl
    from course_lib.sim.results.spend import spend
    res, modules = {}, {}
    for item in launches(tmp):
        path, name, grid, block = _resolve(tmp, item)
        if (str(path), name) not in modules:
            modules[(str(path), name)] = cl.RawModule(path=str(path), name_expressions=[name]).get_function(name)
        a, out = _arrays(np, item[3], item[4], item[5])
        run = modules[(str(path), name)].simulate(grid, block, _args(item[1], item[3], item[4], a, out),
                                                  check_races=False, echo=False, progress=False)
        res[item[0]] = {m: int(run.metrics.get(m, 0)) for m in (CONFLICTS, WAVEFRONTS)}
    nc = cl.Simulator().run("naive_col", shape=(1024, 1024), dtype=np.float32)
    s = spend(nc)
    res["naive_col 1024x1024 (simulated)"] = dict(sectors=s.sectors, wavefronts=s.wavefronts, ptx_instructions=s.instructions)
    return res


def worker(stage: str, tmp: Path):
    import cupy as cp
    import hopper_common as hc
    if stage == "library":
        from course_lib import transposes
        a = cp.asarray(np.random.default_rng(1).random((1024, 1024), np.float32))
        cp.ascontiguousarray(a.T)                                   # CuPy's copy kernel
        t = transposes.kernel("naive_col", np.float32)
        t.run(a, cp.empty((1024, 1024), np.float32))                # the stand-in, launched as the course does
        cp.cuda.runtime.deviceSynchronize()
        return
    fns = {}
    for item in launches(tmp):
        path, name, grid, block = _resolve(tmp, item)
        fn = fns.get((str(path), name)) or hc.functions(path, [name])[name]
        fns[(str(path), name)] = fn
        a, out = _arrays(cp, item[3], item[4], item[5])
        for _ in range(REPEAT):
            fn(grid, block, _args(item[1], item[3], item[4], a, out))
    cp.cuda.runtime.deviceSynchronize()


def run_ncu(stage: str, metrics: list, tmp: Path) -> list[dict]:
    """ncu's counts of every launch of `stage`, in launch order; a refused metric name is dropped."""
    ncu = shutil.which("ncu") or "/usr/local/cuda/bin/ncu"
    metrics = list(metrics)
    for _ in range(3):
        cmd = [ncu, "--clock-control", "none", "--metrics", ",".join(metrics), "--csv", "--print-units", "base",
               sys.executable, __file__, "--worker", stage, "--tmp", str(tmp)]
        proc = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=str(HERE.parent)))
        if '"ID"' in proc.stdout:
            break
        bad = [m for m in metrics if m in proc.stdout + proc.stderr]
        print("ncu refused:", bad or (proc.stdout + proc.stderr)[-800:], flush=True)
        if not bad:
            return []
        metrics = [m for m in metrics if m not in bad]
    by_id = {}
    for row in csv.DictReader(io.StringIO(proc.stdout[proc.stdout.find('"ID"'):])):
        value = row["Metric Value"].replace(",", "")
        try:
            value = float(value)
        except ValueError:
            pass
        by_id.setdefault(int(row["ID"]), {"kernel": row["Kernel Name"]})[row["Metric Name"]] = value
    return [by_id[k] for k in sorted(by_id)]


def verdict(sim: int, counted: list) -> str:
    if all(int(c) == sim for c in counted):
        return "exact"
    if all(int(c) >= sim for c in counted) and len({int(c) for c in counted}) > 1:
        return "above, varies"
    return "WRONG"


def table(result: dict) -> str:
    lines = ["| launch | simulated conflicts | ncu conflicts (each run) | simulated wavefronts | ncu wavefronts | verdict |",
             "|---|---|---|---|---|---|"]
    for label, r in result["ldgsts"].items():
        ncu = r.get("ncu") or []
        lines.append(f"| {label} | {r['sim'][CONFLICTS]} | {', '.join(str(int(x.get(CONFLICTS, -1))) for x in ncu) or '-'} "
                     f"| {r['sim'][WAVEFRONTS]} | {', '.join(str(int(x.get(WAVEFRONTS, -1))) for x in ncu) or '-'} "
                     f"| {r.get('verdict', 'not measured')} |")
    lib = result.get("library") or {}
    if lib:
        lines += ["", "| 1024 x 1024 float32, per 1024 elements | sectors | shared wavefronts | instructions |",
                  "|---|---|---|---|"]
        for label, c in lib.items():
            lines.append(f"| {label} | {c.get('sectors', '-')} | {c.get('wavefronts', '-')} | {c.get('instructions', '-')} |")
    return "\n".join(lines) + "\n"


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", type=Path)
    p.add_argument("--simulate", action="store_true")
    p.add_argument("--worker")
    p.add_argument("--tmp", type=Path, default=Path("/tmp/ldgsts_check"))
    a = p.parse_args()
    if a.worker:
        return worker(a.worker, a.tmp)
    sim = simulate_all(a.tmp)
    result = {"ldgsts": {}, "library": {}}
    counted = [] if a.simulate else run_ncu("ldgsts", LDGSTS_METRICS, a.tmp)
    for i, item in enumerate(launches(a.tmp)):
        r = result["ldgsts"][item[0]] = {"sim": sim[item[0]]}
        if counted:
            r["ncu"] = counted[i * REPEAT:(i + 1) * REPEAT]
            r["verdict"] = verdict(sim[item[0]][CONFLICTS], [x.get(CONFLICTS, -1) for x in r["ncu"]])
    per = 1024 / (1024 * 1024)
    nc = sim["naive_col 1024x1024 (simulated)"]
    result["library"]["naive_col, simulated (instructions: PTX, per warp)"] = dict(
        sectors=nc["sectors"] * per, wavefronts=nc["wavefronts"] * per, instructions=nc["ptx_instructions"] * per)
    for rec in ([] if a.simulate else run_ncu("library", LIBRARY_METRICS, a.tmp)):
        g = lambda m: rec.get(m, 0) * per           # noqa: E731
        result["library"][f"{rec['kernel'][:40]}, ncu (instructions: SASS)"] = dict(
            sectors=g(LIBRARY_METRICS[0]) + g(LIBRARY_METRICS[1]), wavefronts=g(LIBRARY_METRICS[2]) + g(LIBRARY_METRICS[3]),
            instructions=g("smsp__inst_executed.sum"))
    text = table(result)
    print(text)
    if a.out:
        a.out.mkdir(parents=True, exist_ok=True)
        (a.out / "ldgsts_check.json").write_text(json.dumps(result, indent=1))
        (a.out / "ldgsts_check.md").write_text(text)
    wrong = [k for k, r in result["ldgsts"].items() if r.get("verdict") == "WRONG"]
    if wrong:
        print(f"{len(wrong)} launch(es) disagree: {wrong}")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())

"""What an H100 does and counts for cp.async, ldmatrix/stmatrix/movmatrix, bulk copies and TMA tiles
(issue 19): the simulator's test vectors and metric targets.

    python benchmarks/hopper_probe.py semantics OUT.json   # outputs of benchmarks/hopper_probe.cu's kernels
    python benchmarks/hopper_probe.py ncu OUT_DIR          # every pattern and new kernel under ncu
    python benchmarks/hopper_probe.py --worker             # (what ncu runs: each launch once)
    HOPPER_ONLY="tma_out ,tma_wide ,band " python benchmarks/hopper_probe.py ncu OUT_DIR   # only those launches

``ncu`` collects the course's eight memory metrics, smsp__inst_executed_op_global_ld, and every
metric `ncu --query-metrics` lists whose name speaks of LDGSTS, LDSM/STSM, TMA or bulk copies
(the list is written next to the results), so the simulator's result can say where ncu counts
TMA traffic that the course's metrics do not show.
"""
from __future__ import annotations

import csv
import io
import json
import os
import re
import shutil
import subprocess
import sys

import numpy as np

import hopper_common as hc

PROBE = hc.HERE / "hopper_probe.cu"
COURSE_METRICS = ["l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
                  "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
                  "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
                  "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
                  "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum"]
ALWAYS = ["smsp__inst_executed_op_global_ld.sum", "smsp__inst_executed_op_shared_ld.sum",
          "smsp__inst_executed_op_shared_st.sum", "lts__t_sectors_op_read.sum", "lts__t_sectors_op_write.sum"]
EXTRA = re.compile(r"^(l1tex__\w*(ldgsts|ldsm|stsm|tma|bulk|utma)\w*|smsp__\w*inst_executed_op_\w*(ldgsts|ldsm|stsm|"
                   r"tma|bulk|mbar|sync|async)\w*|\w+__\w*(tma|utma|bulk)\w*)$")


def names():
    out = [f"probe_cpasync<{s}, {'true' if cg else 'false'}>" for s in (4, 8, 16) for cg in (False, True) if s == 16 or not cg]
    out += [f"probe_{k}<{x}, {t}>" for k in ("ldsm", "stsm") for x in (1, 2, 4) for t in ("false", "true")]
    out += [f"probe_tma<{b}, {s}>" for b in (2048, 4096) for s in ("false", "true")]
    return out + ["probe_cpasync_ignore", "probe_movmatrix", "probe_bulk", "probe_mbarrier"]


def fns():
    return hc.functions(PROBE, names())


# --------------------------------------------------------------------------------- semantics
def semantics(out_path):
    """Everything but the TMA boxes in this process (written as it goes), then each TMA box in a
    process of its own: a launch the GPU refuses (an illegal instruction) ends the CUDA context."""
    import cupy as cp
    f, res = fns(), {}

    def save():
        with open(out_path, "w") as fh:
            json.dump(res, fh)

    g = cp.ascontiguousarray((cp.arange(65536, dtype=np.uint32) % 251 + 1).astype(np.uint8))
    out8 = cp.zeros(8192, np.uint8)
    for size, cg in ((4, False), (8, False), (16, False), (16, True)):
        for src_size in sorted({0, 1, size // 2, size - 1, size} if size > 4 else {0, 1, 2, 3, 4}):
            f[f"probe_cpasync<{size}, {'true' if cg else 'false'}>"]((1,), (32,), (g, out8, np.int32(size), np.int32(size),
                                                                     np.int32(32), np.int32(src_size), np.int32(1)))
            res[f"cpasync {size} {'cg' if cg else 'ca'} src_size={src_size}"] = cp.asnumpy(out8[:32 * size]).tolist()
    out_i = cp.zeros(512, np.uint8)
    f["probe_cpasync_ignore"]((1,), (32,), (g, out_i))
    res["cpasync ignore-src lane%3==0"] = cp.asnumpy(out_i).tolist()
    save()
    regs = cp.zeros(32 * 4, np.uint32)
    for kind in ("ldsm", "stsm"):
        for x in (1, 2, 4):
            for t in ("false", "true"):
                for mul, add, pitch in ((1, 0, 16), (5, 3, 16), (7, 1, 32)):
                    if kind == "ldsm":
                        regs.fill(0)
                        f[f"probe_ldsm<{x}, {t}>"]((1,), (32,), (regs, np.int32(mul), np.int32(add), np.int32(pitch), np.int32(1)))
                        val = cp.asnumpy(regs).reshape(32, 4)[:, :x].tolist()
                    else:
                        sh = cp.zeros(2048, np.uint16)
                        f[f"probe_stsm<{x}, {t}>"]((1,), (32,), (sh, np.int32(mul), np.int32(add), np.int32(pitch), np.int32(1)))
                        val = cp.asnumpy(sh).tolist()
                    res[f"{kind} x{x} trans={t} rows=(l*{mul}+{add})%64 pitch={pitch}"] = val
    mv = cp.zeros(32, np.uint32)
    f["probe_movmatrix"]((1,), (32,), (mv,))
    res["movmatrix"] = cp.asnumpy(mv).tolist()
    out_b = cp.zeros(4096, np.uint8)
    f["probe_bulk"]((1,), (128,), (g, out_b, np.int32(4096), np.int32(1)))
    res["bulk 4096"] = bool(cp.array_equal(out_b, g[:4096]))
    save()
    for i, case in enumerate(TMA_CASES):
        key = "tma {} {}x{} box={} sw={} at=({},{}) nan={}".format(*case[:8])
        if len(case) > 8:
            key += " store_at=({},{})".format(*case[8])
        proc = subprocess.run([sys.executable, __file__, "--tma-case", str(i)], capture_output=True, text=True)
        try:
            res[key] = json.loads(proc.stdout.strip().splitlines()[-1])
        except (IndexError, ValueError):
            res[key] = dict(error=(proc.stderr or proc.stdout)[-600:])
        print(key, "error" if "error" in res[key] else "ok", flush=True)
        save()


def _tma_cases():
    cases = []
    for dtype, rows, cols in (("uint8", 40, 96), ("float32", 40, 24)):
        s = np.dtype(dtype).itemsize
        for sw in (128, 64, 32, 0):
            inner = sw or 64
            box = (inner // s, 2048 // inner)          # 2048 bytes a box
            for c0, r0 in ((0, 0), (cols - box[0] // 2, rows - 5), (-box[0] // 2, -3)):
                for nan in ((False, True) if dtype == "float32" and sw == 128 else (False,)):
                    cases.append((dtype, rows, cols, box, sw, c0, r0, nan))
    # run 2: the boxes at negative coordinates stopped the GPU; which half, the load or the store?
    cases.append(("float32", 40, 24, (32, 16), 128, -16, -3, False, (0, 0)))
    cases.append(("float32", 40, 24, (32, 16), 128, 0, 0, False, (-16, -3)))
    cases.append(("float32", 40, 24, (16, 32), 0, -8, 0, False, (0, 0)))
    cases.append(("float32", 40, 24, (16, 32), 0, 0, -3, False, (0, 0)))
    return cases


TMA_CASES = _tma_cases()


def tma_case(i):
    """One TMA box (TMA_CASES[i]): its raw shared bytes, and what a TMA store of it back at the
    same place writes into a zero matrix (clipped at the edges). Prints one JSON line."""
    import cupy as cp
    dtype, rows, cols, box, sw, c0, r0, nan = TMA_CASES[i][:8]
    sc0, sr0 = TMA_CASES[i][8] if len(TMA_CASES[i]) > 8 else (c0, r0)
    f = fns()
    a = (cp.arange(rows * cols, dtype=np.uint32) % 251 + 1).astype(dtype).reshape(rows, cols)
    m = hc.map_of(a, box, sw, nan_fill=nan)
    out = cp.full(2048, 0xEE, np.uint8)
    st = cp.zeros_like(a)
    f["probe_tma<2048, true>"]((1,), (128,), (m, hc.map_of(st, box, sw), out, np.int32(c0), np.int32(r0), np.int32(1),
                                              np.int32(sc0), np.int32(sr0)))
    cp.cuda.runtime.deviceSynchronize()
    print(json.dumps(dict(smem=cp.asnumpy(out).tolist(), stored=cp.asnumpy(st.view(np.uint8)).tolist())))


# --------------------------------------------------------------------------------- ncu
# issue 19, run 2: the .cg sector rule (distinct (src >> 6, dst >> 5) pairs, from run 1) and partial src-size
MORE_CPASYNC = {
    (16, True): ((16, 48, 32, 16), (64, 16, 32, 16), (48, 16, 32, 16), (32, 32, 32, 16), (16, 64, 32, 16),
                 (0, 32, 32, 16), (64, 64, 32, 16), (16, 16, 32, 9), (16, 16, 32, 1), (32, 16, 13, 16)),
    (16, False): ((16, 16, 32, 9), (16, 16, 32, 1), (0, 16, 32, 1)),
    (4, False): ((4, 4, 32, 1), (4, 4, 32, 2), (4, 4, 32, 3)),
    (8, False): ((8, 8, 32, 5), (8, 8, 32, 1)),
}


def patterns():
    """(label, kernel name, grid, block, args builder) of every launch ncu measures."""
    out = []
    for size, cg in ((4, False), (8, False), (16, False), (16, True)):
        n = f"probe_cpasync<{size}, {'true' if cg else 'false'}>"
        for ss, ds, act, src in ((size, size, 32, size), (2 * size, size, 32, size), (128, size, 32, size),
                                 (size, 128, 32, size), (size, size, 17, size), (0, size, 32, size),
                                 (size, size, 32, 0), (size, 2 * size, 32, size)) + MORE_CPASYNC.get((size, cg), ()):
            lab = f"cpasync{size}{'cg' if cg else 'ca'} src_stride={ss} dst_stride={ds} active={act} src_size={src}"
            for warps in ((1, 4) if ss == size and ds == size and act == 32 else (1,)):
                out.append((f"{lab} warps={warps}", n, (1,), (32 * warps,), ("g", "o8", ss, ds, act, src, 0)))
    for kind in ("ldsm", "stsm"):
        for x in (1, 2, 4):
            for t in ("false", "true"):
                for mul, add, pitch in ((1, 0, 16), (1, 0, 128), (1, 0, 144), (1, 0, 32), (5, 3, 16)):
                    out.append((f"{kind} x{x} trans={t} rows=(l*{mul}+{add})%64 pitch={pitch}",
                                f"probe_{kind}<{x}, {t}>", (1,), (64,), ("regs" if kind == "ldsm" else "sh", mul, add, pitch, 0)))
    out.append(("movmatrix", "probe_movmatrix", (1,), (32,), ("mv",)))
    for sw in (0, 128):
        out.append((f"tma load 32x32 f32 sw={sw}", "probe_tma<4096, false>", (1,), (128,), ("map", sw, 0)))
        out.append((f"tma load+store 32x32 f32 sw={sw}", "probe_tma<4096, true>", (1,), (128,), ("map", sw, 0)))
    out.append(("tma load 32x32 f32 sw=128 half outside", "probe_tma<4096, false>", (1,), (128,), ("map", 128, 64)))
    out.append(("tma load+store 32x32 f32 sw=128 half outside", "probe_tma<4096, true>", (1,), (128,), ("map", 128, 64)))
    out.append(("tma load 32x32 f32 sw=128 outside", "probe_tma<4096, false>", (1,), (128,), ("map", 128, 96)))
    out.append(("bulk 4096", "probe_bulk", (1,), (128,), ("g", "o8", 4096, 0)))
    out.append(("mbarrier x4 rounds", "probe_mbarrier", (1,), (128,), (4,)))
    return out


def _args(spec, bufs):
    import cupy as cp
    if spec and spec[0] == "map":
        a = bufs["f32"]
        sw, outside = spec[1], spec[2]
        m = hc.map_of(a, (32, 32), sw)
        return (m, hc.map_of(bufs["f32_out"], (32, 32), sw), bufs["o8"], np.int32(outside), np.int32(0), np.int32(0),
                np.int32(outside), np.int32(0))
    return tuple(bufs[x] if isinstance(x, str) else np.int32(x) for x in spec)


def kernel_cases():
    """The new course kernels at small shapes (the replay's transposes)."""
    cases = []
    for key, shapes in (("tma_tile", [(96, 160), (208, 272)]), ("tma_pipe", [(96, 160), (208, 272)]),
                        ("tma_wide", [(208, 272)]), ("tma_out", [(96, 160), (208, 272)]), ("band", [(100, 130), (96, 160)]),
                        ("tma_copy", [(96, 160)]), ("tma_both", [(96, 160)]),
                        ("async_tile", [(100, 130), (96, 160)]), ("shuffle", [(100, 130)]), ("ldsm", [(96, 160)])):
        for dtype in (np.float32, np.float64, np.float16, np.uint8):
            for rows, cols in shapes:
                if hc.applies(key, rows, cols, dtype) is None:
                    cases.append((key, np.dtype(dtype).name, rows, cols))
    return cases


FEW = ("cpasync16cg src_stride=16 dst_stride=16 active=32 src_size=16 warps=1",
       "cpasync4ca src_stride=4 dst_stride=4 active=32 src_size=4 warps=1",
       "cpasync16ca src_stride=16 dst_stride=128 active=32 src_size=16 warps=1",
       "ldsm x4 trans=true rows=(l*1+0)%64 pitch=16", "ldsm x4 trans=false rows=(l*1+0)%64 pitch=128",
       "stsm x4 trans=false rows=(l*1+0)%64 pitch=16", "movmatrix", "tma load 32x32 f32 sw=128",
       "tma load+store 32x32 f32 sw=128", "tma load 32x32 f32 sw=128 half outside", "bulk 4096", "mbarrier x4 rounds",
       "tma_tile float32 96 160", "async_tile float32 100 130", "ldsm float16 96 160", "tma_both float32 96 160",
       "tma load+store 32x32 f32 sw=128 half outside", "tma load 32x32 f32 sw=128 outside", "tma_pipe float32 208 272",
       "tma_out float32 208 272", "band uint8 100 130", "band float32 100 130",
       "cpasync16cg src_stride=16 dst_stride=16 active=32 src_size=9 warps=1",
       "cpasync4ca src_stride=4 dst_stride=4 active=32 src_size=1 warps=1")


def launch_labels(few):
    """The labels of the launches to measure, in launch order; HOPPER_ONLY (comma-separated label
    beginnings, e.g. "tma_out ,band ") keeps only those (a later run adding what an earlier missed)."""
    only = [x for x in os.environ.get("HOPPER_ONLY", "").split(",") if x]
    labels = [p[0] for p in patterns()] + [" ".join(map(str, c)) for c in kernel_cases()]
    return [x for x in labels if (not few or x in FEW) and (not only or any(x.startswith(o) for o in only))]


def worker(few=False):
    import cupy as cp
    f = fns()
    bufs = dict(g=cp.ones(65536 * 4, np.uint8), o8=cp.zeros(8192, np.uint8), regs=cp.zeros(64 * 4, np.uint32),
                sh=cp.zeros(2048, np.uint16), mv=cp.zeros(32, np.uint32),
                f32=cp.ones((64, 80), np.float32), f32_out=cp.zeros((64, 80), np.float32))
    wanted = set(launch_labels(few))
    launches = []
    for lab, name, grid, block, spec in patterns():
        if lab in wanted:
            launches.append((f[name], grid, block, _args(spec, bufs)))
    cases = [c for c in kernel_cases() if " ".join(map(str, c)) in wanted]
    hc.prepare([(key, dt, {}) for key, dt, rows, cols in cases])     # one NVRTC run per file, wanted ones only
    for key, dt, rows, cols in cases:
        a = (cp.random.random((rows, cols)) * 100 + 1).astype(dt)
        out = cp.zeros((rows, cols) if key == "tma_copy" else (cols, rows), dt)
        run = hc.launcher(key, dt)
        launches.append((None, run, out, a))
    cp.cuda.runtime.deviceSynchronize()                 # everything compiled and filled: launch
    for item in launches:
        if item[0] is None:
            item[1](item[2], item[3])
        else:
            fn, grid, block, args = item
            fn(grid, block, args)
    cp.cuda.runtime.deviceSynchronize()


def run_ncu(out_dir):
    """Stage 1: every launch, the course's metrics (and a few more); stage 2: the launches of FEW,
    every LDGSTS/LDSM/STSM/TMA/bulk metric ncu knows."""
    ncu = shutil.which("ncu") or "/usr/local/cuda/bin/ncu"
    extra, query = metrics_to_collect(ncu)
    (out_dir / "ncu_query_metrics.txt").write_text(query)
    result = {}
    for stage, metrics, few in (("all", COURSE_METRICS + ALWAYS, False), ("few", COURSE_METRICS + ALWAYS + extra, True)):
        cmd = [ncu, "--clock-control", "none", "--metrics", ",".join(metrics), "--csv", "--print-units", "base",
               "--kernel-name", "regex:probe_|tma_|async_tile|shuffle|ldsm|band", sys.executable, __file__,
               "--worker" + ("-few" if few else "")]
        proc = _ncu(cmd, metrics)
        (out_dir / f"ncu_log_{stage}.txt").write_text(proc.stderr[-20000:] + proc.stdout[:3000])
        by_id = {}
        for row in csv.DictReader(io.StringIO(proc.stdout[proc.stdout.find('"ID"'):])):
            v = row["Metric Value"].replace(",", "")
            try:
                v = float(v)
            except ValueError:
                pass
            by_id.setdefault(int(row["ID"]), {"kernel": row["Kernel Name"]})[row["Metric Name"]] = v
        labels = launch_labels(few)
        got = [by_id[k] for k in sorted(by_id)]
        result[stage] = dict(metrics=metrics, launches=len(got), expected=len(labels),
                             records=[dict(label=lab, ncu=g) for lab, g in zip(labels, got)])
        print(f"ncu {stage}: {len(got)} launches for {len(labels)} labels; {len(metrics)} metrics", flush=True)
        for r in result[stage]["records"]:
            short = {k.replace(".sum", ""): v for k, v in r["ncu"].items() if k != "kernel" and v}
            print(" ", r["label"], short)
        (out_dir / "hopper_ncu.json").write_text(json.dumps(result, indent=1))


def _ncu(cmd, metrics):
    """Run ncu; when it refuses metric names (a ratio given .sum...), drop those it names and retry."""
    for _ in range(3):
        proc = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=str(hc.HERE.parent)))
        if '"ID"' in proc.stdout:
            return proc
        said = proc.stdout + proc.stderr
        bad = [m for m in metrics if m in said or m.removesuffix(".sum") in said]
        print("ncu refused:", bad or said[-500:], flush=True)
        if not bad:
            return proc
        metrics[:] = [m for m in metrics if m not in bad]
        cmd[cmd.index("--metrics") + 1] = ",".join(metrics)
    return proc


KNOWN_EXTRA = ["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ldgsts.sum",
               "l1tex__m_xbar2l1tex_read_bytes_mem_global_op_tma_ld.sum", "l1tex__m_xbar2l1tex_read_sectors_mem_global_op_tma_ld.sum",
               "l1tex__m_l1tex2xbar_write_bytes_mem_global_op_tma_st.sum", "l1tex__m_l1tex2xbar_write_sectors_mem_global_op_tma_st.sum",
               "smsp__inst_executed_op_tma_ld.sum", "smsp__inst_executed_op_tma_st.sum", "smsp__inst_executed_op_ldgsts.sum",
               "smsp__sass_inst_executed_op_ldgsts.sum", "smsp__inst_executed_op_ldsm.sum", "smsp__inst_executed_op_shared_stsm.sum",
               "l1tex__t_sectors_pipe_lsu_mem_global_op_ldgsts_cache_access.sum", "smsp__sass_inst_executed_op_ldgsts_cache_bypass.sum",
               "l1tex__m_xbar2l1tex_read_sectors_mem_global_op_ldgsts_cache_access.sum"]


def metrics_to_collect(ncu):
    if os.environ.get("HOPPER_QUERY") != "1":
        return list(KNOWN_EXTRA), ""
    q = subprocess.run([ncu, "--query-metrics", "--chip", "gh100"], capture_output=True, text=True).stdout
    extra = sorted({w[0] + ".sum" for w in (line.split() for line in q.splitlines())
                    if w and EXTRA.match(w[0]) and not {"Ratio", "Throughput"} & set(w)})
    return [m for m in extra if m not in ALWAYS][:80], q


def main():
    if "--worker" in sys.argv or "--worker-few" in sys.argv:
        return worker(few="--worker-few" in sys.argv)
    if sys.argv[1] == "--tma-case":
        return tma_case(int(sys.argv[2]))
    if sys.argv[1] == "negative":                    # python hopper_probe.py negative OUT.json
        res = {}
        for i, case in enumerate(TMA_CASES):
            if len(case) > 8:
                proc = subprocess.run([sys.executable, __file__, "--tma-case", str(i)], capture_output=True, text=True)
                ok = proc.returncode == 0 and proc.stdout.strip()
                res[str(case)] = json.loads(proc.stdout.strip().splitlines()[-1]) if ok else dict(error=proc.stderr[-600:])
                print(case, "ok" if ok else "error", flush=True)
        open(sys.argv[2], "w").write(json.dumps(res))
        return None
    what, out = sys.argv[1], sys.argv[2]
    if what == "semantics":
        semantics(out)
        print("wrote", out)
    elif what == "ncu":
        from pathlib import Path
        Path(out).mkdir(parents=True, exist_ok=True)
        run_ncu(Path(out))


if __name__ == "__main__":
    main()

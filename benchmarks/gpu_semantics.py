"""Run every PTX semantics kernel on the GPU and in the simulator, on identical inputs; compare bits.

    python benchmarks/gpu_semantics.py --out DIR [--only SUBSTRING]

The kernels, inputs (edge values + random) and Python references are the test suite's
(tests/sim/ptx_cases.py, ptx_float_cases.py, ptx_warp_cases.py). For each instruction it reports

- GPU=sim:  elements where the simulator's bits equal the GPU's;
- GPU=ISA:  among elements the PTX ISA specifies, how many GPU results equal the reference
            (a check of the reference itself);
- open:     elements the ISA leaves open (division by zero, NaN bits, abs(MIN), -0 vs +0...),
            with the GPU's and the simulator's answers side by side — what only hardware can say.

Approximate instructions (.approx, div.full) report the largest ulp distance GPU vs simulator.
Writes DIR/gpu_semantics.json and prints the table. Besides counts and examples, each record
keeps every GPU answer, so tests/sim/test_gpu_semantics_replay.py can hold the simulator to the
hardware without a GPU: ``inputs_sha`` (fingerprint of the inputs), ``gpu_sha`` (of all GPU
answers), ``answers`` (index -> GPU bits wherever the ISA leaves the result open or the GPU
differs from the reference; elsewhere the GPU gave the reference's bits), all bits for
approximate instructions, and fingerprints of the order-free outputs of the warp/atomic
kernels. Without a GPU it says so and compares the simulator with the references only (what
the tests do). Takes well under two minutes on an H100.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "sim"))

import course_lib as cl  # noqa: E402
from course_lib.compile import nvrtc  # noqa: E402
from course_lib import gpu  # noqa: E402

import ptx_cases as C  # noqa: E402
import ptx_reference as R  # noqa: E402
import ptx_warp_cases as W  # noqa: E402

# Inputs added to particular cases: the questions the ISA leaves to the hardware.
PROBES = {
    # exact product just below the smallest normal that rounds up to it: flush before or after rounding?
    "k_mul_rn_ftz_f32": [(0x20000000, 0x1F7FFFFF), (0xA0000000, 0x1F7FFFFF)],
    "k_fma_rn_ftz_f32": [(0x20000000, 0x1F7FFFFF, 0), (0x20000000, 0x1F7FFFFF, 0x80000000)],
    "k_add_rn_sat_f32": [(0x80000000, 0x80000000), (0xBF800000, 0x3F800000)],     # -0 under .sat
    "k_cvt_sat_f32_f32": [(0x80000000,), (0xFFC00000,)],
    "k_min_f32": [(0, 0x80000000), (0x80000000, 0)],
    "k_max_f32": [(0, 0x80000000), (0x80000000, 0)],
    "k_slct_f32_f32": [(0x3F800000, 0x40000000, 0x7FC00000), (0x3F800000, 0x40000000, 0x80000000)],
}


def case_columns(case, seed):
    """The inputs a run feeds one case: its edge and random rows, then its PROBES rows."""
    cols = case.inputs(np.random.default_rng(seed))
    for row in PROBES.get(case.name, []):
        for c, v in zip(cols, row):
            c.append(v)
    return cols


def fingerprint(values):
    """Short hash of a list of ints (inputs or answers) or of an array's bytes."""
    data = values.tobytes() if isinstance(values, np.ndarray) else json.dumps(values).encode()
    return hashlib.sha256(data).hexdigest()[:16]


def gpu_present():
    if os.environ.get("COURSE_LIB_BACKEND", "").lower() in ("sim", "cpu", "simulator"):
        return False
    return gpu.available()


def launch(fn, grid, block, args, on_gpu):
    args = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    if on_gpu:
        fn(grid, block, tuple(args))
    else:
        fn.simulate(grid, block, tuple(args), echo=False, check_races=False)
    return args


def ulps(a, b, fmt):
    """Distance in units in the last place between two bit patterns of one float format."""
    w = R.width(fmt)
    def key(x):
        return -(x & ((1 << (w - 1)) - 1)) if x >> (w - 1) else x
    return abs(key(a) - key(b))


def run_case(case, fn, seed, gpu):
    cols = case_columns(case, seed)
    n = len(cols[0])
    arrays = case.arrays(cols)
    out = np.zeros(n, C.NP_TYPE[case.out])
    grid, block = ((n + 255) // 256, 1, 1), (256, 1, 1)
    bits = lambda a: [int(x) for x in a[0].view(f"u{a[0].itemsize}")]
    sim = bits(launch(fn, grid, block, [out, *arrays, np.int32(n)], False))
    dev = bits(launch(fn, grid, block, [out, *arrays, np.int32(n)], True)) if gpu else None
    ref = None if case.approx else case.isa_expected(cols)
    rec = dict(ptx=case.ptx, kernel=case.name, n=n, unspecified=case.unspecified, inputs_sha=fingerprint(cols))
    if gpu:
        rec["gpu_sha"] = fingerprint(dev)
    show = lambda i: [hex(c[i]) for c in cols]
    if case.approx:
        fmt = case.out_t
        exact = [case.ref(*v) for v in zip(*cols)]
        other = dev if gpu else sim
        finite = [i for i, e in enumerate(exact) if isinstance(e, int) and not R.is_nan_bits(e, fmt)]
        rec["max_ulps_vs_exact"] = max((ulps(other[i], exact[i], fmt) for i in finite), default=0)
        if gpu:
            rec["agree"] = sum(d == s for d, s in zip(dev, sim))
            rec["max_ulps_gpu_sim"] = max((ulps(dev[i], sim[i], fmt) for i in finite), default=0)
            rec["examples"] = [dict(inputs=show(i), gpu=hex(dev[i]), sim=hex(sim[i])) for i in range(n) if dev[i] != sim[i]][:5]
            rec["answers"] = {i: hex(v) for i, v in enumerate(dev)}
        return rec
    spec = [i for i, e in enumerate(ref) if isinstance(e, int) or isinstance(e, R.PAIR) and all(isinstance(h, int) for h in e)]
    in_spec = set(spec)
    open_ = [i for i in range(n) if i not in in_spec]
    truth = dev if gpu else sim
    rec["spec_total"] = len(spec)
    rec["spec_ok"] = sum(R.matches(ref[i], truth[i], case.out_t) for i in spec)
    rec["spec_bad"] = [dict(inputs=show(i), got=hex(truth[i]), ref=repr(ref[i]) if not isinstance(ref[i], int) else hex(ref[i]))
                       for i in spec if not R.matches(ref[i], truth[i], case.out_t)][:5]
    rec["open_total"] = len(open_)
    if gpu:
        rec["agree"] = sum(d == s for d, s in zip(dev, sim))
        rec["examples"] = [dict(inputs=show(i), gpu=hex(dev[i]), sim=hex(sim[i]), ref=repr(ref[i]) if not isinstance(ref[i], int) else hex(ref[i]))
                           for i in range(n) if dev[i] != sim[i]][:5]
        pairs = {}
        for i in open_:
            pairs.setdefault((dev[i], sim[i]), []).append(i)
        # each distinct (GPU, simulator) answer once: disagreements first, then the most common
        order = sorted(pairs.items(), key=lambda kv: (kv[0][0] == kv[0][1], -len(kv[1])))
        rec["open_answers"] = [dict(inputs=show(idx[0]), gpu=hex(g), sim=hex(s), same=g == s, count=len(idx))
                               for (g, s), idx in order[:8]]
        rec["open_agree"] = sum(dev[i] == sim[i] for i in open_)
        rec["answers"] = {i: hex(dev[i]) for i in range(n) if i not in in_spec or not R.matches(ref[i], dev[i], case.out_t)}
    return rec


def run_special(sp, fn, rng_seed, gpu):
    make = lambda: sp.make_args(np.random.default_rng(rng_seed))
    sim_args = launch(fn, sp.grid, sp.block, make(), False)
    rec = dict(ptx=sp.ptx, kernel=sp.name, note=sp.note, sim_check=sp.check(sim_args))
    if gpu:
        dev_args = launch(fn, sp.grid, sp.block, make(), True)
        rec["gpu_check"] = sp.check(dev_args)
        rec["gpu_sha"] = [fingerprint(np.ascontiguousarray(a)) for a in sp.deterministic(dev_args)]
        same = [a.tobytes() == b.tobytes() for a, b in zip(sp.deterministic(dev_args), sp.deterministic(sim_args))]
        rec["agree"] = all(same)
        if not rec["agree"]:
            rec["examples"] = [dict(output=i, gpu=str(a.reshape(-1)[:8]), sim=str(b.reshape(-1)[:8]))
                               for i, (a, b, ok) in enumerate(zip(sp.deterministic(dev_args), sp.deterministic(sim_args), same)) if not ok]
    return rec


def differs(r):
    if "n" in r:
        return r.get("agree", r["n"]) != r["n"]
    return r.get("agree") is False


def table(records, gpu):
    lines = []
    head = f"{'instruction':34s} {'n':>5s}  {'GPU=sim':>11s}  {'GPU=ISA' if gpu else 'sim=ISA':>11s}  open cases: {'GPU | sim' if gpu else 'sim'}"
    lines.append(head)
    lines.append("-" * len(head))
    for r in records:
        if "n" not in r:                   # a warp/atomic/memory kernel
            status = ("agree" if r.get("agree") else "DISAGREE") if gpu else "-"
            checks = "ok" if not (r["gpu_check"] if gpu else r["sim_check"]) else "FAIL"
            lines.append(f"{r['ptx'][:34]:34s} {'':>5s}  {status:>11s}  {checks:>11s}  {r.get('note', '')}")
            continue
        agree = f"{r['agree']}/{r['n']}" if gpu else "-"
        if "max_ulps_vs_exact" in r:
            extra = f"approx: {r.get('max_ulps_gpu_sim', '-')} ulp GPU vs sim, {r['max_ulps_vs_exact']} ulp vs exact"
            lines.append(f"{r['ptx'][:34]:34s} {r['n']:5d}  {agree:>11s}  {'':>11s}  {extra}")
            continue
        isa = f"{r['spec_ok']}/{r['spec_total']}"
        opens = ""
        if r["open_total"]:
            if gpu:
                opens = f"{r['open_agree']}/{r['open_total']} same; " + "; ".join(
                    f"({','.join(a['inputs'])})->{a['gpu']}|{a['sim']} x{a['count']}" for a in r["open_answers"][:3])
            else:
                opens = f"{r['open_total']} ({r['unspecified']})"
        mark = "" if (not gpu or r["agree"] == r["n"]) else "  <-- "
        lines.append(f"{r['ptx'][:34]:34s} {r['n']:5d}  {agree:>11s}  {isa:>11s}  {opens[:150]}{mark}")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True, help="folder for gpu_semantics.json")
    ap.add_argument("--only", default="", help="only instructions whose PTX contains this text")
    ap.add_argument("--seed", type=int, default=1234)
    opts = ap.parse_args()
    out_dir = Path(opts.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    gpu = gpu_present()
    t0 = time.perf_counter()
    env = dict(nvrtc=".".join(map(str, nvrtc.nvrtc_version())), gpu=None)
    if gpu:
        d = gpu.info()
        env["gpu"] = f"{d.name} (sm_{d.arch})"
        print(f"GPU: {env['gpu']}, NVRTC {env['nvrtc']}")
    else:
        print(f"no GPU: comparing the simulator with the Python references only (NVRTC {env['nvrtc']})")
    records = []
    for fname, src, cases in C.modules():
        mod = cl.RawModule(code=src, options=("-std=c++17",), filename=fname)
        for case in cases:
            if opts.only and opts.only not in case.ptx:
                continue
            try:
                records.append(run_case(case, mod.get_function(case.name), opts.seed, gpu))
            except Exception as exc:   # one failing kernel must not hide the rest
                records.append(dict(ptx=case.ptx, kernel=case.name, n=0, error=f"{type(exc).__name__}: {exc}"))
    mods = {}
    for sp in W.SPECIALS:
        if opts.only and opts.only not in sp.ptx:
            continue
        mod = mods.setdefault(sp.source, cl.RawModule(code=sp.source, options=("-std=c++17",), filename="warp.cu"))
        try:
            records.append(run_special(sp, mod.get_function(sp.name), 7, gpu))
        except Exception as exc:
            records.append(dict(ptx=sp.ptx, kernel=sp.name, note="", sim_check=[f"{type(exc).__name__}: {exc}"],
                                gpu_check=["not run"], agree=False))
    errors = [r for r in records if "error" in r]
    good = [r for r in records if "error" not in r]
    print(table(good, gpu))
    for r in errors:
        print(f"ERROR {r['ptx']}: {r['error'][:300]}")
    disagree = [r for r in good if gpu and differs(r)]
    print(f"\n{len(good)} kernels, {len(errors)} errors, {len(disagree) if gpu else '-'} with GPU/sim differences, "
          f"{time.perf_counter() - t0:.0f} s")
    if gpu and disagree:
        print("\nDisagreements (inputs -> GPU | simulator | reference):")
        for r in disagree:
            for e in r.get("examples", [])[:3]:
                print(f"  {r['ptx']}: {e}")
    (out_dir / "gpu_semantics.json").write_text(json.dumps(dict(env=env, records=records), indent=1, default=str))
    print(f"wrote {out_dir / 'gpu_semantics.json'}")


if __name__ == "__main__":
    main()

"""Recover per-element GPU answers from a gpu_semantics run that saved only counts and examples.

    git worktree add /tmp/sim3942 3942e9e
    PYTHONPATH=/tmp/sim3942 python benchmarks/semantics_answers.py \
        benchmarks/results/h100_2026-11-22/gpu_semantics.json tests/sim/gpu_answers/h100_2026-11-22.json.gz

Runs of ``gpu_semantics.py`` now keep every GPU answer. The H100 run of 2026-11-22 kept, per
instruction, how many elements the GPU and the simulator agreed on, up to five disagreements,
up to eight distinct (GPU, simulator) answers where the ISA leaves the result open, and up to
five deviations from the ISA reference. Together with *the simulator the run compared against*
(run this with that commit's ``course_lib`` first on the path, as above: the simulator's answers
were those of 3942e9e until f02e9e0 gave it the hardware's) that pins down:

- every answer of an instruction where GPU and simulator agreed on all elements: the GPU's
  answers *are* the simulator's. Stored as a fingerprint of all of them (``gpu_sha``) plus the
  answers the ISA leaves open (``answers``, index -> bits), so a failure can say which changed;
- elsewhere, the answers the run names, those where the ISA reference is exact and the run
  saw no deviation, and open answers implied by a complete table of (GPU, simulator) pairs.
  Stored as a fingerprint of those answers in index order (``known_sha``) and the ones that
  are not the reference's (``answers``). What remains is ``partial``: those elements'
  indices, the simulator's answers at the run, how many of them the GPU matched, and (from a
  complete pair table) how often each (GPU, simulator) pair of answers occurred. A simulator
  that gives the GPU's answers must reproduce those counts;
- approximate instructions: the saved examples, the agreement count and the simulator's
  answers at the run (an exact model of the hardware must reproduce the count);
- warp/atomic kernels: fingerprints of their order-free outputs when GPU and simulator agreed,
  or the GPU's values when the saved example shows the whole output.

The result is what ``tests/sim/test_gpu_semantics_replay.py`` replays.
"""
from __future__ import annotations

import gzip
import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT / "tests" / "sim"))

import course_lib as cl  # noqa: E402
import gpu_semantics as G  # noqa: E402
import ptx_cases as C  # noqa: E402
import ptx_reference as R  # noqa: E402
import ptx_warp_cases as W  # noqa: E402


def simulate(case, fn, cols):
    n = len(cols[0])
    out = np.zeros(n, C.NP_TYPE[case.out])
    res = G.launch(fn, ((n + 255) // 256, 1, 1), (256, 1, 1), [out, *case.arrays(cols), np.int32(n)], False)
    return [int(x) for x in res[0].view(f"u{res[0].itemsize}")]


def exact_ref(e):
    """The reference's bits where the ISA fixes them, else None."""
    if isinstance(e, int):
        return e
    if isinstance(e, R.PAIR) and all(isinstance(h, int) for h in e):
        return e[0] | (e[1] << 16)
    return None


def derive(rec, case, cols, sim):
    n = len(sim)
    key = lambda i: tuple(hex(c[i]) for c in cols)
    out = dict(kernel=rec["kernel"], ptx=rec["ptx"], n=n, inputs_sha=G.fingerprint(cols))
    named = {}
    for e in rec.get("examples", []) + rec.get("open_answers", []):
        named[tuple(e["inputs"])] = int(e["gpu"], 16)
    for e in rec.get("spec_bad", []):
        named[tuple(e["inputs"])] = int(e["got"], 16)
    for i in range(n):     # the run's simulator must be the one these answers were compared with
        for e in rec.get("examples", []) + rec.get("open_answers", []):
            if tuple(e["inputs"]) == key(i):
                assert int(e["sim"], 16) == sim[i], (rec["ptx"], e, hex(sim[i]), "not the run's simulator")
    if case.approx:
        out.update(approx=True, agree=rec["agree"], max_ulps=rec["max_ulps_gpu_sim"], sim=sim,
                   answers={i: named[key(i)] for i in range(n) if key(i) in named})
        return out
    ref = [exact_ref(e) for e in case.isa_expected(cols)]
    assert sum(r is not None for r in ref) == rec["spec_total"], rec["ptx"]
    if rec["agree"] == n:
        out["gpu_sha"] = G.fingerprint(sim)
        out["answers"] = {i: sim[i] for i in range(n) if ref[i] is None or ref[i] != sim[i]}
        return out
    gpu = [named.get(key(i)) for i in range(n)]
    deviations = rec["spec_total"] - rec["spec_ok"]
    if sum(1 for i in range(n) if ref[i] is not None and key(i) in named and named[key(i)] != ref[i]) == deviations:
        gpu = [g if (g is not None or r is None) else r for g, r in zip(gpu, ref)]
    pairs = rec["open_answers"]
    complete = sum(p["count"] for p in pairs) == rec["open_total"]
    if complete:
        by_sim = {}
        for p in pairs:
            by_sim.setdefault(int(p["sim"], 16), set()).add(int(p["gpu"], 16))
        for i in range(n):
            if gpu[i] is None and ref[i] is None and len(by_sim.get(sim[i], ())) == 1:
                gpu[i] = next(iter(by_sim[sim[i]]))
    out["answers"] = {i: g for i, g in enumerate(gpu) if g is not None and (ref[i] is None or g != ref[i])}
    unknown = [i for i in range(n) if gpu[i] is None]
    if not unknown:
        out["gpu_sha"] = G.fingerprint(gpu)
    else:
        out["known_sha"] = G.fingerprint([g for g in gpu if g is not None])
        known_agree = sum(1 for i in range(n) if gpu[i] is not None and gpu[i] == sim[i])
        pair_counts = None
        if complete and all(ref[i] is None for i in unknown):
            c = Counter({(int(p["gpu"], 16), int(p["sim"], 16)): p["count"] for p in pairs})
            c.subtract(Counter((gpu[i], sim[i]) for i in range(n) if gpu[i] is not None and ref[i] is None))
            pair_counts = [[g, s, k] for (g, s), k in c.items() if k]
        out["partial"] = dict(index=unknown, sim=[sim[i] for i in unknown], agree=rec["agree"] - known_agree,
                              pairs=pair_counts)
    return out


def derive_special(rec, sp, mod):
    args = G.launch(mod.get_function(sp.name), sp.grid, sp.block, sp.make_args(np.random.default_rng(7)), False)
    outs = [np.ascontiguousarray(a) for a in sp.deterministic(args)]
    out = dict(kernel=rec["kernel"], ptx=rec["ptx"])
    if rec.get("agree"):
        out["gpu_sha"] = [G.fingerprint(a) for a in outs]
        return out
    shas = []
    for a, ex in zip(outs, rec.get("examples", [])):
        if a.size > 8:
            return out                  # the saved example shows only the first eight values
        vals = np.array(ex["gpu"].strip("[]").split(), np.float64).astype(a.dtype).reshape(a.shape)
        shas.append(G.fingerprint(np.ascontiguousarray(vals)))
    out["gpu_sha"] = shas
    return out


def main():
    run_path, out_path = Path(sys.argv[1]), Path(sys.argv[2])
    run = json.loads(run_path.read_text())
    records = {r["kernel"]: r for r in run["records"]}
    commit = subprocess.run(["git", "-C", str(Path(cl.__file__).parent), "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip()
    derived = []
    for fname, src, cases in C.modules():
        mod = cl.RawModule(code=src, options=("-std=c++17",), filename=fname)
        for case in cases:
            if case.name in records:
                cols = G.case_columns(case, 1234)
                derived.append(derive(records[case.name], case, cols, simulate(case, mod.get_function(case.name), cols)))
    mods = {}
    for sp in W.SPECIALS:
        if sp.name in records:
            mod = mods.setdefault(sp.source, cl.RawModule(code=sp.source, options=("-std=c++17",), filename="warp.cu"))
            derived.append(derive_special(records[sp.name], sp, mod))
    doc = dict(run=str(run_path.relative_to(ROOT)) if run_path.is_absolute() else str(run_path), env=run["env"],
               simulator=f"course_lib at {commit}", records=derived)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(out_path, "wt") as f:
        json.dump(doc, f, separators=(",", ":"))
    partial = [d["ptx"] for d in derived if "partial" in d]
    print(f"{len(derived)} records; {sum('gpu_sha' in d for d in derived)} fully known; "
          f"{len(partial)} partly known: {', '.join(partial)}; wrote {out_path} ({out_path.stat().st_size // 1024} KiB)")


if __name__ == "__main__":
    main()

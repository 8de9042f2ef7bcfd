"""The simulator against an H100's answers for every PTX semantics case, without a GPU.

``benchmarks/gpu_semantics.py`` ran each one-instruction kernel of the catalog (``ptx_cases``
and friends) on an H100 and in the simulator on the same inputs (2026-11-22). What that run
saved, turned into per-element answers by ``benchmarks/semantics_answers.py``, is in
``tests/sim/gpu_answers/``; here every kernel runs again in the simulator on the same inputs and:

- where the run pins down every GPU answer (defined by the ISA or left open: NaN bits,
  division by zero, -0 under .sat...), all of the simulator's answers must be those bits;
- where the run saved only part (counts and examples), every saved answer must be matched
  exactly and the rest must reproduce the run's counts (how many answers equalled the
  simulator's of the day, and how often the GPU gave each value);
- approximate instructions (.approx, div.full) must stay within the ulp distance to the
  hardware that ``course_lib/sim/arith/alu.py`` documents;
- warp, atomic and memory kernels must produce the GPU's order-free outputs.
"""
import gzip
import json
import os
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

import course_lib as cl

import ptx_cases as C
import ptx_warp_cases as W

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
import gpu_semantics as G  # noqa: E402

# The 2026-11-22 run saved counts and examples; semantics_answers.py made per-element answers of
# them. A run of today's gpu_semantics.py carries its answers itself: GPU_SEMANTICS_RUN=<its
# gpu_semantics.json> replays it, and it can replace this file.
ANSWERS = Path(os.environ.get("GPU_SEMANTICS_RUN", Path(__file__).resolve().parent / "gpu_answers" / "h100_2026-11-22.json.gz"))


def _load(path):
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt") as f:
        return json.load(f)


RECORDS = {r["kernel"]: r for r in _load(ANSWERS)["records"]}

# Worst ulp distance from the H100 of the simulator's approximate instructions (alu.py says why)
APPROX_ULPS = {"div.approx.f32": 2, "div.full.f32": 2, "div.approx.ftz.f32": 2, "sqrt.approx.f32": 1,
               "rcp.approx.f32": 1, "rsqrt.approx.f32": 1, "ex2.approx.f32": 2, "lg2.approx.f32": 12,
               "sin.approx.f32": 797, "cos.approx.f32": 1096, "tanh.approx.f32": 114, "ex2.approx.f16": 1,
               "rcp.approx.ftz.f64": 0, "rsqrt.approx.f64": 1}

MODULES = C.modules()
MODULE_OF = {case.name: fname for fname, _, cases in MODULES for case in cases}


@pytest.fixture(scope="module")
def compiled():
    mods = {fname: cl.RawModule(code=src, options=("-std=c++17",), filename=fname) for fname, src, _ in MODULES}
    for sp in W.SPECIALS:
        mods.setdefault(sp.source, cl.RawModule(code=sp.source, options=("-std=c++17",), filename="special.cu"))
    return mods


def simulate(compiled, case, cols):
    n = len(cols[0])
    out = np.zeros(n, C.NP_TYPE[case.out])
    fn = compiled[MODULE_OF[case.name]].get_function(case.name)
    fn.simulate(((n + 255) // 256, 1, 1), (256, 1, 1), (out, *case.arrays(cols), np.int32(n)),
                echo=False, check_races=False)
    return [int(x) for x in out.view(f"u{out.itemsize}")]


def _answers(rec):
    return {int(i): (int(v, 16) if isinstance(v, str) else v) for i, v in rec.get("answers", {}).items()}


def _where_differs(case, cols, got, rec):
    """Readable list of elements where the simulator's bits are not the GPU's (for messages)."""
    answers = _answers(rec)
    show = lambda i: "(" + ", ".join(hex(c[i]) for c in cols) + ")"
    bad = [f"{show(i)} -> sim {got[i]:#x}, GPU {g:#x}" for i, g in sorted(answers.items()) if got[i] != g]
    if not bad:     # then it is an element where the GPU gave the ISA reference's bits
        ref = case.isa_expected(cols)
        bad = [f"{show(i)} -> sim {got[i]:#x}, GPU {e:#x} (the ISA's)" for i, e in enumerate(ref)
               if isinstance(e, int) and i not in answers and got[i] != e]
    return f"{len(bad)} differ, e.g. " + "; ".join(bad[:4])


NUMERIC = [c for c in C.CASES if c.name in RECORDS]


@pytest.mark.parametrize("case", NUMERIC, ids=lambda c: c.ptx)
def test_simulator_gives_the_gpus_answers(compiled, case):
    rec = RECORDS[case.name]
    cols = G.case_columns(case, 1234)
    assert G.fingerprint(cols) == rec["inputs_sha"], \
        f"{case.ptx}: inputs differ from the run's (ptx_edges changed?); rerun benchmarks/gpu_semantics.py on a GPU"
    got = simulate(compiled, case, cols)
    if case.approx:
        _check_approx(case, cols, got, rec)
        return
    if "gpu_sha" in rec:
        assert G.fingerprint(got) == rec["gpu_sha"], f"{case.ptx}: {_where_differs(case, cols, got, rec)}"
        return
    part = rec["partial"]
    unknown = set(part["index"])
    known = [g for i, g in enumerate(got) if i not in unknown]
    assert G.fingerprint(known) == rec["known_sha"], f"{case.ptx}: {_where_differs(case, cols, got, rec)}"
    rest = [got[i] for i in part["index"]]
    same = sum(g == s for g, s in zip(rest, part["sim"]))
    assert same == part["agree"], \
        f"{case.ptx}: of {len(rest)} answers the run did not save, the GPU matched the simulator of the day on " \
        f"{part['agree']}, this simulator on {same}"
    if part["pairs"] is not None:     # how often each (GPU, simulator of the day) pair occurred
        want = Counter({(g, s): k for g, s, k in part["pairs"]})
        have = Counter(zip(rest, part["sim"]))
        assert have == want, f"{case.ptx}: (GPU, day's simulator) pairs {_hexed(want)}, (this simulator, ...) {_hexed(have)}"


def _hexed(counter):
    return {(hex(a), hex(b)): k for (a, b), k in counter.items()}


def _check_approx(case, cols, got, rec):
    fmt = case.out_t
    limit = APPROX_ULPS[case.ptx]
    worst = max((G.ulps(got[i], g, fmt) for i, g in _answers(rec).items()), default=0)
    assert worst <= limit, f"{case.ptx}: {worst} ulp from the GPU on a saved answer (documented: {limit})"
    if limit == 0 and "sim" in rec:   # only examples saved: the run's statistics must come out too
        same = sum(g == s for g, s in zip(got, rec["sim"]))
        far = max(G.ulps(g, s, fmt) for g, s in zip(got, rec["sim"]))
        assert (same, far) == (rec["agree"], rec["max_ulps"]), \
            f"{case.ptx}: the GPU matched the simulator of the day {rec['agree']} times, at most {rec['max_ulps']} ulp " \
            f"from it; this one {same} times, at most {far} ulp"


SPECIAL = [sp for sp in W.SPECIALS if sp.name in RECORDS and "gpu_sha" in RECORDS[sp.name]]


@pytest.mark.parametrize("sp", SPECIAL, ids=lambda s: s.name)
def test_warp_and_atomic_outputs_are_the_gpus(compiled, sp):
    args = sp.make_args(np.random.default_rng(7))
    compiled[sp.source].get_function(sp.name).simulate(sp.grid, sp.block, tuple(args), echo=False, check_races=False)
    got = [G.fingerprint(np.ascontiguousarray(a)) for a in sp.deterministic(args)]
    assert got == RECORDS[sp.name]["gpu_sha"], f"{sp.ptx}: outputs {[np.asarray(a).reshape(-1)[:8] for a in sp.deterministic(args)]}"


def test_the_replay_covers_the_whole_run():
    """Every kernel the run measured is replayed (a record without its case would go unchecked)."""
    replayed = {c.name for c in NUMERIC} | {sp.name for sp in SPECIAL}
    assert set(RECORDS) == replayed, sorted(set(RECORDS) - replayed)

"""The simulator against what an H100 measured (ncu --clock-control none, 2026-11-22 to -24).

benchmarks/results/h100_2026-11-2* keep the hardware's numbers, so this runs without a GPU:
- 738 single-warp shared-memory patterns (benchmarks/ncu_shared_probe.py, 2026-11-22): every one agrees;
- every course kernel x dtype x shape and the memory-rules patterns (benchmarks/ncu_compare.py) on
  all eight metrics: the latest run is replayed, and every launch of the earlier runs is in it with
  the same counts (so it is replayed too), except two launches whose
  hardware count varies between runs, listed below with the reason, and launches with TMA stores
  whose blocks share SMs (2026-11-26 final run; probe_tma_concurrency.py there): ncu counts extra
  shared wavefronts that vary launch to launch, which the simulator's result says in a note;
- Hopper's data movement (issue 19, benchmarks/hopper_probe.py, 2026-11-26): the cp.async, ldmatrix,
  stmatrix, movmatrix, bulk, mbarrier and TMA patterns and the new kernels' launches (tma_tile, tma_pipe,
  tma_copy, tma_both, async_tile, shuffle, ldsm; tma_out, tma_wide and band from run 4) on the eight
  metrics, and where ncu collected them the TMA counters, all through Function.simulate.
"""
import json
import sys
from pathlib import Path

import numpy as np
import pytest

from course_lib.sim.movement import tma
from course_lib.sim.results.async_result import SHARED_BY_BLOCKS_NOTE
from course_lib.sim.results.metrics import LDGSTS_NAMES

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "benchmarks" / "results" / "h100_2026-11-22"
NCU_RUNS = ["h100_2026-11-22", "h100_2026-11-23", "h100_2026-11-24", "h100_2026-11-24b", "h100_2026-11-26_final"]
FINAL = RESULTS.parent / "h100_2026-11-26_final"
sys.path.insert(0, str(ROOT / "benchmarks"))

import hopper_launches as hl  # noqa: E402
import ncu_compare  # noqa: E402
import ncu_shared_probe  # noqa: E402

# One or two shared store wavefronts (and as many conflicts) more on the GPU than any rule predicts,
# in some runs of a launch and not in others. Both are fast.cu with 2-byte elements, whose shared
# stores are full-warp, unit-stride 16-byte stores (4 wavefronts, no conflict) issued while the
# block's global loads are still filling L1; memory-rules.md notes that the hardware counter can
# include arbitration with other L1 traffic. Counted by ncu (sst.wf):
#   fast float16 100x130: 545 and 544 twice each (2026-11-22, -23 x3), 544 (-24), 544, 545, 545
#                         (-24b runs 1-3, benchmarks/results/h100_2026-11-24b/c_ncu_run*.md), 545 (-24b
#                         final, replayed here); simulator 544
#   vec64 float16 1x300:  360 (-22, -23, -24, -24b run 3 and final), 362 (-24b runs 1 and 2)
# These launches are held to a weaker rule: the simulator's count is one the GPU produced.
KNOWN = {"fast float16 100x130", "vec64 float16 1x300"}


def test_every_measured_shared_pattern_agrees():
    records = json.loads((RESULTS / "shared_probe.json").read_text())
    wrong = []
    for r in records:
        sim = ncu_shared_probe.simulate(r["width"], r["op"], r["idx"])
        if sim != r["ncu"]:
            wrong.append((r["width"], r["op"], r["tag"], r["idx"], r["ncu"], sim))
    assert not wrong, f"{len(wrong)} of {len(records)} patterns disagree, e.g. {wrong[:3]}"


def _records(run):
    """(label, case, ncu's counts) of every launch in one run's c_ncu.json."""
    out = []
    for r in json.loads((RESULTS.parent / run / "c_ncu.json").read_text()):
        case = dict(r["case"])
        if "shape" in case:
            case["shape"] = tuple(case["shape"])
        out.append((ncu_compare.label(case), case, r["ncu"]))
    return out


def _simulated(case, with_notes=False):
    fn, grid, block, args, shared = ncu_compare.launch_args(case, np)
    run = fn.simulate(grid, block, args, shared_mem=shared, check_races=False, echo=False)
    counts = {m: int(run.metrics[m]) for m in ncu_compare.METRICS}
    return (counts, {w.message for w in run.warnings}) if with_notes else counts


def _timing_dependent(sim, ncu, notes):
    """True where the only differences are extra shared wavefronts/conflicts on the GPU and the
    simulator's result carries the note that says ncu counts such extras for this launch."""
    diff = [m for m in ncu_compare.METRICS if sim[m] != ncu[m]]
    return (SHARED_BY_BLOCKS_NOTE in notes and all("shared" in m and ncu[m] > sim[m] for m in diff))


def test_earlier_runs_measured_what_the_latest_did():
    """Every launch of the earlier runs is in the latest, with the same counts from the GPU (but the
    noisy ones below), so replaying the latest replays them all."""
    latest = {label: ncu for label, _, ncu in _records(NCU_RUNS[-1])}
    for run in NCU_RUNS[:-1]:
        records = _records(run)
        assert records and all(label in latest for label, _, _ in records), run
        changed = [label for label, _, ncu in records if ncu != latest[label] and label not in KNOWN]
        assert not changed, f"{run}: the GPU counted these launches differently then: {changed}"


@pytest.mark.parametrize("kind", [pytest.param("transpose", marks=pytest.mark.slow), "pattern"])   # every course launch: slow
def test_course_kernels_agree_with_ncu(kind, run=NCU_RUNS[-1]):
    wrong = []
    for label, case, ncu in _records(run):
        if (case["kind"] == "transpose") != (kind == "transpose") or label in KNOWN:
            continue
        sim, notes = _simulated(case, with_notes=True)
        if sim != ncu and not _timing_dependent(sim, ncu, notes):
            wrong.append((label, {ncu_compare.SHORT[m]: (sim[m], ncu[m])
                                  for m in ncu_compare.METRICS if sim[m] != ncu[m]}))
    assert not wrong, f"{len(wrong)} launches disagree with ncu (sim, ncu): {wrong[:5]}"


def test_noisy_launches_match_a_count_the_gpu_produced():
    seen = {}
    for run in NCU_RUNS:
        for label, case, ncu in _records(run):
            if label in KNOWN:
                seen.setdefault(label, (case, []))[1].append(ncu)
    assert set(seen) == KNOWN, f"launches in KNOWN that no run measured: {KNOWN - set(seen)}"
    for label, (case, counts) in seen.items():
        sim = _simulated(case)
        assert sim in counts, f"{label}: simulator {sim} is none of the GPU's {counts}"


_SIMULATED = {}


def _simulated_once(launch, *what):
    """(metrics, notes) of the launch `launch(*what)` gives, simulated the first time it is asked for: the TMA
    probe measured each launch alone on its SM and not, which the simulator runs alike, and a launch has one
    answer, still compared with every record of it (the Hopper runs' launches: hopper_launches.simulated)."""
    key = (launch.__module__, launch.__qualname__, *what)
    if key not in _SIMULATED:
        fn, grid, block, args, shared = launch(*what)
        run = fn.simulate(grid, block, args, shared_mem=shared, check_races=False, echo=False, progress=False)
        _SIMULATED[key] = dict(run.metrics), {w.message for w in run.warnings}
    return _SIMULATED[key]


def _probe_records():
    return json.loads((FINAL / "probe_tma_concurrency.json").read_text())


@pytest.mark.slow
def test_tma_store_contention_is_what_the_note_says():
    """probe_tma_concurrency.py (H100, 2026-11-26): each launch three times, and again with one block per
    SM. With one block per SM ncu equals the simulator on every shared counter; with blocks sharing SMs
    it adds wavefronts only where TMA stores meet the load/store unit's shared accesses, a varying number,
    and exactly there the simulator's result carries the note. Global counters agree everywhere."""
    sys.path.insert(0, str(FINAL))
    import probe_tma_concurrency as probe
    names = [m for m in ncu_compare.METRICS if "shared" in m]
    for r in _probe_records():
        metrics, notes = _simulated_once(probe.launch, r["key"], r["dtype"], tuple(r["shape"]), False, np)
        sim, noted = [int(metrics[m]) for m in names], SHARED_BY_BLOCKS_NOTE in notes
        label = f"{r['key']} {r['dtype']} {r['shape']} one block per SM: {r['alone']}"
        assert r["global_agrees"] and sim == r["sim"], label
        if r["alone"] or not noted:
            assert all(h == sim for h in r["ncu"]), f"{label}: ncu {r['ncu']} vs simulator {sim}"
        else:
            assert all(h[i] >= sim[i] for h in r["ncu"] for i in range(4)), label
            if r["blocks"] > 132:                          # more blocks than the H100's SMs: some share one
                assert len({tuple(h) for h in r["ncu"]}) > 1, f"{label}: the extra count did not vary"
    assert {r["key"] for r in _probe_records() if not r["alone"] and r["ncu"][0] != r["sim"]} == {"tma_both", "tma_out"}


# ----------------------------------------------------------------------------- Hopper's data movement
HOPPER = ROOT / "benchmarks" / "results" / "h100_2026-11-26_hopper"
HOPPER_RUNS = ["run1_ncu.json", "run2_ncu.json", "run4_ncu.json"]
LDGSTS_CONFLICTS = LDGSTS_NAMES["conflicts"]
TMA_COUNTERS = [tma.TMA_READ_BYTES, tma.TMA_READ_SECTORS, tma.TMA_WRITE_BYTES, tma.TMA_WRITE_SECTORS, tma.TMA_LOADS,
                tma.TMA_STORES]


def _hopper_records(run, stage="all"):
    path = HOPPER / run
    return json.loads(path.read_text())[stage]["records"] if path.exists() else []


# cp.async's shared-side bank conflicts (issue 35): ncu counted this launch's twice, 24 (run 1) and 65 (run 2),
# where the copies' destinations alone cost none (the simulator's 0): the part that depends on timing, which
# the simulator's note describes (tests/sim/test_ldgsts_agreement.py). Held to: ncu at or above the model.
LDGSTS_TIMING = {"async_tile float32 100 130"}


def _hopper_disagreements(records):
    """(label, {metric: (sim, ncu)}) of every record whose simulated counts differ from ncu's: the eight
    metrics always, the TMA counters and cp.async's shared-side conflicts where ncu collected them (each
    distinct launch simulated once: hopper_launches.simulated)."""
    wrong = []
    for r in records:
        metrics, _ = hl.simulated(r["label"])
        names = ncu_compare.METRICS + [m for m in TMA_COUNTERS + [LDGSTS_CONFLICTS] if m in r["ncu"]]
        diff = {m: (int(metrics.get(m, 0)), int(r["ncu"].get(m, 0))) for m in names
                if int(metrics.get(m, 0)) != int(r["ncu"].get(m, 0))
                and not (m == LDGSTS_CONFLICTS and r["label"] in LDGSTS_TIMING
                         and int(r["ncu"][m]) > int(metrics.get(m, 0)))}
        if diff:
            wrong.append((r["label"], diff))
    return wrong


@pytest.mark.slow
@pytest.mark.parametrize("run", ["run1_ncu.json", "run2_ncu.json"])
def test_hopper_patterns_agree_with_ncu(run):
    """cp.async (.ca/.cg, every stride, partial warps, src-size), ldmatrix/stmatrix, TMA boxes, bulk copies."""
    records = hl.pattern_records(_hopper_records(run)) + hl.pattern_records(_hopper_records(run, "few"))
    wrong = _hopper_disagreements(records)
    assert len(records) > 100 and not wrong, f"{len(wrong)} of {len(records)} disagree (sim, ncu): {wrong[:3]}"


def test_a_few_hopper_patterns_agree_with_ncu():
    """The fast tier's share: run 2's launches that ncu measured with every counter (one of each kind)."""
    records = hl.pattern_records(_hopper_records("run2_ncu.json", "few"))
    assert len(records) >= 12 and not _hopper_disagreements(records)


@pytest.mark.slow
@pytest.mark.parametrize("run", ["run2_ncu.json", "run4_ncu.json"])
def test_hopper_kernels_agree_with_ncu(run):
    records = hl.kernel_records(_hopper_records(run)) + hl.kernel_records(_hopper_records(run, "few"))
    if not records:
        pytest.skip(f"{run} is not in {HOPPER.name}")
    hl.prepare([(r["label"].split()[0], np.dtype(r["label"].split()[1]), {}) for r in records])
    wrong = _hopper_disagreements(records)
    assert not wrong, f"{len(wrong)} of {len(records)} disagree (sim, ncu): {wrong[:3]}"


def test_four_hopper_kernels_agree_with_ncu():
    """The fast tier's share of the replay above: one launch of each way of moving data."""
    labels = {"tma_tile float32 96 160", "async_tile float32 100 130", "ldsm float16 96 160", "tma_pipe float32 208 272"}
    records = [r for r in _hopper_records("run2_ncu.json", "few") if r["label"] in labels]
    assert len(records) == 4 and not _hopper_disagreements(records)

"""The simulator against what an H100 measured (ncu --clock-control none, 2026-11-22 to -24).

benchmarks/results/h100_2026-11-2* keep the hardware's numbers, so this runs without a GPU:
- 738 single-warp shared-memory patterns (benchmarks/ncu_shared_probe.py, 2026-11-22): every one agrees;
- every course kernel x dtype x shape and the memory-rules patterns (benchmarks/ncu_compare.py,
  every run; later runs have later kernels) on all eight metrics, except two launches whose
  hardware count varies between runs, listed below with the reason.
"""
import json
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "benchmarks" / "results" / "h100_2026-11-22"
NCU_RUNS = ["h100_2026-11-22", "h100_2026-11-23", "h100_2026-11-24", "h100_2026-11-24b"]
sys.path.insert(0, str(ROOT / "benchmarks"))

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


def _simulated(case):
    fn, grid, block, args, shared = ncu_compare.launch_args(case, np)
    run = fn.simulate(grid, block, args, shared_mem=shared, check_races=False, echo=False)
    return {m: int(run.metrics[m]) for m in ncu_compare.METRICS}


@pytest.mark.parametrize("run", NCU_RUNS)
@pytest.mark.parametrize("kind", ["transpose", "pattern"])
def test_course_kernels_agree_with_ncu(kind, run):
    wrong = []
    for label, case, ncu in _records(run):
        if (case["kind"] == "transpose") != (kind == "transpose") or label in KNOWN:
            continue
        sim = _simulated(case)
        if sim != ncu:
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

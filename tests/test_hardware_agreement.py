"""The simulator against what an H100 measured (ncu --clock-control none, 2026-11-22 and -23).

benchmarks/results/h100_2026-11-2* keep the hardware's numbers, so this runs without a GPU:
- 738 single-warp shared-memory patterns (benchmarks/ncu_shared_probe.py, 2026-11-22): every one agrees;
- every course kernel x dtype x shape and the memory-rules patterns (benchmarks/ncu_compare.py,
  both runs; the second has the warp kernel too) on all eight metrics, except one launch listed
  below with the reason.
"""
import json
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results" / "h100_2026-11-22"
NCU_RUNS = ["h100_2026-11-22", "h100_2026-11-23", "h100_2026-11-24"]
sys.path.insert(0, str(ROOT / "benchmarks"))

import ncu_compare  # noqa: E402
import ncu_shared_probe  # noqa: E402

# One shared store wavefront (and one conflict) more on the GPU than any rule predicts: every
# shared store of this launch is a full-warp, unit-stride 16-byte store (4 wavefronts, no
# conflict). memory-rules.md notes that the hardware counter can include arbitration with other
# L1 traffic; it shows here, in one launch of ~270, and not every time: of four ncu runs of the
# same launch (2026-11-22, three on 2026-11-23) two counted 545 and two 544, the simulator's count.
KNOWN = {"fast float16 100x130"}


def test_every_measured_shared_pattern_agrees():
    records = json.loads((RESULTS / "shared_probe.json").read_text())
    wrong = []
    for r in records:
        sim = ncu_shared_probe.simulate(r["width"], r["op"], r["idx"])
        if sim != r["ncu"]:
            wrong.append((r["width"], r["op"], r["tag"], r["idx"], r["ncu"], sim))
    assert not wrong, f"{len(wrong)} of {len(records)} patterns disagree, e.g. {wrong[:3]}"


@pytest.mark.parametrize("run", NCU_RUNS)
@pytest.mark.parametrize("kind", ["transpose", "pattern"])
def test_course_kernels_agree_with_ncu(kind, run):
    records = [r for r in json.loads((RESULTS.parent / run / "c_ncu.json").read_text())
               if (r["case"]["kind"] == "transpose") == (kind == "transpose")]
    wrong = []
    for r in records:
        case = dict(r["case"])
        if "shape" in case:
            case["shape"] = tuple(case["shape"])
        if ncu_compare.label(case) in KNOWN:
            continue
        fn, grid, block, args, shared = ncu_compare.launch_args(case, np)
        run = fn.simulate(grid, block, args, shared_mem=shared, check_races=False, echo=False)
        sim = {m: int(run.metrics[m]) for m in ncu_compare.METRICS}
        if sim != r["ncu"]:
            wrong.append((ncu_compare.label(case), {ncu_compare.SHORT[m]: (sim[m], r["ncu"][m])
                                                   for m in ncu_compare.METRICS if sim[m] != r["ncu"][m]}))
    assert not wrong, f"{len(wrong)} launches disagree with ncu (sim, ncu): {wrong[:5]}"

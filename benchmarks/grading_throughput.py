"""Submissions graded per hour: plain ``nbgrader autograde`` against the parallel run on Dask (issue 32, item 6).

    python benchmarks/grading_throughput.py --submissions 100 --workers 1 2 --out benchmarks/results/cpu_DATE_grading
    python benchmarks/grading_throughput.py --submissions 400 --workers 16 --no-plain --out DIR   # a 16-core machine

One synthetic class (benchmarks/grading_class.py): an nbgrader course whose assignment is one notebook with
notebook 04's shared_tile exercise, with variants; each submission is that notebook with the exercise cell
filled in: about half the student's own variant's solution, the rest a mutant of it
(course_lib/teach/mutants.py), the notebook's default answer or the untouched stub. Each run starts from a
copy of the same ungraded course, so each grades every submission once:

- plain: ``nbgrader autograde ASSIGNMENT`` (the course's SandboxedExecute, one submission at a time);
- parallel on W workers: ``instructor grade``'s three phases, timed apart: plan (the Jobs), fan out on a
  LocalCluster of W workers, and the one ``nbgrader autograde`` that applies the stored results (nbgrader's
  own per-submission overhead: it runs nothing).

Every run's grades must equal the plain run's and the expected points. The load average is sampled every
2 s during each run (this machine's cores are shared). Writes grading.json and README.md's table into --out.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import grading_class  # noqa: E402

from course_lib.lab.grader import batch, engine, results  # noqa: E402

ASSIGNMENT, NOTEBOOK, KEY = "04_tiles", "04_shared_memory_tiles", "shared_tile"


class Load:
    """The 1-minute load average, sampled every `every` seconds while in the `with` block."""

    def __init__(self, every=2.0):
        self.every, self.samples, self._stop = every, [], threading.Event()

    def __enter__(self):
        def sample():
            while not self._stop.wait(self.every):
                self.samples.append(os.getloadavg()[0])
        self.samples.append(os.getloadavg()[0])
        self._thread = threading.Thread(target=sample, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()

    def summary(self) -> dict:
        return {"load_mean": round(statistics.mean(self.samples), 2), "load_max": round(max(self.samples), 2)}


def plain(course: Path, n: int) -> dict:
    start = time.perf_counter()
    with Load() as load:
        grading_class.nbgrader(course, "autograde", ASSIGNMENT, timeout=24 * 3600)
    wall = time.perf_counter() - start
    return {"run": "plain nbgrader autograde", "workers": 1, "wall_s": round(wall, 1),
            "per_hour": round(n / wall * 3600), **load.summary()}


def parallel(course: Path, n: int, workers: int, log) -> dict:
    say = lambda line: print(line, file=log, flush=True)     # noqa: E731
    os.environ["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    os.environ["PYTHONPATH"] = str(grading_class.REPO)
    times = {}
    with Load() as load:
        start = time.perf_counter()
        jobs = batch.plan(course, ASSIGNMENT)
        times["plan_s"] = time.perf_counter() - start
        with engine.local(workers) as pool:
            times["cluster_up_s"] = time.perf_counter() - start - times["plan_s"]
            t = time.perf_counter()
            graded = batch.fan_out(jobs, pool, results.Store(course), say)
            times["fan_out_s"] = time.perf_counter() - t
        t = time.perf_counter()
        status = batch.apply(course, ASSIGNMENT, len(jobs), say=say)
        times["nbgrader_apply_s"] = time.perf_counter() - t
        wall = time.perf_counter() - start
    assert status == 0 and graded == n, f"{graded} of {n} graded, nbgrader exit {status}"
    return {"run": f"parallel, {workers} local worker(s)", "workers": workers, "wall_s": round(wall, 1),
            "per_hour": round(n / wall * 3600), **{k: round(v, 1) for k, v in times.items()},
            "nbgrader_apply_per_submission_s": round(times["nbgrader_apply_s"] / n, 2), **load.summary()}


def table(rows, n) -> str:
    out = ["| run | wall time | submissions per hour | load average (mean / max) | nbgrader's apply phase |",
           "|---|---|---|---|---|"]
    for r in rows:
        apply = (f"{r['nbgrader_apply_s']} s ({r['nbgrader_apply_per_submission_s']} s per submission)"
                 if "nbgrader_apply_s" in r else "(grades as it runs)")
        out.append(f"| {r['run']} | {r['wall_s']} s | {r['per_hour']} | {r['load_mean']} / {r['load_max']} | {apply} |")
    return "\n".join(out) + f"\n\n{n} submissions, one notebook each."


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--submissions", type=int, default=100)
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--no-plain", action="store_true", help="skip plain nbgrader autograde (long on many submissions)")
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix="grading_throughput_"))
    pristine = grading_class.course(tmp / "class", {ASSIGNMENT: (NOTEBOOK, KEY)})
    expected = grading_class.synthetic(pristine, ASSIGNMENT, KEY, args.submissions)
    kinds = {}
    for what, _ in expected.values():
        kind = "mutant" if what.startswith("mutant") else what
        kinds[kind] = kinds.get(kind, 0) + 1
    print(f"class: {args.submissions} submissions of {ASSIGNMENT} ({KEY}): {kinds}", flush=True)
    rows, grades = [], {}
    runs = ([("plain", None)] if not args.no_plain else []) + [("parallel", w) for w in args.workers]
    with open(args.out / "progress.log", "w") as log:
        for kind, w in runs:
            course = tmp / f"{kind}-{w}"
            shutil.copytree(pristine, course)
            row = plain(course, args.submissions) if kind == "plain" else parallel(course, args.submissions, w, log)
            grades[row["run"]] = {s: v for (s, a), v in grading_class.scores(course).items() if a == ASSIGNMENT}
            row["grades_as_expected"] = all(grades[row["run"]].get(s) == p for s, (_, p) in expected.items())
            rows.append(row)
            print(json.dumps(row), flush=True)
    same = all(g == next(iter(grades.values())) for g in grades.values())
    info = {"machine": platform.node(), "cpus": os.cpu_count(), "python": sys.version.split()[0],
            "submissions": args.submissions, "kinds": kinds, "same_grades_every_run": same, "runs": rows}
    (args.out / "grading.json").write_text(json.dumps(info, indent=1) + "\n")
    (args.out / "table.md").write_text(table(rows, args.submissions) + "\n")
    print(table(rows, args.submissions))
    shutil.rmtree(tmp, ignore_errors=True)
    return 0 if same and all(r["grades_as_expected"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())

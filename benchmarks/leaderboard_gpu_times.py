"""GPU times for a class's leaderboards, for ``instructor report --gpu-times FILE`` (issue 34).

    python benchmarks/leaderboard_gpu_times.py --course COURSE [--out FILE] [--rounds 7] [--size 4096]
    python benchmarks/leaderboard_gpu_times.py --demo [--out FILE]   # beat_library's solution and stub, no course

For each submission a leaderboard ranks (course_lib.lab.instructor.leaderboard: the passing ones), the
kernel of its exercise cell (read from autograded/ with the grader's allow-list of %%cuda options,
course_lib.lab.grader.trusted.split) is compiled for this GPU, checked bit for bit on a SIZE x SIZE matrix,
then timed in ROUNDS rounds (each the median of 20 launches, inputs from DRAM: course_lib.gpu.timing),
each round followed by a device-to-device copy of the same bytes (the same run's ceiling). The file holds
every round, the bytes moved (read once plus written once) and the card's peak bandwidth; the report
shows a time only where its sanity checks pass (course_lib.lab.instructor.gpu_times) and never ranks by it.

Student kernels run here unsandboxed on the GPU (the grader's sandbox has no GPU): run it in a throw-away
GPU machine or container that holds only the course folder, never on the instructor's own account.
``--demo`` needs no course: it times the course's solution of beat_library and its stub as two students.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from course_lib import gpu  # noqa: E402
from course_lib.gpu import timing  # noqa: E402
from course_lib.notebook import magic  # noqa: E402
from course_lib.teach import exercises as E, solutions  # noqa: E402
from course_lib.transposes import verify  # noqa: E402


def _kernels(course: Path):
    """[(assignment, student, exercise, %%cuda line, CUDA text)] of every ranked submission."""
    from course_lib.lab.grader import trusted
    from course_lib.lab.instructor import classbook, leaderboard
    book = classbook.read(course)
    out = []
    for board in leaderboard.boards(book, "ids"):
        for row in board.rows:
            nb = json.loads((course / "autograded" / row.student / board.assignment / f"{board.assignment}.ipynb")
                            .read_text())
            from nbformat import from_dict
            line, body = trusted.split(trusted.kernel_cell(from_dict(nb), board.exercise), board.exercise)
            out.append((board.assignment, row.student, board.exercise, line, body))
    return out


def _demo():
    key = "beat_library"
    return [("demo", "solution", key, "", solutions.solved(solutions.body(key))),
            ("demo", "stub", key, "", solutions.stub(key))]


def _time(assignment, student, key, line, body, size, rounds) -> dict:
    import cupy as cp
    entry = {"assignment": assignment, "student": student, "exercise": key, "shape": [size, size]}
    ex = E.get(key)
    fn = magic.compile_cell(line, body)[1][ex.kernel]
    dtype = np.dtype(ex.dtypes[0])
    a = np.random.default_rng(0).random((size, size)).astype(dtype)
    out = cp.full((size, size), np.nan if dtype.kind == "f" else 0, dtype)
    grid, block = ex.launch(size, size)
    args = (out, cp.asarray(a), np.int32(size), np.int32(size))
    fn(grid, block, args)
    cp.cuda.runtime.deviceSynchronize()
    if not verify.compare(out.get(), np.ascontiguousarray(a.T), 32).ok:
        return {**entry, "error": "wrong on the GPU: not timed"}
    nbytes = a.nbytes
    entry.update(bytes=2 * nbytes, rounds_ms=[], copy_ms=[])
    for _ in range(rounds):
        entry["rounds_ms"].append(timing.time_launch(fn, grid, block, args) * 1e3)
        entry["copy_ms"].append(2 * nbytes / timing.copy_bandwidth(nbytes) * 1e3)
    return entry


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--course", type=Path, help="the graded nbgrader course folder")
    ap.add_argument("--demo", action="store_true", help="beat_library's solution and stub, no course needed")
    ap.add_argument("--out", type=Path, help="the timing file (default: COURSE/leaderboard_gpu_times.json)")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--size", type=int, default=4096, help="rows = cols of the timed matrix (a multiple of 32)")
    args = ap.parse_args(argv)
    if not args.demo and args.course is None:
        ap.error("--course COURSE or --demo")
    if not gpu.available():
        print("no GPU here: nothing to time", file=sys.stderr)
        return 1
    info = gpu.device.info()
    kernels = _demo() if args.demo else _kernels(args.course)
    data = {"device": info.name, "peak_gbps": info.peak_bandwidth / 1e9, "rounds": args.rounds,
            "times": [_time(*k, args.size, args.rounds) for k in kernels]}
    out = args.out or (Path("leaderboard_gpu_times.json") if args.demo else args.course / "leaderboard_gpu_times.json")
    out.write_text(json.dumps(data, indent=1))
    from course_lib.lab.instructor import gpu_times
    for t in data["times"]:
        said = t.get("error") or gpu_times.check(t, data["peak_gbps"])[1]
        print(f"{t['student']:>20s} {t['exercise']}: {said}")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

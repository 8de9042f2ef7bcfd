"""What the hidden shapes cost per submission: each exercise's solution checked on a student's hidden shapes
(course_lib.lab.grader.hidden), as the grader does, on the simulator.

    python benchmarks/hidden_budget.py                       # every exercise, 3 students, in this process
    python benchmarks/hidden_budget.py --graded tile_32x8    # through the trusted grader (the sandbox), too

Per exercise: the number of hidden shapes, the largest dimension, and the seconds (wall and CPU, the median
over the students) of the check on them; with --graded, the wall seconds of trusted.grade on a notebook
holding the solution (the sandbox's start, the compilation, the origin check, the release's shapes and the
hidden ones: what one submission of one exercise costs the autograder). CPU seconds are the figure to quote
on a shared machine: wall seconds grow with the load. docs/INSTRUCTORS.md §6 quotes the table.
"""
from __future__ import annotations

import argparse
import dataclasses
import statistics
import time

from course_lib.lab.grader import hidden as H
from course_lib.notebook import magic
from course_lib.teach import exercises as E
from course_lib.teach import solutions


def _graded(key: str, shapes) -> float:
    import nbformat

    from course_lib.lab.grader import trusted
    nb = nbformat.v4.new_notebook()
    own = "\n".join(line.split("//")[0].rstrip() for line in solutions.solved(solutions.body(key)).splitlines())
    nb.cells = [nbformat.v4.new_code_cell("%%cuda\n" + own)]        # as a student writes it: no markers
    nb.cells[0].metadata["nbgrader"] = {"grade_id": f"{key}_kernel"}
    start = time.perf_counter()
    ok, text = trusted.grade(nb, key, shapes)
    assert ok, text
    return time.perf_counter() - start


def one(key: str, students: list[str], graded: bool) -> dict:
    ex = E.get(key)
    fn = magic.compile_cell("", solutions.body(key))[1][ex.kernel]
    E.check(ex, fn, shapes=[ex.shapes[0]], gpu=False)          # compiled and warm before the clock starts
    walls, cpus, sizes, counts, sandboxed = [], [], [], [], []
    for student in students:
        shapes = H.hidden_shapes(ex, "benchmark-seed", student, "a")
        run, wide = H.split(shapes)
        wall, cpu = time.perf_counter(), time.process_time()
        report = E.check(dataclasses.replace(ex, wide=wide) if wide else ex, fn, shapes=run, gpu=False)
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
        assert report.ok, repr(report)
        sizes.append(max(max(s[-2:]) for s in run))
        counts.append(len(shapes))
        if graded:
            sandboxed.append(_graded(key, shapes))
    return dict(key=key, shapes=max(counts), largest=max(sizes), wall=statistics.median(walls),
                cpu=statistics.median(cpus), graded=statistics.median(sandboxed) if sandboxed else None)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("keys", nargs="*", help="exercises (default: all)")
    p.add_argument("--students", type=int, default=3)
    p.add_argument("--graded", action="store_true", help="also time trusted.grade (needs bubblewrap)")
    args = p.parse_args()
    students = [f"student{i}" for i in range(args.students)]
    print("| exercise | hidden shapes | largest dimension | check, wall s | check, CPU s |"
          + (" graded submission, wall s |" if args.graded else ""))
    print("|---|---:|---:|---:|---:|" + ("---:|" if args.graded else ""))
    for key in args.keys or sorted(E.EXERCISES):
        r = one(key, students, args.graded)
        print(f"| {key} | {r['shapes']} | {r['largest']} | {r['wall']:.1f} | {r['cpu']:.1f} |"
              + (f" {r['graded']:.1f} |" if args.graded else ""), flush=True)


if __name__ == "__main__":
    main()

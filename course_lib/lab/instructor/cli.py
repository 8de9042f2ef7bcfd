"""``python -m course_lib instructor``: the instructor's commands, parsed here and run by their modules.

    python -m course_lib instructor build --out DIR [--repo URL] [--branch B] [--no-execute] [NOTEBOOK...]
    python -m course_lib instructor refresh [NOTEBOOK...] [--jobs N]
    python -m course_lib instructor check [NOTEBOOK...] [--sync-stubs] [--fix-urls] [--fix-metadata] [--fix-colab]
    python -m course_lib instructor nbgrader --out COURSE [--points N] [--variants] [NOTEBOOK...]
    python -m course_lib instructor grade ASSIGNMENT [--course DIR] [--workers N | --scheduler ADDRESS | --gateway]
    python -m course_lib instructor variants [--course DIR] [--student ID ...] [--keys]
    python -m course_lib instructor new-exercise KEY --lesson NN [--kernel NAME]
    python -m course_lib instructor rename-exercise OLD NEW [--kernel NAME]
    python -m course_lib instructor publish --out DIR [--dry-run]      # the student repository
    python -m course_lib instructor report --course COURSE [ASSIGNMENT...] [--out DIR] [--names pseudonyms]

``build`` (release.py) writes DIR/instructor, every exercise cell with its solution, executed, and DIR/student;
``refresh`` (refresh.py) re-executes notebooks in place on the simulator; ``check`` (check.py) says whether
each notebook is ready to hand out; ``nbgrader`` (assignments.py) writes an nbgrader course, one assignment
per notebook with exercises (docs/INSTRUCTORS.md, section 6); ``grade`` (grader/batch.py) autogrades an
assignment's submissions in parallel on Dask, then through nbgrader; ``variants`` (variant_list.py) lists who
got which variant; ``new-exercise`` and ``rename-exercise``
(exercise_folder.py) scaffold an exercise folder, or rename one and the cells that name it; ``publish`` (publish.py) writes the student repository; ``report`` (report.py) writes the
class report and leaderboards of a graded nbgrader course. This module only parses arguments,
calls those modules and turns their errors into one line each.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .. import course, folders
from . import assignments, exercise_folder
from .check import check, notebook_paths
from .refresh import refresh
from .release import build


def _without(cmd: str, module: str) -> int:
    print(f"instructor {cmd}: this Python ({sys.executable}) has no {module}, which the instructor tools need."
          f"\nhint: activate the course's environment, or: pip install \"course-lib[instructor]\"", file=sys.stderr)
    return 1


def _grading(args) -> int:
    """`grade` and `variants`: the course folder checked here, the work done in lab/grader and variant_list."""
    if not (Path(args.course) / "nbgrader_config.py").is_file():
        raise FileNotFoundError(f"{Path(args.course).resolve()} is no nbgrader course folder (no nbgrader_config.py); "
                                "pass --course DIR, the folder `instructor nbgrader --out` wrote")
    if args.cmd == "variants":
        from .variant_list import render
        print(render(args.course, args.student, args.keys))
        return 0
    from ..grader import batch, engine
    if args.scheduler:
        where = engine.cluster(args.scheduler)
    elif args.gateway is not None:
        where = engine.gateway(args.gateway or 16)
    else:
        where = engine.local(args.workers)
    try:
        with where:
            return batch.grade(args.course, args.assignment, where, args.force)
    except KeyboardInterrupt:
        print(f"instructor grade: stopped; what was graded is kept in {Path(args.course) / '.course_lib_results'} and "
              "the same command goes on from there", file=sys.stderr)
        return 130


def _report_parser(sub) -> None:
    p = sub.add_parser("report", help="the class report and leaderboards of a graded nbgrader course (HTML, CSV)")
    p.add_argument("--course", required=True, help="the nbgrader course folder (autograded/, .course_lib_seed)")
    p.add_argument("--out", help="where to write index.html and the CSV files (default: COURSE/reports/class_report)")
    p.add_argument("--names", default="pseudonyms", choices=("pseudonyms", "ids", "names"),
                   help="how leaderboards name students: stable pseudonyms, nbgrader ids, or the gradebook's names")
    p.add_argument("--gpu-times", help="a timing file (benchmarks/leaderboard_gpu_times.py) shown beside the "
                   "leaderboards where its times pass the sanity checks")
    p.add_argument("assignments", nargs="*", help="assignments (default: every graded one)")


def _publish_parser(sub) -> None:
    pub = sub.add_parser("publish", help="write the student repository: this one without its instructor-only files")
    pub.add_argument("--out", required=True, help="an empty folder, or a previous publish (a clone of the student repository)")
    pub.add_argument("--dry-run", action="store_true", help="list what it would add, change and remove; write nothing")


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="python -m course_lib instructor", description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build", help="write the student notebooks and the instructor copy (solutions in)")
    b.add_argument("--out", required=True, help="folder for student/ and instructor/")
    b.add_argument("--no-execute", action="store_true", help="do not execute the instructor copy")
    b.add_argument("--repo", default=course.COURSE_REPO, help="GitHub URL for the Colab badge and clone")
    b.add_argument("--branch", default=course.BRANCH, help="branch the Colab badge opens")
    r = sub.add_parser("refresh", help="re-execute notebooks on the simulator, store their outputs")
    r.add_argument("--jobs", "-j", type=int, default=1, help="notebooks executed at once")
    r.add_argument("--timeout", type=int, default=600, help="seconds per cell")
    c = sub.add_parser("check", help="Colab cell, badge and exercises of each notebook")
    c.add_argument("--fix-urls", action="store_true", help=f"set badge and clone URL to {course.COURSE_REPO}")
    c.add_argument("--sync-stubs", action="store_true",
                   help="rewrite exercise cells as the stubs of their exercises/*/solution.cu (and write stub.cu)")
    c.add_argument("--fix-metadata", action="store_true", help="store the kernelspec JupyterLab writes (outputs untouched)")
    c.add_argument("--fix-colab", action="store_true", help="make the colab-install cell course.colab_install_cell()")
    g = sub.add_parser("nbgrader", help="write an nbgrader course (source layout, autograded test cells)")
    g.add_argument("--out", required=True, help="the nbgrader course folder (source/ and nbgrader_config.py)")
    g.add_argument("--points", type=int, default=assignments.POINTS, help="points per exercise")
    g.add_argument("--variants", action="store_true", help="each student gets their own variant of the exercises "
                   "that have some (drawn from the course's secret; the hub hands each student theirs)")
    _grade_options(sub)
    for p in (b, r, c, g):
        p.add_argument("notebooks", nargs="*", help="notebooks (default: all of notebooks/)")
    n = sub.add_parser("new-exercise", help="scaffold exercises/KEY/ (exercise.toml, solution.cu, stub.cu)")
    n.add_argument("key", help="the exercise's key, lower_case_with_underscores")
    n.add_argument("--lesson", required=True, help="the notebook's number, NN")
    n.add_argument("--kernel", help="the __global__ function the student writes (default: KEY)")
    m = sub.add_parser("rename-exercise", help="rename exercises/OLD/ to NEW (and its kernel), and the cells naming it")
    m.add_argument("old", help="the exercise's key now")
    m.add_argument("new", help="its new key, lower_case_with_underscores")
    m.add_argument("--kernel", help="the kernel's new name too (exercise.toml, solution.cu, the check cell)")
    _publish_parser(sub)
    _report_parser(sub)
    return ap


def _grade_options(sub) -> None:
    """`grade` and `variants`: the parallel autograde and the variants listing (lab/grader/batch.py, variant_list.py)."""
    a = sub.add_parser("grade", help="autograde an assignment's submissions in parallel (Dask), then through nbgrader")
    a.add_argument("assignment", help="the assignment, as nbgrader names it (source/ASSIGNMENT)")
    a.add_argument("--course", default=".", help="the nbgrader course folder (default: here)")
    a.add_argument("--force", action="store_true", help="grade again what autograded/ holds (nbgrader's --force)")
    where = a.add_mutually_exclusive_group()
    where.add_argument("--workers", type=int, help="local workers (default: one per core)")
    where.add_argument("--scheduler", metavar="ADDRESS", help="a running Dask scheduler, e.g. tcp://10.0.0.5:8786")
    where.add_argument("--gateway", nargs="?", const=0, type=int, metavar="N",
                       help="a cluster of N workers (default 16) from the hub's Dask Gateway (deploy/dask-gateway.yaml)")
    v = sub.add_parser("variants", help="who got which variant (from the course folder's secret)")
    v.add_argument("--course", default=".", help="the nbgrader course folder (default: here)")
    v.add_argument("--student", action="append", default=[], metavar="ID", help="only this student (repeatable)")
    v.add_argument("--keys", action="store_true", help="each student's variant key too (what the hub hands them)")


def main(argv=None) -> int:
    args = _parser().parse_args(argv)
    try:
        if args.cmd == "report":
            from .report import write
            write(args.course, args.assignments, args.out, args.names, args.gpu_times)
            return 0
        if args.cmd == "publish":
            from .publish import publish
            publish(args.out, dry_run=args.dry_run)
            return 0
        if args.cmd in ("grade", "variants"):
            return _grading(args)
        if args.cmd in ("new-exercise", "rename-exercise"):
            print("\n".join(exercise_folder.scaffold(args.key, args.lesson, args.kernel) if args.cmd == "new-exercise"
                            else exercise_folder.rename(args.old, args.new, args.kernel)))
            return 0
        paths = notebook_paths(args.notebooks)
        if args.cmd in ("nbgrader", "build"):       # a file or a read-only folder: said now, not halfway
            folders.writable("--out", args.out)
        if args.cmd == "nbgrader":
            done = assignments.export(paths, args.out, args.points, variants=args.variants)
            print(f"wrote {len(done)} assignment(s) to {Path(args.out) / 'source'} and the hidden shapes' seed "
                  f"{Path(args.out) / assignments.SEED_FILE} (keep it private); next, in {args.out}: "
                  f"nbgrader generate_assignment {next(iter(done), 'NAME')} (docs/INSTRUCTORS.md, section 6)")
            return 0
        if args.cmd == "build":
            build(paths, args.out, args.repo, args.branch, execute=not args.no_execute)
            print(f"wrote {Path(args.out) / 'student'} and {Path(args.out) / 'instructor'}")
            return 0
        if args.cmd == "refresh":
            return 0 if refresh(paths, args.jobs, args.timeout) else 1
        return 0 if check(paths, args.fix_urls, args.sync_stubs, fix_metadata=args.fix_metadata,
                          fix_colab=args.fix_colab) else 1
    except (OSError, ValueError, KeyError, RuntimeError) as exc:   # BuildError: ValueError; NotFound: KeyError;
        # an OSError with a file: what is wrong there
        print(f"instructor {args.cmd}: {folders.os_problem(exc) if getattr(exc, 'filename', None) else exc}", file=sys.stderr)
        return 1
    except ModuleNotFoundError as exc:                  # a Python without the course's lab extras
        return _without(args.cmd, exc.name)


if __name__ == "__main__":
    sys.exit(main())

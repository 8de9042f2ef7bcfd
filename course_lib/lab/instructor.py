"""Instructor tools: the instructor copy, refreshing stored outputs, checking exercises.

    python -m course_lib instructor build --out DIR [--repo URL] [--branch B] [--no-execute] [NOTEBOOK...]
    python -m course_lib instructor refresh [NOTEBOOK...] [--jobs N]
    python -m course_lib instructor check [NOTEBOOK...] [--fix-urls] [--fix-metadata] [--fix-colab]
    python -m course_lib instructor nbgrader --out COURSE [--points N] [NOTEBOOK...]
    python -m course_lib instructor new-exercise KEY --lesson NN [--kernel NAME]
    python -m course_lib instructor publish --out DIR      # the student repository (publish.py)

notebooks/ holds the student notebooks: each exercise cell is the stub of its solution file,
exercises/<key>/solution.cu (course_lib.solutions). ``build`` writes DIR/instructor (every exercise
cell with its solution put back, markers and all, then executed on the simulator so the outputs
show the solutions passing; ``--no-execute`` skips that) and DIR/student (the notebooks as they
are: any BEGIN/END SOLUTION block an author left in a cell is replaced by its stub, and outputs
that would show a solution line are cleared). It refuses to write anything when a marker is
unbalanced, an exercise cell is not its file's stub, or a solution line would still be visible.
``--repo``/``--branch`` rewrite the Colab badge and the clone URL (default: ``course_lab.COURSE_REPO``).

``refresh`` re-executes notebooks in place on the simulator (course_lib.lab.refresh). ``nbgrader``
writes an nbgrader course: one assignment per notebook with exercises, in nbgrader's source layout,
with a locked autograded test cell per exercise (``grading``; docs/INSTRUCTORS.md, section 6).

``check`` verifies each notebook's Colab badge and install cell (colab.check_colab_cell), that
opening it in JupyterLab would not change it (``--fix-metadata``), and each exercise: its cells are
there (not a bare ``%%cuda``), its cell is its file's stub and stub.cu is solution.cu's, the solution
passes its checker, the stub compiles and fails it with hints, the stored outputs of its get/check
cells are current, most of its solution is not shown above it (``authoring``), and nothing in the
notebook shows a solution line. ``new-exercise`` scaffolds an exercise folder and prints the steps.
Nothing here runs on a GPU or changes notebooks except ``refresh``, ``--fix-*`` and ``--sync-stubs``.
"""
from __future__ import annotations

import argparse
import difflib
import sys
from pathlib import Path

from ..teach import solutions
from ..teach.solutions import has_solution, strip_solutions
from . import authoring, colab, course_lab, folders, grading, stored
from .refresh import refresh, refresh_one  # noqa: F401
from .release import (
    BuildError,
    SolutionCell,
    build,
    cell_state,
    exercise_cells,
    rewrite_urls,
    solution_cells,
    student_notebook,
)


def _nbformat():
    import nbformat
    return nbformat


def notebook_paths(names=(), folder=None) -> list[Path]:
    """The named notebooks (paths, or names inside `folder`), or every NN_*.ipynb of the course.
    The course's folder is looked up only for a name that is not a path to a file, so notebooks
    given by path need no checkout (a hub's wheel, run from any folder)."""
    if not names:
        folder = Path(folder) if folder else course_lab.notebooks_dir()
        return sorted(folder.glob("[0-9][0-9]_*.ipynb"))
    out = []
    for n in names:
        p = Path(n).expanduser()
        if not p.is_file():
            try:
                folder = Path(folder) if folder else course_lab.notebooks_dir()
            except FileNotFoundError as exc:
                raise FileNotFoundError(f"no notebook {n}: looked for it from {Path.cwd()}, and {exc}") from None
            p = folder / p.name
            if not p.is_file():
                raise FileNotFoundError(f"no notebook {n}: looked for it from {Path.cwd()} and in {folder}")
        out.append(p)
    return out


# ---------------------------------------------------------------------------- exercise cells

def verify_solution_cell(sc: SolutionCell, found: dict | None = None) -> list[str]:
    """Problems with one solution cell: the solution must pass its checker (or compile, without
    one); the student stub must compile and fail the checker with a hint for every problem.
    `found`, if given, receives {key: the checker's Report on the stub} (stale outputs)."""
    from ..errors import KernelError
    from ..notebook import magic
    from ..teach import exercises
    try:
        stub = strip_solutions(sc.source)
    except ValueError as exc:
        return [f"solution markers: {exc}"]
    if not sc.cuda:
        from IPython.core.inputtransformer2 import TransformerManager
        problems = []
        for what, src in (("solution", sc.source), ("student stub", stub)):
            try:
                compile(TransformerManager().transform_cell(src), str(sc), "exec")
            except SyntaxError as exc:
                problems.append(f"the {what} is not valid Python: {exc}")
        return problems
    problems, reports = [], {}
    for what, src in (("solution", sc.source), ("student stub", stub)):
        line, _, body = src.lstrip().partition("\n")
        try:
            _, names = magic.compile_cell(line[len("%%cuda"):].strip(), body)
        except KernelError as exc:
            problems.append(f"the {what} does not compile: {exc.message}")
            continue
        if sc.key is None:
            continue
        if sc.key not in exercises.EXERCISES:
            return problems + [f"exercises.check names '{sc.key}', which course_lib.exercises does not define"]
        ex = exercises.EXERCISES[sc.key]            # the default variant: the notebook's
        fn = names.get(sc.kernel or ex.kernel) or names.get(ex.kernel)
        try:
            reports[what] = exercises.check(ex, fn)
        except Exception as exc:       # the checker must answer, never raise
            problems.append(f"the checker raised on the {what}: {type(exc).__name__}: {exc}")
    sol, stub_report = reports.get("solution"), reports.get("student stub")
    if found is not None and stub_report is not None:
        found[sc.key] = stub_report
    if sol is not None and not sol.ok:
        problems.append(f"the solution fails its checker:\n{sol!r}")
    if stub_report is not None:
        if stub_report.ok:
            problems.append("the student stub passes the checker: the exercise asks for nothing")
        elif not all(hint for _, hint in stub_report.problems):
            problems.append(f"the checker's answer to the stub has a problem without a hint:\n{stub_report!r}")
    return problems


def _fix_stored(nb, path, fix_metadata, fix_colab) -> list[str]:
    """check --fix-metadata / --fix-colab: change only the kernelspec and the install cell's source,
    write the notebook back if either changed, and say what changed."""
    fixed = []
    if fix_metadata and stored.set_kernelspec(nb):
        fixed.append(f"kernelspec set to {stored.KERNELSPEC['display_name']!r}")
    if fix_colab and colab.fix_install_cell(nb):
        fixed.append("colab-install cell set to course_lab.colab_install_cell()")
    if fixed:
        _nbformat().write(nb, path)
    return fixed


# ---------------------------------------------------------------------------- the command

def file_solution_cells(nb, name="") -> list[SolutionCell]:
    """Each exercise cell of a notebook as its instructor version (the solution file's body)."""
    return [SolutionCell(name, ec.index, f"{ec.magic}\n{solutions.body(ec.key)}", ec.key, None, ec.check_index)
            for ec in exercise_cells(nb, name) if not has_solution(nb.cells[ec.index].source)]


def sync_stubs(nb, name="") -> list[str]:
    """Rewrite every exercise cell that is not its file's stub (nor its solution) as the stub."""
    changed = []
    for ec in exercise_cells(nb, name):
        if cell_state(nb, ec) == "edited":
            nb.cells[ec.index].source = f"{ec.magic}\n{solutions.stub(ec.key)}"
            changed.append(f"{ec}: set to the stub of exercises/{ec.key}/solution.cu")
    return changed


def _exercise_cell_problems(nb, name) -> list[str]:
    problems = []
    for ec in exercise_cells(nb, name):
        if cell_state(nb, ec) == "edited":
            body = solutions.split_cell(nb.cells[ec.index].source)[1]
            diff = list(difflib.unified_diff(solutions.stub(ec.key).splitlines(), body.splitlines(),
                                             f"stub of exercises/{ec.key}/solution.cu", "the cell", lineterm="", n=0))
            if not body.strip():
                problems.append(f"{ec}: the cell holds only %%cuda: `python -m course_lib instructor check "
                                f"--sync-stubs {name}` writes the stub of exercises/{ec.key}/solution.cu into it")
            else:
                problems.append(f"{ec}: the cell is not the stub of its solution file (edit the file, then "
                                "--sync-stubs):\n" + "\n".join(diff[2:12]))
        if ec.check_index is None:
            problems.append(f"{ec}: no cell calls exercises.check('{ec.key}', ...) after it")
    return problems


def _exercise_problems(nb, name, log) -> list[str]:
    """Every exercise of one notebook: its cells, its solution and stub, stored outputs, what is above it."""
    problems = (_exercise_cell_problems(nb, name) + authoring.missing_cells(nb, name)
                + authoring.question_problems(nb, name) + authoring.shown_above(nb, name))
    stub_reports = {}
    for sc in solution_cells(nb, name) + file_solution_cells(nb, name):
        with solutions.self_study():            # the solutions must pass, whatever the shell's mode
            problems += [f"{sc}: {x}" for x in verify_solution_cell(sc, stub_reports)]
        if sc.key is None and sc.cuda:
            log(f"{sc}: no exercises.check cell after it (solution and stub compile only)")
    return problems + authoring.stale_outputs(nb, name, stub_reports)


def check(paths, fix_urls=False, sync=False, log=print, fix_metadata=False, fix_colab=False) -> bool:
    nbf = _nbformat()
    for x in authoring.sync_stub_files() if sync else []:
        log(x)
    shared = authoring.stub_file_problems()
    for x in shared:
        log("exercises: " + x)
    ok = not shared
    for p in paths:
        nb = nbf.read(p, as_version=4)
        if fix_urls and rewrite_urls(nb, p.name):
            nbf.write(nb, p)
            log(f"{p.name}: Colab badge / clone URL set to {course_lab.COURSE_REPO}")
        fixed = _fix_stored(nb, p, fix_metadata, fix_colab)
        if fixed:
            log(f"{p.name}: " + ", ".join(fixed))
        if sync and (changed := sync_stubs(nb, p.name) + authoring.question_problems(nb, p.name, sync=True)):
            nbf.write(nb, p)
            for x in changed:
                log(x + " (run `instructor refresh` on it)")
        problems = ([f"Colab: {x}" for x in colab.check_colab_cell(nb, p.name)] + stored.problems(nb)
                    + _exercise_problems(nb, p.name, log))
        try:
            _, notes = student_notebook(nb, p.name)
            if not solution_cells(nb, p.name):      # a student notebook: nothing may need clearing
                problems += [f"stored output shows a solution: {n}" for n in notes[1:]]
        except BuildError as exc:
            problems.append(str(exc))
        ok &= not problems
        log(f"{p.name}: " + ("ok" if not problems else f"{len(problems)} problem(s)"))
        for x in problems:
            log("  - " + x.replace("\n", "\n    "))
    return ok


def _without(cmd: str, module: str) -> int:
    print(f"instructor {cmd}: this Python ({sys.executable}) has no {module}, which the instructor tools need."
          f"\nhint: activate the course's environment, or: pip install \"course-lib[instructor]\"", file=sys.stderr)
    return 1


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m course_lib instructor", description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build", help="write the student notebooks and the instructor copy (solutions in)")
    b.add_argument("--out", required=True, help="folder for student/ and instructor/")
    b.add_argument("--no-execute", action="store_true", help="do not execute the instructor copy")
    b.add_argument("--repo", default=course_lab.COURSE_REPO, help="GitHub URL for the Colab badge and clone")
    b.add_argument("--branch", default=course_lab.BRANCH, help="branch the Colab badge opens")
    r = sub.add_parser("refresh", help="re-execute notebooks on the simulator, store their outputs")
    r.add_argument("--jobs", "-j", type=int, default=1, help="notebooks executed at once")
    r.add_argument("--timeout", type=int, default=600, help="seconds per cell")
    c = sub.add_parser("check", help="Colab cell, badge and exercises of each notebook")
    c.add_argument("--fix-urls", action="store_true", help=f"set badge and clone URL to {course_lab.COURSE_REPO}")
    c.add_argument("--sync-stubs", action="store_true",
                   help="rewrite exercise cells as the stubs of their exercises/*/solution.cu (and write stub.cu)")
    c.add_argument("--fix-metadata", action="store_true", help="store the kernelspec JupyterLab writes (outputs untouched)")
    c.add_argument("--fix-colab", action="store_true", help="make the colab-install cell course_lab.colab_install_cell()")
    g = sub.add_parser("nbgrader", help="write an nbgrader course (source layout, autograded test cells)")
    g.add_argument("--out", required=True, help="the nbgrader course folder (source/ and nbgrader_config.py)")
    g.add_argument("--points", type=int, default=grading.POINTS, help="points per exercise")
    for p in (b, r, c, g):
        p.add_argument("notebooks", nargs="*", help="notebooks (default: all of notebooks/)")
    n = sub.add_parser("new-exercise", help="scaffold exercises/KEY/ (exercise.toml, solution.cu, stub.cu)")
    n.add_argument("key", help="the exercise's key, lower_case_with_underscores")
    n.add_argument("--lesson", required=True, help="the notebook's number, NN")
    n.add_argument("--kernel", help="the __global__ function the student writes (default: KEY)")
    sub.add_parser("publish", help="write the student repository: this one without its instructor-only files"
                   ).add_argument("--out", required=True, help="an empty folder or a clone of the student repository")
    args = ap.parse_args(argv)
    try:
        if args.cmd == "publish":
            from .publish import publish
            publish(args.out)
            return 0
        if args.cmd == "new-exercise":
            print("\n".join(authoring.scaffold(args.key, args.lesson, args.kernel)))
            return 0
        paths = notebook_paths(args.notebooks)
        if args.cmd in ("nbgrader", "build"):       # a file or a read-only folder: said now, not halfway
            folders.writable("--out", args.out)
        if args.cmd == "nbgrader":
            done = grading.export(paths, args.out, args.points)
            print(f"wrote {len(done)} assignment(s) to {Path(args.out) / 'source'} and the hidden shapes' seed "
                  f"{Path(args.out) / grading.SEED_FILE} (keep it private); next, in {args.out}: "
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
    except (FileNotFoundError, ValueError) as exc:      # BuildError is a ValueError
        print(f"instructor {args.cmd}: {exc}", file=sys.stderr)
        return 1
    except ModuleNotFoundError as exc:                  # a Python without the course's lab extras
        return _without(args.cmd, exc.name)


if __name__ == "__main__":
    sys.exit(main())

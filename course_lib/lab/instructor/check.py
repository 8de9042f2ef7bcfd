"""``instructor check``: is each notebook ready to hand out? Its Colab badge and install cell, what opening it
in JupyterLab would change, and each exercise: its cells are there (not a bare ``%%cuda``), its cell is its
file's stub and stub.cu is solution.cu's, the solution passes its checker, the stub compiles and fails it with
hints, the stored outputs of its get/check cells are current, most of its solution is not shown above it
(``authoring``), its question is exercise.toml's (``lesson``: inserted as its own cell where missing), its
folder loads and every variant's solution compiles and passes (``teach.audit``), and nothing in the notebook
shows a solution line. Warnings, which do not fail it: an exercise without its get() or reveal() cell, text
after an exercise that names another kernel than its reveal (``lesson``).

    check.check([Path("notebooks/05_bank_conflicts.ipynb")], sync=True)     # --sync-stubs
    check.notebook_paths(["05_bank_conflicts.ipynb"])                      # names -> paths

It changes notebooks only for ``--fix-*`` and ``--sync-stubs``; it runs nothing on a GPU.
"""
from __future__ import annotations

import difflib
from pathlib import Path

from ...teach import audit, solutions
from ...teach.exercise_list import BROKEN, EXERCISES
from ...teach.solutions import has_solution, strip_solutions
from .. import course, stored
from . import authoring, colab, lesson
from .release import (CHECK_CALL, BuildError, SolutionCell, cell_state, exercise_cells, rewrite_urls, solution_cells,
                      student_notebook)


def _nbformat():
    import nbformat
    return nbformat


def notebook_paths(names=(), folder=None) -> list[Path]:
    """The named notebooks (paths, or names inside `folder`), or every NN_*.ipynb of the course.
    The course's folder is looked up only for a name that is not a path to a file, so notebooks
    given by path need no checkout (a hub's wheel, run from any folder)."""
    if not names:
        folder = Path(folder) if folder else course.notebooks_dir()
        return sorted(folder.glob("[0-9][0-9]_*.ipynb"))
    out = []
    for n in names:
        p = Path(n).expanduser()
        if not p.is_file():
            try:
                folder = Path(folder) if folder else course.notebooks_dir()
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
    from ...errors import KernelError
    from ...notebook import magic
    from ...teach import exercises
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
        fixed.append("colab-install cell set to course.colab_install_cell()")
    if fixed:
        _nbformat().write(nb, path)
    return fixed


# ---------------------------------------------------------------------------- the command

def file_solution_cells(nb, name="") -> list[SolutionCell]:
    """Each exercise cell of a notebook as its instructor version (the solution file's body)."""
    return [SolutionCell(name, ec.index, f"{ec.magic}\n{solutions.body(ec.key)}", ec.key, None, ec.check_index)
            for ec in exercise_cells(nb, name) if not has_solution(nb.cells[ec.index].source)]


def sync_stubs(nb, name="") -> list[str]:
    """Rewrite every exercise cell that is not its file's stub (nor its solution) as the stub, and a check
    cell that names the kernel by an old name (exercise.toml's kernel renamed) with the new one."""
    changed = []
    for ec in exercise_cells(nb, name):
        if cell_state(nb, ec) == "edited":
            nb.cells[ec.index].source = f"{ec.magic}\n{solutions.stub(ec.key)}"
            changed.append(f"{ec}: set to the stub of exercises/{ec.key}/solution.cu")
        kernel = EXERCISES[ec.key].kernel
        m = CHECK_CALL.search(nb.cells[ec.check_index].source) if ec.check_index is not None else None
        if m and m["kernel"] and m["kernel"] != kernel:
            cell = nb.cells[ec.check_index]
            cell.source = cell.source[:m.start("kernel")] + kernel + cell.source[m.end("kernel"):]
            changed.append(f"{name} cell {ec.check_index}: the check of '{ec.key}' names {kernel}, its kernel now")
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
    """Every exercise of one notebook: its folder (every variant), its cells, its solution and stub, stored
    outputs, what is above it; warnings (logged) for a missing get/reveal cell and text that names another
    kernel than the reveal."""
    problems = (_exercise_cell_problems(nb, name) + authoring.missing_cells(nb, name)
                + lesson.question_problems(nb, name) + authoring.shown_above(nb, name))
    lessons = name.split("_", 1)[0]
    for key in [k for k, ex in EXERCISES.items() if ex.lesson == lessons] + [k for k in BROKEN if k not in EXERCISES]:
        problems += [f"exercises/{key}: {x}" for x in audit.problems(key)]
    for x in lesson.cell_warnings(nb, name) + lesson.text_warnings(nb, name):
        log(f"  warning: {x}")
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
        try:
            nb = stored.read_notebook(p)
        except ValueError as exc:                   # not a notebook: said for this file, the others still checked
            ok = False
            log(f"{p.name}: 1 problem(s)\n  - " + str(exc).replace("\n", "\n    "))
            continue
        if fix_urls and rewrite_urls(nb, p.name):
            nbf.write(nb, p)
            log(f"{p.name}: Colab badge / clone URL set to {course.COURSE_REPO}")
        fixed = _fix_stored(nb, p, fix_metadata, fix_colab)
        if fixed:
            log(f"{p.name}: " + ", ".join(fixed))
        if sync and (changed := sync_stubs(nb, p.name) + lesson.question_problems(nb, p.name, sync=True)):
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

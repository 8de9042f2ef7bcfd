"""Instructor tools: the instructor copy, refreshing stored outputs, checking exercises.

    python -m course_lib instructor build --out DIR [--repo URL] [--branch B] [--no-execute] [NOTEBOOK...]
    python -m course_lib instructor refresh [NOTEBOOK...] [--jobs N]
    python -m course_lib instructor check [NOTEBOOK...] [--fix-urls] [--fix-metadata] [--fix-colab]

notebooks/ holds the student notebooks: each exercise cell is the stub of its solution file,
kernels/solutions/<key>.cu (course_lib.solutions). ``build`` writes DIR/instructor (every exercise
cell with its solution put back, markers and all, then executed on the simulator so the outputs
show the solutions passing; ``--no-execute`` skips that) and DIR/student (the notebooks as they
are: any BEGIN/END SOLUTION block an author left in a cell is replaced by its stub, and outputs
that would show a solution line are cleared). It refuses to write anything when a marker is
unbalanced, an exercise cell is not its file's stub, or a solution line would still be visible.
``--repo``/``--branch`` rewrite the Colab badge and the clone URL (default: ``lab.COURSE_REPO``).

``refresh`` re-executes notebooks in place with nbclient's defaults on the simulator
(COURSE_LIB_BACKEND=sim), as nbval compares them; a notebook with an unexpected error is not
written, and one whose outputs did not change is the same bytes (course_lib.stored: the kernelspec
JupyterLab writes, stable widget ids, no timestamps), so it is not written either.

``check`` verifies each notebook's Colab badge and install cell (colab.check_colab_cell), that
opening it in JupyterLab would not change it (``--fix-metadata``), and each exercise: its cell is its
file's stub, the solution passes its checker, the stub compiles and fails it with hints, and nothing
in the notebook shows a solution line. Nothing here runs on a GPU or changes notebooks except
``refresh``, ``--fix-*`` and ``--sync-stubs``.
"""
from __future__ import annotations

import argparse
import difflib
import json
import os
import re
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from . import colab, lab, solutions, stored
from .release import (BuildError, ExerciseCell, build, cell_state, exercise_cells, instructor_notebook,  # noqa: F401
                      leaks, rewrite_urls, solution_lines, student_notebook)
from .solutions import has_solution, strip_solutions

CHECK_CALL = re.compile(r"exercises\.check\(\s*['\"](?P<key>\w+)['\"]\s*(?:,\s*(?P<kernel>\w+))?")


def _nbformat():
    import nbformat
    return nbformat


def notebook_paths(names=(), folder=None) -> list[Path]:
    """The named notebooks (paths, or names inside `folder`), or every NN_*.ipynb of the course."""
    folder = Path(folder) if folder else lab.notebooks_dir()
    if not names:
        return sorted(folder.glob("[0-9][0-9]_*.ipynb"))
    out = []
    for n in names:
        p = Path(n)
        p = p if p.exists() else folder / p.name
        if not p.exists():
            raise FileNotFoundError(f"no notebook {n}")
        out.append(p)
    return out


# ---------------------------------------------------------------------------- exercise cells

@dataclass
class SolutionCell:
    notebook: str
    index: int                 # cell index in the notebook
    source: str
    key: str | None = None     # the exercise its checker cell names, if any
    kernel: str | None = None  # the name passed to exercises.check
    check_index: int | None = None

    @property
    def cuda(self) -> bool:
        return self.source.lstrip().startswith("%%cuda")

    def __str__(self):
        return f"{self.notebook} cell {self.index}" + (f" (exercise '{self.key}')" if self.key else "")


def solution_cells(nb, name="") -> list[SolutionCell]:
    """Code cells holding solution markers, each with the first exercises.check cell after it."""
    cells = [SolutionCell(name, i, c.source) for i, c in enumerate(nb.cells)
             if c.cell_type == "code" and has_solution(c.source)]
    for n, sc in enumerate(cells):
        stop = cells[n + 1].index if n + 1 < len(cells) else len(nb.cells)
        for j in range(sc.index + 1, stop):
            m = CHECK_CALL.search(nb.cells[j].source) if nb.cells[j].cell_type == "code" else None
            if m:
                sc.key, sc.kernel, sc.check_index = m["key"], m["kernel"], j
                break
    return cells


def verify_solution_cell(sc: SolutionCell) -> list[str]:
    """Problems with one solution cell: the solution must pass its checker (or compile, without
    one); the student stub must compile and fail the checker with a hint for every problem."""
    from . import exercises, magic
    from .errors import KernelError
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
        ex = exercises.get(sc.key)
        fn = names.get(sc.kernel or ex.kernel) or names.get(ex.kernel)
        try:
            reports[what] = exercises.check(ex, fn)
        except Exception as exc:       # the checker must answer, never raise
            problems.append(f"the checker raised on the {what}: {type(exc).__name__}: {exc}")
    sol, stub_report = reports.get("solution"), reports.get("student stub")
    if sol is not None and not sol.ok:
        problems.append(f"the solution fails its checker:\n{sol!r}")
    if stub_report is not None:
        if stub_report.ok:
            problems.append("the student stub passes the checker: the exercise asks for nothing")
        elif not all(hint for _, hint in stub_report.problems):
            problems.append(f"the checker's answer to the stub has a problem without a hint:\n{stub_report!r}")
    return problems


# ---------------------------------------------------------------------------- refreshing outputs

def _comparable(cell) -> str:
    """A cell's outputs without widget views (a new model id on every run, and nbval ignores them)."""
    outs = [{k: v for k, v in o.items() if k != "data"} | {"data": {m: d for m, d in o.get("data", {}).items()
                                                                    if "widget-view" not in m}}
            for o in cell.get("outputs", [])]
    return json.dumps(outs, sort_keys=True)


def coalesce_streams(cell) -> None:
    """Merge neighbouring stdout (or stderr) outputs of a cell into one: how the kernel happened to
    flush a print must not change the stored notebook from one refresh to the next."""
    merged = []
    for o in cell.get("outputs", []):
        if (merged and o.get("output_type") == "stream" and merged[-1].get("output_type") == "stream"
                and merged[-1].get("name") == o.get("name")):
            merged[-1]["text"] = "".join(merged[-1]["text"]) + "".join(o["text"])
        else:
            merged.append(o)
    if "outputs" in cell:
        cell["outputs"] = merged


def refresh_one(path, timeout=600) -> tuple[bool, str]:
    """Execute one notebook on the simulator and write it back; (ok, message)."""
    import nbclient
    nbf, path, t0 = _nbformat(), Path(path), time.monotonic()
    nb = nbf.read(path, as_version=4)
    before = [_comparable(c) for c in nb.cells]
    with lab.kernel_env(backend="sim") as env:
        saved = dict(os.environ)
        os.environ.update(env)      # the kernel inherits this process's environment
        try:
            nbclient.NotebookClient(nb, timeout=timeout, kernel_name=nb.metadata.get("kernelspec", {}).get(
                "name", "python3"), record_timing=False, resources={"metadata": {"path": str(path.parent)}}).execute()
        except Exception as exc:
            msg = str(exc).strip().splitlines()
            return False, f"{path.name}: NOT written: " + " | ".join(msg[-4:])[-800:]
        finally:
            os.environ.clear()
            os.environ.update(saved)
    for c in nb.cells:
        coalesce_streams(c)
    stored.normalize(nb, path.name)         # same outputs -> same bytes (kernelspec, widget ids, timestamps)
    changed = sum(_comparable(c) != b for c, b in zip(nb.cells, before))
    text = nbf.writes(nb)
    text += "" if text.endswith("\n") else "\n"        # exactly what nbformat.write stores
    if text == path.read_text(encoding="utf-8"):
        return True, f"{path.name}: refreshed in {time.monotonic() - t0:.0f} s, unchanged (not written)"
    path.write_text(text, encoding="utf-8")
    return True, (f"{path.name}: refreshed in {time.monotonic() - t0:.0f} s, {changed} cell output(s) changed, "
                  f"{path.stat().st_size // 1024} kB")


def refresh(paths, jobs=1, timeout=600, log=print) -> bool:
    ok = True
    if jobs > 1 and len(paths) > 1:
        from concurrent.futures import ProcessPoolExecutor
        with ProcessPoolExecutor(jobs) as pool:
            results = pool.map(refresh_one, paths, [timeout] * len(paths))
            for good, msg in results:
                ok &= good
                log(msg)
        return ok
    for p in paths:
        good, msg = refresh_one(p, timeout)
        ok &= good
        log(msg)
    return ok


def _fix_stored(nb, path, fix_metadata, fix_colab) -> list[str]:
    """check --fix-metadata / --fix-colab: change only the kernelspec and the install cell's source,
    write the notebook back if either changed, and say what changed."""
    fixed = []
    if fix_metadata and stored.set_kernelspec(nb):
        fixed.append(f"kernelspec set to {stored.KERNELSPEC['display_name']!r}")
    if fix_colab and colab.fix_install_cell(nb):
        fixed.append("colab-install cell set to lab.colab_install_cell()")
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
            changed.append(f"{ec}: set to the stub of kernels/solutions/{ec.key}.cu")
    return changed


def _exercise_cell_problems(nb, name) -> list[str]:
    problems = []
    for ec in exercise_cells(nb, name):
        if cell_state(nb, ec) == "edited":
            body = solutions.split_cell(nb.cells[ec.index].source)[1]
            diff = list(difflib.unified_diff(solutions.stub(ec.key).splitlines(), body.splitlines(),
                                             f"stub of kernels/solutions/{ec.key}.cu", "the cell", lineterm="", n=0))
            problems.append(f"{ec}: the cell is not the stub of its solution file (edit the file, then "
                            "--sync-stubs):\n" + "\n".join(diff[2:12]))
        if ec.check_index is None:
            problems.append(f"{ec}: no cell calls exercises.check('{ec.key}', ...) after it")
    return problems


def check(paths, fix_urls=False, sync=False, log=print, fix_metadata=False, fix_colab=False) -> bool:
    nbf, ok = _nbformat(), True
    for p in paths:
        nb = nbf.read(p, as_version=4)
        if fix_urls and rewrite_urls(nb, p.name):
            nbf.write(nb, p)
            log(f"{p.name}: Colab badge / clone URL set to {lab.COURSE_REPO}")
        fixed = _fix_stored(nb, p, fix_metadata, fix_colab)
        if fixed:
            log(f"{p.name}: " + ", ".join(fixed))
        if sync and (changed := sync_stubs(nb, p.name)):
            nbf.write(nb, p)
            for x in changed:
                log(x + " (run `instructor refresh` on it)")
        problems = ([f"Colab: {x}" for x in colab.check_colab_cell(nb, p.name)] + stored.problems(nb)
                    + _exercise_cell_problems(nb, p.name))
        for sc in solution_cells(nb, p.name) + file_solution_cells(nb, p.name):
            problems += [f"{sc}: {x}" for x in verify_solution_cell(sc)]
            if sc.key is None and sc.cuda:
                log(f"{sc}: no exercises.check cell after it (solution and stub compile only)")
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


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m course_lib instructor", description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build", help="write the student notebooks and the instructor copy (solutions in)")
    b.add_argument("--out", required=True, help="folder for student/ and instructor/")
    b.add_argument("--no-execute", action="store_true", help="do not execute the instructor copy")
    b.add_argument("--repo", default=lab.COURSE_REPO, help="GitHub URL for the Colab badge and clone")
    b.add_argument("--branch", default=lab.BRANCH, help="branch the Colab badge opens")
    r = sub.add_parser("refresh", help="re-execute notebooks on the simulator, store their outputs")
    r.add_argument("--jobs", "-j", type=int, default=1, help="notebooks executed at once")
    r.add_argument("--timeout", type=int, default=600, help="seconds per cell")
    c = sub.add_parser("check", help="Colab cell, badge and exercises of each notebook")
    c.add_argument("--fix-urls", action="store_true", help=f"set badge and clone URL to {lab.COURSE_REPO}")
    c.add_argument("--sync-stubs", action="store_true",
                   help="rewrite exercise cells as the stubs of their kernels/solutions/ files")
    c.add_argument("--fix-metadata", action="store_true", help="store the kernelspec JupyterLab writes (outputs untouched)")
    c.add_argument("--fix-colab", action="store_true", help="make the colab-install cell lab.colab_install_cell()")
    for p in (b, r, c):
        p.add_argument("notebooks", nargs="*", help="notebooks (default: all of notebooks/)")
    args = ap.parse_args(argv)
    try:
        paths = notebook_paths(args.notebooks)
        if args.cmd == "build":
            build(paths, args.out, args.repo, args.branch, execute=not args.no_execute)
            print(f"wrote {Path(args.out) / 'student'} and {Path(args.out) / 'instructor'}")
            return 0
        if args.cmd == "refresh":
            return 0 if refresh(paths, args.jobs, args.timeout) else 1
        return 0 if check(paths, args.fix_urls, args.sync_stubs, fix_metadata=args.fix_metadata,
                          fix_colab=args.fix_colab) else 1
    except (FileNotFoundError, BuildError) as exc:
        print(f"instructor {args.cmd}: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())

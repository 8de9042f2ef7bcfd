"""The course as an nbgrader course: one assignment per notebook with exercises, autograded.

    python -m course_lib instructor nbgrader --out course [--points 2] [NOTEBOOK...]
    cd course && nbgrader generate_assignment 04_shared_memory_tiles     # release/: what students get
    nbgrader autograde 04_shared_memory_tiles && nbgrader generate_feedback 04_shared_memory_tiles
    nbgrader export                                                       # grades.csv

:func:`export` writes nbgrader's *source* layout, ``course/source/<assignment>/<notebook>.ipynb``,
``course/nbgrader_config.py`` and, once, the course's secret seed ``course/.course_lib_seed`` (never
under source/ or release/: students get no copy). A source notebook the instructor edited is kept before
it is replaced, in ``course/.course_lib_backups/<assignment>/`` as
``<notebook>.before-<date-time>.ipynb``: never under source/, whose every file ``nbgrader
generate_assignment`` releases. Each source notebook is the instructor copy of a student notebook
(release.instructor_notebook: every exercise cell holds its solution between the course's markers) with
nbgrader's metadata: the exercise cell is a *solution* cell (grade_id ``<key>_kernel``); the cell that
checked it becomes a locked, autograded *test* cell worth ``points``, whose source only says
``cl.exercises.grade("key")``. The reveal cells go. Autograding never runs that cell in the student's
kernel: course_lib.lab.grader.trusted checks the exercise cell's CUDA text in a sandbox, on the exercise's
shapes and on :func:`hidden_shapes`, drawn at grading time from the seed, the student and the assignment
(so they differ per term and per student; together they take every residue of rows and cols modulo the
exercise's tile), and its verdict becomes the cell's output (course_lib.lab.grader.nbgrader_hooks). This module
writes files and never imports nbgrader.
"""
from __future__ import annotations

import copy
import glob
import re
from pathlib import Path

from ...teach.exercises import EXERCISES
from .. import folders, stored
from ..course import COURSE_ID
from ...teach.variants import VARIANTS_FILE
from ..grader.hidden import SEED_FILE, seed
from .release import exercise_cells, instructor_notebook

POINTS = 2
BACKUPS = ".course_lib_backups"       # COURSE/.course_lib_backups/<assignment>/: kept edits, outside source/
CONFIG = '''\
# nbgrader's configuration for the transpose course, written by `python -m course_lib instructor nbgrader`.
# configure() gives each released %%cuda exercise the course's own stub and grades in a sandbox: the
# student's notebook runs isolated (bubblewrap), and each test cell shows the verdict of the course's
# checker on the exercise cell's CUDA text, run in a fresh sandboxed process (course_lib/lab/grader/nbgrader_hooks.py).
# .course_lib_seed, beside this file, draws the hidden shapes: keep it, and out of students' reach.
c = get_config()  # noqa: F821 (nbgrader defines it)
c.CourseDirectory.course_id = "{course_id}"

from course_lib.lab.grader.nbgrader_hooks import configure  # noqa: E402
configure(c)

# Each submission runs in a box; past a bound its notebook is stopped and gets 0, the bound named in its feedback.
# The defaults (docs/INSTRUCTORS.md section 6; autograde logs what each submission used):
# c.SandboxedExecute.time_limit = 300               # seconds, the whole notebook
# c.SandboxedExecute.memory_limit = 2048 * 2**20    # bytes, processes and files together
# c.SandboxedExecute.space_limit = 256 * 2**20      # bytes of files: its folder, /tmp and HOME
# c.SandboxedExecute.shm_limit = 64 * 2**20         # bytes of files in /dev/shm
# c.SandboxedExecute.process_limit = 256            # processes and threads at once
# c.SandboxedExecute.output_limit = 16 * 2**20      # bytes of output, every cell together
# c.SandboxedExecute.box_mode = "auto"              # or cgroup2 (with c.SandboxedExecute.cgroup), cgroup1, systemd, watchdog
'''


def _nbformat():
    import nbformat
    return nbformat


def grade_source(key: str, points: int) -> str:
    """The locked test cell of exercise `key`: the grader's verdict replaces its output (nbgrader_hooks)."""
    ex = EXERCISES[key]
    return "\n".join([f"# Autograded test ({points} points, locked): the course's checker on the {ex.kernel} of the",
                      "# exercise's %%cuda cell (write it there), on the shapes cl.exercises.get shows, then on",
                      "# others. It prints what is wrong, with hints.",
                      f'cl.exercises.grade("{key}")'])


def _meta(grade_id: str, *, solution=False, grade=False, points=None) -> dict:
    meta = {"grade": grade, "grade_id": grade_id, "locked": grade, "schema_version": 3, "solution": solution,
            "task": False}
    if grade:
        meta["points"] = points
    return meta


def source_notebook(nb, name: str, points: int = POINTS):
    """nbgrader's source version of one student notebook: solutions in (course markers), a
    solution cell and a locked test cell per exercise, no reveal cell, no outputs."""
    out, _ = instructor_notebook(nb, name)
    cells = exercise_cells(nb, name)
    drop = set()
    for ec in cells:
        out.cells[ec.index].metadata["nbgrader"] = _meta(f"{ec.key}_kernel", solution=True)
        if ec.check_index is None:
            raise ValueError(f"{ec}: no cell calls exercises.check('{ec.key}', ...) after it: nothing to grade")
        test = out.cells[ec.check_index]
        test.source = grade_source(ec.key, points)
        test.metadata["nbgrader"] = _meta(f"{ec.key}_check", grade=True, points=points)
    for i, c in enumerate(out.cells):
        if c.cell_type == "code" and re.search(r"\bexercises\.reveal\(", c.source):
            drop.add(i)
        if c.cell_type == "code":
            c.outputs, c.execution_count = [], None
    out.cells = [c for i, c in enumerate(out.cells) if i not in drop]
    out.metadata.pop("widgets", None)
    return out


def _keep_edits(target: Path, text: str, out: Path, log) -> None:
    """Keep the instructor's edited `target` (and any copy an older export kept beside it, where nbgrader
    would release it) in out/BACKUPS/<assignment>/ before `text` replaces it."""
    into = out / BACKUPS / target.parent.name
    older = target.parent.glob(f"{glob.escape(target.stem)}.before-*{glob.escape(target.suffix)}")
    for stray in sorted(older):
        into.mkdir(parents=True, exist_ok=True)
        moved, n = into / stray.name, 2
        while moved.exists():                                               # never over a kept copy
            moved, n = into / f"{stray.stem}-{n}{stray.suffix}", n + 1
        stray.replace(moved)
        log(f"{out}: moved {stray.relative_to(out)} to {moved.relative_to(out)}: in source/, nbgrader releases "
            f"it to students (released since? `nbgrader generate_assignment --force {target.parent.name}`)")
    if kept := folders.keep_if_changed(target, text, into):               # never lose an instructor's edit
        log(f"{out}: kept your edited {target.relative_to(out)} as {kept.relative_to(out)} "
            "(outside source/: nbgrader never releases it)")


def export(paths, out, points: int = POINTS, log=print, variants: bool = False) -> dict[str, Path]:
    """Write nbgrader's source layout for the notebooks among `paths` that have exercises, and
    nbgrader_config.py; {assignment: source notebook path}. An existing nbgrader_config.py is kept.
    `variants`: the class has variants per student (teach.variants: drawn from the seed), from now on."""
    nbf, out, done = _nbformat(), Path(out), {}
    for p in map(Path, paths):
        nb = stored.read_notebook(p)
        if not exercise_cells(nb, p.name):
            continue
        source = source_notebook(copy.deepcopy(nb), p.name, points)
        target = out / "source" / p.stem / p.name
        target.parent.mkdir(parents=True, exist_ok=True)
        _keep_edits(target, nbf.writes(source), out, log)
        nbf.write(source, target)
        done[p.stem] = target
        keys = [ec.key for ec in exercise_cells(nb, p.name)]
        log(f"{p.stem}: {', '.join(keys)} ({points * len(keys)} points)")
    seed(out, create=True)
    if variants and not (out / VARIANTS_FILE).exists():
        (out / VARIANTS_FILE).write_text("This class has variants per student, drawn from .course_lib_seed "
                                         "(course_lib/teach/variants.py). Delete this file to grade everyone on the "
                                         "default.\n")
    config = out / "nbgrader_config.py"
    if not config.exists():
        out.mkdir(parents=True, exist_ok=True)
        config.write_text(CONFIG.format(course_id=COURSE_ID))
    return done

"""The course as an nbgrader course: one assignment per notebook with exercises, autograded.

    python -m course_lib instructor nbgrader --out course [--points 2] [NOTEBOOK...]
    cd course && nbgrader generate_assignment 04_shared_memory_tiles     # release/: what students get
    nbgrader autograde 04_shared_memory_tiles && nbgrader generate_feedback 04_shared_memory_tiles
    nbgrader export                                                       # grades.csv

:func:`export` writes nbgrader's *source* layout, ``course/source/<assignment>/<notebook>.ipynb``,
and ``course/nbgrader_config.py``. Each source notebook is the instructor copy of a student
notebook (release.instructor_notebook: every exercise cell holds its solution between the course's
markers) with nbgrader's metadata: the exercise cell is a *solution* cell; the cell that checked it
becomes a locked, autograded *test* cell worth ``points`` (``cl.exercises.grade``: the course's
checker on the exercise's shapes, then, between nbgrader's hidden-test markers, on shapes the
release does not show, :data:`HIDDEN_SHAPES`); the ``reveal`` cells go (a graded release shows no
solution). The configuration hands nbgrader the course's stubs instead of its own (a ``%%cuda``
cell given nbgrader's ``raise NotImplementedError()`` would not compile) and runs autograding
kernels in graded mode (``COURSE_LIB_GRADED=1``): ``course_lib.lab.nbgrader_hooks``. This module
writes files and never imports nbgrader (the ``[instructor]`` extra brings it).
"""
from __future__ import annotations

import copy
import re
from pathlib import Path

from ..teach.exercises import EXERCISES
from . import folders
from .release import exercise_cells, instructor_notebook

POINTS = 2
COURSE_ID = "transpose-course"
# shapes the release does not show: not multiples of the tile, each exercise's own constraints kept
HIDDEN_SHAPES = {
    "first_copy": [(33, 70), (200, 31)], "column_read": [(33, 70), (200, 31)],
    "shared_tile": [(33, 70), (200, 31)], "padded_tile": [(33, 70), (200, 31)],
    "tile_32x8": [(33, 70), (200, 31)], "vectorized": [(36, 68), (132, 8)],
    "aos_struct": [(129, 40), (33, 40)], "packed_b16": [(34, 66), (130, 2)],
    "batched": [(2, 33, 70), (4, 17, 9)], "async_tile": [(33, 70), (200, 31)],
}
# ... and those an exercise's folder declares (exercise.toml: hidden = [[rows, cols], ...])
HIDDEN_SHAPES.update({k: list(ex.hidden) for k, ex in EXERCISES.items() if ex.hidden and k not in HIDDEN_SHAPES})
CONFIG = '''\
# nbgrader's configuration for the transpose course, written by `python -m course_lib instructor nbgrader`.
# configure() gives each released %%cuda exercise the course's own stub, runs autograding kernels in
# graded mode (COURSE_LIB_GRADED=1: no solution shown, a solution's text refused) and allows the
# course's notebooks time per cell (course_lib/lab/nbgrader_hooks.py).
c = get_config()  # noqa: F821 (nbgrader defines it)
c.CourseDirectory.course_id = "{course_id}"

from course_lib.lab.nbgrader_hooks import configure  # noqa: E402
configure(c)
'''


def _nbformat():
    import nbformat
    return nbformat


def grade_source(key: str, points: int) -> str:
    """The locked test cell of exercise `key`: the checker on the visible shapes, then hidden ones."""
    ex = EXERCISES[key]
    hidden = ", ".join(map(str, HIDDEN_SHAPES.get(key, [])))
    lines = [f"# Autograded test ({points} points, locked): the course's checker on your {ex.kernel}, on the",
             "# shapes cl.exercises.get shows, then on others. It prints what is wrong, with hints.",
             f'cl.exercises.grade("{key}")']
    if hidden:
        lines += ["### BEGIN HIDDEN TESTS", f'cl.exercises.grade("{key}", shapes=[{hidden}])', "### END HIDDEN TESTS"]
    return "\n".join(lines)


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


def export(paths, out, points: int = POINTS, log=print) -> dict[str, Path]:
    """Write nbgrader's source layout for the notebooks among `paths` that have exercises, and
    nbgrader_config.py; {assignment: source notebook path}. An existing nbgrader_config.py is kept."""
    nbf, out, done = _nbformat(), Path(out), {}
    for p in map(Path, paths):
        nb = nbf.read(p, as_version=4)
        if not exercise_cells(nb, p.name):
            continue
        source = source_notebook(copy.deepcopy(nb), p.name, points)
        target = out / "source" / p.stem / p.name
        target.parent.mkdir(parents=True, exist_ok=True)
        if kept := folders.keep_if_changed(target, nbf.writes(source)):    # never lose an instructor's edit
            log(f"{target.parent}: kept your edited {target.name} as {kept.name}")
        nbf.write(source, target)
        done[p.stem] = target
        keys = [ec.key for ec in exercise_cells(nb, p.name)]
        log(f"{p.stem}: {', '.join(keys)} ({points * len(keys)} points)")
    config = out / "nbgrader_config.py"
    if not config.exists():
        out.mkdir(parents=True, exist_ok=True)
        config.write_text(CONFIG.format(course_id=COURSE_ID))
    return done

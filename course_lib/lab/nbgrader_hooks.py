"""What nbgrader needs to grade this course: the course's stubs, graded mode, time per cell.

    # nbgrader_config.py (written by `python -m course_lib instructor nbgrader`)
    from course_lib.lab.nbgrader_hooks import configure
    configure(c)

nbgrader replaces a solution region with one stub per language (Python's is ``raise
NotImplementedError()``), which in a ``%%cuda`` cell does not compile. :class:`CourseStubs`, put
in place of nbgrader's ClearSolutions for ``generate_assignment``, gives a ``%%cuda`` cell with the
course's markers its own stub (``solutions.strip_solutions``: the ``//>`` lines, exactly the cell
of notebooks/) and leaves every other cell to nbgrader. :class:`GradedExecute`, in place of
nbgrader's Execute for ``autograde``, starts each kernel with ``COURSE_LIB_GRADED=1`` (no solution
shown, a solution's text refused). Importing this module needs nbgrader (the ``[instructor]`` extra).
"""
from __future__ import annotations

import os

from nbgrader.preprocessors import ClearSolutions, Execute

from ..teach.solutions import ENV_GRADED, has_solution, strip_solutions
from ..teach.variants import ENV_STUDENT

CELL_TIMEOUT_S = 300        # a notebook cell on the simulator takes seconds; a checker at most ~10


class CourseStubs(ClearSolutions):
    """nbgrader's ClearSolutions, except that a %%cuda cell gets the course's own stub."""

    def _replace_solution_region(self, cell, language) -> bool:
        if cell.cell_type == "code" and cell.source.lstrip().startswith("%%cuda") and has_solution(cell.source):
            cell.source = strip_solutions(cell.source)
            return True
        return super()._replace_solution_region(cell, language)


class GradedExecute(Execute):
    """nbgrader's Execute with the kernel in graded mode (it inherits this process's environment)."""

    def preprocess(self, nb, resources, *args, **kwargs):
        # the submitting student's id: their exercise variants (course_lib.teach.variants, with a seed)
        student = (resources or {}).get("nbgrader", {}).get("student") or ""
        before = {k: os.environ.get(k) for k in (ENV_GRADED, ENV_STUDENT)}
        os.environ.update({ENV_GRADED: "1", ENV_STUDENT: str(student)})
        try:
            return super().preprocess(nb, resources, *args, **kwargs)
        finally:
            for k, v in before.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v


def _swap(app, trait, old, new) -> list:
    """nbgrader's default list of preprocessors for `app`.`trait`, with `old` replaced by `new`."""
    classes = app.class_traits()[trait].default()
    if old not in classes:
        raise RuntimeError(f"nbgrader's {app.__name__}.{trait} has no {old.__name__}: this nbgrader is not 0.9")
    return [new if cls is old else cls for cls in classes]


def configure(c) -> None:
    """Set nbgrader's configuration `c` for the course (its preprocessor lists are read from nbgrader)."""
    from nbgrader.converters import Autograde, GenerateAssignment
    c.GenerateAssignment.preprocessors = _swap(GenerateAssignment, "preprocessors", ClearSolutions, CourseStubs)
    c.Autograde.autograde_preprocessors = _swap(Autograde, "autograde_preprocessors", Execute, GradedExecute)
    c.Execute.timeout = CELL_TIMEOUT_S

"""Exercises: a kernel the student completes in a ``%%cuda`` cell, and a checker that explains.

    ex = exercises.get("shared_tile")
    ex                                        # what to write, how it is launched, what is checked
    exercises.check(ex, transpose_tile)       # last line of the cell after the student's %%cuda cell
    exercises.check("shared_tile")            # the same: finds `transpose_tile` in the notebook
    exercises.reveal("shared_tile")           # the solution, once check passed (or give_up=True)

An :class:`Exercise` is a spec: the kernel's name (contract ``T* out, const T* in, int rows,
int cols``; a copy when ``copy``), its launch (block, and the tile one block covers, so grid =
ceil(cols / tile_x), ceil(rows / tile_y), batch), the shapes to try — square, non-square, not a
multiple of the tile, 1xN and Nx1; ``(batch, rows, cols)`` for batched kernels — and the
properties the lesson is about (course_lib.properties). ``check`` runs the kernel in the
simulator on every shape, on random data with a poisoned output, with race checking: every
element compared, every property judged on every shape, and a barrier some threads skip, an
out-of-bounds or misaligned access, a race or a read of unwritten shared memory on any shape is a
problem. On a GPU it also runs there. It answers with a :class:`Report` — each problem with a
hint, or a short success line — and never raises for a wrong kernel.

Solutions are not in the notebooks: see ``solutions`` (one file per exercise). The exercises
themselves are defined in ``exercise_list``; what an exercise is, in ``exercise``.
"""
from __future__ import annotations

import difflib

import numpy as np

from .. import gpu as gpu_module
from ..errors import KernelError, NotFound, SimulationLimit  # noqa: F401  (part of this module's API)
from .exercise import Exercise, Report, expected, input_for, output_for  # noqa: F401
from .exercise_list import EXERCISES, define  # noqa: F401
from .properties import (  # noqa: F401
    Property,
    Shape,
    coalesced,
    hinted,
    judge,
    no_bank_conflicts,
    no_races,
    no_uninitialized_reads,
    uses_shared,
    vector_width,
)
from .runs import find_kernel, run_on_gpu, run_shapes
from .solutions import Revealed, body, has_solution, solved, strip_solutions  # noqa: F401

PASSED: set[str] = set()       # exercises whose check passed in this Python session


def get(key: str) -> Exercise:
    """The exercise named `key`; its repr tells the student what to write.  get("vectorized")"""
    if isinstance(key, str) and key in EXERCISES:
        return EXERCISES[key]
    close = difflib.get_close_matches(str(key), list(EXERCISES), n=2)
    raise NotFound(f"no exercise {key!r}", hint=(f"did you mean {' or '.join(map(repr, close))}? " if close else "")
                   + f"the exercises: {', '.join(EXERCISES)}")


# ---------------------------------------------------------------------------- checking

def check(exercise, kernel=None, *, gpu: bool | None = None, seed: int = 0) -> Report:
    """Run the student's kernel on every shape of the exercise, judge every property on every
    shape; return a Report (never raises for a wrong kernel).

        exercises.check("padded_tile", transpose_padded)
    """
    ex = get(exercise) if isinstance(exercise, str) else exercise
    report = Report(ex.key)
    fn = find_kernel(ex, kernel, report)
    if fn is None:
        return report
    dtype = _dtype(ex, fn)
    runs, wrong, crashes = run_shapes(ex, fn, dtype, seed)
    if wrong:
        (on, (what, hint)), rest = wrong[0], wrong[1:]
        also = f" (also wrong on {', '.join(str(s) for s, _ in rest)})" if rest else ""
        report.problems.append((f"on a {on} matrix: {what}{also}", hint))
    if crashes:
        (on, (what, hint)), rest = crashes[0], crashes[1:]
        also = f" (also on {', '.join(str(s) for s, _ in rest)})" if rest else ""
        report.problems.append((f"on a {on} matrix the simulator stopped the kernel: {what}{also}", hint))
    if not runs:
        return report
    if not wrong and not crashes:
        report.passed.append(f"correct on {len(ex.shapes)} shape" + ("s" if len(ex.shapes) > 1 else ""))
    for p, problem in judge(ex.properties, runs):
        if problem:
            report.problems.append((f"{p.name}: {problem}", p.hint))
        else:
            report.passed.append(p.name)
    if not wrong and not crashes and ((gpu is None and gpu_module.available()) or gpu):
        run_on_gpu(ex, fn, dtype, report, seed)
    if report.ok:
        PASSED.add(ex.key)
    return report


def _dtype(ex, fn):
    sig = fn.signature or []
    d = next((p.dtype for p in sig if p.pointer and p.dtype is not None), None)
    return np.dtype(d) if d is not None else np.dtype(ex.dtypes[0])


def reveal(key: str, give_up: bool = False) -> Revealed:
    """The solution of exercise `key`, once your kernel passed ``cl.exercises.check`` in this
    session, or now if you ask with ``give_up=True``. Until then it says how to get there.

        cl.exercises.reveal("padded_tile")                 # after check passed
        cl.exercises.reveal("padded_tile", give_up=True)   # I have tried enough: show me
    """
    ex = get(key)
    if key not in PASSED and not give_up:
        return Revealed(key, f"The solution of '{key}' stays hidden until your kernel passes "
                             f"cl.exercises.check('{key}', {ex.kernel}) — read the checker's hints, they say "
                             f"what to change. Tried enough? cl.exercises.reveal('{key}', give_up=True) shows it "
                             "anyway.", False)
    return Revealed(key, solved(body(key)), True)

"""Exercises: a kernel the student completes in a ``%%cuda`` cell, and a checker that explains.

    ex = exercises.get("shared_tile")
    ex                                        # what to write, how it is launched, what is checked
    exercises.check(ex, transpose_tile)       # last line of the cell after the student's %%cuda cell
    exercises.check("shared_tile")            # the same: finds `transpose_tile` in the notebook
    exercises.grade("shared_tile")            # nbgrader's test cell: prints the report, fails unless ok
    exercises.reveal("shared_tile")           # the course's solution, once check passed (self-study only)

An :class:`Exercise` is a spec: the kernel's name and parameters (the course's ``T* out, const T*
in, int rows, int cols``, a copy when ``copy``, or any list exercise.toml declares: ``signature``), its launch (block, and the tile one block covers, so grid =
ceil(cols / tile_x), ceil(rows / tile_y), batch), the shapes to try — square, non-square, not a
multiple of the tile, 1xN and Nx1; ``(batch, rows, cols)`` for batched kernels — and the
properties the lesson is about (course_lib.properties). ``check`` runs the kernel in the
simulator on every shape, on random data with a poisoned output, with race checking: every
element of every buffer the kernel writes compared, every property judged on every shape, and a barrier some threads skip, an
out-of-bounds or misaligned access, a race or a read of unwritten shared memory on any shape is a
problem. On a GPU it also runs there. It answers with a :class:`Report` — each problem with a
hint, the best-supported cause first (``evidence``), or a short success line — and never raises
for a wrong kernel. A kernel whose last ``%%cuda`` cell did not compile is not judged: the report
names that cell's error (``kernel.cells``).

Solutions are not in the notebooks: see ``solutions`` (one file per exercise). The exercises
themselves are defined in ``exercise_list``; what an exercise is, in ``exercise``.
"""
from __future__ import annotations

import contextlib
import dataclasses
import difflib
import numbers
import sys
import warnings

import numpy as np

from .. import gpu as gpu_module
from .. import transposes
from ..errors import ArgumentError, KernelError, NotFound, SimulationLimit  # noqa: F401  (this module's API)
from ..sim import plan
from .exercise import Exercise, Report, expected, input_for, output_for  # noqa: F401
from .exercise_list import BROKEN, EXERCISES, define  # noqa: F401
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
from . import evidence, footprint, record, reveal_diff, signature, solutions, variants
from .given import find_kernel
from .runs import needs, run_on_gpu, run_shapes
from .solutions import Revealed, body, has_solution, solved, strip_solutions  # noqa: F401

PASSED: set[str] = set()       # exercises whose check passed in this Python session


def get(key: str, student: str | None = None, course=None) -> Exercise:
    """The exercise named `key`, as this student's variant (``variants``: the default in self-study; another
    student's needs the course folder, `course`); its repr tells the student what to write.  get("vectorized")"""
    if isinstance(key, str) and key in EXERCISES:
        return variants.exercise(key, student, course)
    if isinstance(key, str) and key in BROKEN:
        raise BROKEN[key]
    close = difflib.get_close_matches(str(key), list(EXERCISES), n=2)
    raise NotFound(f"no exercise {key!r}", hint=(f"did you mean {' or '.join(map(repr, close))}? " if close else "")
                   + f"the exercises: {', '.join(EXERCISES)}")


def variant(key: str, student: str | None = None, course=None) -> Exercise:
    """The concrete Exercise `student` is asked for (default: whoever ``student_id`` names now). A named
    student's variant comes from the class's secret in the course folder; without one, NotFound says that
    the class has no variants (or, on the hub, that only your own is yours to see).

        exercises.variant("padded_tile", "alice", course="~/course")     # alice's tile, type and launch
    """
    return get(key, student, course)


def student(student_id: str | None = None) -> str | None:
    """Check this session's exercises as `student_id`'s variants; with no argument, say whose apply now
    (a grader's id always wins over the notebook's).  cl.exercises.student("alice")"""
    if student_id is not None:
        variants.set_student(student_id)
    return variants.student_id()


def stub(key: str, student: str | None = None) -> str:
    """The starting kernel of this student's variant of `key` (the notebook's cell for the default)."""
    ex = get(key, student)
    return solutions.stub(key, dict(ex.params) or None)


# ---------------------------------------------------------------------------- checking

def check(exercise, kernel=None, *, gpu: bool | None = None, seed: int = 0, shapes=None,
          student: str | None = None) -> Report:
    """Run the student's kernel on every shape of the exercise (or `shapes`), judge every property
    on every shape; return a Report (never raises for a wrong kernel). A key checks the variant of
    `student` (default: whoever ``student()`` names; the default variant in self-study).

        exercises.check("padded_tile", transpose_padded)
        exercises.check("padded_tile", transpose_padded, shapes=[(33, 70), (200, 31)])
    """
    seed = _seed(seed)
    if not isinstance(exercise, (str, Exercise)) and isinstance(kernel, str) and kernel in EXERCISES:
        raise NotFound(f"check's first argument is the exercise and its second the kernel; this call gave "
                       f"{type(exercise).__name__} first and the exercise {kernel!r} second",
                       hint=f"cl.exercises.check({kernel!r}, your_kernel)")
    ex = exercise if isinstance(exercise, Exercise) else get(exercise, student)     # get(None): NotFound, with the keys
    if shapes is not None:
        ex = dataclasses.replace(ex, shapes=_shapes(ex, shapes))
    _room(ex, shapes)
    with record.tracing(ex) as trace:          # the verdict as data too (record: for the class report)
        report = _check(ex, kernel, gpu, seed)
    report.record = trace.record(report)
    return report


def _check(ex, kernel, gpu, seed) -> Report:
    report = Report(ex.key)
    fn = find_kernel(ex, kernel, report)
    record.kernel(fn)
    if fn is None:
        record.found("kernel", report.problems)
        return report
    dtype = _dtype(ex, fn)
    runs, wrong, crashes = run_shapes(ex, fn, dtype, seed)
    found = (evidence.per_shape(wrong, "on a {on} matrix: {what}", "also wrong on")
             + evidence.per_shape(crashes, "on a {on} matrix the simulator stopped the kernel: {what}", "also on"))
    if not runs:
        report.problems += evidence.ordered(found)
        return report
    correct = not wrong and not crashes
    if correct:
        report.passed.append(f"correct on {len(ex.shapes)} shape" + ("s" if len(ex.shapes) > 1 else ""))
    did_work = evidence.did_work(runs)       # 'already right' is said only of what the kernel did
    for p, problem in judge(ex.properties, runs):
        if problem:
            found.append(evidence.judged(p, problem, fn))
        elif did_work:
            report.passed.append(p.name)
        record.judged(p, found[-1] if problem else None)
    report.problems += evidence.ordered(found)       # the best-supported cause first (evidence)
    judged = len(report.problems)
    if correct and ex.own_tiles:
        report.problems += _honest(ex, fn, dtype, runs, seed)
    elif correct and ex.once:               # any launch (a grid-stride loop): each element moved once
        report.problems += footprint.traffic(ex, runs)
    record.found("footprint", report.problems[judged:])
    if correct and ((gpu is None and gpu_module.available()) or gpu):
        judged = len(report.problems)
        run_on_gpu(ex, fn, dtype, report, seed)
        record.found("gpu", report.problems[judged:])
    if report.ok and not solutions.graded():
        PASSED.add(ex.key)
    return report


def _seed(seed) -> int:
    """check's `seed` (which random matrices it runs on) as an int, or ArgumentError: a whole number, 0 or more."""
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0:
        raise ArgumentError(f"seed={seed!r}: the seed of the checker's random matrices is a whole number, 0 or more",
                            hint="leave it out (seed=0, the notebook's), or give another, e.g. seed=7")
    return int(seed)


def _shapes(ex, shapes) -> tuple:
    """`shapes` as a tuple of (rows, cols) or (batch, rows, cols) like the exercise's own, or ArgumentError."""
    dims = len(ex.shapes[0])
    example = ", ".join(map(str, ex.shapes[:2]))
    try:
        out = tuple(tuple(int(n) for n in s) for s in shapes)
    except (TypeError, ValueError):
        out = ()
    if not out or any(len(s) != dims or min(s) < 1 for s in out):
        each = "(batch, rows, cols)" if dims == 3 else "(rows, cols)"
        raise ArgumentError(f"shapes={shapes!r}: the shapes to check on, each {each} of positive sizes",
                            hint=f"like the exercise's own, e.g. shapes=[{example}]")
    return out


def _room(ex, given) -> None:
    """Each shape's matrices must fit the simulator's memory limit, before any is made."""
    itemsize = max(np.dtype(d).itemsize for d in ex.dtypes)
    owners = 48 if "owners" in needs(ex) else 0            # sim.checks.owners: 6 int32 per element of in and out
    where = f"shapes={given!r}" if given is not None else f"exercise '{ex.key}'"
    for s in ex.shapes:  # input, output, expected, the second run's output, the comparison; working memory
        plan.room_for(int(np.prod(s, dtype=object)) * (4 * itemsize + 1 + owners) + plan.BATCH_BYTES,
                      f"the check on {where}: its {' x '.join(map(str, s))} {np.dtype(ex.dtypes[0])} matrix",
                      option=None)


def _honest(ex, fn, dtype, runs, seed) -> list:
    """What a correct result does not show: blocks that do another's work, elements moved twice, 32-bit offsets."""
    problems = footprint.traffic(ex, runs)
    try:
        problems += footprint.spread(ex, fn, dtype, seed, runs) or footprint.wide(ex, fn, dtype, seed)
    except KernelError as exc:
        problems.append((f"a block simulated alone stopped: {exc.message.splitlines()[0]}",
                         exc.hint or footprint.SPREAD_HINT))
    return problems


def grade(exercise, kernel=None, *, shapes=None, student: str | None = None) -> None:
    """An autograder's test (nbgrader's grade cell): print the checker's report, then raise
    AssertionError unless every check passed. Warnings and stderr go to stdout, so that only a
    failed check costs the points (nbgrader gives none to a cell that writes to stderr).

        cl.exercises.grade("padded_tile")
    """
    with warnings.catch_warnings(), contextlib.redirect_stderr(sys.stdout):
        warnings.simplefilter("ignore")
        report = check(exercise, kernel, shapes=shapes, student=student)
    print(repr(report))
    if not report.ok:
        raise AssertionError(f"{report.exercise}: {len(report.problems)} problem(s), listed above with hints")


def _dtype(ex, fn):
    if ex.custom:
        return signature.element_dtype(ex.parameters, fn.signature, ex.dtypes)
    sig = fn.signature or []
    d = next((p.dtype for p in sig if p.pointer and p.dtype is not None), None)
    return np.dtype(d) if d is not None else np.dtype(ex.dtypes[0])


def reveal(key: str, give_up: bool = False) -> Revealed:
    """The course kernel that solves exercise `key` (the one its lesson shows next, with its listing),
    to compare with yours once your kernel passed ``cl.exercises.check`` in this session, in self-study.
    Never the solution file: a student repository has none. In a graded run (``solutions.graded()``)
    nothing is shown, and ``give_up=True`` (kept so old notebooks run) shows nothing either.

        cl.exercises.reveal("padded_tile")                 # after check passed
    """
    ex = get(key)
    if solutions.graded():
        return Revealed(key, f"This is a graded release: the course's solution of '{key}' is not shown. "
                             f"cl.exercises.check('{key}', {ex.kernel}) says what to change.", False)
    if key not in PASSED:
        return Revealed(key, f"The course's solution of '{key}' stays hidden until your kernel passes "
                             f"cl.exercises.check('{key}', {ex.kernel}) — read the checker's hints, they say what "
                             "to change. Once it passes, this cell shows the course's solution to compare with "
                             "yours.", False)
    if ex.reveal == "solution":
        return _own_solution(key, ex)
    if not ex.reveal or ex.reveal not in transposes.SPECS:
        return Revealed(key, f"Your kernel passed. Exercise '{key}' names no course kernel to compare with "
                             "(reveal = \"NAME\" in its exercise.toml).", False)
    spec = transposes.SPECS[ex.reveal]
    params = dict(ex.reveal_params)
    t = transposes.kernel(ex.reveal, ex.dtypes[0], **params) if params else transposes.kernel(ex.reveal)
    made = (f"`{t.name}`, blocks of {t.block[0]}x{t.block[1]} threads" if params else f"`{ex.reveal}`")
    title = (f"Your kernel passed. The course's version: {made} — {spec.title} "
             f"(kernels/{spec.file}, cl.transposes.kernel(\"{ex.reveal}\"" +
             "".join(f", {k}={v!r}" for k, v in params.items()) + "))")
    note, lines = reveal_diff.against(ex, [get(k) for k in EXERCISES])     # the line an earlier reveal lacked
    return Revealed(key, t.source, True, title, note, frozenset(lines))


def _own_solution(key, ex) -> Revealed:
    """reveal = "solution": this exercise's own solution for the student's parameters, where solutions are kept."""
    if key not in solutions.keys():
        return Revealed(key, f"Your kernel passed. The course's solution of '{key}' stays with the instructors: this "
                             "installation carries no solution files (compare yours with a classmate's).", False)
    text = solutions.solved(solutions.body(key, dict(ex.params) or None))
    return Revealed(key, text + "\n", True, f"Your kernel passed. The course's solution of '{key}'"
                    + (f" for your variant ({ex.variant})" if ex.variant else ""))

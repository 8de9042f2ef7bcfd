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

Solutions are not in the notebooks: see course_lib.solutions (one file per exercise). The
exercises themselves are defined in course_lib/_exercise_entries.py.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from . import nvrtc, verify
from .errors import KernelError, SimulationLimit
from .properties import (Property, Shape, coalesced, hinted, judge, no_bank_conflicts, no_races,  # noqa: F401
                         no_uninitialized_reads, uses_shared, vector_width)
from .solutions import PASSED, has_solution, reveal, strip_solutions  # noqa: F401
from .transposes import C_TYPE, poisoned, random_matrix


@dataclass(frozen=True)
class Exercise:
    key: str
    title: str
    kernel: str                        # the __global__ function the student writes
    block: tuple                       # threads per block
    tile: tuple                        # (columns, rows) of `in` one block covers
    properties: tuple = ()
    shapes: tuple = tuple(verify.SHAPES)   # (rows, cols) or (batch, rows, cols)
    dtypes: tuple = (np.float32,)
    lesson: str = ""
    note: str = ""                     # anything else the student must know (shape limits...)
    copy: bool = False                 # out has the shape of in (a copy, not a transpose)
    grid: Callable | None = None       # grid(rows, cols) when it is not one block per tile

    def launch(self, rows: int, cols: int, batch: int = 1) -> tuple:
        if self.grid is not None:
            return tuple(self.grid(rows, cols)), self.block
        gx, gy = -(-cols // self.tile[0]), -(-rows // self.tile[1])
        return ((gx, gy, batch) if batch > 1 else (gx, gy)), self.block

    def __repr__(self):
        t = C_TYPE[np.dtype(self.dtypes[0])]
        out = "rows x cols" if self.copy else "cols x rows"
        batched = any(len(s) == 3 for s in self.shapes)
        grid = ("one block per row: grid = (rows,)" if self.grid is not None else
                f"one per {self.tile[0]}x{self.tile[1]} tile: grid = (ceil(cols / {self.tile[0]}), "
                f"ceil(rows / {self.tile[1]})" + (", batch)" if batched else ")"))
        lines = [f"Exercise '{self.key}' (notebook {self.lesson}): {self.title}",
                 f"  write: __global__ void {self.kernel}({t}* out, const {t}* in, int rows, int cols)"
                 f"   // in: rows x cols, out: {out}",
                 f"  launch: blocks of {self.block[0]}x{self.block[1]} threads, {grid}",
                 "  shapes tried: " + ", ".join(_shape_name(s) for s in self.shapes),
                 "  checked on every shape: the result (every element), out-of-bounds and misaligned accesses, "
                 "barriers all threads reach" + (", races" if self._shared else "")]
        lines += [f"  required: {p.name}" for p in self.properties]
        if self.note:
            lines.append(f"  note: {self.note}")
        return "\n".join(lines)

    @property
    def _shared(self) -> bool:
        return any(p.name in (uses_shared().name, no_races().name) for p in self.properties)


EXERCISES: dict[str, Exercise] = {}


def define(ex: Exercise) -> Exercise:
    EXERCISES[ex.key] = ex
    return ex


def get(key: str) -> Exercise:
    """The exercise named `key`; its repr tells the student what to write.  get("vectorized")"""
    try:
        return EXERCISES[key]
    except KeyError:
        raise KeyError(f"no exercise '{key}'; known: {', '.join(EXERCISES)}") from None


def _shape_name(s) -> str:
    return f"{s[0]} x {s[1]}x{s[2]}" if len(s) == 3 else f"{s[0]}x{s[1]}"


# ---------------------------------------------------------------------------- the report

@dataclass
class Report:
    """The checker's answer: ``ok``, each problem with its hint, and what passed."""
    exercise: str
    problems: list = field(default_factory=list)     # [(what, hint)]
    passed: list = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    def __bool__(self):
        return self.ok

    def __repr__(self):
        if self.ok:
            return f"✓ {self.exercise}: all checks pass — " + "; ".join(self.passed) + ". Well done!"
        lines = [f"✗ {self.exercise}: {len(self.problems)} problem(s)"]
        for what, hint in self.problems:
            lines += [f"  • {what}", f"    hint: {hint}"]
        if self.passed:
            lines.append("  already right: " + "; ".join(self.passed))
        return "\n".join(lines)

    def _repr_html_(self):
        import html
        color = "#2a9d8f" if self.ok else "#e63946"
        return f"<pre style='color:{color};white-space:pre-wrap'>{html.escape(repr(self))}</pre>"


# ---------------------------------------------------------------------------- checking

def check(exercise, kernel=None, *, gpu: bool | None = None, seed: int = 0) -> Report:
    """Run the student's kernel on every shape of the exercise, judge every property on every
    shape; return a Report (never raises for a wrong kernel).

        exercises.check("padded_tile", transpose_padded)
    """
    from .exercise_runs import find_kernel, run_on_gpu, run_shapes
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
    if not wrong and not crashes and ((gpu is None and nvrtc.gpu_available()) or gpu):
        run_on_gpu(ex, fn, dtype, report, seed)
    if report.ok:
        PASSED.add(ex.key)
    return report


def _dtype(ex, fn):
    sig = fn.signature or []
    d = next((p.dtype for p in sig if p.pointer and p.dtype is not None), None)
    return np.dtype(d) if d is not None else np.dtype(ex.dtypes[0])


def input_for(ex: Exercise, shape, dtype, seed) -> tuple[np.ndarray, Shape]:
    """Random input (batch x rows x cols, or rows x cols) and its Shape, for one entry of ex.shapes."""
    batch, rows, cols = shape if len(shape) == 3 else (1, *shape)
    a = random_matrix(batch * rows, cols, dtype, seed)
    a = a.reshape(batch, rows, cols) if len(shape) == 3 else a
    return a, Shape(rows, cols, np.dtype(dtype).itemsize, batch, ex.copy)


def expected(ex: Exercise, a: np.ndarray) -> np.ndarray:
    if ex.copy:
        return a.copy()
    return np.ascontiguousarray(np.swapaxes(a, -1, -2))


def output_for(ex: Exercise, a: np.ndarray) -> np.ndarray:
    return poisoned(expected(ex, a).shape, a.dtype)


__all__ = ["Exercise", "EXERCISES", "define", "get", "check", "reveal", "Report", "Property", "coalesced",
           "no_bank_conflicts", "no_races", "no_uninitialized_reads", "uses_shared", "vector_width", "hinted",
           "strip_solutions", "has_solution", "SimulationLimit", "KernelError"]

from . import _exercise_entries  # noqa: E402,F401  (fills EXERCISES)

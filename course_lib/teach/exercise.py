"""What an exercise is: the kernel to write, its launch, the shapes to try, the properties to judge.

    ex = Exercise("shared_tile", "transpose through a 32x32 shared-memory tile", "transpose_tile",
                  block=(32, 32), tile=(32, 32), properties=(uses_shared(), ...), lesson="04")
    ex.launch(1000, 1030)                 # (grid, block)
    a, on = input_for(ex, (1000, 1030), np.float32, seed=0)   # random input and its Shape
    expected(ex, a), output_for(ex, a)    # what a correct kernel writes; a poisoned output

An :class:`Exercise` is a spec: the kernel's name and parameters (the course's ``T* out, const T* in,
int rows, int cols``, a copy when ``copy``; or ``args``, a declared signature: ``signature``, ``cases``),
its launch (block, and the tile one block covers, so grid =
ceil(cols / tile_x), ceil(rows / tile_y), batch), the shapes to try — square, non-square, not a
multiple of the tile, 1xN and Nx1; ``(batch, rows, cols)`` for batched kernels — the
properties the lesson is about (``properties``), and what a correct kernel must also do
(``own_tiles``: every block its own tile, every element moved once; ``once``: every element moved
once, whatever the launch, e.g. a grid-stride loop; ``wide``: 64-bit offsets on a
launch over 2^32 elements; see ``footprint``). The course's exercises are folders (``spec``).
A :class:`Report` is a checker's answer. This module defines and describes; it runs nothing
(``runs`` does, ``exercises.check`` decides).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from ..compile.source import C_NAME
from ..transposes import verify
from ..transposes.data import poisoned, random_matrix
from . import signature
from .properties import Shape, no_races, uses_shared


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
    own_tiles: bool = False            # once correct: each block moves its own tile, each element once
    wide: tuple | None = None          # a shape over 2^32 elements whose sampled blocks must stay in their tile
    tiny: tuple = (2, 3)               # the smallest shape: does a loop stopped by the step limit end at all?
    grid_text: tuple = ()              # the custom grid as written in exercise.toml ("cols / 32", ...)
    once: bool = False                 # once correct: each element loaded and stored once (any launch)
    points: int = 2                    # what the graded test cell is worth
    question: str = ""                 # the question the notebook shows (markdown)
    reveal: str = ""                   # the course kernel reveal() shows after a pass, in self-study
    params: tuple = ()                 # this variant's parameters, sorted (name, value) pairs
    variant: str = ""                  # how it differs from the default variant ("" for the default)
    args: tuple = ()                   # the kernel's parameters (signature.Arg); () is out, in, rows, cols
    signature: str = ""                # the parameter list as exercise.toml declares it ("": the default)
    tiled: bool = True                 # `tile` is the exercise's (a hint may name it), not the block's shape
    reveal_params: tuple = ()          # the course kernel's template parameters reveal() instantiates
    square: bool = False               # every shape, hidden ones too, has rows = cols
    multiple_of: tuple | None = None   # hidden shapes' rows and cols are multiples of these (None: derived)
    residues: tuple | None = None      # hidden shapes' [rows, cols] walk every residue modulo these (None: the tile)
    largest: int | None = None         # no hidden size beyond it (None: the grader's own bounds)
    kind: str = "tile"                 # the launch's kind, as exercise.toml says
    ints: tuple = ()                   # the integer parameters, for the folder's expressions

    def launch(self, rows: int, cols: int, batch: int = 1) -> tuple:
        if self.grid is not None:
            return tuple(self.grid(rows, cols)), self.block
        gx, gy = -(-cols // self.tile[0]), -(-rows // self.tile[1])
        return ((gx, gy, batch) if batch > 1 else (gx, gy)), self.block

    @property
    def parameters(self) -> tuple:
        """The kernel's parameters (signature.Arg): exercise.toml's, or the course's out, in, rows, cols."""
        if self.args:
            return self.args
        return signature.default(self.copy, any(len(s) == 3 for s in self.shapes), C_NAME[np.dtype(self.dtypes[0])])

    @property
    def custom(self) -> bool:
        """True when the kernel's parameters are not the course's (out, in, rows, cols)."""
        return bool(self.signature)

    def __repr__(self):
        t = C_NAME[np.dtype(self.dtypes[0])]
        out = "rows x cols" if self.copy else "cols x rows"
        batched = any(len(s) == 3 for s in self.shapes)
        grid = self._grid_words(batched)
        lines = [f"Exercise '{self.key}' (notebook {self.lesson}): {self.title}"]
        if self.variant:
            lines.append(f"  YOUR VARIANT: {self.variant} (the notebook's cell is the default: adapt it; "
                         f"cl.exercises.stub('{self.key}') prints your starting kernel)")
        if self.custom:
            lines.append(f"  write: __global__ void {self.kernel}({self.signature})")
            lines += [f"    {_arg_words(a, t)}" for a in self.parameters]
        else:
            lines.append(f"  write: __global__ void {self.kernel}({t}* out, const {t}* in, int rows, int cols)"
                         f"   // in: rows x cols, out: {out}")
        lines += [f"  launch: blocks of {self.block[0]}x{self.block[1]} threads, {grid}",
                  "  shapes tried: " + ", ".join(_shape_name(s) for s in self.shapes),
                  "  checked on every shape: the result (every element), out-of-bounds and misaligned accesses, "
                  "barriers all threads reach" + (", races" if self._shared else "")]
        lines += [f"  required: {p.name}" for p in self.properties]
        if self.once and not self.own_tiles:
            lines.append("  once correct: each element is loaded and stored once")
        if self.own_tiles:
            lines.append("  once correct: each block moves only its own tile, and each element is loaded and "
                         "stored once")
        if self.wide:
            lines.append(f"  64-bit offsets: a few blocks of a {_shape_name(self.wide)} launch (more than 2^32 "
                         "elements) must move their own tiles")
        if self.note:
            lines.append(f"  note: {self.note}")
        return "\n".join(lines)

    def _grid_words(self, batched: bool) -> str:
        if self.grid_text:
            return f"grid = ({', '.join(self.grid_text)}{',' if len(self.grid_text) == 1 else ''})" + (
                " (a / rounds up)" if any("/" in g for g in self.grid_text) else "")
        if self.grid is not None:
            return "a grid of its own (see the exercise's text)"
        return (f"one per {self.tile[0]}x{self.tile[1]} tile: grid = (ceil(cols / {self.tile[0]}), "
                f"ceil(rows / {self.tile[1]})" + (", batch)" if batched else ")"))

    @property
    def _shared(self) -> bool:
        return any(p.name in (uses_shared().name, no_races().name) for p in self.properties)


def _arg_words(a, t) -> str:
    """One parameter of a declared signature, for get(): what it holds and what the kernel does with it."""
    if not a.pointer:
        return f"{a.name} = {a.value}"
    dims = " x ".join(map(str, a.shape))
    held = f"{dims} of {C_NAME.get(a.dtype, t) if a.dtype is not None else t}" if dims else ""
    what = {"in": "read", "out": f"written: afterwards {a.expect}",
            "inout": f"read, then written: afterwards {a.expect}"}[a.role]
    return f"{a.name}: " + ", ".join(filter(None, [held, what]))


def _shape_name(s) -> str:
    return f"{s[0]} x {s[1]}x{s[2]}" if len(s) == 3 else f"{s[0]}x{s[1]}"


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


@dataclass
class Report:
    """The checker's answer: ``ok``, each problem with its hint, and what passed."""
    exercise: str
    problems: list = field(default_factory=list)     # [(what, hint)]
    passed: list = field(default_factory=list)
    record: dict = field(default_factory=dict, repr=False, compare=False)   # the same as data (teach.record)

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

"""What the notebook's last ``%%cuda`` cell for each kernel name did: bound that kernel, or did not compile.

    cells.compiled(module)                 # the magic, after a cell compiled and bound its kernels
    cells.failed(text, error)              # the magic, after a cell did not compile (or its %%cuda line was wrong)
    cells.outdated(fn, ["transpose_tile"]) # a check: the failed Cell that should have replaced fn, or None
    cells.failure("transpose_tile")        # the failed Cell that last tried to define that name, or None

Why: after a ``%%cuda`` cell that did not compile, the notebook still binds each of its kernels'
names to the previous cell's Function. A check cell run next would judge that older kernel, and a
student who had just added the ``__syncthreads()`` (but not its ``;``) was told to add it. A check
asks :func:`outdated` first and names the compile error instead.

The record is per kernel name: the names a failing cell meant to define are read from its text
(``compile.source.read`` needs no compiler), so a failure in one cell never casts doubt on another
cell's kernels, and a cell that compiles again clears it. Only what the magic bound is judged here:
a Function made in Python (``RawModule(...).get_function``) was never bound by a cell and is never
called outdated. Nothing here compiles, binds names or prints.
"""
from __future__ import annotations

import itertools
import weakref
from dataclasses import dataclass

from ..compile import source
from ..errors import CompileError, KernelError

_count = itertools.count(1)
_bound: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()   # module -> number of the cell that last bound it
_latest: dict[str, "Cell"] = {}                                      # kernel name -> the last cell that declared it


@dataclass(frozen=True)
class Cell:
    """One run of a %%cuda cell: its number in this session, the kernels it declares, its error (None: compiled)."""
    number: int
    names: tuple
    error: KernelError | None = None

    def where(self) -> str:
        """The error as 'line 14, column 5: expected a ";"' (the cell's own line numbers), or its first line."""
        err = self.error
        if isinstance(err, CompileError) and err.diagnostics:
            line, column, text = err.diagnostics[0][:3]
            more = len(err.diagnostics) - 1
            return (f"line {line}" + (f", column {column}" if column else "") + f": {text}"
                    + (f" (and {more} more error{'s' if more > 1 else ''})" if more > 0 else ""))
        first = (err.message if err is not None else "").splitlines()
        return first[0] if first else "it did not compile"


def compiled(module) -> Cell:
    """Record that a cell compiled `module` and bound its kernels (a re-run of an unchanged cell too)."""
    cell = Cell(next(_count), tuple(module.source.names))
    _bound[module] = cell.number
    for name in cell.names:
        _latest[name] = cell
    return cell


def failed(text: str, error: KernelError) -> Cell:
    """Record that a cell of source `text` did not compile: the kernels it declares keep their older Functions."""
    try:
        names = tuple(source.read(text).names)
    except Exception:                # a text the scanner cannot read declares nothing it can name
        names = ()
    cell = Cell(next(_count), names, error)
    for name in names:
        _latest[name] = cell
    return cell


def failure(name: str) -> Cell | None:
    """The cell that last declared kernel `name`, if it did not compile."""
    cell = _latest.get(name)
    return cell if cell is not None and cell.error is not None else None


def outdated(fn, names) -> Cell | None:
    """The failed cell, declaring one of `names`, that ran after the cell which bound `fn`: the notebook
    shows newer code than `fn`'s. None when `fn` is that cell's, newer, or never bound by a cell."""
    try:
        number = _bound.get(fn.module)
    except (AttributeError, TypeError):      # not a Function of a module
        return None
    if number is None:
        return None
    for name in names:
        cell = failure(name)
        if cell is not None and cell.number > number:
            return cell
    return None


def forget() -> None:
    """Start a fresh record (a test, or a notebook's kernel restarted in the same process)."""
    _bound.clear()
    _latest.clear()

"""The course's kernels, by name: which file, which template instance, how to launch it.

Every kernel in kernels/ has the same contract::

    kernel(T* out, const T* in, int rows, int cols)     // in: rows x cols, row-major
                                                         // out: cols x rows (a copy: rows x cols)

so one launcher serves them all. A :class:`Spec` says how a block maps onto the matrix
(``tile(p)``: columns x rows of *in* that one block covers; ``block(p)``: threads), and
``kernel(key, dtype, **params)`` returns a :class:`Transpose` ready to run on either backend::

    t = transposes.kernel("tile", np.float32, TILE=32, BLOCK_ROWS=8, PAD=1)
    out, run = t.simulate(a)          # CPU simulator: metrics in run.metrics
    out = t.run(a)                    # the GPU (numpy in, numpy out)

Element types are chosen by dtype: 4-byte floats are ``float``, 8-byte ``double``; 2- and
1-byte types are moved as ``unsigned short`` / ``unsigned char`` (a transpose moves bits).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from .module import RawModule

C_TYPE = {np.dtype(np.float32): "float", np.dtype(np.float64): "double",
          np.dtype(np.int32): "int", np.dtype(np.uint32): "unsigned int",
          np.dtype(np.int64): "long long", np.dtype(np.uint64): "unsigned long long",
          np.dtype(np.float16): "unsigned short", np.dtype(np.uint16): "unsigned short",
          np.dtype(np.int16): "short", np.dtype(np.uint8): "unsigned char", np.dtype(np.int8): "signed char"}


@dataclass(frozen=True)
class Spec:
    key: str
    title: str
    file: str
    template: str                      # e.g. "tile<{T}, {TILE}, {BLOCK_ROWS}, {PAD}>"
    tile: Callable                     # params -> elements one block covers along grid x, grid y
    block: Callable                    # params -> (bx, by) threads
    defaults: dict = field(default_factory=dict)
    is_copy: bool = False              # out has in's shape (the copy ceiling)
    swap_grid: bool = False            # grid x runs over rows of `in` instead of its columns
    itemsizes: tuple = (1, 2, 4, 8)
    lesson: str = ""                   # which notebook introduces it
    check: Callable | None = None      # params, dtype -> error message or None (constraints)


SPECS: dict[str, Spec] = {}


def register(spec: Spec) -> Spec:
    SPECS[spec.key] = spec
    return spec


register(Spec("copy", "Copy (the upper bound)", "copy.cu", "copy<{T}, {TILE}, {BLOCK_ROWS}>",
              tile=lambda p: (p["TILE"], p["TILE"]), block=lambda p: (p["TILE"], p["BLOCK_ROWS"]),
              defaults=dict(TILE=32, BLOCK_ROWS=8), is_copy=True, lesson="03"))
register(Spec("naive_row", "Naive: read rows, write columns", "naive.cu", "naive_row<{T}>",
              tile=lambda p: (p["BX"], p["BY"]), block=lambda p: (p["BX"], p["BY"]),
              defaults=dict(BX=32, BY=8), lesson="03"))
register(Spec("naive_col", "Naive: read columns, write rows", "naive.cu", "naive_col<{T}>",
              tile=lambda p: (p["BX"], p["BY"]), block=lambda p: (p["BX"], p["BY"]),
              defaults=dict(BX=32, BY=8), swap_grid=True, lesson="03"))
register(Spec("tile", "Shared-memory tile", "tile.cu", "tile<{T}, {TILE}, {BLOCK_ROWS}, {PAD}>",
              tile=lambda p: (p["TILE"], p["TILE"]), block=lambda p: (p["TILE"], p["BLOCK_ROWS"]),
              defaults=dict(TILE=32, BLOCK_ROWS=32, PAD=0), lesson="04"))
register(Spec("padded", "Shared-memory tile, padded by one", "tile.cu", "tile<{T}, {TILE}, {BLOCK_ROWS}, {PAD}>",
              tile=lambda p: (p["TILE"], p["TILE"]), block=lambda p: (p["TILE"], p["BLOCK_ROWS"]),
              defaults=dict(TILE=32, BLOCK_ROWS=32, PAD=1), lesson="05"))
register(Spec("padded_32x8", "Padded tile, 32x8 threads (4 elements each)", "tile.cu",
              "tile<{T}, {TILE}, {BLOCK_ROWS}, {PAD}>",
              tile=lambda p: (p["TILE"], p["TILE"]), block=lambda p: (p["TILE"], p["BLOCK_ROWS"]),
              defaults=dict(TILE=32, BLOCK_ROWS=8, PAD=1), lesson="06"))

_modules: dict = {}


def module_for(file: str) -> RawModule:
    if file not in _modules:
        _modules[file] = RawModule(path=file, options=("-std=c++17",))
    return _modules[file]


class Transpose:
    """One course kernel, instantiated for a dtype and parameters."""

    def __init__(self, spec: Spec, dtype, params: dict):
        self.spec, self.dtype, self.params = spec, np.dtype(dtype), params
        if self.dtype not in C_TYPE:
            raise ValueError(f"no course kernel moves {self.dtype} elements; use one of "
                             f"{sorted(str(d) for d in C_TYPE)}")
        if self.dtype.itemsize not in spec.itemsizes:
            raise ValueError(f"{spec.key} handles {spec.itemsizes}-byte elements, not {self.dtype}")
        if spec.check:
            problem = spec.check(params, self.dtype)
            if problem:
                raise ValueError(f"{spec.key}: {problem}")
        self.name = spec.template.format(T=C_TYPE[self.dtype], **params)

    def __repr__(self):
        return f"<Transpose {self.spec.key}: {self.name}>"

    @property
    def function(self):
        return module_for(self.spec.file).get_function(self.name)

    @property
    def source(self) -> str:
        return module_for(self.spec.file).code

    def out_shape(self, rows, cols):
        return (rows, cols) if self.spec.is_copy else (cols, rows)

    def config(self, rows, cols):
        """(grid, block) for an input of rows x cols."""
        tc, tr = self.spec.tile(self.params)
        bx, by = self.spec.block(self.params)
        if self.spec.swap_grid:
            return (-(-rows // tc), -(-cols // tr)), (bx, by)
        return (-(-cols // tc), -(-rows // tr)), (bx, by)

    def args(self, out, inp):
        rows, cols = inp.shape
        return (out, inp, np.int32(rows), np.int32(cols))

    def simulate(self, inp: np.ndarray, out: np.ndarray | None = None, **options):
        """Run in the simulator; returns (out, SimRun)."""
        rows, cols = inp.shape
        if out is None:
            out = poisoned(self.out_shape(rows, cols), self.dtype)
        grid, block = self.config(rows, cols)
        run = self.function.simulate(grid, block, self.args(out, inp), **options)
        return out, run

    def run(self, inp, out=None):
        """Run on the GPU: numpy or CuPy in; the output in the same kind of array."""
        rows, cols = inp.shape
        if out is None:
            xp = np if isinstance(inp, np.ndarray) else __import__("cupy")
            out = xp.empty(self.out_shape(rows, cols), self.dtype)
        grid, block = self.config(rows, cols)
        self.function(grid, block, self.args(out, inp))
        return out

    def time(self, inp_dev, out_dev, **kw) -> float:
        from .gpu import time_launch
        grid, block = self.config(*inp_dev.shape)
        return time_launch(self.function, grid, block, self.args(out_dev, inp_dev), **kw)


def kernel(key: str, dtype=np.float32, **params) -> Transpose:
    if key not in SPECS:
        import difflib
        close = difflib.get_close_matches(key, SPECS, n=3)
        raise KeyError(f"no course kernel '{key}'" + (f"; did you mean {', '.join(close)}?" if close else "")
                       + f" Known: {', '.join(SPECS)}")
    spec = SPECS[key]
    unknown = set(params) - set(spec.defaults)
    if unknown:
        raise TypeError(f"{key} has no parameter(s) {', '.join(sorted(unknown))}; it takes {', '.join(spec.defaults) or 'none'}")
    return Transpose(spec, dtype, {**spec.defaults, **params})


def poisoned(shape, dtype) -> np.ndarray:
    """An output array full of a value no correct kernel writes (NaN, or all-ones bits)."""
    dtype = np.dtype(dtype)
    out = np.empty(shape, dtype)
    if dtype.kind == "f":
        out.fill(np.nan)
    else:
        out.view(np.uint8).fill(0xA5)
    return out


def random_matrix(rows, cols, dtype, seed=0) -> np.ndarray:
    """Random, never-zero test data whose every element differs from the poison value."""
    rng = np.random.default_rng(seed)
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        return (rng.random((rows, cols)) + 0.5).astype(dtype)
    info = np.iinfo(dtype)
    lo, hi = max(info.min, -100000), min(info.max, 100000)
    a = rng.integers(1, hi, (rows, cols), endpoint=False).astype(dtype) if lo >= 0 else \
        rng.integers(lo, hi, (rows, cols)).astype(dtype)
    a[a == 0] = 1
    poison = np.array([0xA5] * dtype.itemsize, np.uint8).view(dtype)[0]
    a[a == poison] = 1
    return a

"""One wrapper for every transpose kernel, the course's own and a student's ``%%cuda`` kernel.

    t = transposes.kernel("tile", np.float32, TILE=32, BLOCK_ROWS=8, PAD=1)   # from the catalog
    t = as_kernel(transpose_tile, block=(32, 8), tile=32)                     # a %%cuda Function
    out, run = t.simulate(a)          # CPU simulator: metrics in run.metrics
    out = t.run(a)                    # the GPU (numpy or CuPy in, the same kind out)
    t.config(1000, 1030)              # (grid, block) for an input of 1000 x 1030

A :class:`Transpose` knows a kernel with the contract ``kernel(T* out, const T* in, int rows, int
cols)`` and how a launch covers a matrix: the block, the tile one block moves (columns x rows of
*in*), or a grid function for kernels that loop. A course kernel compiles on first use, one
module per template instance, marked ``trusted`` so the GPU guard does not re-check it.

Every parameter a student can get wrong (an unknown key or parameter, a block with a zero, a
dtype the kernel does not read) is an :class:`~course_lib.errors.ArgumentError` with a hint.
"""
from __future__ import annotations

import difflib

import numpy as np

from ..compile.source import C_NAME
from ..errors import ArgumentError
from ..kernel.launch import dim3
from ..kernel.module import KernelNotFound, RawModule
from ..sim import plan
from ..sim.spaces.host import size_text
from ..sim.movement.tma import TensorMap
from .catalog import DEMOS, SPECS, Spec
from .data import poisoned

_modules: dict = {}


def module_for(file: str, name: str | None = None) -> RawModule:
    """The compiled kernels/ file; with `name`, a module holding just that template instance
    (so a new instance compiles alone instead of recompiling every earlier one)."""
    key = (file, name)
    if key not in _modules:
        mod = RawModule(path=file, options=("-std=c++17",), name_expressions=(name,) if name else ())
        mod.trusted = True
        _modules[key] = mod
    return _modules[key]


class Transpose:
    """A transpose-contract kernel and how to launch it over a matrix of any shape."""

    def __init__(self, name, *, block, tile, dtype=None, copy=False, swap_grid=False, grid=None,
                 function=None, spec: Spec | None = None, params: dict | None = None):
        self.name, self.spec, self.params = name, spec, dict(params or {})
        self.block = dim3(block, "block")[:2]
        self.tile = tuple(dim3(tile, "tile")[:2])
        self.dtype = None if dtype is None else np.dtype(dtype)
        self.is_copy, self.swap_grid, self._grid = bool(copy), swap_grid, grid
        self._function = function

    @classmethod
    def from_spec(cls, spec: Spec, dtype, params: dict) -> "Transpose":
        dtype = np.dtype(dtype)
        if dtype not in C_NAME:
            raise ArgumentError(f"no course kernel moves {dtype} elements",
                                hint=f"use one of {', '.join(sorted(str(d) for d in C_NAME))}")
        if dtype.itemsize not in spec.itemsizes:
            raise ArgumentError(f"{spec.key} handles {' or '.join(map(str, spec.itemsizes))}-byte elements, not {dtype}",
                                hint="pick another kernel for this dtype (transposes.SPECS lists them)")
        problem = spec.check(params, dtype) if spec.check else None
        if problem:
            raise ArgumentError(f"{spec.key}: {problem}", hint=f"{spec.key}'s defaults: {spec.defaults}")
        shape_params = {**params, "_S": dtype.itemsize, "_V": 16 // dtype.itemsize, "_E": max(1, 4 // dtype.itemsize),
                        "_D": dtype}
        grid = (lambda rows, cols: spec.grid(shape_params, rows, cols)) if spec.grid else None
        return cls(spec.template.format(T=C_NAME[dtype], **params), block=spec.block(shape_params),
                   tile=spec.tile(shape_params), dtype=dtype, copy=spec.is_copy, swap_grid=spec.swap_grid,
                   grid=grid, spec=spec, params=params)

    def __repr__(self):
        return f"<Transpose {self.label}: {self.name} block={self.block} tile={self.tile}>"

    @property
    def label(self) -> str:
        return self.spec.key if self.spec else self.name

    @property
    def function(self):
        if self._function is None:
            self._function = module_for(self.spec.file, self.name).get_function(self.name)
        return self._function

    @property
    def source(self) -> str:
        return module_for(self.spec.file).code if self.spec else self.function.module.code

    def out_shape(self, rows, cols):
        return (rows, cols) if self.is_copy else (cols, rows)

    def expected(self, inp: np.ndarray) -> np.ndarray:
        """What a correct kernel writes for `inp`."""
        return inp.copy() if self.is_copy else np.ascontiguousarray(inp.T)

    def config(self, rows, cols):
        """(grid, block) for an input of rows x cols."""
        if self._grid:
            return tuple(self._grid(rows, cols)), self.block
        tc, tr = self.tile
        if self.swap_grid:
            return (-(-rows // tc), -(-cols // tr)), self.block
        return (-(-cols // tc), -(-rows // tr)), self.block

    def args(self, out, inp):
        """(out, inp, rows, cols); for a TMA kernel (spec.maps) TensorMaps over inp (and out): the
        TensorMap refuses, with a hint, rows whose pitch is not a multiple of 16 bytes."""
        rows, cols = inp.shape
        why = self.refuses(rows, cols, inp.dtype)
        if why:
            raise ArgumentError(f"{self.label}: {why}", hint="pick another kernel for this shape (transposes.SPECS)")
        if self.spec is not None and self.spec.maps is not None:
            m = self.spec.maps(self.params, self.dtype)
            inp = TensorMap(inp, box=m["inp"], swizzle=m["swizzle"])
            if m["out"] is not None:
                out = TensorMap(out, box=m["out"], swizzle=m["swizzle"])
        return (out, inp, np.int32(rows), np.int32(cols))

    def refuses(self, rows, cols, dtype=None) -> str | None:
        """Why this kernel cannot move a rows x cols matrix (the TMA's 16-byte row pitches, ldsm's
        8-element rows, band's shared memory), or None when it can."""
        if self.spec is None or self.spec.shapes is None:
            return None
        return self.spec.shapes(self.params, rows, cols, np.dtype(dtype if dtype is not None else self.dtype))

    def shared_mem(self, rows, cols) -> int:
        """Bytes of dynamic shared memory a launch over rows x cols needs (0 for most kernels)."""
        if self.spec is None or self.spec.shared is None:
            return 0
        return int(self.spec.shared(self.params, self.dtype, rows, cols))

    def simulate(self, inp: np.ndarray, out: np.ndarray | None = None, *, max_bytes=plan.MAX_BYTES, **options):
        """Run in the simulator; returns (out, SimRun). The output it makes and the simulator's working memory
        must fit ``max_bytes`` (the simulator's limit): a bigger shape is refused before either is allocated."""
        if getattr(inp, "ndim", None) != 2:
            raise ArgumentError(f"{self.label}.simulate(inp): inp must be a 2-D array (rows x cols), not "
                                f"{type(inp).__name__}{' of shape ' + str(inp.shape) if hasattr(inp, 'shape') else ''}",
                                hint="e.g. cl.transposes.random_matrix(1000, 1030, np.float32)")
        if out is None:
            rows, cols = inp.shape
            plan.room_for(rows * cols * inp.dtype.itemsize + plan.BATCH_BYTES,
                          f"the output of {'a copy' if self.is_copy else 'a transpose'} of a {rows} x {cols} "
                          f"{inp.dtype} matrix (its {size_text(rows * cols * inp.dtype.itemsize)}) with the simulator's "
                          "working memory", limit=max_bytes, elsewhere=f"{self.label}.run(a)")
            out = poisoned(self.out_shape(*inp.shape), inp.dtype)
        grid, block = self.config(*inp.shape)
        options.setdefault("shared_mem", self.shared_mem(*inp.shape))
        return out, self.function.simulate(grid, block, self.args(out, inp), **options)

    def run(self, inp, out=None):
        """Run on the GPU: numpy or CuPy in; the output in the same kind of array."""
        if out is None:
            xp = np if isinstance(inp, np.ndarray) else __import__("cupy")
            out = xp.empty(self.out_shape(*inp.shape), inp.dtype)
        grid, block = self.config(*inp.shape)
        self.function(grid, block, self.args(out, inp), shared_mem=self.shared_mem(*inp.shape))
        return out

    def time(self, inp_dev, out_dev, **kw) -> float:
        from ..gpu import time_launch
        grid, block = self.config(*inp_dev.shape)
        return time_launch(self.function, grid, block, self.args(out_dev, inp_dev), self.shared_mem(*inp_dev.shape),
                           inputs=[1], **kw)


def kernel(key: str, dtype=np.float32, **params) -> Transpose:
    """The course kernel `key` for elements of `dtype`; params override its defaults."""
    spec = SPECS.get(key) or DEMOS.get(key) if isinstance(key, str) else None
    if spec is None:
        known = list(SPECS) + list(DEMOS)
        close = difflib.get_close_matches(str(key), known, n=3)
        raise KernelNotFound(f"no course kernel {key!r}",
                             hint=(f"did you mean {', '.join(close)}? " if close else "") + f"known: {', '.join(known)}")
    unknown = set(params) - set(spec.defaults)
    if unknown:
        raise ArgumentError(f"{key} has no parameter(s) {', '.join(sorted(unknown))}",
                            hint=f"it takes {', '.join(f'{k}={v}' for k, v in spec.defaults.items()) or 'none'}")
    per_dtype = spec.dtype_defaults(np.dtype(dtype)) if spec.dtype_defaults else {}
    return Transpose.from_spec(spec, dtype, {**spec.defaults, **per_dtype, **params})


def as_kernel(target, dtype=np.float32, block=None, tile=None, copy=False, **params) -> Transpose:
    """A course kernel key ('padded'), a Transpose, or a %%cuda Function (then `block` is needed).

        as_kernel(transpose_tile, block=(32, 8), tile=32).config(1000, 1030)   # ((33, 32), (32, 8))
    """
    if isinstance(target, str):
        return kernel(target, dtype, **params)
    if isinstance(target, Transpose):
        return target
    if not hasattr(target, "simulate") or not hasattr(target, "signature"):
        raise ArgumentError(f"cannot run {target!r}: give a course kernel's name ('padded'), or a kernel compiled "
                            "by a %%cuda cell", hint="e.g. sim.run('padded') or sim.run(my_kernel, block=(32, 8))")
    if block is None:
        raise ArgumentError(f"to run {target.name} say how to launch it", hint="block=(32, 8) and, if one block "
                            "covers more than one element per thread, tile=32 (a 32x32 tile per block)")
    if params:
        raise ArgumentError(f"{', '.join(params)}: parameters only apply to course kernels",
                            hint="a %%cuda kernel takes block=, tile= and copy=; set its constants with -D in the cell")
    tile = block if tile is None else tile
    tile = (tile, tile) if isinstance(tile, (int, np.integer)) and not isinstance(tile, bool) else tile
    sig = target.signature or []
    reads = next((p.dtype for p in sig if p.pointer and p.dtype is not None), None)
    return Transpose(target.name, block=block, tile=tile, dtype=reads, copy=copy, function=target)

"""Test data for transposes: random input that is never zero, and outputs poisoned before a launch.

    a = random_matrix(1000, 1030, np.float16, seed=0)
    out = poisoned((1030, 1000), np.float16)     # NaN (floats) or 0xA5 bytes: no kernel writes that

Every correctness check in the course uses both, so an element a kernel never wrote is seen as
wrong, and one it copied from the wrong place almost surely differs.

A shape must be whole numbers of at least 0 (an ArgumentError otherwise), and its matrix must fit the
memory this machine can still give (``sim.spaces.host.free_bytes``, a class hub's 1 GiB included) or
``max_bytes=``: beyond it a SimulationLimit says how big the matrix would be, before numpy allocates
anything. The random draws are made a slice of rows at a time, so a matrix takes its own bytes and no
more (one draw of the whole used 8 bytes an element besides); the data is the same. The simulator's own
limit (``sim.plan.MAX_BYTES``) is its callers' to apply: these arrays also feed a GPU.
"""
from __future__ import annotations

import numpy as np

from ..errors import ArgumentError, SimulationLimit
from ..sim.plan import MAX_BYTES, SHRINK
from ..sim.spaces import host

SLICE_BYTES = 8 << 20          # float64 draws made at a time


def _dims(shape, call: str) -> tuple:
    dims = shape if isinstance(shape, (tuple, list)) else (shape,)
    if not dims or not all(isinstance(d, (int, np.integer)) and not isinstance(d, bool) and d >= 0 for d in dims):
        raise ArgumentError(f"{call}: a shape is whole numbers of at least 0, e.g. (1000, 1030)",
                            hint="rows and columns as ints: random_matrix(1000, 1030, np.float32)")
    return tuple(int(d) for d in dims)


def _fits(dims, dtype, call: str, max_bytes, failed=False) -> None:
    """Refuse a matrix the machine cannot hold (or over `max_bytes`), saying how big it is and what to do;
    `failed`: numpy could not allocate it after all (another process took the memory meanwhile)."""
    need = int(np.prod(dims, dtype=object)) * dtype.itemsize
    free = host.free_bytes() if max_bytes is None else max_bytes
    if not failed and (free is None or need <= free):
        return
    where = "this machine has free" if max_bytes is None else "max_bytes= allows"
    err = SimulationLimit(f"{call}: a {' x '.join(map(str, dims))} {dtype} matrix takes {host.size_text(need)}, "
                          + ("more than this machine could give" if failed else
                             f"more than the {host.size_text(free)} of memory {where}"),
                          hint=f"use a smaller shape: {SHRINK}, and the simulator takes at most "
                               f"{host.size_text(MAX_BYTES)} of matrices; a GPU runs big shapes, but their data is "
                               "made in this machine's memory first")
    err.timed_out, err.reason = False, "memory"
    raise err


def _allocate(dims, dtype, call, max_bytes) -> np.ndarray:
    _fits(dims, dtype, call, max_bytes)
    try:
        return np.empty(dims, dtype)
    except MemoryError:
        _fits(dims, dtype, call, max_bytes, failed=True)
        raise


def poisoned(shape, dtype, *, max_bytes=None) -> np.ndarray:
    """An output array full of a value no correct kernel writes (NaN, or all-ones bits)."""
    dtype = np.dtype(dtype)
    dims = _dims(shape, f"poisoned({shape!r}, {dtype})")
    out = _allocate(dims, dtype, f"poisoned({shape!r}, {dtype})", max_bytes)
    if dtype.kind == "f":
        out.fill(np.nan)
    else:
        out.view(np.uint8).fill(0xA5)
    return out


def random_matrix(rows, cols, dtype, seed=0, *, max_bytes=None) -> np.ndarray:
    """Random, never-zero test data whose every element differs from the poison value."""
    dtype = np.dtype(dtype)
    call = f"random_matrix({rows!r}, {cols!r}, {dtype})"
    dims = _dims((rows, cols), call)
    a = _allocate(dims, dtype, call, max_bytes)
    rng = np.random.default_rng(seed)
    step = max(1, SLICE_BYTES // 8 // max(dims[1], 1))
    if dtype.kind == "f":
        for r in range(0, dims[0], step):          # the same stream as one draw of the whole
            a[r:r + step] = rng.random((min(step, dims[0] - r), dims[1])) + 0.5
        return a
    info = np.iinfo(dtype)
    lo, hi = max(info.min, -100000), min(info.max, 100000)
    poison = np.array([0xA5] * dtype.itemsize, np.uint8).view(dtype)[0]
    for r in range(0, dims[0], step):
        size = (min(step, dims[0] - r), dims[1])
        part = rng.integers(1, hi, size).astype(dtype) if lo >= 0 else rng.integers(lo, hi, size).astype(dtype)
        part[(part == 0) | (part == poison)] = 1
        a[r:r + step] = part
    return a

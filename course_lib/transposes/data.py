"""Test data for transposes: random input that is never zero, and outputs poisoned before a launch.

    a = random_matrix(1000, 1030, np.float16, seed=0)
    out = poisoned((1030, 1000), np.float16)     # NaN (floats) or 0xA5 bytes: no kernel writes that

Every correctness check in the course uses both, so an element a kernel never wrote is seen as
wrong, and one it copied from the wrong place almost surely differs.
"""
from __future__ import annotations

import numpy as np


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

"""Is a transpose right? Compare every element, and say where it went wrong.

``compare(out, expected)`` returns a :class:`Mismatch` report: how many elements are wrong,
how many were never written (still the poison value), the first few coordinates, and which
part of the matrix they are in (the last partial tile row or column, one tile, the edges, or
everywhere) — the clue that usually points at the bug. ``check`` runs a course kernel on
random data with a poisoned output over the shapes that catch the usual mistakes.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..sim import plan
from .data import poisoned, random_matrix

# square, non-square, not a multiple of any tile, a single row, a single column
SHAPES = [(64, 64), (96, 160), (1000, 1030), (1, 4097), (4097, 1)]


@dataclass
class Mismatch:
    ok: bool
    wrong: int = 0
    unwritten: int = 0
    total: int = 0
    first: list = field(default_factory=list)   # [(row, col, got, expected)]
    region: str = ""

    def __bool__(self):
        return self.ok

    def __str__(self):
        if self.ok:
            return f"correct: all {self.total} elements match"
        parts = [f"{self.wrong} of {self.total} elements are wrong"]
        if self.unwritten:
            parts.append(f"{self.unwritten} of them were never written (still the poison value)")
        if self.region:
            parts.append(self.region)
        firsts = ", ".join(f"out[{r}, {c}] = {g!r} (expected {e!r})" for r, c, g, e in self.first)
        return "; ".join(parts) + (f". First: {firsts}" if firsts else "")


def _same_bits(a, b):
    if a.dtype.kind == "f":
        return (a == b) | (np.isnan(a) & np.isnan(b))
    return a == b


CHUNK = 1 << 20     # elements compared at once: the temporaries stay a few MB whatever the matrix


def _chunks(n_rows, row_size):
    step = max(1, CHUNK // max(1, row_size))
    return (slice(i, i + step) for i in range(0, n_rows, step))


def _mismatches(out, expected) -> np.ndarray:
    """Where out and expected differ, bit for bit (NaN matches NaN): one byte per element and
    temporaries of CHUNK elements, never a matrix of them (an 8192 x 8192 check held four)."""
    if out.ndim == 0:
        return ~_same_bits(out, expected)
    bad = np.empty(out.shape, bool)
    for rows in _chunks(out.shape[0], out[0].size):
        np.logical_not(_same_bits(out[rows], expected[rows]), out=bad[rows])
    return bad


def _count_unwritten(out, bad) -> int:
    poison = poisoned((1,), out.dtype)[0]
    if out.ndim == 0:
        return int(bad & _same_bits(out, poison))
    return sum(int((bad[rows] & _same_bits(out[rows], poison)).sum()) for rows in _chunks(out.shape[0], out[0].size))


def _first(bad, n=3) -> list:
    """The first `n` wrong (row, col) in row-major order, without listing every wrong element."""
    found = []
    for r in np.flatnonzero(bad.any(axis=1)):
        found += [(int(r), int(c)) for c in np.flatnonzero(bad[r])[:n - len(found)]]
        if len(found) >= n:
            break
    return found


def compare(out, expected, tile=32) -> Mismatch:
    out, expected = np.asarray(out), np.asarray(expected)
    if out.shape != expected.shape:
        return Mismatch(False, total=expected.size, region=f"the output has shape {out.shape}, expected {expected.shape}")
    bad = _mismatches(out, expected)
    n = int(bad.sum())
    if n == 0:
        return Mismatch(True, total=out.size)
    unwritten = _count_unwritten(out, bad)
    first = [(r, c, out[r, c].item(), expected[r, c].item()) for r, c in _first(bad)]
    return Mismatch(False, n, unwritten, out.size, first, describe_region(bad, tile))


def describe_region(bad: np.ndarray, tile=32) -> str:
    rows, cols = bad.shape
    rs, cs = np.flatnonzero(bad.any(axis=1)), np.flatnonzero(bad.any(axis=0))
    r0, r1, c0, c1 = rs.min(), rs.max(), cs.min(), cs.max()
    if bad.all():
        return "every element is wrong"
    last_rows, last_cols = rows - rows % tile if rows % tile else rows - tile, cols - cols % tile if cols % tile else cols - tile
    if r0 >= last_rows and rows % tile and rows > tile:
        return f"all in the last, partial block of rows ({last_rows}..{rows - 1}): check the bounds test on rows"
    if c0 >= last_cols and cols % tile and cols > tile:
        return f"all in the last, partial block of columns ({last_cols}..{cols - 1}): check the bounds test on columns"
    if r1 - r0 < tile and c1 - c0 < tile and r0 // tile == r1 // tile and c0 // tile == c1 // tile:
        return f"all inside one {tile}x{tile} tile (rows {r0}..{r1}, columns {c0}..{c1})"
    # every wrong element within `tile` of an edge: none in the interior
    if not bad[tile:rows - tile, tile:cols - tile].any() and rows > 2 * tile and cols > 2 * tile:
        return "all near the edges of the matrix"
    frac = bad.mean()
    return f"spread over the matrix ({frac:.1%} of elements, rows {r0}..{r1}, columns {c0}..{c1})"


def check(t, shapes=SHAPES, backend="simulator", seed=0) -> list[tuple[tuple, Mismatch]]:
    """Run a Transpose on random input with a poisoned output for every shape it takes (a TMA kernel
    refuses rows that are not whole 16-byte pieces: ``Transpose.refuses``); report each."""
    results = []
    for k, (rows, cols) in enumerate(shapes):
        if t.refuses(rows, cols):
            continue
        if backend == "simulator":      # input, output, expected, the comparison; before any is made
            plan.room_for(rows * cols * (3 * t.dtype.itemsize + 1) + plan.BATCH_BYTES,
                          f"check on a {rows} x {cols} {t.dtype} matrix (input, output, the expected result, "
                          "comparing them and the simulator's working memory)", elsewhere="backend='gpu'", option=None)
        inp = random_matrix(rows, cols, t.dtype, seed + k)
        if backend == "simulator":
            out, _ = t.simulate(inp, check_races=False)
        else:
            out = poisoned(t.out_shape(rows, cols), t.dtype)
            t.run(inp, out)
        results.append(((rows, cols), compare(out, t.expected(inp), t.tile[0])))
    return results

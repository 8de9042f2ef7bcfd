"""Why a declared signature's buffers are wrong: every written buffer against its ``expect``.

    problem = diagnose(ex, p, run)     # (what, hint) for the first wrong buffer, or None

For exercises whose kernel is not the course's ``(out, in, rows, cols)`` (``signature``): an in-place
transpose (``a`` afterwards ``transpose(a)``), a split into ``xs, ys, zs``. Each written buffer is
compared element for element; the answer names the buffer, how many elements are wrong, how many were
never written (still the poison, or for a buffer read and written: still what it held), the first few,
and a hint from where they are: nothing written at all; values no input holds (a type changed them);
for a square in-place transpose, the tiles on or off the diagonal; else the indices. ``runs.diagnose``
keeps the course signature's answers. Nothing here runs a kernel.
"""
from __future__ import annotations

import numpy as np

from ..transposes import verify
from ..transposes.data import poisoned
from .evidence import PATTERN, RESULT, Problem

UNWRITTEN = ("those elements were never written: find the thread that should store the ones listed above — is "
             "there one, and does its bounds test let it?")


def _same(x, y):
    return (x == y) | (np.isnan(x) & np.isnan(y)) if x.dtype.kind == "f" else x == y


def diagnose(ex, p, run=None) -> Problem | None:
    """(what is wrong, hint) for the first written buffer of problem `p` that differs from its expect, ranked
    (``evidence``): a pattern that names a cause, or RESULT where only the indices are left to compare."""
    for a in ex.parameters:
        if a.name not in p.expected:
            continue
        got, want = p.buffers[a.name], p.expected[a.name]
        if got.shape != want.shape:
            return Problem(f"{a.name} has shape {got.shape}, expected {want.shape}", "check the exercise's buffers")
        bad = ~_same(got, want)
        if not bad.any():
            continue
        before = p.initial.get(a.name, poisoned(want.shape, want.dtype))
        kept = bad & _same(got, before)
        if _same(got, before).all():
            return Problem(_what(ex, a, got, want, bad, kept),
                           f"nothing was written to {a.name}: every element of {a.name} must be stored by some thread "
                           f"(afterwards {a.name} = {a.expect})", PATTERN)
        hint, rank = _hint(ex, a, got, want, bad, kept, p)
        return Problem(_what(ex, a, got, want, bad, kept), hint, rank)
    return None


def _what(ex, a, got, want, bad, kept) -> str:
    n, total = int(bad.sum()), bad.size
    parts = [f"{a.name}: {n} of {total} elements are wrong"]
    if kept.any():
        parts.append(f"{int(kept.sum())} of them " + ("still hold what they held before (never written, or "
                                                      "written back unchanged)"
                                                      if a.role == "inout" else "were never written (still the poison value)"))
    if got.ndim == 2:
        region = verify.describe_region(bad, ex.tile[0] if ex.tiled else 32)
        parts.append(region)
    where = np.argwhere(bad)[:3]
    first = ", ".join(f"{a.name}[{', '.join(map(str, i))}] = {got[tuple(i)].item()!r} "
                      f"(expected {want[tuple(i)].item()!r})" for i in where)
    return "; ".join(parts) + f". First: {first}"


def _hint(ex, a, got, want, bad, kept, p) -> tuple[str, int]:
    changed = _changed(got[bad & ~kept], want[bad & ~kept], p)
    if changed:
        return changed, PATTERN
    square = _square_tiles(ex, a, bad, kept, got, p.initial.get(a.name))
    if square:
        return square, PATTERN
    if kept.any() and kept.sum() == bad.sum():
        return UNWRITTEN, PATTERN
    sources = ", ".join(k for k in p.initial)
    return (f"compare the indices used to read {sources} and to write {a.name} for the elements listed above "
            f"(afterwards {a.name} must be {a.expect})"), RESULT


def _changed(got, want, p) -> str | None:
    """Values no input holds: a narrower or other type on the way."""
    if not got.size:
        return None
    pool = np.concatenate([x.reshape(-1) for x in p.initial.values()]) if p.initial else want.reshape(-1)
    if np.isin(got, pool).mean() > 0.5:
        return None
    if want.dtype.kind == "f" and np.array_equal(got, np.trunc(want).astype(want.dtype)):
        return "the values lost their fraction (1.73 became 1.0): an int holds the elements on the way"
    return ("the wrong elements hold values that are nowhere in the input: they were changed on the way (another "
            "type, or bytes mixed up) — keep the elements of the exercise's type from the load to the store")


def _square_tiles(ex, a, bad, kept, got, before) -> str | None:
    """An in-place transpose of a square matrix: tiles moved but not transposed; or which tiles, on or off
    the diagonal, are wrong."""
    if a.expect.replace(" ", "") != f"transpose({a.name})" or bad.ndim != 2 or bad.shape[0] != bad.shape[1]:
        return None
    t = ex.tile[0] if ex.tiled else 32
    n = bad.shape[0]
    r, c = np.nonzero(bad)
    mr, mc = (c // t) * t + r % t, (r // t) * t + c % t          # the same place in the mirror tile
    inside = (mr < n) & (mc < n)
    if before is not None and inside.mean() > 0.9 and _same(got[r[inside], c[inside]],
                                                             before[mr[inside], mc[inside]]).mean() > 0.9:
        return (f"the tiles are at their mirror places but not transposed: after the barrier, read the shared tile by "
                f"column (tile[threadIdx.x][threadIdx.y + j]) so that row r of a {t}x{t} tile becomes its column r")
    k = -(-n // t)
    tiles = np.zeros((k, k), bool)
    for r, c in np.argwhere(bad):
        tiles[r // t, c // t] = True
    diagonal, off = np.diag(tiles).any(), (tiles & ~np.eye(k, dtype=bool)).any()
    if diagonal and not off:
        return (f"only tiles on the diagonal are wrong: a block on the diagonal has one {t}x{t} tile, its own mirror — "
                "load it once, wait for the block, and write it back transposed in the same place")
    if off and not diagonal:
        still = " (they still hold what they held: never written back)" if kept.any() else ""
        return (f"only tiles off the diagonal are wrong{still}: a block above the diagonal loads its tile and the "
                "mirror tile, waits for the block, then writes each transposed at the other's place — and every "
                "pair of tiles must be swapped by exactly one block (a launch over the upper triangle)")
    return None

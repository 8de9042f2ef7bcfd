"""Why a result is wrong: where its wrong elements are and what they hold, and the hint that points to.

    problem = diagnose(ex, out, a, run)     # (what, hint) ranked (evidence.Problem), or None when all is right

For ``runs``: compares every element of one shape's output with the transpose (or copy) of `in`
and picks a hint from where the wrong elements are and what they hold: misplaced elements of
`in` (an index), values `in` does not hold (a type that changed them on the way), elements never
written (whole tiles: the block mapping; single ones: a bounds test), a matrix of a batch written
by another matrix's blocks (the batch offset), a tile read before its cp.async copies landed; and
first the patterns over tiles that name one cause each (``patterns``: a band beyond in's limits,
mirrored tiles, tiles not turned inside, the same rows of every tile). Each problem carries the rank
of its evidence (``evidence``). It runs no kernel and judges no property.
"""
from __future__ import annotations

import numpy as np

from ..compile.source import C_NAME
from ..transposes import verify
from ..transposes.data import poisoned
from . import patterns
from .evidence import LOCATED, PATTERN, RESULT, Problem
from .exercise import expected


def diagnose(ex, out, a, run=None, loops=None) -> Problem | None:
    """(what is wrong, hint) for one shape's output, ranked by how directly its evidence names the
    cause (``evidence``), or None when every element is right. `loops`: whether the kernel has any."""
    want = expected(ex, a)
    if out.ndim == 3:
        found = _diagnose_batch(ex, out, a, want)
        return None if found is None else Problem(*found, rank=PATTERN)
    m = verify.compare(out, want, 32 if ex.grid else ex.tile[0])
    if m.ok:
        return None
    bad = ~_same(out, want)
    unwritten = bad & _same(out, np.broadcast_to(poisoned((1,), out.dtype)[0], out.shape))
    pattern = patterns.find(ex, out, want, bad, unwritten, a.shape, loops)
    m.region = pattern.region if pattern else (patterns.tiles_region(ex, bad) or m.region)
    hint, rank = (pattern.hint, PATTERN) if pattern else _hint(m, out, a, want, ex, run, bad, unwritten)
    early = _early(run)
    if early:       # the values stored were read before they landed: poison in out does not mean unwritten
        hint, rank = early, PATTERN
    return Problem(str(m), hint, rank)


def written_share(out) -> float:
    """The share of out's elements that no longer hold the poison (some thread wrote them)."""
    if out.size == 0:
        return 1.0
    return 1.0 - float(_same(out, np.broadcast_to(poisoned((1,), out.dtype)[0], out.shape)).mean())


def _early(run) -> str | None:
    early = next((r for r in getattr(run, "races", []) if getattr(r, "copy", None) and r.op == "reads"), None)
    if early is None:
        return None
    return (f"line {early.lines[1]} reads the tile before the {early.copy} copy of line {early.lines[0]} has "
            "landed, and what it read reaches out: wait for the copies first (its __pipeline_wait_prior(N) "
            "must leave no group of them on its way, then __syncthreads() for every thread's)")


def _hint(m, out, a, want, ex, run, bad, unwritten) -> tuple[str, int]:
    """(hint, rank) for a result no pattern of ``patterns`` fits."""
    written = bad & ~unwritten
    if m.unwritten == m.total:
        return "nothing was written: every element of out must be stored by some thread", PATTERN
    if m.unwritten == m.wrong:      # before 'more than half wrong': an unwritten element is no misplaced one
        return _unwritten_hint(m, bad, a, ex)
    uninitialized = [w for w in getattr(run, "warnings", []) if w.kind == "uninitialized"]
    if uninitialized:
        w = uninitialized[0]
        return (f"line {w.line} reads shared memory that no thread of the block wrote, and those values reach out: "
                "every element a thread reads from the tile must be stored first — fill the whole tile"), LOCATED
    if written.any():
        changed = _changed_values(out[written], want[written], a)
        if changed:
            return changed, PATTERN
    edge = _partial_tiles(ex, a.shape, out.shape)
    if edge is not None and edge[bad].all() and not edge.all():    # (a 2 x 4098 matrix is all partial tiles)
        return ("all wrong elements come from the last, partial tiles (the matrix is not a multiple of the tile): "
                "threads past the edge must skip loading and storing, but the others must still do their part — "
                "test rows and cols separately, on the way in and on the way out"), PATTERN
    if m.wrong > m.total // 2:
        if ex.copy:
            return "out has the shape of in: element (r, c) goes to out[r * cols + c]", RESULT
        hint = "out is cols x rows: element (r, c) of in goes to out[c * rows + r]"
        if any(p.name == "stages the tile in shared memory" for p in ex.properties):
            hint += ("; after the barrier each thread reads the tile transposed (tile[threadIdx.x][...]) and the "
                     "block lands at the mirrored place")
        return hint, RESULT
    return "compare the indices used to read in and to write out for the elements listed above", RESULT


def _unwritten_hint(m, bad, a, ex) -> tuple[str, int]:
    """Every wrong element unwritten: threads all on a few elements, whole tiles unstored, or single misses."""
    if (m.total - m.unwritten) * 32 <= m.total:
        return (f"only {m.total - m.unwritten} element(s) of out were written: the threads store to the same few "
                "places — each thread's (r, c) must come from its threadIdx and blockIdx"), PATTERN
    tiles = _tile_mask(ex, a.shape, bad)
    if tiles is not None and tiles.any() and (tiles.all(axis=(1, 3)) | ~tiles.any(axis=(1, 3))).all():
        return ("the elements written are right, but whole tiles were never written: each block must cover its "
                f"own tile ({ex.tile[0]} columns x {ex.tile[1]} rows of in) — check which blockIdx picks the "
                "tile's columns and which its rows, each times the tile's size"), PATTERN
    return ("those elements of out were never written: find the thread that should store the ones listed "
            "above — is there one, and does its bounds test let it?"), RESULT


def _tile_mask(ex, in_shape, bad):     # bad in in's coordinates, (tile row, row, tile column, column)
    (rows, cols), (tx, ty) = in_shape, ex.tile
    if ex.grid is not None or rows % ty or cols % tx:
        return None
    b = bad.reshape(in_shape) if ex.copy else np.ascontiguousarray(bad.reshape(cols, rows).T)
    return b.reshape(rows // ty, ty, cols // tx, tx)


def _partial_tiles(ex, in_shape, out_shape):
    """Mask over out of the elements whose source lies in a partial tile of the grid (None: no grid of tiles)."""
    rows, cols = in_shape
    if ex.grid is not None or (rows % ex.tile[1] == 0 and cols % ex.tile[0] == 0):
        return None
    edge = np.zeros(in_shape, bool)
    if rows % ex.tile[1]:
        edge[rows - rows % ex.tile[1]:, :] = True
    if cols % ex.tile[0]:
        edge[:, cols - cols % ex.tile[0]:] = True
    return edge if ex.copy else np.ascontiguousarray(edge.T).reshape(out_shape)


def _changed_values(got, want, a) -> str | None:
    """A hint when the wrong elements hold values that `in` does not: a type changed them, or a constant.
    Not from a handful of elements: one zero where 0.76 belongs is no evidence of an int on the way."""
    if got.size < 32 or np.isin(got, a).mean() > 0.5:
        return None                                    # elements of in, in the wrong place: an index problem
    t = C_NAME[a.dtype]
    if a.dtype.kind == "f":
        if np.array_equal(got, np.trunc(want).astype(a.dtype)):
            return (f"the values lost their fraction (1.73 became 1.0): an int holds the elements on the way — "
                    f"declare the tile and any temporary as {t}")
        if np.allclose(got, want, rtol=1e-2):
            return (f"the values are close but not equal: they passed through a narrower type (half, or float for "
                    f"double) — keep them {t} all the way")
    elif (got == np.iinfo(a.dtype).max).mean() > 0.5:
        return (f"the wrong elements hold all ones ({np.iinfo(a.dtype).max}): a signed type's sign was spread into "
                f"them (a short or char widened, then shifted or or-ed) — keep the elements {t}, unsigned")
    if (got == got.flat[0]).all():
        return (f"every wrong element holds the same value, {got.flat[0].item()!r}, which is not an element of in: the "
                "store writes something other than the element the thread loaded")
    return (f"the wrong elements hold values that are nowhere in `in`: they were changed on the way (another type "
            f"than {t}, or bytes mixed up) — keep the elements {t} from the load to the store")


def _diagnose_batch(ex, out, a, want):
    offsets = ("matrix b starts at element b * rows * cols of in, and its transpose at b * cols * rows of out "
               "(the same count): move both pointers by blockIdx.z times that")
    unwritten = [k for k in range(len(a)) if np.isnan(out[k]).all()] if out.dtype.kind == "f" else []
    for k in range(len(a)):
        m = verify.compare(out[k], want[k], ex.tile[0])
        if m.ok:
            continue
        if unwritten and k == unwritten[0] and k > 0:
            return (f"matrices {', '.join(map(str, unwritten))} of out were never written (matrix 0 was)",
                    "every block of grid.z = b must work on matrix b: move in and out by "
                    "blockIdx.z * rows * cols elements (as size_t) before indexing")
        bad = ~_same(out[k], want[k])
        source = [b for b in range(len(a)) if b != k and np.isin(out[k][bad], a[b]).mean() > 0.9]
        if source:
            return (f"matrix {k}: {m}; the wrong values come from matrix {source[0]} of in",
                    f"blocks of matrix {source[0]} wrote into matrix {k}'s part of out: {offsets}")
        if m.unwritten:
            return (f"matrix {k}: {m}",
                    "a thread outside the matrix when loading may be inside it when storing (the roles of x and y "
                    "swap): do not return early — test every load and store against rows and cols")
        return (f"matrix {k}: {m}", offsets if k > 0 else
                "check the single-matrix transpose (bounds tests, out[c * rows + r])")
    return None


def _same(x, y):
    return (x == y) | (np.isnan(x) & np.isnan(y)) if x.dtype.kind == "f" else x == y

"""The pattern of a wrong result's wrong elements, over the tiles the launch gives each block, and its cause.

    p = find(ex, out, want, bad, unwritten, in_shape, loops=False)
    p.region        # 'every tile off the diagonal is wrong and every tile on it right (2 of 4 32x32 tiles of out)'
    p.hint          # what that pattern points to: here, the block indices not swapped for the store

A wrong element's place says more than its value. Each pattern below is one common mistake's
signature, checked in this order, and each must hold exactly (every wrong element inside it,
every element it names wrong), so that none is named on a hunch:

- a band of out beyond in's limit: out rows ``rows..cols-1`` (or columns ``cols..rows-1``) wrong,
  nothing else: a bounds test holds out's index to in's limit (the load's test copied);
- mirrored tiles: every tile on the diagonal right, every other wrong, and the written ones hold
  their mirror image: the block indices were not swapped for the store;
- the diagonal of every tile right, the rest of it wrong: each tile lands in its place but is not
  turned inside (the tile read back untransposed);
- the same elements of every tile wrong (some rows, some columns, all but a corner): a block
  covers only part of its tile (a 32x8 block without its loop, or a loop that stops early).

:func:`tiles_region` describes the wrong tiles when no cause is known (tile rows, tile columns, one
row or column of out). Tiles are out's: one block's tile of in is ``ex.tile`` (columns x rows of
in), so ``ty`` columns x ``tx`` rows of out for a transpose. Nothing here runs a kernel; an
exercise with its own grid (no tile per block) gets only the band beyond in's limit.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Pattern:
    region: str        # where the wrong elements are, in words
    hint: str          # the cause they point to


def find(ex, out, want, bad, unwritten, in_shape, loops=None) -> Pattern | None:
    """The first pattern of the module's list that `bad` (a mask over out) fits exactly, or None."""
    rows, cols = in_shape
    found = None if ex.copy else _beyond_limit(bad, unwritten, rows, cols)
    hw = out_tile(ex)
    if found or hw is None:
        return found
    tiles = _split(bad, *hw)
    return (_mirrored(ex, tiles, out, want, unwritten, hw) or _turned(ex, tiles, bad, hw)
            or _every_tile(ex, tiles, unwritten, hw, loops))


def out_tile(ex) -> tuple | None:
    """(rows, columns) of out one block's tile covers, or None where the launch is not a grid of tiles."""
    if ex.grid is not None or not ex.tile:
        return None
    tx, ty = ex.tile[:2]
    return (ty, tx) if ex.copy else (tx, ty)


def _split(mask, h, w) -> np.ndarray:
    """`mask` padded with False to whole tiles, as (tile row, row in tile, tile column, column in tile)."""
    R, C = mask.shape
    padded = np.zeros((-(-R // h) * h, -(-C // w) * w), bool)
    padded[:R, :C] = mask
    return padded.reshape(padded.shape[0] // h, h, padded.shape[1] // w, w)


def _ranges(values) -> str:
    """[0, 1, 2, 5, 8, 9] -> '0..2, 5, 8..9'."""
    values, out = sorted(int(v) for v in values), []
    for v in values:
        if out and v == out[-1][1] + 1:
            out[-1][1] = v
        else:
            out.append([v, v])
    return ", ".join(f"{a}..{b}" if b > a else f"{a}" for a, b in out)


LIMITS = ("out is cols x rows, so the store's row must stay below cols and its column below rows (it is the load's "
          "test that compares in's row with rows and its column with cols): test each index against the limit of the "
          "array it indexes")


def _beyond_limit(bad, unwritten, rows, cols) -> Pattern | None:
    """Out's rows rows..cols-1 (or columns cols..rows-1) wrong, nothing else: out held to in's limits."""
    if rows < cols and bad[rows:, :].all() and not bad[:rows, :].any():
        part, limit, size, axis = f"rows {rows}..{cols - 1}", "rows", cols, "row"
        never = unwritten[rows:, :].all()
    elif cols < rows and bad[:, cols:].all() and not bad[:, :cols].any():
        part, limit, size, axis = f"columns {cols}..{rows - 1}", "cols", rows, "column"
        never = unwritten[:, cols:].all()
    else:
        return None
    region = (f"every element of out's {part} is wrong{' (never written)' if never else ''} and no other: out has "
              f"{size} {axis}s, and the wrong ones begin at {axis} {min(rows, cols)}, which is {limit}")
    return Pattern(region, f"a bounds test holds out's {axis} index below {limit}, in's limit: " + LIMITS)


def _mirrored(ex, tiles, out, want, unwritten, hw) -> Pattern | None:
    """Every tile on the diagonal right, every other wrong, the written ones holding their mirror image."""
    wrong = tiles.any(axis=(1, 3))
    n_r, n_c = wrong.shape
    if min(n_r, n_c) < 2:
        return None                  # one row or column of tiles: 'the diagonal' is one tile, no evidence
    diagonal = np.eye(n_r, n_c, dtype=bool)
    if wrong[diagonal].any() or not wrong[~diagonal].all() or not _holds_mirror(out, want, unwritten, hw):
        return None
    h, w = hw
    region = (f"every tile off the diagonal is wrong and every tile on it right ({int(wrong.sum())} of {wrong.size} "
              f"{h}x{w} tiles of out wrong); the tiles written off the diagonal hold what belongs to their mirror "
              "image across it")
    if ex.copy:
        return Pattern(region, "each block copies its tile to the mirrored place: a copy stores with blockIdx.x "
                               "picking the columns and blockIdx.y the rows, exactly as it loads")
    return Pattern(region, "each block turns its tile right but stores it where it read it, not at the mirrored "
                           f"place: for the store swap the block indices — out's row comes from blockIdx.x ({h} per "
                           f"block) and its column from blockIdx.y ({w} per block), the other way round from the load")


def _holds_mirror(out, want, unwritten, hw) -> bool:
    """Some off-diagonal tile of out, whole and written, equals the tile of `want` mirrored across the diagonal,
    and none that can be compared differs."""
    h, w = hw
    if h != w:
        return False
    seen = False
    for i in range(out.shape[0] // h):
        for j in range(out.shape[1] // w):
            if i == j or (j + 1) * h > out.shape[0] or (i + 1) * w > out.shape[1]:
                continue
            if unwritten[i * h:(i + 1) * h, j * w:(j + 1) * w].any():     # not written whole: nothing to compare
                continue
            got, other = out[i * h:(i + 1) * h, j * w:(j + 1) * w], want[j * h:(j + 1) * h, i * w:(i + 1) * w]
            if not _same(got, other).all():
                return False
            seen = True
    return seen


def _same(x, y):
    return (x == y) | (np.isnan(x) & np.isnan(y)) if x.dtype.kind == "f" else x == y


def _turned(ex, tiles, bad, hw) -> Pattern | None:
    """In every whole tile that is wrong, exactly the elements off its diagonal; none on any tile's diagonal."""
    h, w = hw
    if h != w:
        return None
    full = tiles[:bad.shape[0] // h, :, :bad.shape[1] // w, :]
    wrong = full.any(axis=(1, 3))
    off = ~np.eye(h, dtype=bool)
    on_diagonal = tiles.transpose(0, 2, 1, 3)[..., ~off]
    if not wrong.any() or on_diagonal.any() or not (full.transpose(0, 2, 1, 3)[wrong] == off).all():
        return None
    region = f"in every {h}x{w} tile of out that is wrong, only the elements on the tile's own diagonal are right"
    if ex.copy:
        return Pattern(region, "inside each tile rows and columns are swapped: a copy keeps threadIdx.x for the "
                               "column on the way in and on the way out")
    if any(p.name == "stages the tile in shared memory" for p in ex.properties):
        return Pattern(region, "each tile lands in its place but is not turned inside: after the barrier each thread "
                               "reads the tile transposed (tile[threadIdx.x][threadIdx.y]), while threadIdx.x still "
                               "picks out's column")
    return Pattern(region, "each tile lands in its place but is not turned inside: threadIdx.x and threadIdx.y must "
                           "swap roles between in and out, and the block indices with them")


def _every_tile(ex, tiles, unwritten, hw, loops) -> Pattern | None:
    """The same elements wrong in every whole tile (and in the part of it each partial tile has), nothing else."""
    h, w = hw
    n_r, n_c = unwritten.shape[0] // h, unwritten.shape[1] // w
    if not n_r or not n_c:
        return None
    full = tiles[:n_r, :, :n_c, :].transpose(0, 2, 1, 3)          # (tile row, tile column, row, column)
    mask = full[0, 0]
    if not mask.any() or mask.all() or not (full == mask).all() or (tiles.any(axis=(0, 2)) & ~mask).any():
        return None
    rows_bad, cols_bad = mask.all(axis=1), mask.all(axis=0)
    never = _split(unwritten, h, w)[:n_r, :, :n_c, :].transpose(0, 2, 1, 3)[:, :, mask].all()
    tail = f"{' (never written)' if never else ''}, the same in each tile, and nothing else"
    if (mask == rows_bad[:, None]).all():
        part, which = f"rows {_ranges(np.flatnonzero(rows_bad))} of every {h}x{w} tile of out are wrong" + tail, "rows"
    elif (mask == cols_bad[None, :]).all():
        part, which = f"columns {_ranges(np.flatnonzero(cols_bad))} of every {h}x{w} tile of out are wrong" + tail, \
            "columns"
    else:
        ok_rows, ok_cols = np.flatnonzero(~mask.all(axis=1)), np.flatnonzero(~mask.all(axis=0))
        box = np.zeros_like(mask)
        box[np.ix_(ok_rows, ok_cols)] = True
        if (box != ~mask).any():
            return None                          # no rows or columns to name: no telling pattern
        part, which = (f"in every {h}x{w} tile of out only rows {_ranges(ok_rows)}, columns {_ranges(ok_cols)} are "
                       f"right{' (the rest never written)' if never else ''}, the same in each tile"), "part"
    return Pattern(part, _part_hint(ex, which, loops))


def _part_hint(ex, which, loops) -> str:
    """What covers only part of each tile: too few rows of threads and no loop, a loop that stops early, an index."""
    bx, by = ex.block[:2]
    tx, ty = ex.tile[:2]
    each = (tx * ty) // max(1, bx * by)
    part = {"rows": "the threads store only some rows of each tile of out",
            "columns": "each column of a tile of out holds a row of the tile of in, and those rows were not all loaded"
            if not ex.copy else "the threads store only some columns of each tile",
            "part": "the block covers only part of its tile"}[which]
    rows_short = bx == tx and by < ty           # the threads span the tile's width, not its height
    if rows_short and loops is False:
        return (f"{part}: a block of {bx}x{by} threads covers a {tx}x{ty} tile only if each thread moves {each} "
                f"elements — loop over the tile's rows (j = 0, {by}, ..., below {ty}) on the way in, and again on "
                "the way out")
    if rows_short:
        return (f"{part}: check the loops over the tile's rows — with {by} rows of threads each runs j = 0, {by}, "
                f"... while j < {ty} (j += {by}), on the way in and on the way out, the same rows in both")
    return (f"{part}: check how threadIdx (and each thread's share of {each} elements) maps onto the tile's rows "
            "and columns, in the load and in the store" if each > 1 else
            f"{part}: check the row and column each thread takes in the tile (threadIdx), in the load and in the store")


def tiles_region(ex, bad) -> str | None:
    """Where the wrong elements are, in out's tiles, when no cause is known: one column or row of out,
    whole tile rows or tile columns; None when none fits (verify's words stand)."""
    cols_bad, rows_bad = np.flatnonzero(bad.any(axis=0)), np.flatnonzero(bad.any(axis=1))
    if bad.sum() < 2:
        return None
    if cols_bad.size == 1 and bad.shape[1] > 1:
        return f"all in column {cols_bad[0]} of out ({int(bad.sum())} of its {bad.shape[0]} elements)"
    if rows_bad.size == 1 and bad.shape[0] > 1:
        return f"all in row {rows_bad[0]} of out ({int(bad.sum())} of its {bad.shape[1]} elements)"
    hw = out_tile(ex)
    if hw is None:
        return None
    wrong = _split(bad, *hw).any(axis=(1, 3))
    if wrong.all() or not wrong.any():
        return None
    h, w = hw
    if (wrong.all(axis=1) | ~wrong.any(axis=1)).all() and wrong.shape[0] > 1:
        picked = np.flatnonzero(wrong.all(axis=1))
        return f"whole rows of tiles: tile rows {_ranges(picked)} of out ({h} rows each), the others right"
    if (wrong.all(axis=0) | ~wrong.any(axis=0)).all() and wrong.shape[1] > 1:
        picked = np.flatnonzero(wrong.all(axis=0))
        return f"whole columns of tiles: tile columns {_ranges(picked)} of out ({w} columns each), the others right"
    return None

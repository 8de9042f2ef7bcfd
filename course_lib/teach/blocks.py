"""One tile per block, or each block and warp its share, judged on a whole launch from what each touched.

    problem = one_tile(run, on)     # None (each block moved one whole tile), a problem (str), or False
    problem = share(run, on)        # None (every block and warp wrote its share of out), a problem, or False

The run must have been simulated with ``owners=True`` (``sim.checks.owners``: per element of ``in`` and
``out``, the lowest and highest block that read it and wrote it) and ``on.tile`` must be the
exercise's (columns, rows) of ``in`` per tile. Any one-to-one mapping of blocks to tiles passes —
blocks taken in diagonal order, in reverse, by a ticket — because what is judged is the footprint,
not the formula: every tile of ``out`` is written by one block only, that block reads exactly that
tile of ``in`` (reads of ``out`` are ``each_element_once``'s), and no block moves two tiles (so,
with as many blocks as tiles, none is idle). Every block of every shape is judged, so a kernel cannot behave only in the
blocks a checker happens to look at. A launch too wide to simulate whole (``Exercise.wide``) is
sampled instead (``footprint.wide``).

A launch with a fixed grid (a grid-stride loop) has no tiles; there every thread of the grid must
take its turn: with T threads and n elements, each block and each warp writes about n / T elements
of ``out`` per thread (at most n / T rounded up, at least one less than n / T rounded down). A loop run by one block while the
others return, or by one warp of each block, moves every element once and coalesced, yet skips what
the exercise is about: numbering the whole grid. This module runs nothing.
"""
from __future__ import annotations

import numpy as np

BIG = np.iinfo(np.int64).max


def _coords(grid, lin) -> tuple:
    gx, gy = grid[0], grid[1] if len(grid) > 1 else 1
    return (int(lin % gx), int(lin // gx % gy), int(lin // (gx * gy)))


def _tile_ids(on):
    """(tile of each element of in, tile of each element of out, tiles across, tiles down)."""
    tx, ty = on.tile
    gx, gy = -(-on.cols // tx), -(-on.rows // ty)
    r = np.arange(on.rows, dtype=np.int64)[:, None] // ty
    c = np.arange(on.cols, dtype=np.int64)[None, :] // tx
    z = np.arange(on.batch, dtype=np.int64)[:, None, None] * gx * gy
    ids = z + (r * gx + c)[None]
    return ids.ravel(), (ids if on.copy else np.swapaxes(ids, 1, 2)).ravel(), gx, gy


def _where(on, tile, gx, gy) -> str:
    tx, ty = on.tile
    z, rest = divmod(int(tile), gx * gy)
    by, bx = divmod(rest, gx)
    r0, c0 = by * ty, bx * tx
    text = f"rows {r0}-{min(on.rows, r0 + ty) - 1}, columns {c0}-{min(on.cols, c0 + tx) - 1}"
    return text + (f" of matrix {z}" if on.batch > 1 else "")


def _span(ids, lo, hi, n):
    """Per tile: the lowest and highest block over its elements (elements nobody touched left out)."""
    tmin, tmax = np.full(n, BIG, np.int64), np.full(n, -1, np.int64)
    touched = hi >= 0
    np.minimum.at(tmin, ids[touched], lo[touched])
    np.maximum.at(tmax, ids[touched], hi[touched])
    return tmin, tmax


def one_tile(run, on):
    owners = getattr(run, "owners", None)
    if not owners or 0 not in owners or 1 not in owners or getattr(on, "tile", None) is None:
        return False
    out, inn = owners[0], owners[1]
    n_in = on.rows * on.cols * on.batch
    if out.write_lo.size < n_in or inn.read_lo.size < n_in:
        return False
    src, dst, gx, gy = _tile_ids(on)
    ntiles = gx * gy * on.batch
    grid = tuple(run.grid) + (1,) * (3 - len(run.grid))
    name = lambda lin: str(_coords(grid, lin))
    wlo, whi = out.write_lo[:n_in], out.write_hi[:n_in]
    tmin, tmax = _span(dst, wlo, whi, ntiles)
    split = np.flatnonzero((tmax >= 0) & (tmin != tmax))
    if split.size:
        t = split[0]
        return (f"the tile {_where(on, t, gx, gy)} of in reached out through several blocks, "
                f"{name(tmin[t])} to {name(tmax[t])}: one block must move a whole tile")
    mine = tmin[tmax >= 0]
    per_block = np.bincount(mine, minlength=int(np.prod(grid)))
    if per_block.max(initial=0) > 1:
        b = int(np.argmax(per_block))
        tiles = np.flatnonzero(tmin == b)
        idle = np.flatnonzero(per_block == 0)
        none = (f" while block{'s' if idle.size > 1 else ''} {', '.join(name(i) for i in idle[:3])}"
                f"{' ...' if idle.size > 3 else ''} moved none") if idle.size else ""
        return (f"block {name(b)} moved {per_block[b]} tiles ({_where(on, tiles[0], gx, gy)}; "
                f"{_where(on, tiles[1], gx, gy)}{'; ...' if tiles.size > 2 else ''}){none}: one tile per block")
    rmin, rmax = _span(src, inn.read_lo[:n_in], inn.read_hi[:n_in], ntiles)
    owner = np.where(tmax >= 0, tmin, -1)
    stray = np.flatnonzero((rmax >= 0) & (owner >= 0) & ((rmin != owner) | (rmax != owner)))
    if stray.size:
        t = stray[0]
        other = rmin[t] if rmin[t] != owner[t] else rmax[t]
        return (f"block {name(other)} read elements of the tile {_where(on, t, gx, gy)} of in, which block "
                f"{name(owner[t])} moves: a block reads only its own tile")
    return None


def _names(ids, name) -> str:
    ids = [int(i) for i in ids]
    return ", ".join(name(i) for i in ids[:3]) + (f" and {len(ids) - 3} more" if len(ids) > 3 else "")


def share(run, on):
    """None when every block, and every warp of each, wrote about n / T elements of ``out`` per thread
    (T threads in the grid: at most n / T rounded up, at least one less than rounded down); else the
    first block, or warp, that wrote more, and who wrote less or none; False without owners or the
    exercise's block."""
    owners = getattr(run, "owners", None)
    n = on.rows * on.cols * on.batch
    if not owners or 0 not in owners or not getattr(on, "block", None) or owners[0].warp_lo.size < n:
        return False
    out = owners[0]
    grid = tuple(run.grid) + (1,) * (3 - len(run.grid))
    nblocks, tpb = int(np.prod(grid)), int(np.prod(on.block))
    wpb = -(-tpb // 32)
    lo, hi = n // (nblocks * tpb), -(-n // (nblocks * tpb))          # elements per thread, rounded down and up
    each = lambda k: f"{k * lo:,}" if lo == hi else f"{k * lo:,} to {k * hi:,}"      # noqa: E731
    written = out.warp_hi[:n] >= 0
    name = lambda lin: str(_coords(grid, lin))                                            # noqa: E731
    warps = out.warp_lo[:n][written]
    per_block = np.bincount(out.write_lo[:n][written], minlength=nblocks)
    # at most every thread's n / T rounded up, and at least one element a thread less than rounded down (an
    # uneven split is the student's to choose; a block or warp that sits it out is not)
    over, under = np.flatnonzero(per_block > tpb * hi), np.flatnonzero(per_block < tpb * (lo - 1))
    if over.size or under.size:
        b = int(over[0]) if over.size else int(np.argmax(per_block))
        mine = np.unique(warps[warps // wpb == b])
        by = f", all of them by its warp {int(mine[0]) % wpb}" if mine.size == 1 and wpb > 1 else ""
        few = "none" if under.size and not per_block[under].any() else f"fewer than {tpb * (lo - 1):,}"
        return (f"block {name(b)} wrote {per_block[b]:,} of the {n:,} elements of out{by}"
                + (f", while block(s) {_names(under, name)} wrote {few}" if under.size else "")
                + f": with {nblocks} blocks of {tpb} threads each block writes {each(tpb)} (every thread "
                f"{each(1)}): the loop must spread the matrix over every block of the grid")
    threads = np.minimum(32, tpb - 32 * np.arange(wpb))               # a block's last warp may be partial
    per_warp = np.bincount(warps, minlength=nblocks * wpb)
    quota = np.tile(threads, nblocks)
    over, under = np.flatnonzero(per_warp > quota * hi), np.flatnonzero(per_warp < quota * (lo - 1))
    if over.size or under.size:
        w = int(over[0]) if over.size else int(np.argmax(per_warp))
        idle = sorted({int(i) % wpb for i in under})
        few = "none" if under.size and not per_warp[under].any() else "less than their share"
        every = "each block" if len(under) >= nblocks * len(idle) else "some blocks"
        return (f"warp {w % wpb} of block {name(w // wpb)} wrote {per_warp[w]:,} elements of out, "
                f"{per_warp[w] / max(1, quota[w] * hi):.2g} times its share ({each(int(quota[w]))})"
                + (f", while warps {spans_(idle)} of {every} wrote {few}" if under.size else "")
                + f": every warp of the {'x'.join(map(str, on.block[:2]))} block takes its turn")
    return None


def spans_(values) -> str:
    """[1, 2, 3, 7] -> '1-3, 7'."""
    runs = []
    for v in sorted(values):
        if runs and v == runs[-1][1] + 1:
            runs[-1][1] = v
        else:
            runs.append([v, v])
    return ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in runs)

"""Notebook 10 (real shapes): how a grid of tiles covers a matrix of any shape, and a checker for
batched transposes (a 3-D grid: blockIdx.z picks the matrix).

    from course_lib.lessons import shapes
    shapes.coverage(100, 70)                  # the grid over a 100 x 70 matrix, partial tiles marked
    shapes.idle(1, 4097)                      # blocks, threads launched, share of them with no element
    shapes.check_batched(transpose_batched)   # a Report, like course_lib.exercises.check

A batched kernel keeps the course's contract per matrix — ``kernel(T* out, const T* in, int rows,
int cols)`` with `in` holding `batch` matrices of rows x cols back to back and `out` `batch`
matrices of cols x rows — and is launched with ``grid.z = batch``. Its checker is the exercise
'batched' of course_lib.exercises: batches of awkward shapes, every element compared matrix by
matrix, coalescing, bank conflicts, races and barriers judged on every batch. Nothing is timed.
"""
from __future__ import annotations

import dataclasses
import math

import numpy as np
import plotly.graph_objects as go

from ..errors import ArgumentError
from ..notebook.draw import BAD, MAIN, OK, HTMLText, noticed, sourced
from ..teach import exercises
from ..teach.exercises import Report

BATCHES = list(exercises.get("batched").shapes)
MAX_TILES = 4096               # coverage draws each tile: up to 64 x 64 of them (2048 x 2048 in 32 x 32 tiles)


def idle(rows: int, cols: int, tile=(32, 32), block=(32, 8)) -> dict:
    """Blocks of a one-tile-per-block launch, threads launched, and the share of tile positions
    (elements a block could move) that fall outside the matrix."""
    gx, gy = math.ceil(cols / tile[0]), math.ceil(rows / tile[1])
    slots = gx * gy * tile[0] * tile[1]
    return dict(grid=(gx, gy), blocks=gx * gy, threads=gx * gy * block[0] * block[1], elements=rows * cols,
                idle=1 - rows * cols / slots)


def coverage(rows: int, cols: int, tile=(32, 32), block=(32, 8)) -> go.Figure:
    """The matrix (blue) and the grid of tiles over it; tiles that stick out are vermillion and dotted, and their
    threads outside the matrix must skip their loads and stores (the bounds test)."""
    d = idle(rows, cols, tile, block)
    gx, gy = d["grid"]
    if gx * gy > MAX_TILES:       # a rectangle a tile: millions took minutes, and no browser shows the figure
        raise ArgumentError(f"coverage({rows}, {cols}): a {rows} x {cols} matrix is {gx} x {gy} = {gx * gy:,} tiles of "
                            f"{tile[0]} x {tile[1]}, too many to draw one by one (at most {MAX_TILES:,})",
                            hint="draw a shape of the same kind at a smaller size (what sticks out depends on rows % "
                                 f"{tile[1]} and cols % {tile[0]}); idle(rows, cols) gives the numbers at any size")
    fig = go.Figure()
    fig.add_shape(type="rect", x0=0, y0=0, x1=cols, y1=rows, fillcolor=MAIN, opacity=0.35, line=dict(width=0))
    for by in range(gy):
        for bx in range(gx):
            x0, y0 = bx * tile[0], by * tile[1]
            partial = x0 + tile[0] > cols or y0 + tile[1] > rows
            fig.add_shape(type="rect", x0=x0, y0=y0, x1=x0 + tile[0], y1=y0 + tile[1],
                          line=dict(color=BAD if partial else OK, width=2, dash="dot" if partial else "solid"))
    xs = [bx * tile[0] + tile[0] / 2 for by in range(gy) for bx in range(gx)]
    ys = [by * tile[1] + tile[1] / 2 for by in range(gy) for bx in range(gx)]
    labels = [f"({bx},{by})" for by in range(gy) for bx in range(gx)] if gx * gy <= 64 else None
    fig.add_trace(go.Scatter(x=xs, y=ys, text=labels, mode="text", textfont=dict(size=9), hoverinfo="skip"))
    fig.update_layout(
        title=f"{rows} x {cols}: grid {gx} x {gy} = {d['blocks']} blocks, {d['threads']} threads for "
              f"{d['elements']} elements — {d['idle']:.0%} of the tiles' slots are outside (dotted tiles)",
        xaxis=dict(title="column of in", range=[-1, gx * tile[0] + 1], constrain="domain"),
        yaxis=dict(title="row of in", range=[gy * tile[1] + 1, -1], scaleanchor="x"),
        showlegend=False, height=min(620, 200 + 4 * gy * tile[1]), width=min(900, 260 + 4 * gx * tile[0]))
    partial = [(bx, by) for by in range(gy) for bx in range(gx)
               if (bx + 1) * tile[0] > cols or (by + 1) * tile[1] > rows]
    sentence = (f"Every tile lies inside the {rows} x {cols} matrix: no thread needs a bounds test." if not partial else
                f"{len(partial)} of the {gx * gy} tiles stick out of the matrix ({d['idle']:.0%} of all tile slots are "
                "outside): their threads there must skip their loads and stores, yet still reach the barrier.")
    body = [[f"({bx}, {by})", f"{by * tile[1]}-{min(rows, (by + 1) * tile[1]) - 1}",
             f"{bx * tile[0]}-{min(cols, (bx + 1) * tile[0]) - 1}", "sticks out" if (bx, by) in partial else "inside"]
            for by in range(gy) for bx in range(gx)]
    noticed(fig, sentence, [("tiles (block coordinates)", ["block", "rows of in", "columns of in", "tile"], body[:64])])
    return sourced(fig, "computed from the launch's grid and tile (no measurement)")


def check_batched(kernel, block=(32, 8), tile=(32, 32), *, batches=None, gpu: bool | None = None,
                  seed: int = 0) -> Report:
    """The batched exercise's checker (``exercises.check("batched", kernel)``): every batch shape,
    every property on every one; another block, tile or batch list checks that launch instead."""
    ex = exercises.get("batched")
    if (tuple(block), tuple(tile)) != (ex.block, ex.tile) or batches is not None:
        ex = dataclasses.replace(ex, block=tuple(block), tile=tuple(tile), shapes=tuple(batches or ex.shapes))
    return exercises.check(ex, kernel, gpu=gpu, seed=seed)


def shape_table(sim, key: str, shapes, **params):
    """For each shape: grid, threads launched, share of idle tile slots, and the simulator's
    requests and sectors per request for loads and stores (a course kernel, float32)."""
    from .measured import _table
    cols = ["shape", "grid", "threads", "idle slots", "ld requests", "ld sectors/req", "st requests",
            "st sectors/req", "correct"]
    body = []
    for rows, c in shapes:
        r = sim.run(key, shape=(rows, c), **params)
        t = r.sim
        req = {op: sum(x["requests"] for x in t.instructions if x["space"] == "global" and x["op"] == op)
               for op in ("ld", "st")}
        d = idle(rows, c)
        body.append([f"{rows}x{c}", f"{d['grid'][0]}x{d['grid'][1]}", str(d["threads"]), f"{d['idle']:.0%}",
                     str(req["ld"]), f"{t.ratio('global', 'ld'):.1f}", str(req["st"]),
                     f"{t.ratio('global', 'st'):.1f}", "yes" if r.correct.ok else "NO"])
    return _table(f"{key} (32x32 tiles, 32x8 threads), float32, simulated (H100 rules)", cols, body)


def row_pieces(sim, keys, shapes, block=(1, 1)) -> "HTMLText":
    """What a warp's 32-element row piece costs when rows start anywhere: for each kernel and
    shape, the float32 global requests of one interior block (`block`, traced by the simulator)
    as 32-byte sectors and 128-byte cache lines per request. A row of 8193 floats is 32772
    bytes, so row r starts 4r bytes past a sector boundary: most pieces straddle 5 sectors in 2
    lines instead of 4 in 1 (the tile's own columns start at multiples of 128 bytes)."""
    from .measured import _table
    cols = ["kernel", "shape", "row bytes", "ld sectors/req", "ld lines/req", "st sectors/req", "st lines/req"]
    body = []
    for key in keys:
        for rows, c in shapes:
            run = sim.run(key, shape=(rows, c), trace_block=block).sim
            cells = []
            for op in ("ld", "st"):
                per = [(len(set(a[a >= 0] >> 5)), len(set(a[a >= 0] >> 7)))
                       for r in run.accesses if r["space"] == "global" and r["op"] == op
                       for a in np.asarray(r["addresses"]) if (a >= 0).any()]
                cells += [f"{np.mean([p[0] for p in per]):.2f}", f"{np.mean([p[1] for p in per]):.2f}"]
            body.append([key, f"{rows}x{c}", str(c * 4), *cells])
    return _table(f"one interior block ({block[0]}, {block[1]}) of each launch, float32, simulated (H100 rules): "
                  "requests of its warps as 32-byte sectors and 128-byte lines", cols, body)


def split_sectors(keys, shapes, dtype=np.float32) -> HTMLText:
    """For each course kernel and shape: how many 32-byte sectors of `out` two blocks each write in part,
    and how far apart in launch order (linear block index) those two blocks are — a copy's neighbours
    along a row start one after the other, a transpose's a whole row of tiles apart. From the blocks the
    simulator records writing each element (``owners``), every block of the launch."""
    from .. import sim, transposes
    from .measured import _table
    cols = ["kernel", "shape", "sectors of out", "written in part by 2 blocks", "share",
            "launch-order distance of the 2 blocks (median)"]
    body = []
    for key in keys:
        for rows, c in shapes:
            t = transposes.kernel(key, dtype)
            a = transposes.random_matrix(rows, c, dtype)
            out = transposes.poisoned(t.out_shape(rows, c), dtype)
            grid, block = t.config(rows, c)
            launch = t.function.check_launch(grid, block, t.args(out, a), t.shared_mem(rows, c))
            run = sim.simulate(t.function, launch, owners=True, check_races=False, progress=None, echo=False)
            o = run.owners[0]
            per = 32 // np.dtype(dtype).itemsize                     # elements per sector of out
            n = (o.write_lo.size // per) * per
            lo, hi = o.write_lo[:n].reshape(-1, per), o.write_hi[:n].reshape(-1, per)
            written = hi.max(axis=1) >= 0
            first = np.where(lo >= 0, lo, np.iinfo(np.int32).max).min(axis=1)
            split = written & (first != hi.max(axis=1))
            gap = (hi.max(axis=1) - first)[split]
            body.append([key, f"{rows}x{c}", f"{int(written.sum()):,}", f"{int(split.sum()):,}",
                         f"{split.sum() / max(1, written.sum()):.0%}", f"{int(np.median(gap))}" if gap.size else "-"])
    return _table(f"sectors of out written in two parts, {np.dtype(dtype).name}, every block of the launch, "
                  "simulated (H100 rules)", cols, body)

"""Notebook 02 (warps and coalescing): pictures of which threads of a 2D block form a warp,
and the sectors-per-request sweep of a strided copy.

    from course_lib.lessons import warps
    warps.block_picture(leader, lane, block=(32, 8))   # arrays one kernel wrote, one value per thread
    warps.stride_table(runs)                            # {stride: SimRun} -> small text/HTML table

The arrays come from a kernel the notebook runs (each thread stores its lane, %laneid, and the
thread number of lane 0 of its warp); this module only draws them. It does not run kernels.
"""
from __future__ import annotations

import html

import numpy as np
import plotly.graph_objects as go

from ..notebook.alt import SIMULATED, noticed, spans
from ..notebook.draw import HTMLText, sourced
from ..notebook.palette import CATEGORIES, ink

WARP_COLORS = CATEGORIES
WARP_SHAPES = ["square", "circle", "diamond", "hexagon"]    # neighbouring warps differ in shape too


def block_picture(leader, lane, block, title: str | None = None, source: str = SIMULATED) -> go.Figure:
    """The block's threads as a grid (threadIdx.x across, threadIdx.y down), each labelled with
    its lane and coloured by its warp (threads that share lane 0's thread number share a warp)."""
    bx, by = block
    leader = np.asarray(leader).reshape(by, bx)
    lane = np.asarray(lane).reshape(by, bx)
    warp = leader // 32
    ys, xs = np.mgrid[0:by, 0:bx]
    cell = max(9, min(26, 900 // max(bx, 1), 640 // max(by, 1)))   # pixels per thread, square cells
    size = cell - 3
    fig = go.Figure()
    for w in np.unique(warp):
        sel = warp == w
        fig.add_trace(go.Scatter(
            x=xs[sel].tolist(), y=ys[sel].tolist(), mode="markers+text" if bx <= 32 else "markers",
            text=[str(v) for v in lane[sel]], textfont=dict(size=max(6, size // 2 - 1), color=ink(WARP_COLORS[int(w) % len(WARP_COLORS)])),
            marker=dict(symbol=WARP_SHAPES[int(w) % len(WARP_SHAPES)], size=size,
                        color=WARP_COLORS[int(w) % len(WARP_COLORS)]),
            name=f"warp {int(w)}", hovertemplate="threadIdx (%{x}, %{y}), lane %{text}<extra>warp " + str(int(w)) + "</extra>"))
    n = bx * by
    fig.update_layout(
        title=title or f"block ({bx}, {by}): {n} threads = {-(-n // 32)} warp(s); numbers are lanes",
        xaxis=dict(title="threadIdx.x", range=[-0.6, bx - 0.4], dtick=max(1, bx // 8), showgrid=False),
        yaxis=dict(title="threadIdx.y", range=[by - 0.4, -0.6], dtick=max(1, by // 8), showgrid=False),
        width=150 + bx * cell, height=190 + by * cell, margin=dict(b=100),
        legend=dict(orientation="h", y=-60 / (by * cell), yanchor="top"))
    noticed(fig, _what_to_notice(bx, by), [("warps", ["warp", "threads (threadIdx.y: threadIdx.x)", "lanes"],
                                            _warp_rows(warp, lane))])
    return sourced(fig, source)


def _what_to_notice(bx: int, by: int) -> str:
    n = bx * by
    if bx % 32 == 0:
        said = f"Each warp is 32 neighbouring threadIdx.x of one row of threads ({bx // 32} warp(s) per row)"
    elif 32 % bx == 0:
        said = f"A warp spans {32 // bx} rows of {bx} threads: lanes run along x first, then on to the next row"
    else:
        said = f"Warps follow the thread number x + y · {bx}, so they break across rows of threads"
    part = f"; the last warp has only {n % 32} of its 32 lanes filled" if n % 32 else ""
    return said + part + "."


def _warp_rows(warp, lane) -> list:
    """One row per warp: its threads, row by row of the block, and its lanes."""
    rows = []
    for w in np.unique(warp):
        ys, xs = np.nonzero(warp == w)
        where = "; ".join(f"{y}: {spans(xs[ys == y])}" for y in np.unique(ys))
        rows.append([str(int(w)), where, spans(lane[warp == w])])
    return rows


def stride_table(runs: dict, label: str = "stride (elements)") -> HTMLText:
    """{stride: SimRun of the strided copy} -> global load sectors per request and bytes used."""
    head = [label, "load sectors/request", "bytes used / moved"]
    rows = []
    for stride, run in runs.items():
        rec = [r for r in run.instructions if r["space"] == "global" and r["op"] == "ld"]
        sectors, req, used = (sum(r[k] for r in rec) for k in ("sectors", "requests", "bytes"))
        rows.append([str(stride), f"{sectors / req:.1f}", f"{used / (32 * sectors):.0%}"])
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(head)]
    text = "\n".join("  ".join(v.rjust(w) for v, w in zip(r, widths)) for r in [head] + rows)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(v)}</td>" for v in r) + "</tr>" for r in rows)
    return HTMLText("<table><thead><tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in head)
                    + f"</tr></thead><tbody>{body}</tbody></table>", text).sourced(SIMULATED)

"""What the course's pictures are made of: one traced access picked from a run, and square marks on a grid.

    marks.pick(run, "shared", "ld")["addresses"][0]     # 32 byte addresses of warp 0's first read
    marks.warp_addresses(run, None, 4, "global", "st", None, 0, 0)   # (addresses, width, op, where)
    marks.cells(xs, ys, labels, colour, "lane -> sector")            # a scatter of labelled squares

``draw`` (sector pictures) and ``bank_pictures`` (bank maps) build on these; this module draws no
whole figure and decides no colour.
"""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from .palette import ink


def pick(run, space: str, op: str | None = None, line: int | None = None, nth: int = 0) -> dict:
    """One traced execution of a memory instruction: dict(pc, line, space, width, op, addresses).

    Chooses by space ('global'/'shared'), op ('ld'/'st') and source line; `nth` picks among
    several (an unrolled loop has one instruction per iteration).

        pick(run, "shared", "ld")["addresses"][0]      # 32 byte addresses of warp 0's first read
    """
    recs = [r for r in run.accesses if r["space"] == space and (op is None or r["op"] == op)
            and (line is None or r["line"] == line)]
    if not recs:
        have = sorted({(r["space"], r["op"], r["line"]) for r in run.accesses})
        raise ValueError(f"no traced {space} {op or 'access'}" + (f" on line {line}" if line else "")
                         + f"; traced: {', '.join(f'{s} {o} line {n}' for s, o, n in have) or 'none'}")
    return recs[min(nth, len(recs) - 1)]


def warp_addresses(run, addresses, width, space, op, line, warp, nth):
    """(32 addresses, -1 for an inactive lane; width; op; 'line L, warp W') from a run or given addresses."""
    if addresses is not None:
        a = np.asarray(addresses, np.int64).reshape(-1)
        return np.pad(a, (0, 32 - a.size), constant_values=-1), width, op, f"warp {warp}"
    r = pick(run, space, op, line, nth)
    return r["addresses"][warp], r["width"], r["op"], f"line {r['line']}, warp {warp}"


def cells(x, y, text, color, name, size=13, symbol="square", legend=False):
    """Square markers on a grid: a heatmap whose stored JSON is a few short lists (a 32 x 32
    heatmap is two thousand lines of notebook JSON)."""
    return go.Scatter(x=x, y=y, text=text, mode="markers+text", name=name, textfont=dict(size=8, color=ink(color)),
                      marker=dict(symbol=symbol, size=size, color=color), hoverinfo="text+name",
                      showlegend=legend, legendgroup=name, meta="lane(s)")

"""Notebook 01 (CPU transpose): row-major pictures, CPU transpose loops, and timing them.

    from course_lib.lessons import cpu
    cpu.layout(3, 4)                         # a small matrix and the order its elements sit in memory
    cpu.by_rows(a); cpu.blocked(a, 64)       # the CPU loops the notebook compares
    cpu.best_time(cpu.blocked, a)            # seconds, best of a few runs (never stored in a notebook)
    cpu.effective_gbps(a.nbytes, seconds)    # 2 x bytes / time, in GB/s

The loops are numpy slice assignments inside a Python loop: each slice is a compiled C loop,
so what is measured is the memory access pattern (rows vs columns vs blocks), not Python's
interpreter. ``transpose_loop`` is the literal two-loop algorithm, one element at a time, for
tiny matrices only. This module does not run GPU kernels and draws only the layout picture.
"""
from __future__ import annotations

import time

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ..notebook import draw
from ..notebook.palette import BAD, CATEGORIES, ink

ROW_COLORS = CATEGORIES       # each cell also says its (row, column): the colour is a second cue


def layout(rows: int = 3, cols: int = 4, *, transposed: bool = False) -> go.Figure:
    """The matrix as you draw it (top) and as memory holds it (bottom), each element labelled
    (row, column) and coloured by its row. ``transposed=True`` numbers the memory cells in the
    order a transpose reads them to write out row by row (down the columns), with the jumps drawn."""
    n, cell = rows * cols, 40                        # memory strip: 40 px per element
    width = max(n * cell, cols * 56, 440)
    top = rows * 52
    strip = 150 if transposed else 70
    fig = make_subplots(rows=2, cols=1, vertical_spacing=0.0, subplot_titles=[
        f"a {rows} x {cols} matrix: element (r, c) sits at offset r * {cols} + c",
        "memory, offsets 0 .. " + str(n - 1) + (": below, the order a transpose reads it" if transposed else "")])
    r, c = np.divmod(np.arange(n), cols)
    colors = [ROW_COLORS[i % len(ROW_COLORS)] for i in r]
    labels = [f"({i},{j})" for i, j in zip(r, c)]
    fig.add_trace(go.Scatter(x=c.tolist(), y=r.tolist(), text=[f"{lab}<br>@{k}" for k, lab in enumerate(labels)],
                             mode="markers+text", textfont=dict(color=[ink(c) for c in colors], size=10),
                             marker=dict(symbol="square", size=46, color=colors), hoverinfo="text"), row=1, col=1)
    fig.add_trace(go.Scatter(x=list(range(n)), y=[0] * n, text=labels, mode="markers+text",
                             textfont=dict(color=[ink(c) for c in colors], size=9),
                             marker=dict(symbol="square", size=cell - 4, color=colors), hoverinfo="text"), row=2, col=1)
    if transposed:
        order = (c * rows + r).argsort().tolist()    # offsets of in, in the order out is written
        step = np.empty(n, int)
        step[order] = np.arange(1, n + 1)
        fig.add_trace(go.Scatter(x=list(range(n)), y=[-0.75] * n, text=[str(k) for k in step], mode="text",
                                 textfont=dict(color=BAD, size=12), hoverinfo="skip"), row=2, col=1)
        for a, b in zip(order, order[1:]):           # one arc per jump, higher for longer jumps
            h = 0.5 + 0.22 * abs(b - a)
            fig.add_shape(type="path", path=f"M {a},0.45 Q {(a + b) / 2},{h} {b},0.45",
                          line=dict(color=BAD, width=1.5), row=2, col=1)
    half = width / (2 * 52)                           # matrix: 52 px between neighbours
    fig.update_xaxes(visible=False)
    fig.update_yaxes(visible=False)
    fig.update_xaxes(range=[(cols - 1) / 2 - half, (cols - 1) / 2 + half], row=1, col=1)
    fig.update_xaxes(range=[-0.6, n - 0.4], row=2, col=1)
    fig.update_yaxes(range=[rows - 0.5, -0.5], row=1, col=1)
    fig.update_yaxes(range=[-1.1, 0.7 + 0.22 * n] if transposed else [-0.8, 0.8], row=2, col=1)
    total = top + strip + 130
    fig.update_layout(showlegend=False, width=width + 40, height=total, margin=dict(l=20, r=40, t=60, b=10),
                      yaxis=dict(domain=[1 - top / (total - 50), 1]),
                      yaxis2=dict(domain=[0, strip / (total - 50)]))
    fig.layout.annotations[1].y = strip / (total - 50) + 0.02
    order = (c * rows + r).argsort() if transposed else None
    if transposed:
        sentence = (f"To write out row by row, a transpose reads in down its columns: every step jumps {cols} "
                    f"elements ahead, and back to the top of the next column when a column ends.")
    else:
        sentence = (f"Row-major: the {cols} elements of a row sit side by side in memory, and the elements of a "
                    f"column are {cols} apart.")
    rows_ = [[labels[k], str(k)] + ([str(int(np.flatnonzero(order == k)[0]) + 1)] if transposed else [])
             for k in range(n)]
    draw.noticed(fig, sentence, [("elements", ["element (r, c)", "offset in memory"]
                                  + (["read as step"] if transposed else []), rows_)])
    return draw.sourced(fig, "computed from the row-major formula (not measured)")


# ------------------------------------------------------------------------------ the loops

def transpose_loop(a) -> np.ndarray:
    """The textbook algorithm, one element at a time: out[c][r] = in[r][c]. Tiny inputs only
    (Python manages a few million of these per second, a compiled loop hundreds of times more)."""
    rows, cols = a.shape
    out = np.empty((cols, rows), a.dtype)
    for r in range(rows):
        for c in range(cols):
            out[c, r] = a[r, c]
    return out


def by_rows(a) -> np.ndarray:
    """Read a row of `a` (contiguous), write it as a column of out (one element per row of out)."""
    out = np.empty(a.shape[::-1], a.dtype)
    for r in range(a.shape[0]):
        out[:, r] = a[r, :]
    return out


def by_columns(a) -> np.ndarray:
    """Read a column of `a` (strided), write it as a row of out (contiguous)."""
    out = np.empty(a.shape[::-1], a.dtype)
    for c in range(a.shape[1]):
        out[c, :] = a[:, c]
    return out


def blocked(a, block: int = 64) -> np.ndarray:
    """Cache blocking: transpose block x block squares, so both the rows read and the rows
    written stay in the cache while the square is worked on."""
    rows, cols = a.shape
    out = np.empty((cols, rows), a.dtype)
    for r in range(0, rows, block):
        for c in range(0, cols, block):
            out[c:c + block, r:r + block] = a[r:r + block, c:c + block].T
    return out


def copy(a) -> np.ndarray:
    """The same bytes moved without transposing: the ceiling for every loop above."""
    out = np.empty_like(a)
    out[...] = a
    return out


# ------------------------------------------------------------------------------ timing

def best_time(f, *args, repeat: int = 5) -> float:
    """The shortest of `repeat` runs of f(*args), in seconds (the least disturbed run)."""
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        f(*args)
        best = min(best, time.perf_counter() - t)
    return best


def effective_gbps(nbytes: int, seconds: float) -> float:
    """Effective bandwidth: every byte is read once and written once, so 2 x bytes / time."""
    return 2 * nbytes / seconds / 1e9


def compare(a, loops: dict, repeat: int = 5) -> dict:
    """{name: effective GB/s} for each loop on matrix `a`; each transpose is checked against a.T."""
    expected = np.ascontiguousarray(a.T)
    out = {}
    for name, f in loops.items():
        if f is not copy and not np.array_equal(f(a), expected):
            raise AssertionError(f"{name} did not transpose correctly")
        out[name] = effective_gbps(a.nbytes, best_time(f, a, repeat=repeat))
    return out

"""Notebook 08 (structs through shared memory): Mike Giles's index mappings, in numpy.

A warp moves 32 structs of I 4-byte fields. Element n = i + j*I (field i of struct j) goes to
word k of a per-warp shared array; the warp writes it row-wise (lane l writes n = l + 32m)
and reads it column-wise (lane j reads field i of its own struct). Three mappings:

    plain      k = i + j*I                        (no padding)
    giles      I = P*F (P a power of two, F odd):  k = n + n // (32F) if P <= 32, else n + j
    plus_one   k = i + j*(I + 1) = n + j           (no division, one word per struct)

    from course_lib.lessons import aos
    aos.cost(6, "plain", "read")        # wavefronts per request, by the simulator's rules
    aos.picture(6, "plain")             # the shared array: k in each cell, conflicts in red
    aos.overhead([1, 4, 6, 8, 24])      # words per warp and the padding's share

Costs come from ``course_lib.draw.bank_cost`` (the simulator's own bank rules), so they agree
with what the ``aos`` kernel (kernels/aos.cu) shows when simulated. Nothing here runs a kernel.
"""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from ..draw import BAD, OK, HTMLText, bank_cost
from .measured import _table

MAPPINGS = {"plain": "k = i + jI", "giles": "Giles: k = n + n/(32F)", "plus_one": "k = i + j(I+1)"}
LANES = np.arange(32)


def split(I: int) -> tuple[int, int]:
    """I = P * F with P a power of two and F odd."""
    P = I & -I
    return P, I // P


def slot(n, j, I: int, mapping: str):
    """Word index k of element n = i + j*I (numpy arrays welcome)."""
    n, j = np.asarray(n), np.asarray(j)
    if mapping == "plain":
        return n
    if mapping == "plus_one":
        return n + j
    if mapping == "giles":
        P, F = split(I)
        return n + n // (32 * F) if P <= 32 else n + j
    raise KeyError(f"no mapping '{mapping}'; use one of {', '.join(MAPPINGS)}")


def read_addresses(I: int, i: int, mapping: str) -> np.ndarray:
    """Byte addresses of the warp's column read: lane j reads field i of struct j."""
    return 4 * slot(i + LANES * I, LANES, I, mapping)


def write_addresses(I: int, m: int, mapping: str) -> np.ndarray:
    """Byte addresses of the warp's m-th row-wise write: lane l writes element n = l + 32m."""
    n = LANES + 32 * m
    return 4 * slot(n, n // I, I, mapping)


def cost(I: int, mapping: str, side: str = "read") -> float:
    """Shared wavefronts per request for the whole warp's read (I requests) or write (I requests)."""
    addr = read_addresses if side == "read" else write_addresses
    return sum(bank_cost(addr(I, x, mapping), op="ld" if side == "read" else "st")[0] for x in range(I)) / I


def words(I: int, mapping: str) -> int:
    """Shared words one warp needs (the largest k + 1)."""
    n = np.arange(32 * I)
    return int(slot(n, n // I, I, mapping).max()) + 1


def overhead(Is) -> HTMLText:
    """Per I: P, F, words per warp for each mapping, and how much the padding adds."""
    cols = ["I", "P", "F", "k = i + jI", "Giles", "Giles extra", "k = i + j(I+1)", "extra"]
    body = []
    for I in Is:
        P, F = split(I)
        plain, g, p1 = words(I, "plain"), words(I, "giles"), words(I, "plus_one")
        body.append([str(I), str(P), str(F), str(plain), str(g), f"{(g - plain) / plain:.1%}", str(p1),
                     f"{(p1 - plain) / plain:.1%}"])
    return _table("shared words per warp (32 structs of I floats)", cols, body)


def picture(I: int, mapping: str, title: str | None = None) -> go.Figure:
    """The warp's shared array as Giles draws it: one row per struct j (lane), one column per
    field i, each cell labelled with its word k. Red cells share a bank with another cell of
    their column (a conflict when the warp reads that column)."""
    j, i = np.meshgrid(LANES, np.arange(I), indexing="ij")
    k = slot(i + j * I, j, I, mapping)
    bank = k % 32
    clash = np.zeros_like(k, bool)
    for c in range(I):
        b = bank[:, c]
        for r in range(32):
            clash[r, c] = np.any((b == b[r]) & (k[:, c] != k[r, c]))
    per_col = [bank_cost(4 * k[:, c])[0] for c in range(I)]
    fig = go.Figure(go.Scatter(
        x=i.ravel().tolist(), y=j.ravel().tolist(), text=[str(v) for v in k.ravel()], mode="markers+text",
        marker=dict(symbol="square", size=22, color=[BAD if c else OK for c in clash.ravel()]),
        textfont=dict(size=9, color="white"), hovertext=[f"k={a}, bank {b}" for a, b in zip(k.ravel(), bank.ravel())],
        hoverinfo="text"))
    fig.update_layout(
        title=title or f"I = {I}, {MAPPINGS[mapping]}: column reads cost "
                       f"{max(per_col)} wavefront(s)" + (" — conflict-free" if max(per_col) == 1 else ""),
        xaxis=dict(title="field i", dtick=1, range=[-0.6, I - 0.4]),
        yaxis=dict(title="struct j (= lane)", autorange="reversed", dtick=4),
        height=640, width=max(260, 70 + 40 * I), showlegend=False)
    return fig


def sweep_point(I: int, side: str = "read") -> dict:
    """Wavefronts per request of every mapping for one I (a point of notebook 08's sweep)."""
    return {m: cost(I, m, side) for m in MAPPINGS}


def sweep_figure(xs, ys, side: str = "read", **_) -> go.Figure:
    """Wavefronts per request against I, one line per mapping."""
    from ..draw import sweep
    what = "column reads (lane j, field i)" if side == "read" else "row-wise writes (lane l, element l + 32m)"
    return sweep(xs, {MAPPINGS[m]: [y[m] for y in ys] for m in MAPPINGS}, xlabel="I (floats per struct)",
                 ylabel="shared wavefronts per request", title=f"Structs of I floats through shared memory: {what}")

"""Notebook 08 (structs through shared memory): Mike Giles's index mappings, in numpy, and what
the machine code makes of them.

A warp moves 32 structs of I 4-byte fields. Element n = i + j*I (field i of struct j) goes to
word k of a per-warp shared array; the warp writes it row-wise (lane l writes n = l + 32m)
and reads it column-wise (lane j reads field i of its own struct). Three mappings:

    plain      k = i + j*I                        (no padding)
    giles      I = P*F (P a power of two, F odd):  k = n + n // (32F) if P <= 32, else n + j
    plus_one   k = i + j*(I + 1) = n + j           (no division, one word per struct)

    from course_lib.lessons import aos
    aos.cost(6, "plain", "read")        # wavefronts per request of the 4-byte accesses, by the simulator's rules
    aos.picture(6, "plain")             # the shared array: k in each cell, conflicts as diamonds
    aos.overhead([1, 4, 6, 8, 24])      # words per warp and the padding's share
    aos.machine_table(sim, struct_read, [4, 6, 8])   # what ptxas made of the read, plain and Giles
    aos.per_warp({"plain": run}, "st")  # one warp's shared stores in a run's machine code

Costs from ``cost`` come from ``course_lib.draw.bank_cost`` (the simulator's own bank rules) for
one 4-byte access per field, so they agree with what the ``aos`` kernel (kernels/aos.cu, whose
machine code keeps those 4-byte loads) shows when simulated. ptxas may instead load a lane's
neighbouring fields with one 8- or 16-byte instruction (LDS.64, LDS.128) where it can prove the
alignment; ``machine_table`` and ``per_warp`` read what it did from simulated runs (the simulator
counts the machine code, see course_lib/sim/fusion.py). Only ``machine_table`` runs kernels, on
the simulator it is given.
"""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from ..notebook.alt import SIMULATED
from ..notebook.draw import BAD, OK, HTMLText, bank_cost, sourced
from ..notebook.palette import ink
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
    return _table("shared words per warp (32 structs of I floats)", cols, body).sourced(
        "computed from the index mappings (arithmetic)")


def picture(I: int, mapping: str, title: str | None = None) -> go.Figure:
    """The warp's shared array as Giles draws it: one row per struct j (lane), one column per
    field i, each cell labelled with its word k. Vermillion diamonds share a bank with another cell
    of their column (a conflict when the warp reads that column)."""
    j, i = np.meshgrid(LANES, np.arange(I), indexing="ij")
    k = slot(i + j * I, j, I, mapping)
    bank = k % 32
    clash = np.zeros_like(k, bool)
    for c in range(I):
        b = bank[:, c]
        for r in range(32):
            clash[r, c] = np.any((b == b[r]) & (k[:, c] != k[r, c]))
    per_col = [bank_cost(4 * k[:, c])[0] for c in range(I)]
    fig = go.Figure()
    for bad in (False, True):        # vermillion diamonds share a bank: shape and colour say it, and the legend
        sel = clash.ravel() == bad
        if not sel.any():
            continue
        fig.add_trace(go.Scatter(
            x=i.ravel()[sel].tolist(), y=j.ravel()[sel].tolist(), text=[str(v) for v in k.ravel()[sel]],
            mode="markers+text", meta="word k", name="shares a bank in its column" if bad else "bank of its own",
            marker=dict(symbol="diamond" if bad else "square", size=22, color=BAD if bad else OK),
            textfont=dict(size=9, color=ink(BAD if bad else OK)), hoverinfo="text",
            hovertext=[f"k={a}, bank {b}" for a, b in zip(k.ravel()[sel], bank.ravel()[sel])]))
    fig.update_layout(
        title=title or f"I = {I}, {MAPPINGS[mapping]}: column reads cost "
                       f"{max(per_col)} wavefront(s)" + (" — conflict-free" if max(per_col) == 1 else ""),
        xaxis=dict(title="field i", dtick=1, range=[-0.6, I - 0.4]),
        yaxis=dict(title="struct j (= lane)", autorange="reversed", dtick=4),
        height=700, width=max(600, 70 + 40 * I), showlegend=True, margin=dict(b=110),
        legend=dict(orientation="h", x=0, y=-0.12, yanchor="top"))
    return sourced(fig, SIMULATED)


def sweep_point(I: int, side: str = "read") -> dict:
    """Wavefronts per request of every mapping for one I (a point of notebook 08's sweep)."""
    return {m: cost(I, m, side) for m in MAPPINGS}


def sweep_figure(xs, ys, side: str = "read", **_) -> go.Figure:
    """Wavefronts per request against I, one line per mapping."""
    from ..notebook.draw import sweep
    what = "column reads (lane j, field i)" if side == "read" else "row-wise writes (lane l, element l + 32m)"
    return sweep(xs, {MAPPINGS[m]: [y[m] for y in ys] for m in MAPPINGS}, xlabel="I (floats per struct)",
                 ylabel="shared wavefronts per request", title=f"Structs of I floats through shared memory: {what}")


# ----------------------------------------------------------------------------- the machine code

def every(I: int) -> int:
    """Giles's padding period 32F for I = P*F (P <= 32): his k = n + n / every(I)."""
    P, F = split(I)
    if P > 32:
        raise ValueError(f"I = {I} has P = {P} > 32: Giles's mapping is then k = n + j, not a padding period")
    return 32 * F


def _warps(run) -> int:
    threads = int(np.prod(run.block))
    return int(np.prod(run.grid)) * -(-threads // 32)


def shared_code(run, op: str = "ld") -> tuple[str, float, float]:
    """One warp's shared loads (op 'ld') or stores ('st') in ``run``'s machine code: ('10 × LDS.128',
    wavefronts, bank conflicts). Per warp of the launch, so launch whole warps that all run them."""
    rows = [r for r in run.instructions if r["space"] == "shared" and r["op"] == op]
    warps, count = _warps(run), {}
    for r in rows:
        count[r["width"]] = count.get(r["width"], 0) + r["requests"]
    name = "LDS" if op == "ld" else "STS"
    code = " + ".join(f"{n / warps:g} × {name}{'' if w == 4 else f'.{8 * w}'}" for w, n in sorted(count.items()))
    return code or "none", sum(r["wavefronts"] for r in rows) / warps, sum(r["conflicts"] for r in rows) / warps


def per_warp(runs: dict, op: str = "ld") -> HTMLText:
    """{label: SimRun or Result}: one warp's shared loads (or stores) as the machine code has them."""
    what = "loads" if op == "ld" else "stores"
    body = []
    for label, r in runs.items():
        code, wf, conflicts = shared_code(getattr(r, "sim", None) or r, op)
        body.append([label, code, f"{wf:g}", f"{conflicts:g}"])
    return _table(f"one warp's shared {what} in the machine code", ["kernel", f"shared {what}", "wavefronts",
                                                                     "bank conflicts"], body).sourced(SIMULATED)


def machine_table(sim, kernel, Is, structs: int = 1024) -> HTMLText:
    """For each I: one warp's column read (32 structs of I floats) as the PTX asks for it (I 4-byte
    loads) and as ptxas compiled it, with k = i + jI and with Giles's padding. ``kernel`` is a
    template ``kernel[I, EVERY]`` (EVERY = 0: no padding; else k = n + n / EVERY), launched with
    32x4 blocks on ``structs`` structs (a multiple of 32) by the simulator ``sim``."""
    body = []
    for I in Is:
        ptx = I * cost(I, "plain")
        cells = [str(I), str(split(I)[0]), f"{I} × 4 B: {ptx:g}" + (f" ({ptx - I:g} conflicts)" if ptx > I else "")]
        for pad in (0, every(I)):
            res = sim.run(kernel[I, pad], block=(32, 4), tile=(I, 128), shape=(structs, I))
            if not res.correct.ok:
                raise ValueError(f"{kernel!r} with I = {I}, EVERY = {pad} moved the structs wrongly: {res.correct}")
            code, wf, conflicts = shared_code(res.sim, "ld")
            cells.append(f"{code}: {wf:g}" + (f" ({conflicts:g} conflicts)" if conflicts else ""))
        body.append(cells)
    return _table("one warp's column read: shared loads and their wavefronts",
                  ["I", "P", "the PTX (4-byte loads)", "machine code, k = i + jI", "machine code, Giles"],
                  body).sourced(SIMULATED)

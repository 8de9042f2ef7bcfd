"""Bank maps: which bank serves which lane in which wavefront, for one warp's shared-memory access.

    bank_pictures.bank_map(8 * np.arange(32), width=8)   # per phase: lanes, cost, (wavefront, bank) -> lanes
    bank_pictures.bank_cost(4 * np.arange(32) * 5)       # (wavefronts, bank conflicts): (1, 0)
    bank_pictures.banks(run, op="ld")                     # the picture (also draw.banks)

A warp's 4-byte access is served as one whole warp; 8-byte accesses in two half-warps of 16 lanes,
16-byte ones in four quarter-warps of 8 (halved for a load whose neighbouring lanes share
addresses): the same rules as the simulator's metrics (``sim.results.metrics``), so a picture never
disagrees with the counts. Each picture's text alternative says what to notice (conflict-free, or
the busiest bank and its lanes) and lists one row per wavefront of each phase, with the phases
named. This module computes no metric of its own and runs no kernel.
"""
from __future__ import annotations

import numpy as np
from plotly.subplots import make_subplots

from ..sim.results.metrics import pairs_share_address, shared_wavefronts
from . import alt
from .alt import sourced, spans
from .marks import cells, warp_addresses
from .palette import BAD, OK

PHASE = {1: "the whole warp", 2: "half-warp", 4: "quarter-warp"}


def bank_map(addresses, width: int = 4, is_load: bool = True):
    """For one warp: a list of phases, each dict(lanes, cost, cells) where cells maps
    (wavefront, bank) to the lanes served then. Same rules as the simulator's metrics.

        [p["cost"] for p in bank_map(8 * np.arange(32), width=8)]     # [1, 1]: two half-warps
    """
    a = np.asarray(addresses, np.int64).reshape(1, 32)
    act = a >= 0
    n = 1 if width <= 4 else (2 if width == 8 else 4)
    if is_load and n > 1 and (pairs_share_address(a, act, 1) | pairs_share_address(a, act, 2))[0]:
        n //= 2
    size, phases = 32 // n, []
    for p in range(n):
        cells_, words_of_bank = {}, {}
        lanes = [int(t) for t in range(p * size, (p + 1) * size) if act[0, t]]
        for t in lanes:
            for k in range(max(1, width // 4)):
                word = int(a[0, t]) // 4 + k
                words_of_bank.setdefault(word % 32, set()).add(word)
        order = {b: sorted(ws) for b, ws in words_of_bank.items()}
        for t in lanes:
            for k in range(max(1, width // 4)):
                word = int(a[0, t]) // 4 + k
                cells_.setdefault((order[word % 32].index(word), word % 32), []).append(t)
        cost = max((len(ws) for ws in order.values()), default=0)
        phases.append(dict(lanes=(p * size, (p + 1) * size - 1), cost=cost, cells=cells_))
    return phases


def bank_cost(addresses, width: int = 4, op: str = "ld") -> tuple[int, int]:
    """(wavefronts, bank conflicts) of one warp's shared access, by the simulator's rules; for
    index mappings computed in numpy (e.g. Giles's k = i + j*I for notebook 08).

        draw.bank_cost(4 * (np.arange(32) * 5))      # stride 5 floats: (1, 0)
    """
    a = np.asarray(addresses, np.int64).reshape(1, 32)
    wf, conflicts, _ = shared_wavefronts(a, a >= 0, width, op == "ld")
    return wf, conflicts


def phase_name(n: int, i: int, lanes: tuple) -> str:
    """'quarter-warp 2 (lanes 8-15)', 'half-warp 1 (lanes 0-15)', 'the whole warp (lanes 0-31)'."""
    return f"{PHASE[n]}{'' if n == 1 else f' {i}'} (lanes {lanes[0]}-{lanes[1]})"


def _runs(waves: dict) -> list:
    """Wavefront numbers grouped: three or more in a row that serve the same banks form one group."""
    groups = []
    for d in sorted(waves):
        if groups and groups[-1][-1] == d - 1 and waves[groups[-1][0]][0] == waves[d][0]:
            groups[-1].append(d)
        else:
            groups.append([d])
    return [g for grp in groups for g in ([grp] if len(grp) > 2 else [[d] for d in grp])]


def _text(phases, width: int, wf: int, conflicts: int) -> tuple[str, list]:
    """What to notice in a bank map, and one row per wavefront of each phase."""
    n = len(phases)
    rows = []
    for i, p in enumerate(phases, 1):
        waves = {}
        for (d, bank), lanes in p["cells"].items():
            w = waves.setdefault(d, (set(), set()))
            w[0].add(bank)
            w[1].update(lanes)
        name = phase_name(n, i, p["lanes"])
        if not waves:
            rows.append([name, "none: no active lane", "", ""])
        for run in _runs(waves):       # three or more wavefronts on the same banks: one row
            banks_, lanes_ = waves[run[0]][0], set().union(*(waves[d][1] for d in run))
            rows.append([name, spans(run), spans(banks_), spans(lanes_) + (", one per wavefront" if len(run) > 2 else "")])
    busy = [p for p in phases if p["cost"]]
    if not conflicts:
        if n == 1:
            sentence = ("Conflict-free: no bank holds two different words the warp asks for, so one wavefront "
                        "serves all its lanes.")
        else:
            sentence = (f"Conflict-free: {width}-byte accesses are served in {n} {PHASE[n]}s of {32 // n} lanes, "
                        f"and within each no bank holds two different words: {wf} wavefront(s), the least "
                        f"these {PHASE[n]}s need.")
    else:
        worst = max(busy, key=lambda p: p["cost"])
        i = phases.index(worst) + 1
        deep = {b for (d, b) in worst["cells"] if d == worst["cost"] - 1}
        bank = min(deep)
        lanes = sorted({t for (d, b), ls in worst["cells"].items() if b == bank for t in ls})
        where = "the warp's" if n == 1 else f"{PHASE[n]} {i}'s"
        sentence = (f"A {worst['cost']}-way bank conflict: bank {bank} holds {worst['cost']} different words of "
                    f"{where} request (lanes {spans(lanes)}), and a bank delivers one word per wavefront, so "
                    f"the access takes {wf} wavefront(s) where {len(busy)} would do.")
    return sentence, [("wavefronts, phase by phase", ["part of the warp", "wavefront(s) (0 = first)",
                                                      "banks serving", "lanes served"], rows)]


def banks(run=None, *, addresses=None, width: int = 4, op: str = "ld", line: int | None = None,
          warp: int = 0, nth: int = 0, title: str | None = None, source: str = alt.SIMULATED):
    """Banks (x) against wavefronts (y) for one warp's shared access; each mark names the lane(s)
    a bank serves in that wavefront. Row 0 is free (green squares); every vermillion diamond is a
    bank conflict (a legend says so: the shape carries it without colour). 8- and 16-byte accesses
    are drawn per phase (half- or quarter-warps, named so), one above the other.

        draw.banks(run, op="ld")                                  # the tile's column read
        draw.banks(addresses=4 * (np.arange(32) * 33))            # column of a [32][33] tile
    """
    a, width, op, where = warp_addresses(run, addresses, width, "shared", op, line, warp, nth)
    phases = bank_map(a, width, op == "ld")
    wf, conflicts, _ = shared_wavefronts(a.reshape(1, 32), (a >= 0).reshape(1, 32), width, op == "ld")
    depth = max(1, max(p["cost"] for p in phases))
    n = len(phases)
    fig = make_subplots(rows=n, cols=1, shared_xaxes=True, vertical_spacing=0.3 / n,
                        subplot_titles=[f"{phase_name(n, i, p['lanes'])}: {p['cost']} wavefront(s)"
                                        for i, p in enumerate(phases, 1)] if n > 1 else None)
    shown = set()
    for i, p in enumerate(phases, 1):
        for conflict in (False, True):
            got = sorted((b, d, lanes) for (d, b), lanes in p["cells"].items() if (d > 0) == conflict)
            name = "conflict: waits for a later wavefront" if conflict else "served in the first wavefront"
            fig.add_trace(cells([b for b, _, _ in got], [d for _, d, _ in got],
                                [",".join(map(str, ls[:2])) + ("…" if len(ls) > 2 else "") for _, _, ls in got],
                                BAD if conflict else OK, name, symbol="diamond" if conflict else "square",
                                legend=bool(got) and name not in shown), row=i, col=1)
            shown |= {name} if got else set()
        # explicit ticks: with one wavefront plotly's automatic ticks included a "-1"
        fig.update_yaxes(title_text="wavefront", range=[depth - 0.3, -0.7], tickmode="array",
                         tickvals=list(range(0, depth, max(1, depth // 8))), row=i, col=1)
    fig.update_xaxes(range=[-1, 32], dtick=4)
    fig.update_xaxes(title_text="bank", row=n, col=1)
    ways = max(p["cost"] for p in phases)
    word = {"ld": "load", "st": "store"}.get(op, "access")
    top = 60 if n == 1 else 100              # phases: room for the subplot titles under the title's lines
    height = min(900, 130 + n * (60 + 16 * depth)) + 30 + top - 60
    plot = height - top - 95                  # the plot area's pixels (margins t and b)
    fig.update_layout(
        title=title or f"shared {word} ({width} B), {where}: {wf} wavefront(s), {conflicts} bank conflict(s)"
                       + (f" — {ways}-way" if ways > 1 else " — conflict-free"),
        showlegend=True, height=height, margin=dict(b=95, t=top),        # the legend under the axis title
        legend=dict(orientation="h", x=0, y=-60 / plot, yanchor="top", itemclick=False))
    alt.noticed(fig, *_text(phases, width, wf, conflicts))
    return sourced(fig, source)

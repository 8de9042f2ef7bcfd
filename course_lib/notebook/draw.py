"""Pictures for the course: plotly figures and small HTML listings, built from simulator runs.

    from course_lib import draw
    draw.sectors(run, op="st")        # which 32-byte sectors one warp's global access touches
    draw.banks(run, op="ld")          # bank x wavefront map of one warp's shared access
    draw.bank_cost(addresses)         # (wavefronts, conflicts) of one warp's shared access
    draw.bandwidth(results)           # effective bandwidth bars against the copy ceiling
    draw.sweep(xs, {"PAD=0": ys})     # a line chart for sweeps (conflicts vs padding, ...)
    draw.listing(run)                 # the kernel's source, each memory line annotated (listing.py)
    draw.listing(run, view="sass")    # ... with each line's machine code, fused accesses marked
    draw.table({"naive": run, ...})   # metrics side by side (HTML, listing.py)
    draw.fit_title(fig)               # title lines short enough for a notebook (course_lib.fit)
    draw.sourced(fig, "measured on H100")   # the title's line saying where the numbers come from

Every figure says where its numbers come from in its title ("simulated (H100 rules)", "measured on
<GPU>", "modelled for <GPU>", "computed from ..."), and none relies on colour alone: Okabe-Ito
colours (palette), lane numbers written on the marks, marker shapes for served/conflicting banks,
a dash and a marker per line, hatching for modelled bars. Displayed in a notebook, each figure is
followed by its text alternative (course_lib.notebook.alt: a summary line and the numbers as a table).

``sectors`` and ``banks`` take a SimRun (they read ``run.accesses``, the traced block) or raw
byte addresses (``addresses=`` one warp's 32 addresses, -1 for an inactive lane), so a notebook
can also draw an index mapping it computed in numpy. Counts shown in titles come from the
simulator's own rules (``sim.results.metrics``), so a picture never disagrees with the metrics.

:func:`configure` (called by ``course_lib.setup()``) makes notebooks store figures as figure
JSON only (``application/vnd.plotly.v1+json``, a few kB with the small ``course`` template):
never plotly.js, never base64 images, each followed by its text alternative (the ``course_text``
renderer). Titles start at the left and plotly's toolbar keeps four buttons at the right, so it
covers no title line (of its chart or, stacked in an explorer, the next one's). On Colab it uses Colab's renderer, which loads plotly.js
from a CDN at view time. This module does not run kernels or compute bandwidths.
"""
from __future__ import annotations

import os

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio
from plotly.subplots import make_subplots

from ..sim.results.metrics import pairs_share_address, shared_wavefronts
from .fit import FittedRenderer, fit_title  # noqa: F401  (draw.fit_title: part of this module's API)
from .listing import HTMLText, listing, table  # noqa: F401  (draw.listing, draw.table: part of this module's API)
from . import alt
from .alt import sourced  # noqa: F401  (draw.sourced: part of this module's API)
from .palette import BAD, DASHES, MAIN, OK, PALE, SERIES, SYMBOLS, ink

TEMPLATE = go.layout.Template(layout=dict(
    font=dict(family="Helvetica, Arial, sans-serif", size=12), paper_bgcolor="white",
    plot_bgcolor="white", margin=dict(l=70, r=20, t=60, b=45), colorway=SERIES,
    title=dict(x=0.01, xanchor="left"),     # left: away from plotly's toolbar at the top right
    xaxis=dict(gridcolor="#eee", linecolor="#999", zeroline=False),
    yaxis=dict(gridcolor="#eee", linecolor="#999", zeroline=False)))


def configure(renderer: str | None = None) -> str:
    """Small template; figure-JSON-only renderer with fitted titles, then the text alternative
    (Colab: 'colab', then the text). Returns the renderer used.

        draw.configure()          # done by cl.setup(); draw.configure("browser") outside Jupyter
    """
    pio.templates["course"] = TEMPLATE
    pio.templates.default = "course"
    pio.renderers["course_text"] = alt.TextRenderer()
    pio.renderers["course_plotly"] = FittedRenderer()       # figure JSON, its title fitted (course_lib.fit)
    for name in NOTEBOOK_RENDERERS & set(pio.renderers):
        pio.renderers[name].config = {**(pio.renderers[name].config or {}), **TOOLBAR}
    if renderer is None:
        renderer = "colab" if on_colab() else "course_plotly"
    if renderer in NOTEBOOK_RENDERERS:      # in a notebook: the figure, then its text alternative
        renderer += "+course_text"
    pio.renderers.default = renderer
    return renderer


TOOLBAR = dict(displaylogo=False, modeBarButtonsToRemove=[   # zoom box, pan, reset, PNG remain
    "select2d", "lasso2d", "zoomIn2d", "zoomOut2d", "autoScale2d", "toggleSpikelines",
    "hoverClosestCartesian", "hoverCompareCartesian"])
NOTEBOOK_RENDERERS = {"course_plotly", "plotly_mimetype", "colab", "notebook", "notebook_connected", "jupyterlab", "vscode", "nteract"}


def on_colab() -> bool:
    """Whether this kernel runs on Google Colab (whose front end shows no plotly JSON, only HTML)."""
    return "COLAB_NOTEBOOK_ID" in os.environ or "COLAB_RELEASE_TAG" in os.environ


# ------------------------------------------------------------------------ picking an access

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


def _warp(run, addresses, width, space, op, line, warp, nth):
    if addresses is not None:
        a = np.asarray(addresses, np.int64).reshape(-1)
        return np.pad(a, (0, 32 - a.size), constant_values=-1), width, op, f"warp {warp}"
    r = pick(run, space, op, line, nth)
    return r["addresses"][warp], r["width"], r["op"], f"line {r['line']}, warp {warp}"


# ------------------------------------------------------------------------ global: sectors

def _cells(x, y, text, color, name, size=13, symbol="square", legend=False):
    """Square markers on a grid: a heatmap whose stored JSON is a few short lists (a 32 x 32
    heatmap is two thousand lines of notebook JSON)."""
    return go.Scatter(x=x, y=y, text=text, mode="markers+text", name=name, textfont=dict(size=8, color=ink(color)),
                      marker=dict(symbol=symbol, size=size, color=color), hoverinfo="text+name",
                      showlegend=legend, legendgroup=name, meta="lane(s)")


def sectors(run=None, *, addresses=None, width: int = 4, op: str | None = "st", line: int | None = None,
            warp: int = 0, nth: int = 0, title: str | None = None, source: str = alt.SIMULATED) -> go.Figure:
    """Lanes (x) against the 32-byte sectors they touch (y) for one warp's global access.

    Coalesced: a few sectors, each shared by many lanes. Strided: a diagonal, one sector per lane.

        draw.sectors(run, op="st")                          # from a simulated transpose
        draw.sectors(addresses=np.arange(32) * 4 * 8)       # stride 8 floats, no kernel needed
    """
    a, width, op, where = _warp(run, addresses, width, "global", op, line, warp, nth)
    lanes = np.nonzero(a >= 0)[0]
    pairs = [(int(t), int(sec)) for t in lanes for sec in range(a[t] >> 5, ((a[t] + width - 1) >> 5) + 1)]
    touched = sorted({sec for _, sec in pairs})
    label = {sec: f"+{(sec - touched[0]) * 32} B" for sec in touched} if touched else {}
    used, moved = lanes.size * width, len(touched) * 32
    word = {"ld": "load", "st": "store"}.get(op, "access")
    fig = go.Figure(_cells([t for t, _ in pairs], [label[sec] for _, sec in pairs], [str(t) for t, _ in pairs],
                           MAIN, "lane -> sector"))
    fig.update_layout(
        title=title or f"global {word}, {where}: {len(touched)} sector(s) for {lanes.size} lanes — "
                       f"{used} of {moved} bytes moved are used ({used / max(moved, 1):.0%})",
        xaxis=dict(title="lane (thread of the warp)", range=[-1, 32], dtick=4),
        yaxis=dict(title="sector (bytes from the first)", type="category", autorange="reversed", automargin=True,
                   categoryorder="array", categoryarray=[label[sec] for sec in touched]),
        showlegend=False, height=min(700, max(260, 170 + 17 * len(touched))))
    return sourced(fig, source)


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
        cells, words_of_bank = {}, {}
        lanes = [int(t) for t in range(p * size, (p + 1) * size) if act[0, t]]
        for t in lanes:
            for k in range(max(1, width // 4)):
                word = int(a[0, t]) // 4 + k
                words_of_bank.setdefault(word % 32, set()).add(word)
        order = {b: sorted(ws) for b, ws in words_of_bank.items()}
        for t in lanes:
            for k in range(max(1, width // 4)):
                word = int(a[0, t]) // 4 + k
                cells.setdefault((order[word % 32].index(word), word % 32), []).append(t)
        cost = max((len(ws) for ws in order.values()), default=0)
        phases.append(dict(lanes=(p * size, (p + 1) * size - 1), cost=cost, cells=cells))
    return phases


def bank_cost(addresses, width: int = 4, op: str = "ld") -> tuple[int, int]:
    """(wavefronts, bank conflicts) of one warp's shared access, by the simulator's rules; for
    index mappings computed in numpy (e.g. Giles's k = i + j*I for notebook 08).

        draw.bank_cost(4 * (np.arange(32) * 5))      # stride 5 floats: (1, 0)
    """
    a = np.asarray(addresses, np.int64).reshape(1, 32)
    wf, conflicts, _ = shared_wavefronts(a, a >= 0, width, op == "ld")
    return wf, conflicts


def banks(run=None, *, addresses=None, width: int = 4, op: str = "ld", line: int | None = None,
          warp: int = 0, nth: int = 0, title: str | None = None, source: str = alt.SIMULATED) -> go.Figure:
    """Banks (x) against wavefronts (y) for one warp's shared access; each mark names the lane(s)
    a bank serves in that wavefront. Row 0 is free (green squares); every vermillion diamond is a
    bank conflict (a legend says so: the shape carries it without colour). 8- and 16-byte accesses
    are drawn per phase (half- or quarter-warps), one above the other.

        draw.banks(run, op="ld")                                  # the tile's column read
        draw.banks(addresses=4 * (np.arange(32) * 33))            # column of a [32][33] tile
    """
    a, width, op, where = _warp(run, addresses, width, "shared", op, line, warp, nth)
    phases = bank_map(a, width, op == "ld")
    wf, conflicts, _ = shared_wavefronts(a.reshape(1, 32), (a >= 0).reshape(1, 32), width, op == "ld")
    depth = max(1, max(p["cost"] for p in phases))
    n = len(phases)
    fig = make_subplots(rows=n, cols=1, shared_xaxes=True, vertical_spacing=0.3 / n,
                        subplot_titles=[f"phase {i}: lanes {p['lanes'][0]}-{p['lanes'][1]}, {p['cost']} wavefront(s)"
                                        for i, p in enumerate(phases, 1)] if n > 1 else None)
    shown = set()
    for i, p in enumerate(phases, 1):
        for conflict in (False, True):
            cells = sorted((b, d, lanes) for (d, b), lanes in p["cells"].items() if (d > 0) == conflict)
            name = "conflict: waits for a later wavefront" if conflict else "served in the first wavefront"
            fig.add_trace(_cells([b for b, _, _ in cells], [d for _, d, _ in cells],
                                 [",".join(map(str, ls[:2])) + ("…" if len(ls) > 2 else "") for _, _, ls in cells],
                                 BAD if conflict else OK, name, symbol="diamond" if conflict else "square",
                                 legend=bool(cells) and name not in shown), row=i, col=1)
            shown |= {name} if cells else set()
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
    return sourced(fig, source)


# ------------------------------------------------------------------------ bandwidth

def bandwidth(results, *, ceiling: float | None = None, device: str | None = None,
              measured: bool | None = None, title: str | None = None) -> go.Figure:
    """Effective bandwidth per kernel (GB/s) as bars, with the copy ceiling as a dashed line.

    `results`: backend Results (measured on a GPU, or modelled when simulated) or a dict
    name -> GB/s (say ``measured=``). Modelled bars are hatched and the title says MODELLED.

        draw.bandwidth([sim.run("naive_row"), sim.run("padded")])
        draw.bandwidth({"copy": 2900, "naive": 900}, measured=True, device="H100")
    """
    items = []
    if isinstance(results, dict):
        items = [(k, float(v), bool(measured)) for k, v in results.items()]
    else:
        for r in results:
            got = r.gbps if r.gbps is not None else r.model_gbps
            items.append((r.name, got, r.gbps is not None))
            ceiling = ceiling or (r.copy_gbps if r.gbps is not None else r.model_copy_gbps)
            device = device or r.device
    is_measured = all(m for _, _, m in items)
    names, values = [n for n, _, _ in items], [v for _, v, _ in items]
    # the ceiling is a device-to-device cudaMemcpy (measured, or modelled), not the course's copy kernel
    memcpy = "cudaMemcpy" if is_measured else "cudaMemcpy, modelled"
    text = [f"{v:.0f} GB/s" + (f" ({v / ceiling:.0%} of cudaMemcpy)" if ceiling else "") for v in values]
    fig = go.Figure(go.Bar(x=values, y=names, orientation="h", text=text, textposition="auto",
                           marker=dict(color=[MAIN if m else PALE for _, _, m in items],
                                       pattern=dict(shape=["" if m else "/" for _, _, m in items]))))
    if ceiling:
        fig.add_vline(x=ceiling, line=dict(dash="dash", color=BAD),
                      annotation_text=f"{memcpy} {ceiling:.0f} GB/s", annotation_position="top")
    kind = f"measured on {device or 'a GPU'}" if is_measured else \
        f"MODELLED for {device or 'a GPU'} from simulator counts (course_lib.model), not measured"
    fig.update_layout(title=title or f"Effective bandwidth (2 × bytes / time)<br><sup>{kind}</sup>",
                      xaxis=dict(title="GB/s", rangemode="tozero"),
                      yaxis=dict(autorange="reversed", type="category", automargin=True), height=160 + 34 * len(items))
    return sourced(fig, kind)


def sweep(x, series: dict, *, xlabel: str = "", ylabel: str = "", title: str = "", log_y: bool = False,
          source: str | None = None) -> go.Figure:
    """A line chart, one line per entry of `series` (label -> values over `x`), each with its own
    colour, dash and marker. `source` says where the numbers come from ("measured on ...",
    "modelled for ..."); left out, a title or label that says it is kept, "this CPU" in one reads
    "measured on this CPU", and anything else is taken as the simulator's (pass source= otherwise).

        draw.sweep([0, 1, 2], {"32x32 tile": [32, 1, 2]}, xlabel="PAD", ylabel="wavefronts/request")
    """
    fig = go.Figure([go.Scatter(x=list(x), y=list(v), name=k, mode="lines+markers",
                                line=dict(color=SERIES[i % len(SERIES)], dash=DASHES[i % len(DASHES)]),
                                marker=dict(symbol=SYMBOLS[i % len(SYMBOLS)], size=8))
                     for i, (k, v) in enumerate(series.items())])
    fig.update_layout(title=title, xaxis=dict(title=xlabel), yaxis=dict(title=ylabel, type="log" if log_y else None),
                      height=360, showlegend=len(series) > 1)
    if source is None:
        said = [alt.source_of(t) for t in (title, xlabel, ylabel)]
        labels = " ".join((title, xlabel, ylabel, *series))
        source = next((s for s in said if s), None) or \
            ("measured on this CPU" if "this CPU" in labels else alt.SIMULATED)
    return sourced(fig, source)

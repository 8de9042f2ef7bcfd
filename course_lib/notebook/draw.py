"""Pictures for the course: plotly figures and small HTML listings, built from simulator runs.

    from course_lib import draw
    draw.sectors(run, op="st")        # which 32-byte sectors one warp's global access touches
    draw.banks(run, op="ld")          # bank x wavefront map of one warp's shared access
    draw.bank_cost(addresses)         # (wavefronts, conflicts) of one warp's shared access
    draw.bandwidth(results)           # effective bandwidth bars against the copy ceiling
    draw.sweep(xs, {"PAD=0": ys})     # a line chart for sweeps (conflicts vs padding, ...)
    draw.noticed(fig, "sentence")     # what to notice, leading the figure's text alternative (alt.py)
    draw.listing(run)                 # the kernel's source, each memory line annotated (listing.py)
    draw.listing(run, view="sass")    # ... with each line's machine code, fused accesses marked
    draw.table({"naive": run, ...})   # metrics side by side (HTML, listing.py)
    draw.fit_title(fig)               # title lines short enough for a notebook (course_lib.fit)
    draw.sourced(fig, "measured on H100")   # the title's line saying where the numbers come from

Every figure says where its numbers come from in its title ("simulated (H100 rules)", "measured on
<GPU>", "modelled for <GPU>", "computed from ..."), and none relies on colour alone: Okabe-Ito
colours (palette), lane numbers written on the marks, marker shapes for served/conflicting banks,
a dash and a marker per line, hatching for modelled bars. Displayed in a notebook, each figure is
followed by its text alternative (course_lib.notebook.alt: what to notice, a summary line and the
numbers as a table). The bank maps live in ``bank_pictures``, the bar and line charts in ``charts``,
the access picking in ``marks``; draw offers them all under one name.

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

from . import alt
from .alt import noticed, sig, sourced, spans  # noqa: F401  (draw.sourced: part of this module's API)
# the pictures of other modules, under draw's names (draw.banks, draw.bandwidth, ...: this module's API)
from .bank_pictures import bank_cost, bank_map, banks  # noqa: F401
from .charts import bandwidth, sweep  # noqa: F401
from .fit import FittedRenderer, fit_title  # noqa: F401  (draw.fit_title: part of this module's API)
from .listing import HTMLText, listing, table  # noqa: F401  (draw.listing, draw.table: part of this module's API)
from .marks import cells, pick, warp_addresses  # noqa: F401  (draw.pick: part of this module's API)
from .palette import BAD, MAIN, OK, PALE, SERIES  # noqa: F401  (lessons draw with draw.BAD, ...)

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


def sectors(run=None, *, addresses=None, width: int = 4, op: str | None = "st", line: int | None = None,
            warp: int = 0, nth: int = 0, title: str | None = None, source: str = alt.SIMULATED) -> go.Figure:
    """Lanes (x) against the 32-byte sectors they touch (y) for one warp's global access.

    Coalesced: a few sectors, each shared by many lanes. Strided: a diagonal, one sector per lane.

        draw.sectors(run, op="st")                          # from a simulated transpose
        draw.sectors(addresses=np.arange(32) * 4 * 8)       # stride 8 floats, no kernel needed
    """
    a, width, op, where = warp_addresses(run, addresses, width, "global", op, line, warp, nth)
    lanes = np.nonzero(a >= 0)[0]
    pairs = [(int(t), int(sec)) for t in lanes for sec in range(a[t] >> 5, ((a[t] + width - 1) >> 5) + 1)]
    touched = sorted({sec for _, sec in pairs})
    label = {sec: f"+{(sec - touched[0]) * 32} B" for sec in touched} if touched else {}
    used, moved = lanes.size * width, len(touched) * 32
    word = {"ld": "load", "st": "store"}.get(op, "access")
    fig = go.Figure(cells([t for t, _ in pairs], [label[sec] for _, sec in pairs], [str(t) for t, _ in pairs],
                          MAIN, "lane -> sector"))
    fig.update_layout(
        title=title or f"global {word}, {where}: {len(touched)} sector(s) for {lanes.size} lanes — "
                       f"{used} of {moved} bytes moved are used ({used / max(moved, 1):.0%})",
        xaxis=dict(title="lane (thread of the warp)", range=[-1, 32], dtick=4),
        yaxis=dict(title="sector (bytes from the first)", type="category", autorange="reversed", automargin=True,
                   categoryorder="array", categoryarray=[label[sec] for sec in touched]),
        showlegend=False, height=min(700, max(260, 170 + 17 * len(touched))))
    alt.noticed(fig, *_sector_text(a, lanes, pairs, touched, label, width))
    return sourced(fig, source)


def _sector_text(a, lanes, pairs, touched, label, width) -> tuple[str, list]:
    """What to notice in a sector picture, and one row per sector: its lanes and the bytes of it used."""
    used_of = {sec: 0 for sec in touched}
    for t in lanes:
        lo, hi = int(a[t]), int(a[t]) + width
        for sec in range(lo >> 5, ((hi - 1) >> 5) + 1):
            used_of[sec] += min(hi, (sec + 1) * 32) - max(lo, sec * 32)
    used, moved = lanes.size * width, len(touched) * 32
    k, n = len(touched), lanes.size
    if not n:
        sentence = "No lane is active: the request moves nothing."
    elif used >= moved:
        sentence = f"Coalesced: {n} lanes share {k} sector(s) and use every byte moved."
    elif k >= n:
        sentence = (f"Uncoalesced: every lane needs a sector of its own — {k} sectors moved for {used} bytes used "
                    f"({sig(100 * used / moved)}% of them).")
    else:
        sentence = (f"Lanes share sectors only in part: {k} sectors for {n} lanes, {sig(100 * used / moved)}% of the "
                    "bytes moved are used.")
    rows = [[label[sec], spans(t for t, s in pairs if s == sec), f"{used_of[sec]} of 32"] for sec in touched]
    return sentence, [("sectors", ["sector (bytes from the first)", "lanes", "bytes of it used"], rows)]



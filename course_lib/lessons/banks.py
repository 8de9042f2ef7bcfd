"""Notebook 05 (bank conflicts and padding): the padding explorer and the configurations it shows.

    from course_lib.lessons import banks
    banks.CONFIGS                               # label -> (course kernel, fixed parameters)
    banks.run(sim, "32x16 block (rect)", PAD=1) # a SimRun (cached per label and PAD)
    banks.padding_explorer(sim)                 # PAD slider x tile buttons -> heatmaps, chart, table
    run, ok = banks.dynamic_tile(tile_dynamic, tile=32, pad=1)   # a tile in extern __shared__ memory

The explorer is a ``cl.widgets.Explorer``: an IntSlider labelled ``PAD`` (0-4) and buttons for
the tile; every change redraws two warp x bank pictures (the store into the tile and the
column read out of it), a plotly chart of wavefronts per request over PAD with the current
value marked, and an HTML metrics table. Nothing here is specific to a GPU: all runs are simulated.

``dynamic_tile`` launches a transpose whose tile is ``extern __shared__`` (sized at launch, not at
compile time): ``kernel(T* out, const T* in, int rows, int cols, int pad)`` with blocks of
tile x block_rows threads and ``tile * (tile + pad) * itemsize`` bytes of dynamic shared memory.
"""
from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go

from ..notebook import draw, widgets
from ..transposes import verify
from ..transposes.data import poisoned, random_matrix

# label -> (course kernel key, parameters other than PAD); all move 4-byte floats
CONFIGS = {
    "32x32 tile": ("tile", dict(TILE=32, BLOCK_ROWS=32)),
    "16x16 tile": ("tile", dict(TILE=16, BLOCK_ROWS=16)),
    "32x16 block (rect)": ("rect", dict(BX=32, BY=16)),
}
PADS = range(0, 5)

_cache: dict = {}


def run(sim, label: str, PAD: int, shape=(64, 64)):
    """The simulated launch of configuration `label` with padding PAD (a SimRun)."""
    key = (id(sim), label, PAD, tuple(shape))
    if key not in _cache:
        kernel, params = CONFIGS[label]
        _cache[key] = sim.run(kernel, shape=shape, PAD=PAD, **params).sim
    return _cache[key]


def curve(sim, label: str, PAD: int | None = None, shape=(64, 64)) -> go.Figure:
    """Shared wavefronts per request over PAD = 0..4 for loads and stores; PAD marks the current one."""
    runs = [run(sim, label, p, shape) for p in PADS]
    ld = [r.ratio("shared", "ld") for r in runs]
    st = [r.ratio("shared", "st") for r in runs]
    free = [p for p in PADS if ld[p] <= 1 and st[p] <= 1]
    notice = (f"{label}: the column read is conflict-free with PAD = {', '.join(map(str, free))}"
              if free else f"{label}: no PAD from 0 to 4 makes both the read and the write conflict-free")
    notice += f"; PAD = 0 costs {ld[0]:.3g} wavefronts per column read" + (
        f", PAD = {PAD} {ld[PAD]:.3g}." if PAD not in (None, 0) else ".")
    fig = draw.sweep(list(PADS), {"column read (shared loads)": ld, "row write (shared stores)": st},
                     xlabel="PAD (extra elements per tile row)", ylabel="wavefronts / request (1 = no conflict)",
                     title=f"shared-memory cost vs padding<br><sup>{label}, all warps of the launch</sup>",
                     notice=notice)
    if PAD is not None:
        fig.add_trace(go.Scatter(x=[PAD, PAD], y=[ld[PAD], st[PAD]], mode="markers", name=f"PAD = {PAD}",
                                 marker=dict(size=16, symbol="circle-open", color="#222", line=dict(width=3))))
    # tall enough that the y axis's title stays beside the plot, clear of the title's source line
    fig.update_layout(yaxis=dict(rangemode="tozero"), height=480, width=520, showlegend=True,
                      legend=dict(orientation="h", y=-0.25, yanchor="top"), margin=dict(b=110))
    return fig


def figures(sim_run, *, PAD: int, tile: str, sim=None, shape=(64, 64)) -> list:
    """What the explorer shows for one setting: store and load bank pictures, the curve, the table."""
    pictures = []
    for op, what in (("st", "row write into the tile"), ("ld", "column read out of the tile")):
        fig = draw.banks(sim_run, op=op)
        head, _, source = fig.layout.title.text.rpartition("<br>")     # the picture's own title, its source line
        fig.layout.title.text = f"{tile}, PAD={PAD}, {what}<br><sup>{head}</sup><br>{source}"
        fig.update_layout(margin=dict(t=75))        # the explorer's full width: the title fits in fewer lines
        pictures.append(fig)
    return [*pictures, curve(sim, tile, PAD, shape), draw.table({f"{tile}, PAD={PAD}": sim_run})]


def padding_explorer(sim, shape=(64, 64), start: str = "32x32 tile") -> widgets.Explorer:
    """PAD slider (0-4) x tile buttons -> bank pictures, the PAD curve and the metrics table."""
    return widgets.Explorer(
        compute=lambda PAD, tile: run(sim, tile, PAD, shape),
        figures=lambda r, PAD, tile: figures(r, PAD=PAD, tile=tile, sim=sim, shape=shape),
        controls=dict(PAD=PADS, tile=list(CONFIGS)), start=dict(tile=start),
        title="Padding explorer: move PAD, pick a tile")


def dynamic_tile(kernel, tile: int, pad: int, block_rows: int = 8, shape=(100, 130), dtype=np.float32,
                 shared_bytes: int | None = None):
    """Simulate `kernel` (a %%cuda Function with an ``extern __shared__`` tile) on a random
    rows x cols matrix with a NaN-poisoned output: blocks of tile x block_rows threads, one per
    tile, and ``shared_bytes`` of dynamic shared memory (default: the padded tile,
    tile * (tile + pad) elements). Returns (SimRun, verify.compare result for every element)."""
    rows, cols = shape
    a = random_matrix(rows, cols, dtype)
    out = poisoned((cols, rows), dtype)
    nbytes = tile * (tile + pad) * np.dtype(dtype).itemsize if shared_bytes is None else shared_bytes
    run = kernel.simulate((math.ceil(cols / tile), math.ceil(rows / tile)), (tile, block_rows),
                          (out, a, np.int32(rows), np.int32(cols), np.int32(pad)), shared_mem=nbytes)
    return run, verify.compare(out, np.ascontiguousarray(a.T), tile)

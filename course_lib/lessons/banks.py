"""Notebook 05 (bank conflicts and padding): the padding explorer and the configurations it shows.

    from course_lib.lessons import banks
    banks.CONFIGS                               # label -> (course kernel, fixed parameters)
    banks.run(sim, "32x16 block (rect)", PAD=1) # a SimRun (cached per label and PAD)
    banks.padding_explorer(sim)                 # PAD slider x tile buttons -> heatmaps, chart, table
    run, ok = banks.dynamic_tile(tile_dynamic, tile=32, pad=1)   # a tile in extern __shared__ memory
    banks.camping_table()                       # partition camping, in the 2009 paper's model (computed)

The explorer is a ``cl.widgets.Explorer``: an IntSlider labelled ``PAD`` (0-4) and buttons for
the tile; every change redraws two warp x bank pictures (the store into the tile and the
column read out of it), a plotly chart of wavefronts per request over PAD with the current
value marked, and an HTML metrics table. Nothing here is specific to a GPU: all runs are simulated.

``dynamic_tile`` launches a transpose whose tile is ``extern __shared__`` (sized at launch, not at
compile time): ``kernel(T* out, const T* in, int rows, int cols, int pad)`` with blocks of
tile x block_rows threads and ``tile * (tile + pad) * itemsize`` bytes of dynamic shared memory.

``partitions`` and ``camping_table`` apply the partition model of Ruetsch and Micikevicius's transpose
paper (8 partitions of 256 bytes) to the tiles the first blocks of a launch move, in row-major and
diagonal block order: a computation of that old model, not a measurement, and nothing about how the
H100 maps addresses (benchmarks/mechanics.py measures the orders there).
"""
from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go

from ..notebook import draw, widgets
from ..notebook.listing import HTMLText
from ..sim import plan
from ..transposes import verify
from ..transposes.backend import matrix_words, memory_needed
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
    plan.room_for(memory_needed(rows, cols, dtype), f"{matrix_words(rows, cols, dtype)} (input, output, the "
                  "expected result and the simulator's working memory)", option=None)
    a = random_matrix(rows, cols, dtype)
    out = poisoned((cols, rows), dtype)
    nbytes = tile * (tile + pad) * np.dtype(dtype).itemsize if shared_bytes is None else shared_bytes
    run = kernel.simulate((math.ceil(cols / tile), math.ceil(rows / tile)), (tile, block_rows),
                          (out, a, np.int32(rows), np.int32(cols), np.int32(pad)), shared_mem=nbytes)
    return run, verify.compare(out, np.ascontiguousarray(a.T), tile)


# ------------------------------------------------------------------ partition camping (the paper's model)

ORDERS = ("row-major", "diagonal")
CAMPING_SOURCE = ("computed from the partition model of Ruetsch and Micikevicius's 2009 paper (8 partitions of 256 "
                  "bytes: byte a in partition a // 256 mod 8), not measured, and not the H100's: how it maps "
                  "addresses to its memory channels is not published")


def tile_of(order: str, lin: int, gx: int, gy: int) -> tuple[int, int]:
    """The tile (x, y) of in that the lin-th block started moves: row-major (as every course kernel) or
    diagonal (benchmarks/lesson_kernels/mechanics.cu, the same formula)."""
    if order == "row-major":
        return lin % gx, lin // gx
    by = lin % gy
    return (lin // gy + by) % gx, by


def partitions(rows: int, cols: int, order: str, running: int = 30, parts: int = 8, width: int = 256,
               itemsize: int = 4) -> dict:
    """{"loads": [...], "stores": [...]}: per partition, how many of the 128-byte row pieces that the first
    `running` blocks (32x32 tiles) read from in and write to out fall in it, under the paper's model."""
    gx, gy = -(-cols // 32), -(-rows // 32)
    got = {"loads": [0] * parts, "stores": [0] * parts}
    for lin in range(min(running, gx * gy)):
        tx, ty = tile_of(order, lin, gx, gy)
        for r in range(32):
            if ty * 32 + r < rows:                  # a row piece of in: row ty*32 + r, columns from tx*32
                got["loads"][((ty * 32 + r) * cols + tx * 32) * itemsize // width % parts] += 1
            if tx * 32 + r < cols:                  # ... of out: row tx*32 + r, columns from ty*32
                got["stores"][((tx * 32 + r) * rows + ty * 32) * itemsize // width % parts] += 1
    return got


def camping_table(shapes=((2048, 2048), (2016, 2016)), running: int = 30) -> HTMLText:
    """For each shape and block order: how many of the 8 partitions the first `running` blocks' loads and
    stores reach, and the busiest one's share of them (the paper's model, see CAMPING_SOURCE)."""
    head = ["float matrix", "block order", "partitions the loads reach", "busiest (loads)",
            "partitions the stores reach", "busiest (stores)"]
    body = []
    for rows, cols in shapes:
        for order in ORDERS:
            p = partitions(rows, cols, order, running)
            cells = []
            for side in ("loads", "stores"):
                n = p[side]
                cells += [f"{sum(1 for v in n if v)} of {len(n)}", f"{max(n) / sum(n):.0%}"]
            body.append([f"{rows} x {cols}", order] + cells)
    widths = [max(len(h), *(len(r[i]) for r in body)) for i, h in enumerate(head)]
    text = "\n".join("  ".join(v.ljust(w) for v, w in zip(r, widths)) for r in [head] + body)
    cells_html = "".join("<tr>" + "".join(f"<td>{v}</td>" for v in r) + "</tr>" for r in body)
    return HTMLText("<table><thead><tr>" + "".join(f"<th>{h}</th>" for h in head) + f"</tr></thead><tbody>"
                    f"{cells_html}</tbody></table>", text).sourced(
        f"the first {running} blocks of 32 x 32 tiles — {CAMPING_SOURCE}")

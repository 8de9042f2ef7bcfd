"""Bar and line charts: effective bandwidth against a copy's ceiling, and sweeps.

    charts.bandwidth([sim.run("naive_row"), sim.run("padded")])     # modelled bars (also draw.bandwidth)
    charts.bandwidth(gbps, measured=True, device="this CPU (numpy loops)", ceiling=gbps["copy"],
                     ceiling_name="the numpy copy")                   # a CPU timing: no cudaMemcpy in it
    charts.sweep([0, 1, 2], {"32x32 tile": [32, 1, 2]}, xlabel="PAD", notice="Any odd PAD clears it.")

Labels keep two significant figures (0.64 GB/s is not "1 GB/s"); a chart whose numbers do not come
from a GPU says so in its source line ("measured on this CPU, not a GPU", "MODELLED ..., not
measured"), and its ceiling is named for what it is (cudaMemcpy only where a GPU's was measured or
modelled). Each chart's text alternative leads with what to notice (course_lib.notebook.alt). This
module does not run kernels or compute bandwidths.
"""
from __future__ import annotations

import plotly.graph_objects as go

from . import alt
from .alt import sig, sourced
from .palette import BAD, DASHES, MAIN, PALE, SERIES, SYMBOLS


def _items(results, measured, ceiling, device):
    """[(name, GB/s, measured)], the ceiling and the device, from a dict or backend Results."""
    if isinstance(results, dict):
        return [(k, float(v), bool(measured)) for k, v in results.items()], ceiling, device
    items = []
    for r in results:
        got = r.gbps if r.gbps is not None else r.model_gbps
        items.append((r.name, got, r.gbps is not None))
        ceiling = ceiling or (r.copy_gbps if r.gbps is not None else r.model_copy_gbps)
        device = device or r.device
    return items, ceiling, device


def off_gpu(device: str | None) -> bool:
    """Whether numbers 'measured on `device`' come from something other than a GPU (this CPU)."""
    return "CPU" in str(device or "")


def bandwidth(results, *, ceiling: float | None = None, device: str | None = None,
              measured: bool | None = None, title: str | None = None, ceiling_name: str | None = None) -> go.Figure:
    """Effective bandwidth per kernel (GB/s) as bars, with the copy ceiling as a dashed line.

    `results`: backend Results (measured on a GPU, or modelled when simulated) or a dict
    name -> GB/s (say ``measured=``). Modelled bars are hatched and the title says MODELLED. The
    ceiling is called ``ceiling_name`` (default: cudaMemcpy on a GPU or in the model, "the copy"
    for numbers measured on a CPU).

        draw.bandwidth([sim.run("naive_row"), sim.run("padded")])
        draw.bandwidth({"copy": 2900, "naive": 900}, measured=True, device="H100")
    """
    items, ceiling, device = _items(results, measured, ceiling, device)
    is_measured = all(m for _, _, m in items)
    names, values = [n for n, _, _ in items], [v for _, v, _ in items]
    cpu = is_measured and off_gpu(device)
    # the ceiling is a device-to-device cudaMemcpy (measured, or modelled), not the course's copy kernel
    name = ceiling_name or ("the copy" if cpu else "cudaMemcpy" if is_measured else "cudaMemcpy, modelled")
    short = name if ceiling_name or cpu else "cudaMemcpy"
    text = [f"{sig(v)} GB/s" + (f" ({sig(100 * v / ceiling)}% of {short})" if ceiling else "") for v in values]
    fig = go.Figure(go.Bar(x=values, y=names, orientation="h", text=text, textposition="auto", name="effective bandwidth",
                           marker=dict(color=[MAIN if m else PALE for _, _, m in items],
                                       pattern=dict(shape=["" if m else "/" for _, _, m in items]))))
    if ceiling:
        fig.add_vline(x=ceiling, line=dict(dash="dash", color=BAD),
                      annotation_text=f"{name} {sig(ceiling)} GB/s", annotation_position="top")
    where = device or ("a GPU" if not cpu else "this CPU")
    kind = (f"measured on {where}" + (", not a GPU" if cpu else "")) if is_measured else \
        f"MODELLED for {where} from simulator counts (course_lib.model), not measured"
    fig.update_layout(title=title or f"Effective bandwidth (2 × bytes / time)<br><sup>{kind}</sup>",
                      xaxis=dict(title="GB/s", rangemode="tozero"),
                      yaxis=dict(autorange="reversed", type="category", automargin=True), height=160 + 34 * len(items))
    if items:
        best, worst = max(items, key=lambda i: i[1]), min(items, key=lambda i: i[1])
        of = (lambda v: f"{sig(100 * v / ceiling)}% of {short}") if ceiling else (lambda v: f"{sig(v)} GB/s")
        sentence = f"Fastest: {best[0]} at {of(best[1])}" + (
            f"; slowest: {worst[0]} at {of(worst[1])}." if len(items) > 1 else ".")
        line = f" (the dashed line: {name}, {sig(ceiling)} GB/s)" if ceiling else ""
        if ceiling:
            header, rows = ["kernel", "GB/s", f"% of {short}", "label"], [
                [n, sig(v), sig(100 * v / ceiling), t] for (n, v, _), t in zip(items, text)]
        else:           # no ceiling measured: no column of percentages to leave empty
            header, rows = ["kernel", "GB/s", "label"], [[n, sig(v), t] for (n, v, _), t in zip(items, text)]
        alt.noticed(fig, sentence, [("bars" + line, header, rows)])
    return sourced(fig, kind)


def _default_notice(x, series: dict, xlabel: str) -> str:
    """'a: highest at PAD = 1 (32), lowest at PAD = 3 (1).' for each line."""
    xs, said = list(x), []
    for k, v in series.items():
        pts = [(y, xv) for xv, y in zip(xs, v) if y is not None]
        if pts:
            (hi, xh), (lo, xl) = max(pts, key=lambda p: p[0]), min(pts, key=lambda p: p[0])
            said.append(f"{k}: highest at {xlabel or 'x'} = {xh} ({sig(hi)}), lowest at {xlabel or 'x'} = {xl} "
                        f"({sig(lo)})")
    return "; ".join(said) + "." if said else "No values."


def sweep(x, series: dict, *, xlabel: str = "", ylabel: str = "", title: str = "", log_y: bool = False,
          source: str | None = None, notice: str | None = None) -> go.Figure:
    """A line chart, one line per entry of `series` (label -> values over `x`), each with its own
    colour, dash and marker. `source` says where the numbers come from ("measured on ...",
    "modelled for ..."); left out, a title or label that says it is kept, "this CPU" in one reads
    "measured on this CPU, not a GPU", and anything else is taken as the simulator's (pass source=
    otherwise). `notice`: what the chart shows, one sentence (default: each line's highest and lowest).

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
            ("measured on this CPU, not a GPU" if "this CPU" in labels else alt.SIMULATED)
    alt.noticed(fig, notice or _default_notice(x, series, xlabel))
    return sourced(fig, source)

"""The class report's figure: how one exercise's key counts spread over the class, with its text alternative.

    fig = report_figures.counts_figure(summary)      # None when no submission ran on the simulator
    report_figures.html(fig, "counts-06_tiles-tile_32x8")   # the chart's div and its text alternative

One bar chart per key count (sectors per request of the global loads and stores, wavefronts per request
of the shared ones, instructions per element, the share of elements wrong): a bar per value the class's
kernels had (the counts are exact: 4 and 4.5 sectors per request are different kernels, which a histogram's
bins would merge; values at three significant figures, and a histogram only past MAX_BARS values), the
students who passed and those who did not stacked in the course's colours for ideal and not ideal, and
hatched apart (the colour never says it alone). Like every figure of the course it carries its text alternative
(course_lib.notebook.alt): what to notice, then each count's values as a table (value, students,
passed). This module draws; the numbers come from class_summary.
"""
from __future__ import annotations

import statistics
from collections import Counter

from ...notebook import alt, palette

SOURCE = "simulated (H100 rules): the counts grading stored"
ROW_PX = 170
MAX_BARS = 40            # more distinct values than this: a histogram of them


def _tables(summary) -> list:
    tables = []
    for name, values in summary.counts.items():
        passed = summary.counts_passed[name]
        by = Counter(zip(values, passed))
        rows = [[alt.sig(v, 3), str(by[(v, True)] + by[(v, False)]), str(by[(v, True)])]
                for v in sorted(set(values))]
        tables.append((name, ["value", "students", "of them passed"], rows))
    return tables


def notice(summary) -> str:
    """One sentence: how many submissions, and each count's median (what the class's kernels typically do)."""
    n = summary.students
    medians = "; ".join(f"{name} {alt.sig(statistics.median(v), 3)}" for name, v in summary.counts.items())
    return f"{n} final submission{'s' if n != 1 else ''}; medians: {medians}."


def counts_figure(summary):
    """The histograms of `summary`'s key counts (class_summary.Summary), or None without any."""
    if not summary.counts:
        return None
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots
    names = list(summary.counts)
    fig = make_subplots(rows=len(names), cols=1, vertical_spacing=min(0.12, 0.5 / len(names)))
    for row, name in enumerate(names, 1):
        _row(fig, go, row, name, summary.counts[name], summary.counts_passed[name])
    title = f"{summary.exercise} ({summary.assignment}): the key counts of the class's final submissions"
    fig.update_layout(barmode="stack", bargap=0.1, height=120 + ROW_PX * len(names), template="plotly_white",
                      title=dict(text=title), margin=dict(l=70, r=20, t=90, b=50),
                      legend=dict(orientation="h", y=1.0, yanchor="bottom", x=1, xanchor="right"))
    alt.sourced(fig, SOURCE)
    return alt.noticed(fig, notice(summary), _tables(summary))


def _row(fig, go, row: int, name: str, values: list, passed: list) -> None:
    """One count's bars: a bar per value (a histogram past MAX_BARS values), passed and not passed stacked."""
    shown = [alt.sig(v, 3) for v in values]
    order = sorted(set(shown), key=float)
    bars = len(order) <= MAX_BARS
    for ok, label, color, pattern in ((True, "passed", palette.OK, ""), (False, "not passed", palette.BAD, "/")):
        style = dict(name=label, legendgroup=label, showlegend=row == 1,
                     marker=dict(color=color, pattern=dict(shape=pattern)),
                     hovertemplate=f"{name}: %{{x}}<br>%{{y}} student(s), {label}<extra></extra>")
        if bars:
            n = Counter(x for x, p in zip(shown, passed) if p is ok)
            fig.add_trace(go.Bar(x=order, y=[n[x] for x in order], **style), row=row, col=1)
        else:
            fig.add_trace(go.Histogram(x=[v for v, p in zip(values, passed) if p is ok], nbinsx=MAX_BARS, **style),
                          row=row, col=1)
    fig.update_xaxes(title_text=name, row=row, col=1,
                     **(dict(type="category", categoryorder="array", categoryarray=order) if bars else {}))
    fig.update_yaxes(title_text="students", rangemode="tozero", row=row, col=1)


def html(fig, div_id: str) -> str:
    """The figure's div (plotly.js is loaded once by the page) followed by its text alternative."""
    chart = fig.to_html(full_html=False, include_plotlyjs=False, div_id=div_id,
                        config={"displaylogo": False, "responsive": True})
    return chart + alt.bundle(fig)["text/html"]

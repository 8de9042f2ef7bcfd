"""The class report's figure: how one exercise's key counts spread over the class, with its text alternative.

    fig = report_figures.counts_figure(summary)      # None when no submission ran on the simulator
    report_figures.html(fig, "counts-06_tiles-tile_32x8")   # the chart's div and its text alternative

One histogram per key count (sectors per request of the global loads and stores, wavefronts per request
of the shared ones, instructions per element, the share of elements wrong), the students who passed and
those who did not stacked in the course's colours for ideal and not ideal (and in the legend's words: the
colour never says it alone). Like every figure of the course it carries its text alternative
(course_lib.notebook.alt): what to notice, then each count's values as a table (value, students,
passed). This module draws; the numbers come from class_summary.
"""
from __future__ import annotations

import statistics
from collections import Counter

from ...notebook import alt, palette

SOURCE = "simulated (H100 rules): the counts grading stored"
ROW_PX = 170


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
        values, passed = summary.counts[name], summary.counts_passed[name]
        for ok, label, color, pattern in ((True, "passed", palette.OK, ""), (False, "not passed", palette.BAD, "/")):
            xs = [v for v, p in zip(values, passed) if p is ok]
            fig.add_trace(go.Histogram(x=xs, name=label, legendgroup=label, showlegend=row == 1,
                                       marker=dict(color=color, pattern=dict(shape=pattern)),
                                       hovertemplate=f"{name}: %{{x}}<br>%{{y}} student(s), {label}<extra></extra>"),
                          row=row, col=1)
        fig.update_xaxes(title_text=name, row=row, col=1)
        fig.update_yaxes(title_text="students", rangemode="tozero", row=row, col=1)
    title = f"{summary.exercise} ({summary.assignment}): the key counts of the class's final submissions"
    fig.update_layout(barmode="stack", bargap=0.1, height=120 + ROW_PX * len(names), template="plotly_white",
                      title=dict(text=title), margin=dict(l=70, r=20, t=90, b=50),
                      legend=dict(orientation="h", y=1.0, yanchor="bottom", x=1, xanchor="right"))
    alt.sourced(fig, SOURCE)
    return alt.noticed(fig, notice(summary), _tables(summary))


def html(fig, div_id: str) -> str:
    """The figure's div (plotly.js is loaded once by the page) followed by its text alternative."""
    chart = fig.to_html(full_html=False, include_plotlyjs=False, div_id=div_id,
                        config={"displaylogo": False, "responsive": True})
    return chart + alt.bundle(fig)["text/html"]

"""Fitting plotly figures into a notebook's output area: titles that are not clipped.

    fig = fit.fit_title(fig)      # a copy whose title lines fit; the top margin grows to hold them

plotly centres a title and never wraps it: a line wider than the chart is cut at both ends. At
JupyterLab's default width (a 1280 px window with the file browser open) an output is about 850 px
wide, and a chart in a narrower window or beside another is less, so lines are kept to about 540 px:
a long line is broken at ' — ' or a space, and what follows goes on in smaller (<sup>) lines.
Explorers (course_lib.widgets) fit every figure they show, and so does the notebook renderer
``course_plotly`` (:class:`FittedRenderer`, set by draw.configure) for a figure a cell displays; a
figure with a set width gets lines short enough to stay clear of plotly's toolbar at its top right.
tests/lab/test_browser.py measures the result in a real browser. This module changes layouts only;
it draws nothing.
"""
from __future__ import annotations

import re
import textwrap

import plotly.graph_objects as go
from plotly.io._base_renderers import PlotlyRenderer

TITLE_CHARS, SUB_CHARS = 62, 88     # ~540 px at the title's 16.8 px and the <sup> lines' ~12 px
TOOLBAR_PX = 170                    # plotly's toolbar (four buttons) and the margins beside a title


class FittedRenderer(PlotlyRenderer):
    """plotly's figure-JSON renderer, fitting the title first (see the module docstring)."""

    def to_mimebundle(self, fig_dict):
        return super().to_mimebundle(fitted(go.Figure(fig_dict)).to_dict())


def fitted(fig: go.Figure) -> go.Figure:
    """fit_title for a notebook: a figure with a set width gets lines that end before the toolbar.

        fit.fitted(aos.picture(4, "plain"))     # 600 px wide: lines of about 49 characters
    """
    width = fig.layout.width
    if not width:
        return fit_title(fig)
    room = max(200, width - TOOLBAR_PX)
    return fit_title(fig, min(TITLE_CHARS, int(room / 8.7)), min(SUB_CHARS, int(room / 6.1)))


def _wrap(text: str, chars: int) -> list[str]:
    """`text` broken at spaces into lines of at most `chars` characters, at ' — ' first if it is too long."""
    if len(text) <= chars:
        return [text]
    head, dash, tail = text.partition(" — ")
    if dash and len(head) <= chars * 1.15:
        return [head, *_wrap(tail, chars)]
    return textwrap.wrap(text, chars, break_long_words=False, break_on_hyphens=False) or [text]


def fit_title(fig: go.Figure, chars: int = TITLE_CHARS, sub_chars: int = SUB_CHARS) -> go.Figure:
    """A copy of `fig` whose title lines are short enough for a notebook at JupyterLab's default width
    (a long line is centred and clipped at both ends), with the top margin grown to hold them.

        draw.fit_title(draw.sectors(run))     # 'global store, ... 32 lanes' over '<sup>128 of 1024 ...</sup>'
    """
    fig = go.Figure(fig)
    text = fig.layout.title.text
    if not text:
        return fig
    lines = []
    for piece in re.split(r"<br\s*/?>", text):
        inner = re.fullmatch(r"<sup>(.*)</sup>", piece.strip(), flags=re.S)
        if inner:
            lines += [f"<sup>{w}</sup>" for w in _wrap(inner[1], sub_chars)]
        elif "<" in piece:          # other markup: left as it is
            lines.append(piece)
        else:                       # a long line goes on as smaller lines below it
            main, *rest = _wrap(piece, chars)
            lines += [main] + ([f"<sup>{w}</sup>" for w in _wrap(" ".join(rest), sub_chars)] if rest else [])
    subs = sum(line.startswith("<sup>") for line in lines)
    need = 20 + 22 * (len(lines) - subs) + 20 * subs     # plotly spaces <sup> lines nearly as the title's
    top = next((t for t in (fig.layout.margin.t, fig.layout.template.layout.margin.t) if t is not None), 100)
    fig.layout.title.text = "<br>".join(lines)
    if need > top:
        fig.update_layout(margin=dict(t=need), height=(fig.layout.height or 450) + need - top)
    return fig

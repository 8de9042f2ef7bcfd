"""An explorer's chart slots, and the text that stands for an explorer where its widgets cannot run.

    v = views.View(); v.show(fig)        # an Output area showing fig and its text alternative
    views.item_bundle(draw.table(...))   # (data, metadata): an item's mime bundle, without displaying it
    views.as_text(items, "PAD = 1 (slider 0-4)")   # (text/plain, text/html) of an explorer's current view

A stored notebook read without a kernel (GitHub, nbviewer, a terminal) cannot draw an explorer's
widgets, so the explorer's own output carries, beside the widget view, what its current view shows:
the controls' settings and each chart's text alternative (course_lib.notebook.alt) or each
table's text. ``widgets`` builds explorers from these; this module decides no layout of controls.
"""
from __future__ import annotations

import html
import os

import ipywidgets as W
from IPython.display import display

FIGURE_WIDGET = [os.environ.get("COURSE_LIB_FIGUREWIDGET", "") == "1"]    # widgets.use_figure_widget sets it


class View:
    """One chart slot: an Output area redrawn on change, or a FigureWidget updated in place."""

    def __init__(self):
        self.out, self.fw = W.Output(layout=W.Layout(width="100%")), None
        self.widget = W.Box([self.out], layout=W.Layout(width="100%"))
        self.item = None

    def show(self, item):
        self.item = item
        import plotly.graph_objects as go

        from . import draw, fit
        if isinstance(item, go.Figure):
            item = fit.fitted(item)
        if FIGURE_WIDGET[0] and isinstance(item, go.Figure):
            self._update_figure_widget(item)
            return
        data, metadata = item_bundle(item)
        shown = [(data, metadata)]
        if isinstance(item, go.Figure):       # a chart's text alternative follows it (course_lib.notebook.alt)
            from . import alt
            shown.append((alt.bundle(item), {}))
        if draw.on_colab():
            # Colab renders an Output's captured display messages (its documented way), not
            # outputs set as state
            self.out.clear_output(wait=True)
            with self.out:
                for d, m in shown:
                    display(d, metadata=m, raw=True)
            return
        # Set the Output widget's state instead of printing into it: nothing goes to the cell's
        # own output stream, so nbval compares the same outputs whether or not widgets exist.
        self.out.outputs = tuple({"output_type": "display_data", "data": d, "metadata": m} for d, m in shown)

    def _update_figure_widget(self, item):
        import plotly.graph_objects as go
        if self.fw is None:
            self.fw = go.FigureWidget(item)
            self.widget.children = [self.fw]
            return
        with self.fw.batch_update():
            if [t.type for t in self.fw.data] == [t.type for t in item.data]:
                for old, new in zip(self.fw.data, item.data):
                    old.update(new.to_plotly_json(), overwrite=True)
            else:
                self.fw.data = ()
                self.fw.add_traces(item.data)
            self.fw.update_layout(item.layout.to_plotly_json(), overwrite=True)


def item_bundle(item) -> tuple[dict, dict]:
    """The mime bundle of `item`, without displaying it: IPython's formatter would call a plotly
    figure's _ipython_display_, which prints the figure into the running cell."""
    if hasattr(item, "_repr_mimebundle_"):
        b = item._repr_mimebundle_(include=None, exclude=None)
        data, metadata = b if isinstance(b, tuple) else (b, {})
        if data:
            return data, metadata or {}
    from IPython import get_ipython
    from IPython.core.formatters import DisplayFormatter
    ip = get_ipython()      # outside IPython a private formatter: never create the shell singleton
    return (ip.display_formatter if ip else DisplayFormatter()).format(item)


def as_text(items, settings: str, title: str = "") -> tuple[str, str]:
    """(text/plain, text/html) standing for an explorer whose view shows `items` with `settings`:
    each figure's text alternative, each table's text. Deterministic, so nbval can compare it."""
    import plotly.graph_objects as go

    from . import alt
    head = (f"Explorer{': ' + title if title else ''} — run the notebook to move its controls. "
            f"Its view with {settings or 'its settings'}:")
    plain, parts = [head], [f"<p><i>{html.escape(head)}</i></p>"]
    for item in items:
        if isinstance(item, go.Figure):
            b = alt.bundle(item)
            plain.append(b["text/plain"])
            parts.append(b["text/html"])
        else:
            text = item if isinstance(item, str) else repr(item)
            plain.append(text)
            got = getattr(item, "_repr_html_", None)
            parts.append(got() if got else f"<pre>{html.escape(text)}</pre>")
    return "\n".join(plain), "".join(parts)

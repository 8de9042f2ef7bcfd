"""Explorers: controls that change parameters, and charts that follow in place.

Generic on purpose: an explorer takes a function (parameters -> a SimRun, a Result, numbers...)
and a figure builder (that value -> one or more plotly figures or draw.listing/table objects)::

    sim = cl.Simulator()
    ex = widgets.Explorer(
        compute=lambda PAD, TILE: sim.run("tile", TILE=TILE, BLOCK_ROWS=8, PAD=PAD, shape=(64, 64)).sim,
        figures=lambda run, **p: [draw.banks(run, op="ld"), draw.table({"tile": run})],
        controls=dict(PAD=range(0, 5), TILE=[16, 32]))
    ex                      # sliders + charts; moving one recomputes (cached) and redraws

    sw = widgets.Sweep(
        compute=lambda stride, dtype: ...,            # one point
        over=("stride", [1, 2, 4, 8, 16, 32]),        # swept with a progress bar
        figures=lambda xs, ys, **p: draw.sweep(xs, {"sectors/request": ys}),
        controls=dict(dtype=[np.float32, np.float64]))

Controls: ``range(a, b)`` -> slider; a list -> buttons (or a slider when long); an ipywidgets
widget -> used as it is; anything else -> a fixed value passed to compute. ``ex.set(PAD=1)``
changes a control from code (tests); ``start=dict(TILE=32)`` picks the starting values.

Charts live in ``ipywidgets.Output`` areas whose content is replaced on change (as widget state,
never printed into the cell, so nbval sees only the widget's short text): figure JSON only, no
extra package, the same in JupyterLab and VS Code. Each chart takes the explorer's full width, one
under the other, with its title broken into lines that fit (course_lib.fit) and followed by its
text alternative (course_lib.notebook.alt). On Colab, which shows
plotly only as HTML and ships ipywidgets 7, a chart is displayed into its Output area with Colab's
plotly renderer (HTML that loads plotly.js from a CDN, draw.configure), the way Colab's own widget
examples fill an Output; ipywidgets 7 and 8 both work. ``use_figure_widget(True)`` switches plotly
figures to ``go.FigureWidget`` updated in place (smoother; plotly >= 6 needs the ``anywidget``
package, and a notebook saved with widget state then carries plotly's 5 MB widget bundle).
Errors from compute (an impossible tile size...) show under the controls; the charts stay.
"""
from __future__ import annotations

import ipywidgets as W
import numpy as np
from IPython.display import display
from traitlets import TraitError

from ..errors import ArgumentError
from .palette import BAD
from .views import FIGURE_WIDGET, View, as_text


def use_figure_widget(on: bool = True) -> bool:
    """Draw plotly figures as FigureWidgets updated in place (needs anywidget). Returns the mode.

        widgets.use_figure_widget(True)     # live sessions only: not for notebooks stored in git
    """
    if on:
        try:
            import anywidget  # noqa: F401
        except ImportError:
            raise ImportError("plotly's FigureWidget needs the anywidget package: pip install anywidget") from None
    FIGURE_WIDGET[0] = on
    return on


def label(v) -> str:
    try:
        if isinstance(v, type) or isinstance(v, np.dtype):
            return np.dtype(v).name
    except TypeError:
        pass
    return str(v)


def control(name: str, spec):
    """An ipywidgets control for one parameter, or None for a fixed value.

        control("PAD", range(0, 5))          # IntSlider 0..4;  control("T", [np.float32, np.float64])
    """
    if isinstance(spec, W.ValueWidget):
        return spec
    if isinstance(spec, range):
        return W.IntSlider(value=spec.start, min=spec.start, max=spec[-1], step=spec.step, description=name,
                           continuous_update=False)
    if isinstance(spec, (list, tuple)):
        options = [(label(v), v) for v in spec]
        if len(spec) > 6:
            return W.SelectionSlider(options=options, description=name, continuous_update=False)
        return W.ToggleButtons(options=options, description=name, style=dict(button_width="auto"))
    return None


def choose(w, name: str, value) -> None:
    """Set control `w` to `value`, or raise an ArgumentError naming the values it can take (instead of
    a traitlets trace)."""
    options = getattr(w, "options", None)
    if options is not None:
        values = [o[1] if isinstance(o, tuple) else o for o in options]
        match = [v for v in values if v is value or label(v) == label(value)]
        if not match:
            raise ArgumentError(f"{name}={label(value)!r} is not one of this explorer's choices",
                                hint=f"{name} can be {', '.join(label(v) for v in values)}")
        value = match[0]
    elif isinstance(w, (W.IntSlider, W.FloatSlider)) and not (
            isinstance(value, (int, float, np.number)) and w.min <= value <= w.max):
        raise ArgumentError(f"{name}={value!r} is outside this explorer's slider",
                            hint=f"{name} runs from {w.min} to {w.max}")
    try:
        w.value = value
    except TraitError as exc:
        raise ArgumentError(f"{name}={value!r} does not fit this control: {str(exc).splitlines()[0]}",
                            hint=f"pick a value the {name} control shows") from None


class Explorer:
    """Controls -> compute(**params) -> figures(value, **params) -> charts (see module docstring)."""

    def __init__(self, compute, figures, controls: dict, *, start: dict | None = None, cache: bool = True,
                 title: str = ""):
        self.compute, self.build, self.use_cache, self.title = compute, figures, cache, title
        self.fixed = {}
        self.controls = {}
        for name, spec in controls.items():
            w = control(name, spec)
            if w is None:
                self.fixed[name] = spec
            else:
                self.controls[name] = w
        for name, value in (start or {}).items():       # before anything observes the controls
            if name not in self.controls:
                raise ArgumentError(f"start={{{name!r}: ...}}: this explorer has no control named {name!r}",
                                    hint=f"its controls: {', '.join(self.controls) or 'none'}")
            choose(self.controls[name], name, value)
        for w in self.controls.values():
            w.observe(lambda change: self.update(), names="value")
        self.status = W.HTML("")
        self.views: list[View] = []
        self.charts = W.VBox(layout=W.Layout(width="100%"))
        self._cache = {}
        self.value, self.items = None, []
        head = [W.HTML(f"<b>{title}</b>")] if title else []
        self.widget = W.VBox(head + [W.HBox(list(self.controls.values()), layout=W.Layout(flex_flow="row wrap")),
                                     *self._extra(), self.status, self.charts], layout=W.Layout(width="100%"))
        self.update()

    def _extra(self):
        return []

    @property
    def params(self) -> dict:
        return {**self.fixed, **{n: w.value for n, w in self.controls.items()}}

    def set(self, **params):
        """Change controls from code; the charts follow (one update per changed control)."""
        for name, value in params.items():
            if name in self.controls:
                choose(self.controls[name], name, value)
            else:
                self.fixed[name] = value
                self.update()

    def _point(self, **params):
        key = tuple(sorted((k, repr(v)) for k, v in params.items()))
        if not self.use_cache or key not in self._cache:
            self._cache[key] = self.compute(**params)
        return self._cache[key]

    def _value(self, params):
        return self._point(**params)

    def _build(self, value, params):
        return self.build(value, **params)

    def update(self):
        params = self.params
        self.status.value = "<i>computing…</i>"
        try:
            value = self._value(params)
            items = self._build(value, params)
            self.value = value
        except Exception as exc:   # a bad combination must not break the explorer
            self.status.value = f"<span style='color:{BAD}'>{type(exc).__name__}: {_short(exc)}</span>"
            return
        self.status.value = ""
        self.items = list(items) if isinstance(items, (list, tuple)) else [items]
        while len(self.views) < len(self.items):
            self.views.append(View())
        self.charts.children = [v.widget for v in self.views[:len(self.items)]]
        for view, item in zip(self.views, self.items):
            view.show(item)

    def _repr_mimebundle_(self, include=None, exclude=None):
        """The widget view, and in text/plain and text/html what its current view shows: a stored
        notebook read without a kernel (GitHub, nbviewer) describes the picture, not `VBox(...)`."""
        data = view_bundle(self.widget)
        if not data:
            return None
        settings = ", ".join(_setting(n, w) for n, w in self.controls.items())
        data["text/plain"], data["text/html"] = as_text(self.items, settings, self.title)
        return data

    def _ipython_display_(self):
        show(self.widget, self._repr_mimebundle_())

    def __repr__(self):
        return f"<{type(self).__name__} {', '.join(f'{k}={label(v)}' for k, v in self.params.items())}>"


class Sweep(Explorer):
    """Runs compute for every value of one parameter (with a progress bar), then draws
    figures(xs, values, **params). The other controls re-run the sweep when they change."""

    def __init__(self, compute, over: tuple, figures, controls: dict | None = None, **kw):
        self.over_name, self.over_values = over[0], list(over[1])
        self.progress = W.IntProgress(min=0, max=len(self.over_values), description="sweep")
        super().__init__(compute, figures, controls or {}, **kw)

    def _extra(self):
        return [self.progress]

    def _value(self, params):
        self.progress.value = 0
        ys = []
        for i, x in enumerate(self.over_values, 1):
            ys.append(self._point(**params, **{self.over_name: x}))
            self.progress.value = i
        return ys

    def _build(self, ys, params):
        return self.build(self.over_values, ys, **params)


def sweep(compute, values, *, description: str = "sweep") -> list:
    """[compute(v) for v in values] with a progress bar (for cells that sweep once, no controls).

        ratios = widgets.sweep(lambda s: strided_ratio(s), [1, 2, 4, 8, 16, 32])
    """
    bar = W.IntProgress(min=0, max=len(values), description=description)
    data = view_bundle(bar)
    if data:         # read without a kernel, the notebook says what the bar was, not IntProgress(...)
        data["text/plain"] = f"(a progress bar: {description} over {len(values)} values)"
    show(bar, data)
    out = []
    for i, v in enumerate(values, 1):
        out.append(compute(v))
        bar.value = i
    return out


def _setting(name: str, w) -> str:
    """'PAD = 1 (0-4)' or 'dtype = float32 (of uint8, float32)': a control's value and its range."""
    value = label(w.value)
    options = getattr(w, "options", None)
    if options is not None:
        return f"{name} = {value} (of {', '.join(label(o[1] if isinstance(o, tuple) else o) for o in options)})"
    if hasattr(w, "min") and hasattr(w, "max"):
        return f"{name} = {value} ({w.min}-{w.max})"
    return f"{name} = {value}"


def _short(exc) -> str:
    import html
    return html.escape(str(exc).splitlines()[0] if str(exc) else "")


def view_bundle(widget) -> dict | None:
    """The mime bundle that displays `widget`'s view, to which a caller adds its own text. ipywidgets 8
    gives it (_repr_mimebundle_); ipywidgets 7 (Colab's) displays itself from _ipython_display_ with the
    same view key, which is built here the way it builds it, so that a notebook's stored outputs are the
    same on both (nbval compares them in tests/lab/test_colab_venv.py)."""
    if hasattr(widget, "_repr_mimebundle_"):
        return widget._repr_mimebundle_() or None
    model_id = getattr(widget, "model_id", None)
    if model_id is None or getattr(widget, "_view_name", None) is None:
        return None
    return {"text/plain": repr(widget),
            "application/vnd.jupyter.widget-view+json": {"version_major": 2, "version_minor": 0, "model_id": model_id}}


def show(widget, data: dict | None):
    """Display `data` (view_bundle's, with text added) for `widget`, or the widget itself without one."""
    if not data:
        display(widget)
        return
    display(data, raw=True)
    if not hasattr(widget, "_repr_mimebundle_") and hasattr(widget, "_handle_displayed"):
        widget._handle_displayed()       # ipywidgets 7 runs its on_displayed callbacks after it displays

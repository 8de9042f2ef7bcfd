"""A progress display for long simulations, in a notebook or a terminal.

    run = fn.simulate(grid, block, args)              # shows progress only if the run is long
    run = fn.simulate(grid, block, args, progress=False)

:class:`Progress` is called after each batch of blocks with ``(done, total)``. It stays silent
for the first ``delay`` seconds (two by default), so a short run — every one a notebook checks
with nbval — prints nothing; after that it shows blocks done, elapsed time and the time left:
an ipywidgets bar in a Jupyter kernel (a text line if ipywidgets is missing), a line on stderr
rewritten in place in a terminal, and nothing when stderr is a file or a pipe. ``close()``
removes it when the run ends, however it ends (the widget with all it holds: ipywidgets keeps every
widget left open for the kernel's life). ``COURSE_LIB_PROGRESS=0`` turns it off: notebooks
executed for their stored outputs (``instructor refresh``, nbval) must print the same whatever the
machine's load. It knows nothing about the simulator.
"""
from __future__ import annotations

import os
import sys
import time

PROGRESS_ENV = "COURSE_LIB_PROGRESS"


def _in_notebook() -> bool:
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    shell = get_ipython()   # a kernel's shell (Jupyter, Colab) has one; a terminal IPython has not
    return shell is not None and (getattr(shell, "kernel", None) is not None
                                  or "IPKernelApp" in getattr(shell, "config", {}))


class Progress:
    def __init__(self, label="simulating", delay=2.0, stream=None):
        self.label, self.delay = label, delay
        self.stream = stream if stream is not None else sys.stderr
        self.start = time.perf_counter()
        self.shown = None          # 'widget' | 'text' | 'terminal' once visible
        self._widget = self._handle = None
        self._width = 0

    def __call__(self, done, total):
        elapsed = time.perf_counter() - self.start
        if elapsed < self.delay or done >= total or os.environ.get(PROGRESS_ENV) == "0":
            return
        left = elapsed * (total - done) / max(done, 1)
        text = (f"{self.label}: {done:,} of {total:,} blocks ({done / total:.0%}), "
                f"{elapsed:.0f} s so far, about {left:.0f} s left")
        if self.shown is None:
            self._open(total)
        if self.shown == "widget":
            self._widget.children[0].value = done
            self._widget.children[1].value = text
        elif self.shown == "text":
            self._handle.update({"text/plain": text}, raw=True)
        elif self.shown == "terminal":
            self.stream.write("\r" + text.ljust(self._width))
            self.stream.flush()
            self._width = len(text)

    def _open(self, total):
        if _in_notebook():
            from IPython.display import display
            try:
                import ipywidgets as W
            except ImportError:
                self._handle = display({"text/plain": ""}, raw=True, display_id=True)
                self.shown = "text"
                return
            # shown before it is displayed: a run stopped inside display() still has close() remove it
            self._widget, self.shown = W.HBox([W.IntProgress(min=0, max=total), W.Label()]), "widget"
            display(self._widget)
        elif getattr(self.stream, "isatty", lambda: False)():
            self.shown = "terminal"
        else:
            self.shown = "off"

    def close(self):
        """Remove the display (the run ended, finished or stopped by an error)."""
        if self.shown == "widget":
            _close_all(self._widget)
        elif self.shown == "text":
            self._handle.update({"text/plain": ""}, raw=True)
        elif self.shown == "terminal":
            self.stream.write("\r" + " " * self._width + "\r")
            self.stream.flush()
        self.shown = "closed" if self.shown else None


def _close_all(widget):
    """Close `widget` and every widget it holds (children, layouts, styles): ipywidgets' close() closes one
    widget, and each left open stays in its registry for the kernel's life (seven per display)."""
    from ipywidgets import Widget
    for name in widget.keys:
        value = getattr(widget, name, None)
        for part in value if isinstance(value, (tuple, list)) else (value,):
            if isinstance(part, Widget) and part is not widget:
                _close_all(part)
    widget.close()

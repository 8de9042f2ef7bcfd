"""What a notebook's kernel keeps of a run that stopped (the stop button, Ctrl-C, an error), given back.

IPython keeps a cell's error until another cell fails, in three places: ``sys.last_traceback``, its
traceback formatter's ``InteractiveTB.tb`` and the cell's ``ExecutionResult.error_in_exec``. Through them
every frame the error passed through stays alive, and with it that frame's variables. The run's entry
points clear the frames below them as the error leaves (``errors.gives_memory_back``) and the Program
drops what its closures hold (``executor.Program.release``), but the frames of course_lib's callers of an
entry point join the traceback only later, as the error travels up: ``Transpose.simulate``'s output
matrix (256 MiB at 8192 x 8192) outlived every variable the student deleted, and clearing
``sys.last_traceback`` alone did not free it, for ``InteractiveTB.tb`` held it too (issue 37).

:func:`watch` (``import course_lib`` calls it, and each simulated launch, for a shell started after the
import; a no-op outside IPython) registers :func:`release`, once per IPython shell, for the end of every
cell: when the cell's error passed through course_lib, the variables of each frame from the outermost
course_lib frame inwards are cleared, the frames of the libraries course_lib called included, and so is
the copy of them IPython's formatter made in each frame's ``f_locals`` (before Python 3.13 a dict kept on
the frame, which ``frame.clear()`` leaves full). Left as they are: the student's own frames (the cell, and
functions defined in the notebook, whose globals are its namespace; what they hold is theirs to inspect
with ``%debug`` and to delete), and every frame of an error that never went through course_lib. The
traceback was shown before (IPython prints it before the cell ends), and its files and lines survive.
``COURSE_LIB_TRACEBACK=1`` keeps everything, for post-mortem debugging of course_lib
(``errors.keeps_everything``).
"""
from __future__ import annotations

import os
import sys

from ..errors import keeps_everything

PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep    # .../course_lib/


def watch() -> None:
    """Have this IPython shell call :func:`release` after each cell (once; nothing outside IPython). The
    error a cell kept before (one stopped before course_lib was imported again, say) is released now."""
    ipython = sys.modules.get("IPython")       # never imported by course_lib: a script pays nothing
    shell = ipython.get_ipython() if ipython is not None else None
    if shell is None or _after_cell in shell.events.callbacks.get("post_run_cell", ()):
        return
    shell.events.register("post_run_cell", _after_cell)
    release(getattr(sys, "last_value", None), shell.user_global_ns)


def _after_cell(result=None) -> None:
    """IPython's post_run_cell callback; it must never raise (IPython would print its error after every cell)."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    release(getattr(result, "error_in_exec", None), shell.user_global_ns if shell is not None else None)


def release(error: BaseException | None, notebook_globals: dict | None = None) -> None:
    """Clear the variables of `error`'s frames from the outermost course_lib frame inwards, and of the
    errors it carries (``__context__``, ``__cause__``), except frames whose globals are `notebook_globals`."""
    if keeps_everything():
        return
    pending, seen = [error], set()
    while pending:
        exc = pending.pop()
        if exc is None or id(exc) in seen:
            continue
        seen.add(id(exc))
        _clear_from_course_lib(getattr(exc, "__traceback__", None), notebook_globals)
        pending += [getattr(exc, "__context__", None), getattr(exc, "__cause__", None)]


def _clear_from_course_lib(tb, notebook_globals) -> None:
    inside = False
    for frame in _frames(tb):
        inside = inside or os.path.abspath(frame.f_code.co_filename).startswith(PACKAGE)
        if not inside or frame.f_globals is notebook_globals:
            continue
        try:
            frame.clear()
        except RuntimeError:      # a frame still running (never after a cell): Python refuses, rightly
            continue
        # IPython read f_locals to format the traceback, and before Python 3.13 that is a dict kept on the
        # frame, which clear() leaves holding every variable; reading it again drops the cleared ones
        frame.f_locals  # noqa: B018


def _frames(tb):
    while tb is not None:
        yield tb.tb_frame
        tb = tb.tb_next

"""The exceptions a student can meet, and how their messages are laid out.

Every error that comes from a kernel (compiling it, launching it, or running it in the
simulator) subclasses :class:`KernelError`. Messages follow one shape so that a notebook
shows a short, readable diagnosis rather than a traceback wall::

    <what went wrong>
      at <file>:<line>  <the source line>
      thread (x, y, z) of block (x, y, z)
    hint: <what to try>

In IPython/Jupyter, ``_render_traceback_`` replaces the traceback with just that diagnosis
and the line of the student's cell that raised it (``COURSE_LIB_TRACEBACK=1`` restores the
full traceback, for working on course_lib itself).

:func:`gives_memory_back` wraps the entry points of a run (``Function.simulate``,
``Simulator.run``): an exception that leaves them (an error, Ctrl-C) carries no local variables of
the run's finished frames, so the traceback IPython keeps (``sys.last_traceback``) holds no arrays.
A frame keeps its *function* though, and an instruction's closure holds the simulated launch: the
simulator's ``Program`` drops what it holds when a run stops (``Program.release``).

This module only formats; it knows nothing about NVRTC, CuPy or the simulator.
"""
from __future__ import annotations

import functools
import os
import traceback


class KernelError(Exception):
    """Base class for every error about a kernel: compiling, launching or simulating it."""

    def __init__(self, message: str, *, hint: str | None = None, line: int | None = None,
                 source_line: str | None = None, thread=None, block=None, filename: str | None = None):
        self.message = message
        self.hint = hint
        self.line = line
        self.source_line = source_line
        self.thread = thread
        self.block = block
        self.filename = filename
        super().__init__(self._render())

    def _render(self) -> str:
        parts = [self.message]
        if self.line:
            where = f"{self.filename or 'kernel'}:{self.line}"
            parts.append(f"  at {where}" + (f"    {self.source_line.strip()}" if self.source_line else ""))
        if self.thread is not None or self.block is not None:
            parts.append(f"  {describe_thread(self.thread, self.block)}")
        if self.hint:
            parts.append(f"hint: {self.hint}")
        return "\n".join(parts)

    # Jupyter shows str(exc) after the class name; keep it the same text everywhere.
    def __str__(self) -> str:
        return self._render()

    # IPython calls this instead of printing the traceback: a student sees the diagnosis and
    # the line of *their* cell that raised it, not eight frames of course_lib internals.
    # COURSE_LIB_TRACEBACK=1 brings the full traceback back (for working on course_lib).
    @property
    def _render_traceback_(self):
        if keeps_everything():
            raise AttributeError("_render_traceback_")
        return self._notebook_lines

    def _notebook_lines(self) -> list[str]:
        lines = [f"\x1b[0;31m{type(self).__name__}\x1b[0m: " + self._render()]
        caller = _outermost_caller(self.__traceback__)
        if caller:
            lines.append(f"\x1b[2m(raised by {caller})\x1b[0m")
        return "\n".join(lines).splitlines()


class CompileError(KernelError):
    """NVRTC rejected the source. ``.diagnostics`` holds (line, column, text) per error."""

    def __init__(self, message: str, *, diagnostics=(), log: str = "", **kw):
        self.diagnostics = list(diagnostics)
        self.log = log
        super().__init__(message, **kw)


class LaunchError(KernelError):
    """The launch configuration or the arguments cannot work (checked before launching)."""


class ArgumentError(LaunchError, ValueError):
    """A wrong argument: the number, type, dtype or layout of a kernel's arguments, or a value passed
    to a course_lib function (a block with a zero, an unknown parameter, a shape below 1)."""


class MemoryAccessError(KernelError):
    """An access outside any buffer, or a misaligned one (simulator)."""


class BarrierError(KernelError):
    """Threads of one block wait at different barriers, or some can never reach one (simulator)."""


class KernelTrap(KernelError):
    """The kernel stopped itself (simulator): ``__trap()``, or a trap NVRTC compiled in where the code
    always does something undefined (a null-pointer access). On a GPU the launch fails and the CUDA
    context is lost."""


class AssertionFailed(KernelTrap):
    """A device-side ``assert()`` was false (simulator): CUDA's "Assertion `...` failed"."""


class SimulationLimit(KernelError):
    """The simulator stopped a kernel that ran past its instruction budget (an infinite loop?)."""


class UnsupportedInstruction(KernelError):
    """The simulator does not implement a PTX instruction the kernel uses."""


class NoGPUError(KernelError):
    """A GPU-only operation was asked for on a machine without a usable NVIDIA GPU."""


class NotFound(KernelError, KeyError):
    """A name the course does not know: a kernel, a course kernel's key, an exercise, a mistake."""

    def __str__(self) -> str:       # KeyError would show the message in quotes
        return self._render()


class Unavailable(RuntimeError):
    """A part of the toolchain is missing here (an NVRTC, nvdisasm) or cannot read its input. Not a
    student's mistake: the caller falls back (the simulator then counts the PTX) and says why."""


def describe_thread(thread, block) -> str:
    """'thread (3, 1, 0) of block (0, 2, 0)' — the way CUDA users name a thread."""
    parts = []
    if thread is not None:
        parts.append(f"thread {tuple(int(v) for v in thread)}")
    if block is not None:
        parts.append(f"block {tuple(int(v) for v in block)}")
    return " of ".join(parts)


def caret_excerpt(source: str, line: int, column: int | None, filename: str = "kernel") -> str:
    """Two lines: the offending source line and a caret under the column (1-based)."""
    lines = source.splitlines()
    if not 1 <= line <= len(lines):
        return ""
    text = lines[line - 1].expandtabs(4)
    out = f"  {filename}:{line} | {text}"
    if column:
        pad = len(f"  {filename}:{line} | ") + column - 1
        out += "\n" + " " * pad + "^"
    return out


_PACKAGE = os.path.dirname(os.path.abspath(__file__))


def _outermost_caller(tb) -> str | None:
    """'Cell In[3], line 12: k.simulate(...)' — the last frame outside course_lib."""
    frames = [f for f in traceback.extract_tb(tb) if not os.path.abspath(f.filename).startswith(_PACKAGE)]
    if not frames:
        return None
    f = frames[-1]
    name = f.filename
    if name.startswith("<ipython-input-") or "ipykernel_" in name:
        name = "your cell"
    else:
        name = os.path.basename(name)
    return f"{name}, line {f.lineno}" + (f": {f.line.strip()}" if f.line else "")


def keeps_everything() -> bool:
    """``COURSE_LIB_TRACEBACK=1``: full tracebacks, and a stopped run's frames and state kept in them,
    for post-mortem debugging of course_lib itself."""
    return bool(os.environ.get("COURSE_LIB_TRACEBACK"))


def release_frames(exc: BaseException) -> None:
    """Clear the local variables of the finished frames in `exc`'s traceback and in those of the
    exceptions it carries (``__context__``, ``__cause__``): an interrupted simulation's arrays are
    otherwise alive as long as the traceback is (IPython keeps the last one). Frames still running
    (the caller's) are left as they are. Python 3.11's ``frame.clear()`` leaves each frame its function,
    and so a closure's cells: what a run's closures hold is the run's to drop (``Program.release``).
    ``COURSE_LIB_TRACEBACK=1`` keeps everything (:func:`keeps_everything`)."""
    if keeps_everything():
        return
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        traceback.clear_frames(exc.__traceback__)
        exc = exc.__cause__ or exc.__context__


def gives_memory_back(fn):
    """Decorate an entry point of a run so that whatever it raises leaves no run's arrays in frames."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except BaseException as exc:
            release_frames(exc)
            raise
    return wrapper

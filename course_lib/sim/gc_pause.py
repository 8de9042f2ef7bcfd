"""gc_paused(): Python's cyclic garbage collector held off while the simulator builds or runs a launch.

A launch makes tens of thousands of closures and arrays that live as long as it does, and each full collection
walks every object of the process: in a process that holds much (a notebook's kernel after many cells, a test
run) collections took over half of a launch's time. It neither frees anything itself nor changes what a
launch computes; cycles a launch leaves go at the first collection after it.
"""
from __future__ import annotations

import contextlib
import gc


@contextlib.contextmanager
def gc_paused():
    """Python's cyclic garbage collector off while a launch is built and run (back on after, as it was).
    The simulator makes many closures and arrays that live as long as the launch: collecting while it ran
    made a small launch 5x slower, and while it was built, since each full collection walks every object of
    the process, in a process holding much (a notebook's kernel after many
    cells, a test run) collections took over half of a launch's time: 12 s of the 22 that replaying the
    course kernels' 314 launches of the H100 runs took. Nothing of a launch makes cycles that must be
    freed before it ends; they go at the next collection after it."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()

"""``sim.kept.release`` (issue 37) without a kernel: what it clears of a kept error, and what it leaves.

IPython formats the traceback of a stopped cell (reading every frame's ``f_locals``), keeps it, and at the
cell's end ``kept`` clears the frames from the outermost course_lib frame inwards. Here the same steps by
hand; tests/sim/test_interrupted_kernel.py does it in a real kernel.
"""
import gc
import traceback
import weakref

import numpy as np
import pytest

import course_lib as cl
from course_lib.sim import kept
from course_lib.transposes import transpose

N = 256


@pytest.fixture
def outputs(monkeypatch):
    """Weak references to the outputs Transpose.simulate makes."""
    made, poisoned = [], transpose.poisoned

    def watched(shape, dtype):
        out = poisoned(shape, dtype)
        made.append(weakref.ref(out))
        return out
    monkeypatch.setattr(transpose, "poisoned", watched)
    return made


def _stopped(progress) -> BaseException:
    """A transpose stopped by `progress`, its traceback formatted as IPython formats it."""
    try:
        cl.transposes.kernel("padded").simulate(np.random.rand(N, N).astype(np.float32), progress=progress)
    except KeyboardInterrupt as exc:
        for frame, _ in traceback.walk_tb(exc.__traceback__):
            frame.f_locals                # noqa: B018  (IPython's formatter reads them: Python 3.11 keeps a dict)
        return exc
    pytest.fail("the run did not stop")


def _stop(done, total):
    raise KeyboardInterrupt


def test_the_callers_frames_are_cleared_and_the_output_freed(outputs):
    error = _stopped(_stop)
    gc.collect()
    assert outputs[-1]() is not None          # the attack: Transpose.simulate's frame, kept, holds the output
    kept.release(error, globals())
    gc.collect()
    assert outputs[-1]() is None
    names = [f.name for f in traceback.extract_tb(error.__traceback__)]
    assert names[:2] == ["_stopped", "simulate"] and names[-1] == "_stop"   # files and lines are still there


class StudentKernel:
    """A kernel-like object of the notebook's own, which course_lib calls (here: Transpose.simulate)."""
    name, signature = "mine", []

    def __init__(self):
        self.held = []

    def simulate(self, grid, block, args, **options):
        del args                  # the output is the caller's: only Transpose.simulate's frame holds it now
        mine = np.ones(1000)
        self.held.append(weakref.ref(mine))
        raise KeyboardInterrupt


def test_the_notebooks_own_frames_are_left(outputs):
    """A frame whose globals are the notebook's (here: this module's) is the student's to inspect with
    %debug, also below a course_lib frame; the course_lib frame above it is cleared."""
    student = StudentKernel()
    try:
        cl.transposes.as_kernel(student, block=(32, 8)).simulate(np.random.rand(N, N).astype(np.float32))
    except KeyboardInterrupt as exc:
        error = exc
    kept.release(error, globals())
    gc.collect()
    assert outputs[-1]() is None and student.held[0]() is not None


def test_an_error_that_never_went_through_course_lib_is_left():
    def fails():
        big = np.ones(1000)
        held.append(weakref.ref(big))
        raise ValueError("the student's own")
    held = []
    try:
        fails()
    except ValueError as exc:
        error = exc
    kept.release(error, None)
    gc.collect()
    assert held[0]() is not None


def test_course_lib_traceback_keeps_everything(outputs, monkeypatch):
    monkeypatch.setenv("COURSE_LIB_TRACEBACK", "1")
    error = _stopped(_stop)
    kept.release(error, globals())
    gc.collect()
    assert outputs[-1]() is not None

"""Memory given back (issue 26): a simulation that is interrupted or fails leaves nothing of the run in
its traceback's frames (IPython keeps the last one in sys.last_traceback: an interrupted 8192 x 8192
run held 883 MB after Ctrl-C), and the Simulator's up-front refusal counts what a run really takes
(its matrices, the comparison's and the simulator's working memory), not just the matrices."""
import gc
import tracemalloc

import numpy as np
import pytest

import course_lib as cl
from course_lib.transposes import backend

N = 2048                         # 16 MiB per float32 matrix: big enough to see, quick to run


class Stop(Exception):
    pass


def _interrupt(exc_type):
    def progress(done, total):
        raise exc_type()
    return progress


def _held_after(exc_type, **kw) -> int:
    """Bytes still allocated after a run stopped by `exc_type`, with the exception kept (as IPython keeps it)."""
    cl.Simulator().run("tile", shape=(64, 64))          # compiled and cached before counting
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        try:
            cl.Simulator().run("tile", shape=(N, N), progress=_interrupt(exc_type), **kw)
        except exc_type as exc:
            kept = exc                                   # sys.last_value / sys.last_traceback
        gc.collect()
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert kept.__traceback__ is not None
    return held


@pytest.mark.parametrize("exc_type", [KeyboardInterrupt, Stop])
def test_an_interrupted_or_failed_run_gives_its_memory_back(exc_type):
    matrix = N * N * 4
    assert _held_after(exc_type) < matrix // 4            # before: input, output and the batch's workspace


def test_peak_memory_of_a_big_run_stays_within_the_estimate():
    n = 4096
    cl.Simulator().run("padded_32x8", shape=(64, 64))
    tracemalloc.start()
    try:
        r = cl.Simulator().run("padded_32x8", shape=(n, n), check_races=True)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert r.correct.ok
    need = backend.memory_needed(n, n, np.float32)
    assert peak <= need, f"peak {peak / 2**20:.0f} MiB over the estimate {need / 2**20:.0f} MiB"
    assert need < 3 * peak                                 # and not a wild overestimate


def test_a_run_over_the_limit_is_refused_before_it_starts_with_how_to_shrink_it():
    with pytest.raises(cl.SimulationLimit) as e:
        cl.Simulator().run("tile", shape=(8192, 8192))  # peaked at 1048 MB against a 1 GiB hub limit
    assert "Not started" in e.value.message and "smaller shape" in e.value.hint
    assert e.value.reason == "memory"

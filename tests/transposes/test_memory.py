"""Memory given back (issue 26): a simulation that is interrupted or fails leaves nothing of the run in
its traceback (IPython keeps the last one in sys.last_traceback: an interrupted 8192 x 8192 run held
883 MB after Ctrl-C), wherever it stopped: between batches, or inside an instruction, whose closure
holds the run's Program (593 MiB kept at 8192 x 8192 until that was fixed too). The Simulator's
up-front refusal counts what a run really takes (its matrices, the comparison's and the simulator's
working memory), not just the matrices."""
import gc
import inspect
import itertools
import sys
import traceback
import tracemalloc
import weakref

import numpy as np
import pytest

import course_lib as cl
from course_lib.sim import executor
from course_lib.sim.isa import access
from course_lib.transposes import backend, verify

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


class Watch:
    """Weak references to a run's arrays, each taken where it is made: the matrix the Simulator makes,
    global memory (with the output) as the Program is built, registers, shared and local memory as a
    batch ends or stops, and the expected result as it is compared."""

    def __init__(self, monkeypatch):
        self.refs = []
        made, init, run_batch, compare = backend.random_matrix, executor.Program.__init__, executor.run_batch, \
            verify.compare

        def random_matrix(*args):
            return self.watch(made(*args))

        def program_init(program, *args, globals_, **kw):
            self.watch(*(buf.data for buf in globals_.buffers))
            init(program, *args, globals_=globals_, **kw)

        def batch(program, b):
            try:
                return run_batch(program, b)
            finally:
                w = b.workspace
                self.watch(*w.arrays.values(), w.shared._rows, *([w.local._rows] if w.local is not None else []))

        def compared(out, expected, tile):
            return compare(out, self.watch(expected), tile)
        monkeypatch.setattr(backend, "random_matrix", random_matrix)
        monkeypatch.setattr(executor.Program, "__init__", program_init)
        monkeypatch.setattr(executor, "run_batch", batch)
        monkeypatch.setattr(verify, "compare", compared)

    def watch(self, *arrays):
        for a in arrays:
            self.refs += [weakref.ref(a)] + ([weakref.ref(a.base)] if a.base is not None else [])
        return arrays[0] if arrays else None

    def alive(self) -> list:
        """The watched arrays still there once the collector has run; it runs only when one is there without
        it (a collection frees, it never brings one back), since in a process holding much (a CI worker after
        hundreds of tests) each full collection took half a second, most of the 40 s of the interrupted-
        anywhere test."""
        if all(r() is None for r in self.refs):
            return []
        gc.collect()
        return [f"{a.dtype}{a.shape}" for a in (r() for r in self.refs) if a is not None]


def _kept(run, exc_type):
    """Run, stop with `exc_type`, and keep it as IPython does (sys.last_value, sys.last_traceback)."""
    try:
        run()
    except exc_type:
        sys.last_type, sys.last_value, sys.last_traceback = sys.exc_info()
    else:
        pytest.fail("the run did not stop")
    return sys.last_value


@pytest.fixture
def last_traceback():
    yield
    sys.last_type = sys.last_value = sys.last_traceback = None


def _raises(exc_type):
    def stop(*args, **kwargs):
        raise exc_type()
    return stop


@pytest.mark.parametrize("where", ["gather", "scatter"])          # in a load's closure, in a store's
def test_a_run_interrupted_inside_an_instruction_gives_its_memory_back(where, monkeypatch, last_traceback):
    cl.Simulator().run("tile", shape=(64, 64))
    watch = Watch(monkeypatch)
    monkeypatch.setattr(access, where, _raises(KeyboardInterrupt))
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        kept = _kept(lambda: cl.Simulator().run("tile", shape=(N, N), progress=False), KeyboardInterrupt)
        gc.collect()
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert ("run_ld" if where == "gather" else "run_st") in [f.name for f in traceback.extract_tb(kept.__traceback__)]
    assert watch.refs and watch.alive() == []             # before: the matrices, registers and shared memory
    assert held < N * N * 4 // 4                          # before: 2 matrices and the batch's workspace


class InterruptAtCall:
    """A trace hook that raises KeyboardInterrupt at the k-th Python call (not a generator's: closing
    one ignores it): Ctrl-C landing in whatever frame the run happens to be in. A global trace function
    (sys.settrace) is called at each Python call and nowhere else when it asks for no line events (returns
    None); a profile hook saw the same calls but was called at every return and every C call too (numpy's),
    which made the test take 40 s in CI."""

    def __init__(self, k):
        self.k, self.seen, self.raised = k, 0, False

    def __call__(self, frame, event, arg):
        if event == "call":
            self.seen += 1
            if self.seen >= self.k and not frame.f_code.co_flags & inspect.CO_GENERATOR:
                sys.settrace(None)
                self.raised = True
                raise KeyboardInterrupt
        return None


def test_a_run_interrupted_anywhere_gives_its_memory_back(monkeypatch, last_traceback):
    """Interrupted at every 97th call (a prime: the stops fall at every kind of call): making the matrices,
    building the closures, running the batch, counting, comparing."""
    cl.Simulator().run("tile", shape=(64, 64))
    watch, kept_in, stops = Watch(monkeypatch), {}, 0
    for k in itertools.count(1, 97):
        watch.refs, hook = [], InterruptAtCall(k)
        sys.settrace(hook)
        try:
            cl.Simulator().run("tile", shape=(128, 128), progress=False)
            if not hook.raised:
                break                                      # k is past the run's last call
            continue                                       # raised where Python ignores it (a finalizer)
        except KeyboardInterrupt:
            sys.last_type, sys.last_value, sys.last_traceback = sys.exc_info()
        finally:
            sys.settrace(None)
        stops += 1
        if watch.alive():
            frames = traceback.extract_tb(sys.last_traceback)
            kept_in[k] = " > ".join(f.name for f in frames[-3:-1])
    assert stops > 15 and kept_in == {}, f"arrays kept when the run stopped in {kept_in}"


OFF_BY_ONE = r"""
__global__ void off_by_one(float* out, const float* in, int rows, int cols)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < cols && y < rows) out[x * rows + y] = in[y * cols + x + 1];
}"""


def test_a_run_that_fails_in_its_last_block_gives_its_memory_back(monkeypatch, last_traceback):
    f = cl.RawModule(code=OFF_BY_ONE).get_function("off_by_one")
    watch = Watch(monkeypatch)
    kept = _kept(lambda: cl.Simulator().run(f, block=(32, 8), shape=(512, 512), progress=False),
                 cl.MemoryAccessError)
    assert kept.block == (15, 63, 0)                     # the last block, after every other ran
    assert watch.refs and watch.alive() == []             # before: 2 matrices and the batch's workspace


def test_course_lib_traceback_keeps_everything_for_debugging(monkeypatch, last_traceback):
    monkeypatch.setenv("COURSE_LIB_TRACEBACK", "1")
    cl.Simulator().run("tile", shape=(64, 64))
    watch = Watch(monkeypatch)
    monkeypatch.setattr(access, "scatter", _raises(KeyboardInterrupt))
    kept = _kept(lambda: cl.Simulator().run("tile", shape=(256, 256), progress=False), KeyboardInterrupt)
    assert watch.refs and len(watch.alive()) == len(watch.refs)
    frames = [tb.tb_frame for tb in _tracebacks(kept)]
    program = next(f.f_locals["program"] for f in frames if "program" in f.f_locals)
    assert program.globals.buffers and program.code               # all there to look at, post mortem


def _tracebacks(exc):
    tb = exc.__traceback__
    while tb is not None:
        yield tb
        tb = tb.tb_next


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

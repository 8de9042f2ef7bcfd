"""A shape too big for this machine is refused by course_lib, saying how big the arrays would be, the limit and what to
do, before numpy allocates anything (issue 36: a 100000 x 100000 shape ended in numpy's "MemoryError: Unable to allocate
74.5 GiB" from inside random_matrix, whatever path it came by). Every path a shape takes into an allocation: the data
helpers, Simulator.run, Transpose.simulate, the checker's shapes=, the command line, the lessons' pictures. None of these
tests allocates a big array: the refusals come first (a 100000 x 100000 input is a broadcast view of one element), and
this machine is taken to have 8 GiB free, whatever it has (a GPU host's 128 GiB would hold some of these shapes)."""
import subprocess
import sys

import numpy as np
import pytest

import course_lib as cl
from course_lib.lessons import banks, shapes
from course_lib.sim import plan
from course_lib.sim.spaces import host
from course_lib.transposes import data, verify

N = 100_000
REAL_FREE = host.free_bytes
HUGE = np.broadcast_to(np.float32(1.5), (N, N))       # 37 GiB as an array, 4 bytes of memory

FIRST = r"""
__global__ void first_transpose(float* out, const float* in, int rows, int cols)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < cols && y < rows) out[x * rows + y] = in[y * cols + x];
}
"""


@pytest.fixture(autouse=True)
def eight_gib_free(monkeypatch):
    monkeypatch.setattr(host, "free_bytes", lambda: 8 << 30)


def test_this_machine_s_free_memory_is_read():
    free = REAL_FREE()
    if sys.platform.startswith("linux"):
        total = next(int(line.split()[1]) * 1024 for line in open("/proc/meminfo") if line.startswith("MemTotal:"))
        assert 0 < free <= total
    assert host.size_text(768 << 20) == "768 MiB" and host.size_text(N * N * 4) == "37.3 GiB"


def _refused(call, *words):
    with pytest.raises(cl.SimulationLimit) as e:
        call()
    err = e.value
    assert err.reason == "memory" and err.hint, str(err)
    text = str(err)
    for w in ("100000 x 100000", "GiB", "smaller shape", *words):
        assert w in text, (w, text)
    return err


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.uint8, np.int32, np.float64])
def test_random_data_that_cannot_fit_this_machine_is_refused_before_numpy_allocates(dtype):
    """Before: numpy's MemoryError "Unable to allocate 74.5 GiB" (the float64 draws behind any dtype)."""
    err = _refused(lambda: data.random_matrix(N, N, dtype), "random_matrix(100000, 100000", "8.0 GiB of memory this machine has free")
    assert f"{N * N * np.dtype(dtype).itemsize / 2**30:.1f} GiB" in err.message
    _refused(lambda: data.poisoned((N, N), dtype), "poisoned(", "free")
    _refused(lambda: data.random_matrix(N, N, dtype, max_bytes=1 << 20), "1.0 MiB of memory max_bytes= allows")


def test_numpy_s_own_refusal_is_worded_too(monkeypatch):
    """The free memory read was too kind (another process took it meanwhile): numpy's MemoryError, in words."""
    def refuse(*args, **kwargs):
        raise MemoryError("Unable to allocate")
    monkeypatch.setattr(np, "empty", refuse)
    with pytest.raises(cl.SimulationLimit) as e:
        data.random_matrix(N, 1000, np.float32)
    assert e.value.reason == "memory" and "a 100000 x 1000 float32 matrix takes 381 MiB, more than this machine " \
        "could give" in e.value.message and "smaller shape" in e.value.hint


def test_random_data_is_made_in_pieces_and_is_the_same_as_before():
    """The draws are made a slice of rows at a time (the peak is the matrix, not 8 bytes an element more), and
    the data is what one draw of the whole matrix gave: seeds in stored notebooks keep their numbers."""
    for dtype in (np.float32, np.float16, np.float64, np.uint8, np.int8, np.int32, np.uint32, np.int64):
        for rows, cols in ((3000, 1030), (1, 5000), (70001, 3)):
            rng, dt = np.random.default_rng(7), np.dtype(dtype)
            if dt.kind == "f":
                want = (rng.random((rows, cols)) + 0.5).astype(dt)
            else:
                info = np.iinfo(dt)
                lo, hi = max(info.min, -100000), min(info.max, 100000)
                want = rng.integers(1, hi, (rows, cols)).astype(dt) if lo >= 0 else \
                    rng.integers(lo, hi, (rows, cols)).astype(dt)
                want[want == 0] = 1
                want[want == np.array([0xA5] * dt.itemsize, np.uint8).view(dt)[0]] = 1
            assert np.array_equal(data.random_matrix(rows, cols, dt, seed=7), want), (dt, rows, cols)


@pytest.mark.parametrize("call, words", [
    (lambda: data.random_matrix(-4, 5, np.float32), ["random_matrix(-4, 5", "at least 0"]),
    (lambda: data.random_matrix(4.5, 5, np.float32), ["4.5"]),
    (lambda: data.poisoned((3, -1), np.float32), ["(3, -1)"]),
    (lambda: data.poisoned("big", np.float32), ["'big'"]),
])
def test_a_shape_that_is_not_one_is_an_argument_error(call, words):
    with pytest.raises(cl.ArgumentError) as e:
        call()
    for w in words:
        assert w in str(e.value), (w, str(e.value))


def test_simulator_run_refuses_with_the_simulator_s_limit():
    _refused(lambda: cl.Simulator().run("padded_32x8", shape=(N, N)), "768 MiB", "GPU")


def test_transpose_simulate_refuses_its_output_before_making_it():
    """Before: numpy's MemoryError for the poisoned output (37.3 GiB)."""
    t = cl.transposes.kernel("padded_32x8")
    err = _refused(lambda: t.simulate(HUGE), "the output", "768 MiB", "run(")
    assert "max_bytes=" in err.hint
    with pytest.raises(cl.ArgumentError, match="a 2-D array"):
        t.simulate(np.ones(5, np.float32))


class _DeviceArray:
    """What the simulator sees of a CuPy array (its interface, shape, dtype, bytes); copying it fails the test."""

    def __init__(self, shape, dtype=np.float32):
        self.shape, self.dtype, self.flags = shape, np.dtype(dtype), None
        self.nbytes = int(np.prod(shape, dtype=object)) * self.dtype.itemsize
        self.__cuda_array_interface__ = {"shape": shape, "typestr": self.dtype.str, "data": (0, False), "version": 3}

    def get(self):
        raise AssertionError("the device array was copied to the host")


def test_device_arrays_too_big_for_this_machine_are_not_copied_to_simulate():
    """Function.simulate on CuPy arrays, and a kernel this GPU cannot run sent to the simulator: each device array is
    copied to the host first (before: a 37 GiB .get())."""
    from course_lib.kernel import arch_fallback
    from course_lib.kernel.launch import Launch
    fn = cl.RawModule(code=FIRST).get_function("first_transpose")
    args = (_DeviceArray((N, N)), _DeviceArray((N, N)), np.int32(N), np.int32(N))
    for call in (lambda: fn.simulate((1, 1), (32, 8), args, progress=False),
                 lambda: arch_fallback.simulate(fn, Launch((1, 1, 1), (32, 8, 1), args, 0), "simulated here")):
        with pytest.raises(cl.SimulationLimit) as e:
            call()
        assert e.value.reason == "memory" and "100000x100000 float32" in e.value.message
        assert "74.5 GiB, more than the 8.0 GiB it has free" in e.value.message and "smaller shape" in e.value.hint


def test_the_course_s_verify_check_refuses_a_huge_shape():
    _refused(lambda: verify.check(cl.transposes.kernel("padded_32x8"), shapes=[(N, N)]), "768 MiB")


def test_the_checker_refuses_a_huge_shape_naming_the_argument():
    """Before: numpy's MemoryError (74.5 GiB) from the checker's input."""
    fn = cl.RawModule(code=FIRST).get_function("first_transpose")
    err = _refused(lambda: cl.exercises.check("column_read", fn, shapes=[(64, 64), (N, N)]), "shapes=", "768 MiB")
    assert "its 100000 x 100000 float32 matrix" in err.message
    _refused(lambda: shapes.check_batched(fn, batches=[(2, 64, 64), (3, N, N)]), "exercise 'batched'",
             "3 x 100000 x 100000")


@pytest.mark.parametrize("argv", [["run", "padded_32x8", "--shape", "1000000x1000000"],
                                  ["bench", "--backend", "sim", "--kernel", "padded_32x8", "--size", "1000000"]])
def test_the_command_line_says_so_in_words(argv):
    """A child process sees this machine's real free memory: 3.6 TB is more than any machine's."""
    r = subprocess.run([sys.executable, "-m", "course_lib", *argv], capture_output=True, text=True, timeout=120)
    assert "Traceback" not in r.stderr and "MemoryError" not in r.stderr + r.stdout, r.stderr[-2000:]
    assert r.returncode == 2
    assert "1000000 x 1000000" in r.stderr and "smaller shape" in r.stderr, r.stderr[-2000:]


def test_the_lessons_pictures_refuse_a_grid_too_big_to_draw():
    """coverage() draws a rectangle per tile (9.8 million here: still running after 30 s, then a figure no
    browser shows); dynamic_tile() simulates on a matrix it makes."""
    for call in (lambda: shapes.coverage(N, N),):
        with pytest.raises(cl.ArgumentError) as e:
            call()
        assert "100000 x 100000" in str(e.value) and e.value.hint
    _refused(lambda: banks.dynamic_tile(None, 32, 1, shape=(N, N)))         # refused before the kernel is needed


def test_the_limit_is_the_simulator_s_own():
    assert plan.MAX_BYTES == 768 << 20
    assert cl.transposes.backend.MAX_BYTES == plan.MAX_BYTES

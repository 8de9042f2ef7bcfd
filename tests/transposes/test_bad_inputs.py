"""What a student can get wrong on the way to a run gives a course_lib error that says what, where and how to fix
it: never a built-in exception, a silent wrong result, or a run that starts and takes minutes and gigabytes.
(The simulator's own limits, an endless loop and deep recursion, are tested in tests/sim.)"""
import subprocess
import sys

import numpy as np
import pytest

import course_lib as cl
from course_lib.notebook import widgets

NAIVE = r"""
__global__ void first_transpose(float* out, const float* in, int rows, int cols)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < cols && y < rows) out[x * rows + y] = in[y * cols + x];
}
"""
TEMPLATE = r"""
template <typename T, int TILE>
__global__ void tiled(T* out, const T* in, int rows, int cols) { out[0] = in[0]; }
"""
COUNT = r"""
__global__ void count(int* hits, int n) { if (threadIdx.x < n) hits[threadIdx.x] += 1; }
"""


@pytest.fixture(scope="module")
def naive():
    return cl.RawModule(code=NAIVE).get_function("first_transpose")


SIM = cl.Simulator()


@pytest.mark.parametrize("call, error, words", [
    (lambda k: SIM.run(k, block=(0, 8)), cl.ArgumentError, ["block=(0, 8)", "at least 1"]),
    (lambda k: SIM.run(k, block=(32, 8), shape=(-4, 5)), cl.ArgumentError, ["shape=(-4, 5)", "(rows, cols)"]),
    (lambda k: SIM.run(k, block=(32, 8), shape=(4.5, 5)), cl.ArgumentError, ["shape=(4.5, 5)"]),
    (lambda k: SIM.run(k, block=(32, 8), dtype=np.float64), cl.ArgumentError, ["dtype=float64", "reads float32"]),
    (lambda k: SIM.run(k), cl.ArgumentError, ["say how to launch it", "block="]),
    (lambda k: SIM.run(k, block=(32, 8), TILE=32), cl.ArgumentError, ["TILE", "only apply to course kernels"]),
    (lambda k: SIM.run(k, block=(32, 8), shape=(16384, 16384)), cl.SimulationLimit,
     ["Not started", "16384 x 16384", "GiB", "smaller shape"]),
    (lambda k: SIM.run(42), cl.ArgumentError, ["cannot run 42"]),
    (lambda k: SIM.run("nope"), cl.KernelNotFound, ["no course kernel 'nope'", "known:"]),
    (lambda k: SIM.run("tile", BOGUS=1), cl.ArgumentError, ["no parameter(s) BOGUS", "TILE="]),
    (lambda k: SIM.run("vec", TILE=30), cl.ArgumentError, ["16-byte"]),
    (lambda k: SIM.run("tile", dtype=np.complex64), cl.ArgumentError, ["complex64"]),
])
def test_a_bad_run_is_a_course_lib_error_with_a_hint(naive, call, error, words):
    with pytest.raises(error) as e:
        call(naive)
    assert isinstance(e.value, cl.KernelError) and e.value.hint
    for w in words:
        assert w in str(e.value), (w, str(e.value))


def test_a_float_array_passed_to_an_int_pointer_is_refused():
    k = cl.RawModule(code=COUNT).get_function("count")
    with pytest.raises(cl.ArgumentError, match="floating-point .*float32.* array where the kernel reads int") as e:
        k.simulate(1, 32, (np.ones(32, np.float32), 32))
    assert "astype(np.int32)" in e.value.hint
    hits = np.zeros(32, np.int32)
    k.simulate(1, 32, (hits, 32))
    assert (hits == 1).all()


def test_half_floats_still_travel_as_unsigned_short_bits():
    t = cl.transposes.kernel("padded_32x8", np.float16)
    a = cl.transposes.random_matrix(40, 70, np.float16)
    out, _ = t.simulate(a)
    assert out.tobytes() == np.ascontiguousarray(a.T).tobytes()


def test_a_template_asked_for_by_its_plain_name_says_to_ask_for_an_instance():
    mod = cl.RawModule(code=TEMPLATE)
    with pytest.raises(cl.KernelNotFound) as e:
        mod.get_function("tiled")
    assert "template kernel" in e.value.message and "__global__" not in e.value.hint
    assert "tiled<float, 32>" in e.value.hint
    assert mod.get_function("tiled<float, 32>").name == "tiled<float, 32>"


def test_unknown_exercise_and_mistake_names_are_course_lib_errors_and_still_key_errors():
    for call in (lambda: cl.exercises.get("padded"), lambda: cl.mistakes.get("off_by_two")):
        with pytest.raises(cl.KernelError) as e:
            call()
        assert isinstance(e.value, KeyError) and e.value.hint and "did you mean" in e.value.hint


@pytest.mark.parametrize("start, words", [
    (dict(PAD=9), ["PAD=9", "from 0 to 4"]),
    (dict(T=np.float16), ["'float16'", "float32, float64"]),
    (dict(TILES=32), ["no control named 'TILES'", "PAD, T"]),
])
def test_an_explorer_refuses_a_start_value_it_cannot_show(start, words):
    def make():
        return widgets.Explorer(lambda PAD, T: PAD, lambda v, **p: [], dict(PAD=range(0, 5), T=[np.float32, np.float64]),
                                start=start)
    with pytest.raises(cl.ArgumentError) as e:
        make()
    for w in words:
        assert w in str(e.value)


@pytest.mark.parametrize("args, words", [
    (["--port", "99999"], ["99999 is not a port", "1 to 65535"]),
    (["--port", "http"], ["'http' is not a port number"]),
    (["--bogus"], ["unknown option '--bogus'", "--ServerApp.name=value"]),
    (["--no-browsr"], ["did you mean --no-browser"]),
])
def test_course_lab_refuses_bad_options_itself(args, words, tmp_path):
    r = subprocess.run([sys.executable, "-m", "course_lib", "lab", "--work", str(tmp_path), *args],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert r.stderr.startswith("usage: course-lab") and "--ServerApp.token" not in r.stderr   # not JupyterLab's usage
    for w in words:
        assert w in r.stderr, (w, r.stderr)

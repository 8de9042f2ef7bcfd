"""On a real GPU: every course kernel is bit-exact for every dtype and the awkward shapes.

Skipped without a GPU (CI has none). On a GPU machine:
    COURSE_LIB_BACKEND=gpu python -m pytest tests/gpu/test_gpu.py
"""
import numpy as np
import pytest

import course_lib as cl
from course_lib import transposes
from course_lib.transposes import verify

pytestmark = pytest.mark.skipif(
    not cl.gpu_available(),
    reason="needs an NVIDIA GPU (CI has none); on a GPU machine run with COURSE_LIB_BACKEND=gpu")

SHAPES = [(8192, 8192), (1000, 1030), (1, 4097), (4097, 1)]
DTYPES = [np.float32, np.float64, np.float16, np.uint8]


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("key", list(transposes.SPECS))
def test_course_kernel_on_gpu(key, dtype):
    import cupy as cp
    try:
        t = transposes.kernel(key, dtype)
    except ValueError as exc:
        pytest.skip(str(exc))
    for k, (rows, cols) in enumerate(SHAPES):
        if t.refuses(rows, cols):          # a TMA kernel: rows of whole 16-byte pieces only
            continue
        host = transposes.random_matrix(rows, cols, dtype, seed=k)
        inp = cp.asarray(host)
        out = cp.asarray(transposes.poisoned(t.out_shape(rows, cols), dtype))
        t.run(inp, out)
        expected = inp if t.is_copy else inp.T
        same = cp.array_equal(out.view(cp.uint8), cp.ascontiguousarray(expected).view(cp.uint8))
        if not bool(same):
            report = verify.compare(out.get(), t.expected(host))
            pytest.fail(f"{key} {np.dtype(dtype)} {rows}x{cols}: {report}")


def test_simulator_and_gpu_agree_on_a_student_kernel():
    src = r'''
    extern "C" __global__ void scale(float* out, const float* in, float k, int n) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n) out[i] = in[i] * k + (float)(i % 7) / 3.0f;
    }'''
    fn = cl.RawModule(code=src).get_function("scale")
    a = transposes.random_matrix(1, 5000, np.float32)[0]
    gpu_out, sim_out = np.zeros_like(a), np.zeros_like(a)
    fn((20,), (256,), (gpu_out, a, np.float32(1.7), np.int32(a.size)))
    fn.simulate((20,), (256,), (sim_out, a, np.float32(1.7), np.int32(a.size)))
    assert np.array_equal(gpu_out.view(np.uint32), sim_out.view(np.uint32))


def test_timed_launches_read_their_input_from_dram():
    """time_launch rotates through copies of the const input: the kernel still gets the same data
    (the output is right after timing) and the time is positive and finite."""
    import cupy as cp
    t = transposes.kernel("padded_32x8", np.float32)
    a = cp.asarray(transposes.random_matrix(1000, 1030, np.float32, seed=5))
    out = cp.empty((1030, 1000), np.float32)
    seconds = t.time(a, out, repeat=5)
    assert np.isfinite(seconds) and seconds > 0      # a measurement, not a speed: benchmarks/ judge speed
    assert bool(cp.array_equal(out, a.T))

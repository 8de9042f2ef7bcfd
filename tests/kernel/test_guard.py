"""The guarded GPU launch, tested on the CPU: the guard's check is called directly (or through
Function.__call__ with the GPU parts replaced by fakes). The real-GPU test is skipped without one;
benchmarks/gpu_guard_check.py is the script for the H100."""
import numpy as np
import pytest

import course_lib as cl
from course_lib.kernel import guard
from course_lib import gpu, transposes
from course_lib.teach import mistakes
from course_lib.compile import nvrtc
from course_lib.kernel.launch import DEFAULT_LIMITS

KERNELS = r'''
extern "C" __global__ void scale_bad(float* out, const float* in, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i <= n)
        out[i] = 2.0f * in[i];
}
extern "C" __global__ void scale(float* out, const float* in, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = 2.0f * in[i];
}
extern "C" __global__ void gather(float* out, const float* in, const int* idx, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = in[idx[i]];
}
extern "C" __global__ void twice(float* out, const float* in, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = in[i];
        out[i] = out[i] * 2.0f;
        if (out[i] != 2.0f * in[i])
            out[n + 5] = 0.0f;            // faults only if the kernel's own write was lost
    }
}
extern "C" __global__ void transpose64(float* out, const float* in, int rows, int cols)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < cols && y < rows)
        out[(size_t)x * rows + y] = in[(size_t)y * cols + x];
}
'''


def line_of(text):
    return [i for i, s in enumerate(KERNELS.splitlines(), 1) if text in s][0]


@pytest.fixture(scope="module")
def mod():
    return cl.RawModule(code=KERNELS, filename="cell.cu")


def args_for(n):
    x = np.random.default_rng(0).random(n).astype(np.float32) + 0.5
    out = np.full(n, np.nan, np.float32)
    return out, x


def test_edge_blocks_are_the_corners():
    assert guard.edge_blocks((10,)) == [(0, 0, 0), (9, 0, 0)]
    assert guard.edge_blocks((1,)) == [(0, 0, 0)]
    assert set(guard.edge_blocks((4, 3))) == {(0, 0, 0), (3, 0, 0), (0, 2, 0), (3, 2, 0)}
    assert len(guard.edge_blocks((2, 2, 2))) == 8


def test_out_of_bounds_launch_is_refused_and_nothing_is_written(mod):
    out, x = args_for(1000)
    before_x = x.copy()
    with pytest.raises(cl.MemoryAccessError) as e:
        guard.check(mod.get_function("scale_bad"), (4,), (256,), (out, x, np.int32(1000)))
    err = e.value
    assert err.refused
    text = str(err)
    assert text.startswith("GPU launch refused") and "'in'" in text and "element 1000" in text
    assert f"cell.cu:{line_of('if (i <= n)') + 1}" in text and err.block == (3, 0, 0) and err.thread == (232, 0, 0)
    assert "guard=False" in err.hint and "(< not <=)" in err.hint
    assert np.isnan(out).all() and np.array_equal(x, before_x)     # the guard never writes back


def test_correct_launch_passes_with_a_report(mod):
    out, x = args_for(1000)
    report = guard.check(mod.get_function("scale"), (4,), (256,), (out, x, np.int32(1000)))
    assert report.checked and report.note == "no fault"
    assert report.blocks == [(0, 0, 0), (3, 0, 0)]
    assert np.isnan(out).all()


def test_barrier_deadlock_and_misalignment_are_refused():
    for key, cls in (("sync_in_branch", cl.BarrierError), ("misaligned_float4", cl.MemoryAccessError)):
        m = mistakes.get(key)
        name = "matmul" if key == "sync_in_branch" else "copy_rows"
        k = cl.RawModule(code=m.source, filename="cell.cu").get_function(name)
        if key == "sync_in_branch":
            n = 20
            a = transposes.random_matrix(n, n, np.float32)
            launch = ((2, 2), (16, 16), (np.empty((n, n), np.float32), a, a, np.int32(n)))
        else:
            a = transposes.random_matrix(10, 30, np.float32)
            launch = ((10,), (32,), (np.empty_like(a), a, np.int32(10), np.int32(30)))
        with pytest.raises(cls) as e:
            guard.check(k, *launch)
        assert e.value.refused and "GPU launch refused" in str(e.value)


def test_the_guard_reads_the_real_data(mod):
    """Data-dependent addresses follow the data the GPU would see: a bad index is caught."""
    k = mod.get_function("gather")
    out, x = args_for(1000)
    idx = np.arange(1000, dtype=np.int32)[::-1].copy()
    guard.check(k, (4,), (256,), (out, x, idx, np.int32(1000)))
    idx[999] = 1000                                # only the last block's last thread is wrong
    with pytest.raises(cl.MemoryAccessError, match="element 1000") as e:
        guard.check(k, (4,), (256,), (out, x, idx, np.int32(1000)))
    assert e.value.thread == (231, 0, 0) and e.value.line == line_of("in[idx[i]]")


def test_the_kernel_sees_its_own_writes(mod):
    out, x = args_for(1000)
    guard.check(mod.get_function("twice"), (4,), (256,), (out, x, np.int32(1000)))
    assert np.isnan(out).all()


def test_huge_shapes_without_allocating_them(mod):
    rows = cols = 50_000
    a, out = guard.Shape((rows, cols), np.float32), guard.Shape((cols, rows), np.float32)
    report = guard.check(mod.get_function("transpose64"), ((cols + 31) // 32, (rows + 7) // 8), (32, 8),
                         (out, a, np.int32(rows), np.int32(cols)))
    assert report.checked and report.note == "no fault" and (1562, 6249, 0) in report.blocks


def test_arguments_and_configuration_are_checked_first(mod):
    out, x = args_for(1000)
    with pytest.raises(cl.ArgumentError):
        guard.check(mod.get_function("scale"), (4,), (256,), (out, x.astype(np.float64), np.int32(1000)))
    with pytest.raises(cl.LaunchError):
        guard.check(mod.get_function("scale"), (4,), (2048,), (out, x, np.int32(1000)))


def test_a_long_kernel_is_launched_without_a_verdict(mod):
    m = mistakes.get("infinite_loop")
    k = cl.RawModule(code=m.source, filename="cell.cu").get_function("scale")
    out, x = args_for(1024)
    report = guard.check(k, (4,), (256,), (out, x, np.int32(1024)), budget=0.1)
    assert report.checked and "without a verdict" in report.note


def test_device_reader_fetches_only_the_pages_it_needs():
    data = np.random.default_rng(1).integers(0, 256, 10 * guard.PAGE + 100).astype(np.uint8)
    calls = []

    def fetch(lo, n):
        calls.append((lo, n))
        return data[lo:lo + n]

    class FakeDeviceArray:
        shape, dtype = data.shape, data.dtype

    read = guard.device_reader(FakeDeviceArray(), fetch)
    off = np.array([5, 7, 3 * guard.PAGE + 1, 10 * guard.PAGE + 99, 4 * guard.PAGE])
    assert np.array_equal(read(off), data[off])
    assert calls == [(0, guard.PAGE), (3 * guard.PAGE, 2 * guard.PAGE), (10 * guard.PAGE, 100)]
    assert np.array_equal(read(np.array([6, 3 * guard.PAGE])), data[[6, 3 * guard.PAGE]])
    assert len(calls) == 3                                     # cached


class FakeDeviceArray:
    """Looks like a CuPy array to course_lib; its "device memory" is a numpy array's."""

    def __init__(self, host):
        self.host = host
        self.shape, self.dtype, self.nbytes, self.ndim = host.shape, host.dtype, host.nbytes, host.ndim
        self.flags = {"C_CONTIGUOUS": True}
        self.__cuda_array_interface__ = {"data": (host.ctypes.data, False), "shape": host.shape,
                                         "typestr": host.dtype.str, "version": 3}


def test_device_arrays_are_read_through_memcpy(mod, monkeypatch):
    import ctypes
    copies = []

    def memcpy_from(ptr):
        def fetch(lo, n):
            copies.append(n)
            return np.ctypeslib.as_array((ctypes.c_uint8 * n).from_address(ptr + lo)).copy()
        return fetch
    monkeypatch.setattr(guard, "_memcpy_from", memcpy_from)
    out, x = args_for(1000)
    idx = np.arange(1000, dtype=np.int32)
    dev = [FakeDeviceArray(a) for a in (out, x, idx)]
    guard.check(mod.get_function("gather"), (4,), (256,), (*dev, np.int32(1000)))
    assert copies and sum(copies) <= 4 * guard.PAGE            # only the pages the corner blocks read
    idx[0] = -1
    with pytest.raises(cl.MemoryAccessError, match="before its start") as e:
        guard.check(mod.get_function("gather"), (4,), (256,), (*dev, np.int32(1000)))
    assert e.value.refused and e.value.block == (0, 0, 0)
    assert np.isnan(out).all()


# ----------------------------------------------------------------------------- Function.__call__

@pytest.fixture
def fake_gpu(monkeypatch):
    """Pretend there is a GPU: record launches instead of making them."""
    launched = []
    monkeypatch.setattr(gpu, "available", lambda: True)
    monkeypatch.setattr(gpu, "limits", lambda: dict(DEFAULT_LIMITS))
    monkeypatch.setattr(gpu, "launch", lambda fn, *a, **k: launched.append(fn.name))
    return launched


def test_call_refuses_before_the_gpu_sees_the_launch(mod, fake_gpu):
    out, x = args_for(1000)
    k = mod.get_function("scale_bad")
    with pytest.raises(cl.MemoryAccessError, match="GPU launch refused"):
        k((4,), (256,), (out, x, np.int32(1000)))
    assert fake_gpu == []
    assert guard.last.checked and guard.last.blocks == [(0, 0, 0), (3, 0, 0)] and guard.last.elapsed > 0
    assert guard.last.note.startswith("refused: Out of bounds")
    k((4,), (256,), (out, x, np.int32(1000)), guard=False)
    assert fake_gpu == ["scale_bad"]
    assert not guard.last.checked


def test_module_switch_and_cache(mod, fake_gpu, monkeypatch):
    out, x = args_for(1000)
    k = mod.get_function("scale_bad")
    monkeypatch.setattr(guard, "ENABLED", False)
    k((4,), (256,), (out, x, np.int32(1000)))
    assert fake_gpu == ["scale_bad"]
    monkeypatch.setattr(guard, "ENABLED", True)
    ok = mod.get_function("scale")
    ok((4,), (256,), (out, x, np.int32(1000)))
    assert guard.last.checked
    ok((4,), (256,), (out, x, np.int32(1000)))               # same launch again: not re-checked
    assert not guard.last.checked and "passed before" in guard.last.note
    assert fake_gpu == ["scale_bad", "scale", "scale"]


def test_course_kernels_skip_the_guard(fake_gpu):
    t = transposes.kernel("tile", np.float32)
    a = transposes.random_matrix(40, 50, np.float32)
    t.run(a, np.empty((50, 40), np.float32))
    assert fake_gpu == [t.function.name] and "course kernel" in guard.last.note


# ----------------------------------------------------------------------------- real GPU

@pytest.mark.skipif(not cl.gpu_available(),
                    reason="needs an NVIDIA GPU (CI has none); on a GPU machine run with COURSE_LIB_BACKEND=gpu "
                           "or run benchmarks/gpu_guard_check.py")
def test_on_gpu_refused_launch_leaves_the_context_usable(mod):
    import cupy as cp
    x = cp.asarray(np.random.rand(1000).astype(np.float32))
    out = cp.zeros(1000, cp.float32)
    with pytest.raises(cl.MemoryAccessError):
        mod.get_function("scale_bad")((4,), (256,), (out, x, np.int32(1000)))
    mod.get_function("scale")((4,), (256,), (out, x, np.int32(1000)))
    assert bool(cp.allclose(out, 2 * x))

"""How the simulator schedules Hopper's waits (issue 19, phase 2): a failed mbarrier.try_wait parks its
threads until a phase completes, so a consumer spinning on a barrier never starves the producer that
would complete it, whatever their order in the code; a barrier that can no longer complete is a
BarrierError naming it; a cp.async nobody waited for is a warning; an ldmatrix of a cp.async's
destination before its wait is a race; TensorMaps reach the GPU launch guard's simulation."""
import numpy as np
import pytest

import course_lib as cl
from course_lib import transposes
from course_lib.kernel import guard
from course_lib.transposes import model

SPECIALISED = r'''
__device__ void wait_phase(unsigned bar, unsigned parity) {
    unsigned done = 0;
    while (!done)
        asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
                     : "=r"(done) : "r"(bar), "r"(parity) : "memory");
}
__device__ void arrive(unsigned bar) {
    unsigned long long state;
    asm volatile("mbarrier.arrive.shared.b64 %0, [%1];" : "=l"(state) : "r"(bar) : "memory");
}
extern "C" __global__ void specialised(float* out, const float* in, int consumers_first, int arrivals) {
    __shared__ alignas(8) unsigned long long bar;
    __shared__ float s[32];
    unsigned b = (unsigned)__cvta_generic_to_shared(&bar);
    if (threadIdx.x == 0)
        asm volatile("mbarrier.init.shared.b64 [%0], %1;" :: "r"(b), "r"(arrivals) : "memory");
    __syncthreads();
    bool consumer = consumers_first ? threadIdx.x < 32 : threadIdx.x >= 32;
    int lane = threadIdx.x % 32;
    if (consumer) {                           // waits for the other warp's values
        wait_phase(b, 0);
        out[lane] = s[lane];
    } else {                                  // produces them, then arrives
        s[lane] = 2 * in[lane];
        arrive(b);
    }
}
'''


@pytest.fixture(scope="module")
def specialised():
    return cl.RawModule(code=SPECIALISED, filename="specialised.cu").get_function("specialised")


@pytest.mark.parametrize("consumers_first", [1, 0])
def test_a_consumer_spinning_on_an_mbarrier_lets_the_producer_run(specialised, consumers_first):
    a = np.arange(1, 33, dtype=np.float32)
    out = np.zeros(32, np.float32)
    run = specialised.simulate((1,), (64,), (out, a, np.int32(consumers_first), np.int32(32)), echo=False)
    assert np.array_equal(out, 2 * a)
    assert not run.races


def test_an_mbarrier_phase_that_cannot_complete_is_a_deadlock_named_with_the_barrier(specialised):
    out = np.zeros(32, np.float32)
    with pytest.raises(cl.BarrierError, match=r"Deadlock: 32 thread\(s\).*'bar'.* still waits for 32 arrival") as err:
        specialised.simulate((1,), (64,), (out, np.ones(32, np.float32), np.int32(1), np.int32(64)), echo=False)
    assert err.value.line in (5, 6) and err.value.block == (0, 0, 0)     # the asm statement


UNWAITED = r'''
#include <cuda_pipeline.h>
__global__ void unwaited(float* out, const float* in) {
    __shared__ float s[64];
    __pipeline_memcpy_async(&s[threadIdx.x], &in[threadIdx.x], sizeof(float));
    __pipeline_commit();
    out[threadIdx.x] = in[threadIdx.x];
}
'''
LDSM_EARLY = r'''
#include <cuda_pipeline.h>
__global__ void early(unsigned* out, const unsigned short* in) {
    __shared__ alignas(16) unsigned short s[64];
    if (threadIdx.x < 8)
        __pipeline_memcpy_async(&s[8 * threadIdx.x], &in[8 * threadIdx.x], 16);
    __pipeline_commit();
    unsigned r, a = (unsigned)__cvta_generic_to_shared(&s[(threadIdx.x % 8) * 8]);
    asm volatile("ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%0}, [%1];" : "=r"(r) : "r"(a));
    __pipeline_wait_prior(0);
    out[threadIdx.x] = r;
}
'''


def test_a_cp_async_nobody_waited_for_is_a_warning_at_its_line():
    fn = cl.RawModule(code=UNWAITED, filename="unwaited.cu").get_function("unwaited")
    run = fn.simulate((2,), (64,), (np.zeros(64, np.float32), np.ones(64, np.float32)), echo=False)
    found = [w for w in run.warnings if w.kind == "cp.async unfinished"]
    assert [(w.line, w.count) for w in found] == [(5, 128)]
    assert "__pipeline_wait_prior" in found[0].hint


def test_an_ldmatrix_of_a_copy_in_flight_is_a_race():
    fn = cl.RawModule(code=LDSM_EARLY, filename="early.cu").get_function("early")
    run = fn.simulate((1,), (32,), (np.zeros(32, np.uint32), np.arange(64, dtype=np.uint16)), echo=False)
    assert [(r.copy, r.lines) for r in run.races] == [("cp.async", (6, 9))]


def test_the_gpu_launch_guard_simulates_a_tma_kernel_with_its_tensor_maps():
    """The guard packs a TensorMap over a stand-in of its array (Shape: no data), as the simulator does."""
    t = transposes.kernel("tma", np.float32)
    a, out = guard.Shape((96, 160), np.float32), guard.Shape((160, 96), np.float32)
    grid, block = t.config(96, 160)
    maps = t.spec.maps(t.params, t.dtype)
    args = (out, cl.TensorMap(np.zeros((96, 160), np.float32), box=maps["inp"], swizzle=maps["swizzle"]), 96, 160)
    report = guard.check(t.function, grid, block, args)
    assert report.note == "no fault", report


def test_the_model_counts_the_tma_bytes():
    """A TMA kernel's loads have no rows (ncu leaves them out of the LSU counters): the model adds them."""
    t = transposes.kernel("tma", np.float32)
    _, run = t.simulate(transposes.random_matrix(128, 128, np.float32))
    loads = [r for r in run.instructions if r["op"] == "ld" and r["space"] == "global"]
    assert not loads and model.traffic(run)["useful_ld"] == 128 * 128 * 4 == model.traffic(run)["useful_st"]

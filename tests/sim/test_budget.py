"""Limits that judge a kernel count its own work, never the wall clock (issue 26): a machine so loaded
that wall-clock seconds fly past never makes a correct kernel an "infinite loop", and a launch is
refused up front by its cost whatever its body (an empty kernel on 2^31-1 blocks ran 115 s)."""
import time

import numpy as np
import pytest

import course_lib as cl
from course_lib.sim import plan, scheduler
from course_lib.transposes import poisoned, random_matrix

EMPTY = 'extern "C" __global__ void e(float* o) { }'
LOOP = r'''
extern "C" __global__ void rev(float* out, const float* in, int n) {
    float acc = 0.0f;
    for (int k = 0; k < 200; ++k) acc += in[(threadIdx.x + k) % n];
    out[threadIdx.x] = acc;
}
'''


class _LoadedClock:
    """The time module as a kernel sees it on a loaded machine: every wall-clock reading is 50 s
    after the last (other processes ran); CPU-time clocks are the real ones."""

    def __init__(self):
        self.now = time.perf_counter()

    def _wall(self):
        self.now += 50.0
        return self.now

    perf_counter = monotonic = time = _wall

    def __getattr__(self, name):
        return getattr(time, name)


def test_a_loaded_machine_never_calls_a_correct_kernel_an_endless_loop(monkeypatch):
    """Before: "Stopped: after 50.0 s (timeout=8 seconds per batch) ... probably an infinite loop"."""
    import course_lib.sim.executor as executor
    clock = _LoadedClock()
    monkeypatch.setattr(scheduler, "time", clock)
    monkeypatch.setattr(executor, "time", clock)
    fn = cl.RawModule(code=LOOP).get_function("rev")
    x = random_matrix(1, 64, np.float32)[0]
    out = poisoned(64, np.float32)
    fn.simulate(1, 64, (out, x, np.int32(64)), progress=False, echo=False)
    want = np.array([sum(x[(t + k) % 64] for k in range(200)) for t in range(64)], np.float32)
    np.testing.assert_allclose(out, want, rtol=1e-4)


def test_the_timeout_is_cpu_time_and_says_so():
    fn = cl.RawModule(code=LOOP).get_function("rev")
    x = random_matrix(1, 64, np.float32)[0]
    with pytest.raises(cl.SimulationLimit) as e:
        fn.simulate(1, 64, (poisoned(64, np.float32), x, np.int32(64)), timeout=1e-9, progress=False, echo=False)
    assert e.value.timed_out and "CPU time" in e.value.message and "timeout=1e-09 seconds per batch" in e.value.message


def test_an_empty_kernel_on_a_huge_grid_is_refused_up_front():
    fn = cl.RawModule(code=EMPTY).get_function("e")
    program_estimate = _estimate(fn, (2**31 - 1, 1, 1), (32, 1, 1))
    assert program_estimate > plan.MAX_WORK                  # before: 7.3e10 thread-steps, "10 seconds"
    with pytest.raises(cl.SimulationLimit, match="Not started"):
        fn.simulate((2**31 - 1,), (32,), (np.zeros(1, np.float32),), progress=False, echo=False)


def _estimate(fn, grid, block):
    """plan.estimate of a launch, without running it."""
    seen = {}

    def refuse(program, total, per_batch):
        seen["work"] = plan.estimate(program, total, per_batch)
        raise cl.SimulationLimit("estimated")
    real = plan.check_estimate
    plan.check_estimate = refuse
    try:
        with pytest.raises(cl.SimulationLimit, match="estimated"):
            fn.simulate(grid, block, (np.zeros(1, np.float32),), progress=False, echo=False)
    finally:
        plan.check_estimate = real
    return seen["work"]

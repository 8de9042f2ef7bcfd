"""Limits that judge a kernel count its own work, never the wall clock (issue 26): a machine so loaded
that wall-clock seconds fly past never makes a correct kernel an "infinite loop", and a launch is
refused up front by its cost whatever its body (an empty kernel on 2^31-1 blocks ran 115 s)."""
import re
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


# ----------------------------------------------------------------------------- the measured pace (issue 36)

SPIN = r'''
__global__ void spin(float* out, const float* in, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float acc = in[i % n];
    for (int k = 0; k < 1000; ++k) acc = acc * 0.999f + 1.0f;
    out[i] = acc;
}
'''


def test_a_long_loop_over_a_big_launch_is_stopped_once_its_pace_is_known():
    """The issue's launch: 2^14 blocks of 1024 threads whose kernel runs a 1000-step loop. The cost model
    prices its fma at one thread-step, so neither the estimate (3e9) nor the first batch's projection (5e10,
    "7 seconds") stopped it; the simulator took 0.8 s of CPU time per batch, 256 batches: before, still
    running after 240 s. Now its measured pace stops it after a batch or two, saying how far it got."""
    fn = cl.RawModule(code=SPIN).get_function("spin")
    out = poisoned(2**14 * 1024, np.float32)
    with pytest.raises(cl.SimulationLimit) as e:
        fn.simulate(2**14, 1024, (out, random_matrix(1, 4096, np.float32)[0], np.int32(4096)),
                    progress=False, echo=False)
    err = e.value
    assert err.reason == "work" and not err.timed_out
    m = re.match(r"Stopped after the first ([\d,]+) of a grid of 16,384 blocks \(\d+%\): they took [\d.]+ s of "
                 r"CPU time, so at that pace the whole launch would take about \d+ (seconds|minutes)", err.message)
    assert m, err.message                             # 256 batches of 64 blocks, 0.25 to 0.8 s each (by load)
    ran = int(m[1].replace(",", ""))
    assert ran <= 4 * 64                              # stopped once its pace was known: a batch or two
    assert "thread-steps" in err.message and "limit is max_work=" in err.message
    assert "blocks=[(0, 0, 0), (16383, 0, 0)]" in err.hint and "smaller shape" in err.hint
    assert np.isnan(out[ran * 1024:]).all() and not np.isnan(out[:ran * 1024]).any()   # what it said ran, ran


class _SlowClock:
    """CPU time as a kernel the model underestimates spends it: each batch of blocks takes `per_batch` seconds
    more than it did (the executor reads the clock twice a batch; the scheduler's own clock stays real, so no
    batch reaches its timeout)."""

    def __init__(self, per_batch):
        self.extra, self.step = 0.0, per_batch / 2

    def thread_time(self):
        self.extra += self.step
        return time.thread_time() + self.extra

    def __getattr__(self, name):
        return getattr(time, name)


@pytest.mark.parametrize("per_batch, stopped_after", [(30.0, 1), (0.3, 2), (0.2, None)])
def test_a_launch_is_stopped_once_its_measured_pace_projects_past_the_limit(monkeypatch, per_batch, stopped_after):
    """160 batches of 2048 blocks: at 30 s a batch the first already projects past the limit (4800 s, even with
    the first batch's slack); at 0.3 s a batch the first projects 48 s, within its slack, and the first two
    past the 45 s limit; at 0.2 s a batch (32 s in all) the launch runs to its end."""
    import course_lib.sim.executor as executor
    monkeypatch.setattr(executor, "time", _SlowClock(per_batch))
    fn = cl.RawModule(code=EMPTY).get_function("e")
    launch = lambda: fn.simulate((160 * 2048,), (32,), (np.zeros(1, np.float32),), progress=False, echo=False)
    if stopped_after is None:
        launch()
        return
    with pytest.raises(cl.SimulationLimit) as e:
        launch()
    assert e.value.reason == "work"
    assert e.value.message.startswith(f"Stopped after the first {stopped_after * 2048:,} of a grid of 327,680 blocks")
    assert f"took {per_batch * stopped_after:.1f} s of CPU time" in e.value.message

"""Time kernels on a real GPU through CuPy.

- ``time_launch`` times with CUDA events: warm-up launches, then the median of repeats (small
  kernels in batches of back-to-back launches, see :func:`time_callable`). Each
  timed launch reads its inputs from DRAM, not from L2: the launches rotate through copies of
  the kernel's const (input) arrays, 3 x L2 in all (:func:`cold_copies`).
- ``time_cold`` does the same for any function of an input (a library call), ``copy_bandwidth``
  for a device-to-device copy of the same bytes in the same run: the ceiling a transpose is
  compared with.

Why copies and not a cache flush before each launch (what this module did until 2026-11-24): on
an H100, Nsight Compute saw a 4 MB input read only 12% from DRAM after a 100 MB cudaMemset, and
not at all when the kernel loads with an L2::evict_last hint, as torch.compile's Triton kernels
do; the flush's dirty lines were written back during the timed kernel, too (5 MB). A launch that
finds its input in L2 is not what a transpose of fresh data costs, and the hint made a library
look 25% faster than it is on small shapes (benchmarks/results/h100_2026-11-24b/README.md).
Outputs are not rotated: every contestant writes the same buffer each time (a library's pool
hands back the block it freed), as a loop calling it would. And before each timed call a small
kernel holds the GPU for longer than the host needs to queue the call, so the events time the GPU's
work and not Python's (torch.compile's guards take 40 us, more than a small transpose).

Effective bandwidth everywhere is bytes read once plus bytes written once over the time.
"""
from __future__ import annotations

import dataclasses
import statistics
import time

import numpy as np

from ..compile import nvrtc
from . import device
from .run import prepare


def _cupy():
    import cupy
    return cupy


def cold_copies(nbytes: int, l2_bytes: int | None = None) -> int:
    """How many copies of an input of `nbytes` a timing loop rotates through: at least 2, and
    3 x the L2 size in all, so a copy was last read 2 x L2 bytes of other inputs ago."""
    l2 = max(l2_bytes if l2_bytes is not None else device.info().l2_bytes, 1 << 20)
    return max(2, -(-3 * l2 // max(int(nbytes), 1)))


_HOLD_SOURCE = r"""
extern "C" __global__ void course_lib_hold(unsigned long long ns)
{   // one thread waits `ns` nanoseconds of the GPU's global timer, touching no memory
    unsigned long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    do { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); } while (t - t0 < ns);
}
"""
_hold_kernel = None


def _hold(seconds: float) -> None:
    """Queue a kernel that keeps the GPU busy for `seconds`, so what the host queues meanwhile
    (the start event, the timed call) starts the moment the GPU is free: host-side launch costs,
    which differ between CuPy, cuBLAS and torch.compile, stay out of the events."""
    global _hold_kernel
    cp = _cupy()
    if _hold_kernel is None:                  # the course's NVRTC, never CuPy's (which Colab cannot load)
        compiled = nvrtc.compile_source(_HOLD_SOURCE, filename="hold.cu", arch=device.info().arch,
                                        want_cubin=True, max_major=device.driver_major())
        module = cp.cuda.function.Module()
        module.load(compiled.cubin)
        _hold_kernel = (module, module.get_function("course_lib_hold"))
    _hold_kernel[1]((1,), (1,), (np.uint64(int(seconds * 1e9)),))


def _host_seconds(run) -> float:
    """The longest of three host-side costs of queuing run() (the GPU idle before each)."""
    cp = _cupy()
    worst = 0.0
    for _ in range(3):
        cp.cuda.Device().synchronize()
        t0 = time.perf_counter()
        run()
        worst = max(worst, time.perf_counter() - t0)
    cp.cuda.Device().synchronize()
    return worst


BATCH_GPU_SECONDS = 50e-6     # a timed sample is at least this much GPU work (events tick in ~0.5 us)
MAX_BATCH = 32


def time_callable(runs, *, repeat=20, warmup=3) -> float:
    """Median seconds (CUDA events) of one call on the GPU; `runs` is a callable or a list of
    callables doing the same work on different input copies, called in turn (see cold_copies).

    A sample is a batch of back-to-back calls, enough for 50 us of GPU work (at most 32), divided
    by its size: CUDA events resolve about half a microsecond, a tenth of a small transpose.
    Before each batch the GPU is held busy for three times the batch's host-side cost, so the
    whole batch is queued before it starts."""
    cp = _cupy()
    runs = list(runs) if isinstance(runs, (list, tuple)) else [runs]
    for i in range(max(warmup, len(runs))):
        runs[i % len(runs)]()
    host = _host_seconds(runs[0])
    start, end = cp.cuda.Event(), cp.cuda.Event()

    def sample(first, batch):
        _hold(max(100e-6, 3 * batch * host))
        start.record()
        for k in range(batch):
            runs[(first + k) % len(runs)]()
        end.record()
        end.synchronize()
        return cp.cuda.get_elapsed_time(start, end) / 1e3 / batch

    one = min(sample(i, 1) for i in range(3))
    batch = max(1, min(MAX_BATCH, len(runs), int(BATCH_GPU_SECONDS / max(one, 1e-7))))
    return statistics.median(sample(i * batch, batch) for i in range(repeat))


def input_copies(a, n=None) -> list:
    """`a` and n - 1 device copies of it (n from cold_copies)."""
    cp = _cupy()
    n = cold_copies(a.nbytes) if n is None else n
    return [a] + [cp.array(a, copy=True) for _ in range(n - 1)]


def time_cold(make, a, *, repeat=20, warmup=3) -> float:
    """Median seconds of make(a)() with `a` read from DRAM: make(x) returns the call on input x."""
    return time_callable([make(x) for x in input_copies(a)], repeat=repeat, warmup=warmup)


def time_launch(fn, grid, block, args, shared_mem=0, *, repeat=20, warmup=3, inputs=None) -> float:
    """Median kernel time in seconds over `repeat` launches (CUDA events), inputs from DRAM: the
    launches rotate through copies of the arguments at positions `inputs` (default: every pointer
    the kernel's signature declares const); a TensorMap there is rebuilt over each copy of its array."""
    launch = fn.check_launch(grid, block, args, shared_mem, limits=device.limits())
    func, dev_args, _ = prepare(fn, launch)
    sig = fn.signature or []
    if inputs is None:
        inputs = [i for i, a in enumerate(dev_args)
                  if i < len(sig) and sig[i].const and sig[i].pointer and hasattr(a, "nbytes")]
    is_map = {i: hasattr(launch.args[i], "driver_args") for i in inputs}
    base = {i: _cupy().asarray(launch.args[i].array) if is_map[i] else dev_args[i] for i in inputs}
    n = cold_copies(sum(base[i].nbytes for i in inputs)) if inputs else 1
    copies = {i: input_copies(base[i], n) for i in inputs}
    arg_sets = []
    for k in range(n):
        if any(is_map.values()):       # maps are encoded for their copy's address: prepare each set
            args_k = [launch.args[i].over(copies[i][k]) if is_map.get(i) else copies[i][k] if i in copies else a
                      for i, a in enumerate(launch.args)]
            arg_sets.append(tuple(prepare(fn, dataclasses.replace(launch, args=tuple(args_k)))[1]))
        else:
            arg_sets.append(tuple(copies[i][k] if i in copies else a for i, a in enumerate(dev_args)))
    g, b = launch.grid, launch.block
    return time_callable([lambda a=a: func(g, b, a, shared_mem=int(shared_mem)) for a in arg_sets],
                         repeat=repeat, warmup=warmup)


def copy_bandwidth(nbytes: int, *, repeat=20) -> float:
    """Effective bandwidth (2*nbytes/t, bytes/s) of a device-to-device copy of nbytes, source from DRAM."""
    cp = _cupy()
    src = cp.empty(nbytes, np.uint8)
    src.fill(7)
    dst = cp.empty_like(src)
    t = time_cold(lambda s: lambda: cp.cuda.runtime.memcpyAsync(dst.data.ptr, s.data.ptr, nbytes,
                                                                cp.cuda.runtime.memcpyDeviceToDevice, 0),
                  src, repeat=repeat)
    return 2 * nbytes / t

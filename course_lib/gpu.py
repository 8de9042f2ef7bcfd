"""Run and time kernels on a real GPU through CuPy.

- ``launch`` validates the configuration against the device's own limits, compiles the
  module to a CUBIN for this exact GPU (``sm_XY``), copies numpy arguments to the device and
  written ones back, and launches — like calling a CuPy RawKernel.
- ``time_launch`` times with CUDA events: warm-up launches, then the median of repeats, with
  the L2 cache flushed before each timed launch so small inputs are not measured from cache.
- ``copy_bandwidth`` measures a device-to-device copy of the same bytes in the same run:
  the ceiling a transpose is compared with. ``peak_bandwidth`` is the datasheet figure from
  the memory clock and bus width.

Effective bandwidth everywhere is bytes read once plus bytes written once over the time.
"""
from __future__ import annotations

import statistics

import numpy as np

from . import nvrtc
from .launch import check_args, check_config

CU_FUNC_ATTRIBUTE_NUM_REGS = 4
CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8


def _cupy():
    import cupy
    return cupy


def limits() -> dict:
    d = nvrtc.device_info()
    return dict(max_threads=d.max_threads_per_block, max_block=d.max_block_dims,
                max_grid=d.max_grid_dims, shared_default=d.shared_per_block,
                shared_optin=d.shared_per_block_optin)


def device_function(fn):
    """The loaded CUDA function for a course_lib Function (compiled for this GPU, cached)."""
    if fn._gpu_function is None:
        cp = _cupy()
        compiled = fn.module.cubin_for_gpu()
        module = cp.cuda.function.Module()
        module.load(compiled.cubin)
        entry = compiled.lowered_names.get(fn.name, fn.entry)
        fn._gpu_module = module  # keep the module alive as long as the function
        fn._gpu_function = module.get_function(entry)
    return fn._gpu_function


def registers_per_thread(fn) -> int:
    cp = _cupy()
    return cp.cuda.driver.funcGetAttribute(CU_FUNC_ATTRIBUTE_NUM_REGS, device_function(fn).ptr)


def prepare(fn, grid, block, args, shared_mem=0):
    """Check everything and return (grid, block, device args, copy-back list)."""
    cp = _cupy()
    g, b = check_config(grid, block, shared_mem, static_shared=fn.static_shared_bytes,
                        maxntid=fn.kernel.maxntid, limits=limits(), kernel=fn.name)
    args = check_args(args, fn.kernel.params, fn.signature, fn.name)
    dev_args, copy_back = [], []
    for i, a in enumerate(args):
        if isinstance(a, np.ndarray):
            d = cp.asarray(a)
            p = fn.signature[i] if fn.signature and i < len(fn.signature) else None
            if p is None or not p.const:
                copy_back.append((a, d))
            dev_args.append(d)
        else:
            dev_args.append(a)
    func = device_function(fn)
    if shared_mem + fn.static_shared_bytes > limits()["shared_default"]:
        cp.cuda.driver.funcSetAttribute(func.ptr, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, int(shared_mem))
    return func, g, b, dev_args, copy_back


def launch(fn, grid, block, args, shared_mem=0, stream=None):
    func, g, b, dev_args, copy_back = prepare(fn, grid, block, args, shared_mem)
    func(g, b, tuple(dev_args), shared_mem=int(shared_mem), stream=stream)
    for host, dev in copy_back:
        host[...] = dev.get()


class _L2Flusher:
    """Writes a buffer twice the L2 size so the next launch starts with a cold cache."""

    def __init__(self):
        cp = _cupy()
        self.buf = cp.empty(max(2 * nvrtc.device_info().l2_bytes, 1 << 20), np.uint8)

    def __call__(self):
        self.buf.fill(1)


def time_launch(fn, grid, block, args, shared_mem=0, *, repeat=20, warmup=3, flush_l2=True) -> float:
    """Median kernel time in seconds over `repeat` launches (CUDA events)."""
    cp = _cupy()
    func, g, b, dev_args, _ = prepare(fn, grid, block, args, shared_mem)
    return time_callable(lambda: func(g, b, tuple(dev_args), shared_mem=int(shared_mem)),
                         repeat=repeat, warmup=warmup, flush_l2=flush_l2)


def time_callable(run, *, repeat=20, warmup=3, flush_l2=True) -> float:
    cp = _cupy()
    flush = _L2Flusher() if flush_l2 else (lambda: None)
    for _ in range(warmup):
        run()
    start, end = cp.cuda.Event(), cp.cuda.Event()
    times = []
    for _ in range(repeat):
        flush()
        start.record()
        run()
        end.record()
        end.synchronize()
        times.append(cp.cuda.get_elapsed_time(start, end) / 1e3)
    return statistics.median(times)


def copy_bandwidth(nbytes: int, *, repeat=20) -> float:
    """Effective bandwidth (2*nbytes/t, bytes/s) of a device-to-device copy of nbytes."""
    cp = _cupy()
    src = cp.empty(nbytes, np.uint8)
    src.fill(7)
    dst = cp.empty_like(src)
    t = time_callable(lambda: cp.cuda.runtime.memcpyAsync(dst.data.ptr, src.data.ptr, nbytes,
                                                         cp.cuda.runtime.memcpyDeviceToDevice, 0),
                      repeat=repeat)
    return 2 * nbytes / t


def peak_bandwidth() -> float:
    return nvrtc.device_info().peak_bandwidth

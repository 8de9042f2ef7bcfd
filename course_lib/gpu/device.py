"""Is there a GPU, and what are its limits? Asked of CuPy once per process.

    device.available()            # False on a laptop, in CI, or with COURSE_LIB_BACKEND=sim
    device.info().name            # 'NVIDIA H100 80GB HBM3'
    device.limits()               # what the launch check compares a configuration with
    device.driver_major()         # 12 or 13: the newest NVRTC whose CUBINs this driver loads

This module only asks; it compiles and launches nothing.
"""
from __future__ import annotations

import functools
import os
from dataclasses import dataclass

from ..errors import NoGPUError


@functools.lru_cache(maxsize=1)
def available() -> bool:
    """True when CuPy sees a CUDA device we can run on. ``COURSE_LIB_BACKEND=sim`` forces False."""
    if os.environ.get("COURSE_LIB_BACKEND", "").lower() in ("sim", "cpu", "simulator"):
        return False
    try:
        import cupy
        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:
        return False


@dataclass(frozen=True)
class DeviceInfo:
    name: str
    arch: int                 # e.g. 90 for sm_90
    sm_count: int
    peak_bandwidth: float     # bytes/s, from memory clock and bus width (DDR: x2)
    l2_bytes: int
    max_threads_per_block: int
    max_block_dims: tuple
    max_grid_dims: tuple
    shared_per_block: int     # default limit without opt-in
    shared_per_block_optin: int
    memory_bytes: int


@functools.lru_cache(maxsize=1)
def info() -> DeviceInfo:
    if not available():
        raise NoGPUError("No NVIDIA GPU is available on this machine.",
                         hint="use the simulator backend: course_lib.Simulator()")
    import cupy
    dev = cupy.cuda.Device()
    p = cupy.cuda.runtime.getDeviceProperties(dev.id)
    attrs = dev.attributes
    clock_khz = attrs.get("MemoryClockRate") or p.get("memoryClockRate", 0)
    bus_bits = attrs.get("GlobalMemoryBusWidth") or p.get("memoryBusWidth", 0)
    name = p["name"].decode() if isinstance(p["name"], bytes) else str(p["name"])
    return DeviceInfo(
        name=name, arch=int(p["major"]) * 10 + int(p["minor"]), sm_count=int(p["multiProcessorCount"]),
        peak_bandwidth=2.0 * clock_khz * 1e3 * bus_bits / 8, l2_bytes=int(p.get("l2CacheSize", 0)),
        max_threads_per_block=int(p["maxThreadsPerBlock"]), max_block_dims=tuple(p["maxThreadsDim"]),
        max_grid_dims=tuple(p["maxGridSize"]), shared_per_block=int(p["sharedMemPerBlock"]),
        shared_per_block_optin=int(attrs.get("MaxSharedMemoryPerBlockOptin", p["sharedMemPerBlock"])),
        memory_bytes=int(p.get("totalGlobalMem", 0)))


def limits() -> dict:
    """The device's launch limits, in the form ``kernel.launch.check`` takes."""
    d = info()
    return dict(max_threads=d.max_threads_per_block, max_block=d.max_block_dims,
                max_grid=d.max_grid_dims, shared_default=d.shared_per_block,
                shared_optin=d.shared_per_block_optin)


@functools.lru_cache(maxsize=1)
def driver_major() -> int:
    """The CUDA major version the driver supports (12 for 12.x): code for it must come from an NVRTC
    of that major version or older."""
    import cupy
    return cupy.cuda.runtime.driverGetVersion() // 1000


def peak_bandwidth() -> float:
    return info().peak_bandwidth

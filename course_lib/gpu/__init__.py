"""The GPU: whether there is one, its limits, launching a checked kernel, and timing it (CuPy).

    from course_lib import gpu
    gpu.available(); gpu.info().name
    gpu.time_launch(fn, grid, block, args)       # median seconds, inputs read from DRAM
    gpu.copy_bandwidth(nbytes)                   # the same-run ceiling a transpose is compared with

Modules: ``device`` (is there a GPU, its properties and limits), ``run`` (load a CUBIN for this
GPU and launch), ``timing`` (CUDA events, input copies, the hold kernel). Nothing here checks a
launch (``kernel.launch`` does, once) or simulates.
"""
from .device import DeviceInfo, available, driver_major, info, limits, peak_bandwidth
from .run import device_function, launch, registers_per_thread
from .timing import cold_copies, copy_bandwidth, input_copies, time_callable, time_cold, time_launch

__all__ = ["DeviceInfo", "available", "driver_major", "info", "limits", "peak_bandwidth", "device_function",
           "launch", "registers_per_thread", "cold_copies", "copy_bandwidth", "input_copies", "time_callable",
           "time_cold", "time_launch"]

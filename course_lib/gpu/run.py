"""Launch a checked kernel on the GPU through CuPy, like calling a CuPy RawKernel.

    gpu.launch(fn, launch)        # launch: what kernel.launch.check returned for this launch

The caller has checked the launch (``Function.check_launch``: the one check the simulator, the
guard and this module share). This module compiles the module to a CUBIN for this exact GPU
(``sm_XY``, from an NVRTC the driver can load), copies numpy arguments to the device and the
ones the kernel may write back, and launches. With ``COURSE_LIB_ARCH=XY`` ("older card" mode) it loads
PTX for compute_XY instead, as an older GPU's driver would get it. It does not validate or time anything.
"""
from __future__ import annotations

import numpy as np

from ..compile import archs
from . import device, tensor_map

CU_FUNC_ATTRIBUTE_NUM_REGS = 4
CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8


def _cupy():
    import cupy
    return cupy


def device_function(fn):
    """The loaded CUDA function for a course_lib Function (compiled for this GPU, cached on it)."""
    if fn._gpu_function is None:
        cp = _cupy()
        compiled, image = _image(fn)
        module = cp.cuda.function.Module()
        module.load(image)
        entry = compiled.lowered_names.get(fn.name, fn.entry)
        fn._gpu_module = module  # keep the module alive as long as the function
        fn._gpu_function = module.get_function(entry)
    return fn._gpu_function


def _image(fn):
    """(Compiled, what the driver loads): a CUBIN for this exact GPU; in "older card" mode
    (COURSE_LIB_ARCH=75 on a newer GPU) PTX for compute_75, which the driver JIT-compiles, once
    ptxas for sm_75 has accepted it (so what a T4's compiler refuses is refused here too)."""
    sm, real = archs.pretended(), device.info().arch
    if sm is not None and sm < real:
        fn.module.cubin_for(sm, max_major=device.driver_major())
        compiled = fn.module.ptx_for(sm)
        return compiled, compiled.ptx.encode()
    compiled = fn.module.cubin_for(real, max_major=device.driver_major())
    return compiled, compiled.cubin


def registers_per_thread(fn) -> int:
    cp = _cupy()
    return cp.cuda.driver.funcGetAttribute(CU_FUNC_ATTRIBUTE_NUM_REGS, device_function(fn).ptr)


def prepare(fn, launch):
    """(CUDA function, device arguments, [(host array, device copy) to copy back]) for a checked launch.
    A numpy array is copied to the device once, also when a tensor map refers to it too."""
    cp = _cupy()
    dev_args, copy_back, placed = [], [], {}

    def on_device(a, writable):
        if not isinstance(a, np.ndarray):
            return a                                   # already a device array
        if id(a) not in placed:
            placed[id(a)] = cp.asarray(a)
            if writable:
                copy_back.append((a, placed[id(a)]))
        elif writable and all(h is not a for h, _ in copy_back):
            copy_back.append((a, placed[id(a)]))
        return placed[id(a)]

    for i, a in enumerate(launch.args):
        p = fn.signature[i] if fn.signature and i < len(fn.signature) else None
        if isinstance(a, np.ndarray):
            dev_args.append(on_device(a, p is None or not p.const))
        elif hasattr(a, "driver_args"):                # a TensorMap (sim/movement/tma.py): the driver encodes it
            d = on_device(a.array, bool(getattr(getattr(a.array, "flags", None), "writeable", True)))
            dev_args.append(tensor_map.as_kernel_argument(tensor_map.encode_tiled(**a.driver_args(d.data.ptr))))
        else:
            dev_args.append(a)
    func = device_function(fn)
    if launch.shared_mem + fn.static_shared_bytes > device.limits()["shared_default"]:
        cp.cuda.driver.funcSetAttribute(func.ptr, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                        int(launch.shared_mem))
    return func, dev_args, copy_back


def launch(fn, launch, stream=None):
    func, dev_args, copy_back = prepare(fn, launch)
    func(launch.grid, launch.block, tuple(dev_args), shared_mem=int(launch.shared_mem), stream=stream)
    for host, dev in copy_back:
        host[...] = dev.get()

"""A kernel this GPU cannot run runs on the simulator instead, and one line says so.

    reason = arch_fallback.reason(fn)       # None when this GPU runs fn, else the one line to show
    run = arch_fallback.simulate(fn, launch, reason)   # device arrays copied to the host, simulated, copied back

A T4 (sm_75) has no Tensor Memory Accelerator, an A100 no ``stmatrix``: their compiler refuses
notebook 12's kernels (often in a CUDA header's words). Before a launch, :func:`reason` asks for
this GPU's machine code (``gpu.device_function``, cached on the Function); when the compiler
refuses, the launch goes to the simulator, which follows an H100's rules, and the note names what
the card lacks (``compile.archs``: "simulated as an H100: a Tesla T4 (sm_75) has no TMA ...") or,
if no known feature explains it, the compiler's first line. Under ``COURSE_LIB_ARCH=75`` on a
newer GPU ("older card" mode, ``gpu.run``) the same happens for what an sm_75 compiler refuses.
The note is printed once per kernel. This module decides and copies; the simulator and the GPU
runner do the work.
"""
from __future__ import annotations

import numpy as np

from .. import gpu
from ..compile import archs
from ..errors import CompileError
from ..sim.movement.tma import TensorMap
from ..sim.spaces import host as host_memory

_NOTED: set = set()


def gpu_arch() -> int:
    """The architecture the course treats this GPU as: COURSE_LIB_ARCH when set, else the device's."""
    return archs.pretended() or gpu.info().arch


def reason(fn, refusal: CompileError | None = None) -> str | None:
    """None when this GPU can run `fn`; else the one line that says why the simulator runs it instead
    (`refusal`: the compiler's answer when a launch already asked it)."""
    if getattr(fn, "_gpu_refused", None) is None:
        try:
            if refusal is not None:
                raise refusal
            gpu.device_function(fn)
            fn._gpu_refused = ""
        except CompileError as exc:
            sm, name = gpu_arch(), gpu.info().name
            if archs.pretended():       # "older card" mode: the card is the one COURSE_LIB_ARCH names
                name = f"sm_{sm} card ({archs.ENV_ARCH}={sm} on this {name})"
            missing = archs.lacks(sm, fn.module.ptx)
            fn._gpu_refused = (archs.simulated_note(name, sm, missing) if missing else
                               f"simulated as an H100: {fn.name} does not compile for sm_{sm} "
                               f"({exc.message.splitlines()[0]})")
    return fn._gpu_refused or None


def note_once(fn, text: str) -> None:
    key = (fn.module.code, fn.name)
    if key not in _NOTED:
        _NOTED.add(key)
        print(text)


def _on_device(a) -> bool:
    return hasattr(a, "__cuda_array_interface__") and hasattr(a, "get")


def _host(a, back: list):
    """The argument as the simulator takes it: a device array (CuPy) as a numpy copy, a tensor map over
    one as a tensor map over the copy; `back` collects (device array, copy) to copy back."""
    if _on_device(a):
        back.append((a, a.get()))
        return back[-1][1]
    if isinstance(a, TensorMap) and _on_device(a.array):
        back.append((a.array, a.array.get()))
        return a.over(back[-1][1])
    return a


def simulate(fn, launch, text: str, **options):
    """Run a checked launch on the simulator with device arrays copied to the host and back."""
    note_once(fn, text)
    host_memory.room_for_copies([(f"argument {i} ({'x'.join(map(str, a.shape))} {a.dtype})", a) for i, a in
                                 enumerate(getattr(x, "array", x) for x in launch.args) if _on_device(a)])
    back = []
    host = tuple(_host(a, back) for a in launch.args)
    run = fn.simulate(launch.grid, launch.block, host, launch.shared_mem, progress=False, **options)
    for dev, copy in back:
        dev.set(np.ascontiguousarray(copy))
    return run

"""course_lib: compile CUDA C++ with NVRTC, run it on a GPU or in an exact CPU simulator.

    import course_lib as cl
    mod = cl.RawModule(code=src, options=("-std=c++17",))
    k = mod.get_function("transpose")
    run = k.simulate(grid, block, (out, inp, np.int32(rows), np.int32(cols)))
    run.metrics["l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"]

In a notebook (see docs/NOTEBOOK_API.md)::

    backend = cl.setup()       # %%cuda magic, plotly stored as JSON, the backend banner
    cl.draw, cl.widgets, cl.exercises, cl.model   # imported on first use (plotly, ipywidgets)
    cl.predict(run, sectors_st=None)              # predict-then-run (course_lib.prediction)
    cl.debug.task("missing_syncthreads")          # debug-this-kernel tasks (course_lib.debug)
"""
import importlib

from .backend import GPU, Result, Simulator, banner, default_backend, setup
from .errors import (ArgumentError, AssertionFailed, BarrierError, CompileError, KernelError, KernelTrap,
                     LaunchError, MemoryAccessError, NoGPUError, SimulationLimit, UnsupportedInstruction)
from .module import Function, KernelNotFound, RawModule
from .nvrtc import gpu_available

__all__ = ["RawModule", "Function", "KernelError", "CompileError", "LaunchError", "ArgumentError",
           "MemoryAccessError", "BarrierError", "KernelTrap", "AssertionFailed", "SimulationLimit", "UnsupportedInstruction",
           "NoGPUError", "KernelNotFound", "gpu_available",
           "setup", "banner", "default_backend", "Simulator", "GPU", "Result"]

_LAZY = ("draw", "widgets", "exercises", "model", "magic", "transposes", "verify", "debug", "solutions")


def __getattr__(name):
    if name == "predict":
        return importlib.import_module(".prediction", __name__).predict
    if name in _LAZY:
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module 'course_lib' has no attribute '{name}'")


def load_ipython_extension(ip):
    """``%load_ext course_lib``: register the %%cuda cell magic."""
    from .magic import register
    register(ip)

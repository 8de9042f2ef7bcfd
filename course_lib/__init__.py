"""course_lib: compile CUDA C++ with NVRTC, run it on a GPU or in an exact CPU simulator.

    import course_lib as cl
    mod = cl.RawModule(code=src, options=("-std=c++17",))
    k = mod.get_function("transpose")
    run = k.simulate(grid, block, (out, inp, np.int32(rows), np.int32(cols)))
    run.metrics["l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"]
"""
from .errors import (ArgumentError, BarrierError, CompileError, KernelError, LaunchError,
                     MemoryAccessError, NoGPUError, SimulationLimit, UnsupportedInstruction)
from .module import Function, KernelNotFound, RawModule
from .nvrtc import gpu_available

__all__ = ["RawModule", "Function", "KernelError", "CompileError", "LaunchError", "ArgumentError",
           "MemoryAccessError", "BarrierError", "SimulationLimit", "UnsupportedInstruction",
           "NoGPUError", "KernelNotFound", "gpu_available"]

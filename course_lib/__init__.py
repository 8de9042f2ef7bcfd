"""course_lib: compile CUDA C++ with NVRTC, run it on a GPU or in an exact CPU simulator.

    import course_lib as cl
    mod = cl.RawModule(code=src, options=("-std=c++17",))
    k = mod.get_function("transpose")
    run = k.simulate(grid, block, (out, inp, np.int32(rows), np.int32(cols)))
    run.metrics["l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"]

In a notebook (see docs/NOTEBOOK_API.md)::

    backend = cl.setup()       # %%cuda magic, plotly stored as JSON, the backend banner
    cl.draw, cl.widgets, cl.exercises, cl.model   # imported on first use (plotly, ipywidgets)
    cl.predict(run, sectors_st=None)              # predict-then-run
    cl.debug.task("debug_04")                     # debug-this-kernel tasks

This file is the public face; the library lives in wings, each a subpackage that imports only
the ones below it (docs/ARCHITECTURE.md): ``compile`` (CUDA text -> PTX + SASS), ``sim`` and
``gpu`` (run it), ``kernel`` (RawModule, Function, the launch check), ``transposes`` (the course's
kernels and backends), ``teach`` and ``notebook`` (exercises, drawing, %%cuda), ``lessons`` and
``lab`` (one module per notebook; course-lab and the instructor's tools).

Modules the wings moved keep their old import path for one release (``MOVED``): ``import
course_lib.widgets`` gives ``course_lib.notebook.widgets`` with a DeprecationWarning naming it, and
``import course_lib.sim.tma`` gives ``course_lib.sim.movement.tma`` (``course_lib.sim.MOVED``).
"""
import importlib
import importlib.abc
import importlib.util
import sys
import warnings

from .errors import (
    ArgumentError,
    AssertionFailed,
    BarrierError,
    CompileError,
    KernelError,
    KernelTrap,
    LaunchError,
    MemoryAccessError,
    NoGPUError,
    SimulationLimit,
    UnsupportedInstruction,
)
from .gpu import available as gpu_available
from .kernel.module import Function, KernelNotFound, RawModule
from .sim import MOVED as _SIM_MOVED
from .sim.movement.tma import TensorMap
from .transposes.backend import GPU, Result, Simulator, default_backend

__all__ = ["RawModule", "Function", "KernelError", "CompileError", "LaunchError", "ArgumentError",
           "MemoryAccessError", "BarrierError", "KernelTrap", "AssertionFailed", "SimulationLimit",
           "UnsupportedInstruction", "NoGPUError", "KernelNotFound", "gpu_available", "TensorMap",
           "setup", "banner", "default_backend", "Simulator", "GPU", "Result"]

# name -> (module, attribute or None for the module itself), imported on first use: plotly and
# ipywidgets take a second to import, and a script that only simulates never needs them
_LAZY = {
    "setup": ("notebook.setup", "setup"), "banner": ("notebook.setup", "banner"),
    "predict": ("teach.prediction", "predict"),
    "draw": ("notebook.draw", None), "widgets": ("notebook.widgets", None), "magic": ("notebook.magic", None),
    "exercises": ("teach.exercises", None), "debug": ("teach.debug", None), "mistakes": ("teach.mistakes", None),
    "solutions": ("teach.solutions", None), "model": ("transposes.model", None),
    "transposes": ("transposes", None), "verify": ("transposes.verify", None), "guard": ("kernel.guard", None),
}


def __getattr__(name):
    if name in _LAZY:
        module, attribute = _LAZY[name]
        found = importlib.import_module(f".{module}", __name__)
        return found if attribute is None else getattr(found, attribute)
    raise AttributeError(f"module 'course_lib' has no attribute '{name}'")


def __dir__():
    return sorted(set(globals()) | set(_LAZY))


# old module (before the wings, 2026-11) -> where it lives now; kept for one release
MOVED = {
    "backend": "transposes.backend", "bench": "transposes.bench", "colab": "lab.instructor.colab", "container": "lab.student.container",
    "debug": "teach.debug", "draw": "notebook.draw", "exercise_runs": "teach.runs", "exercises": "teach.exercises",
    "fit": "notebook.fit", "guard": "kernel.guard", "instructor": "lab.instructor.cli", "labserver": "lab.student.server",
    "launch": "kernel.launch", "magic": "notebook.magic", "mistakes": "teach.mistakes", "model": "transposes.model",
    "module": "kernel.module", "nvrtc": "compile.nvrtc", "nvrtc13": "compile.nvrtc_lib",
    "platforms": "compile.platforms", "prediction": "teach.prediction", "progress": "sim.progress",
    "properties": "teach.properties", "ptx": "compile.ptx", "release": "lab.instructor.release", "run_once": "transposes.run_once",
    "sass": "compile.sass", "solutions": "teach.solutions", "stored": "lab.stored", "verify": "transposes.verify",
    "widgets": "notebook.widgets", "workcopy": "lab.student.workcopy",
}
MOVED.update({f"sim.{old}": f"sim.{new}" for old, new in _SIM_MOVED.items()})   # sim's subpackages, 2026-11
# lab/ in a wing per audience (2026-12): course folders' nbgrader_config.py and older course-lab scripts name these
MOVED.update({f"lab.{old}": f"lab.{new}" for old, new in (
    ("course_lab", "student.course_lab"), ("server", "student.server"), ("workcopy", "student.workcopy"),
    ("container", "student.container"), ("keepboth", "student.keepboth"), ("colab", "instructor.colab"),
    ("authoring", "instructor.authoring"), ("release", "instructor.release"), ("refresh", "instructor.refresh"),
    ("publish", "instructor.publish"), ("grading", "instructor.assignments"), ("sandbox", "grader.sandbox"),
    ("nbgrader_hooks", "grader.nbgrader_hooks"))})


class _MovedModules(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds ``course_lib.<old>`` for a module in MOVED: the module at its new path, with a warning."""

    def find_spec(self, fullname, path=None, target=None):
        package, _, old = fullname.partition(".")
        if package == __name__ and old in MOVED:
            return importlib.util.spec_from_loader(fullname, self)
        return None

    def create_module(self, spec):
        new = f"{__name__}.{MOVED[spec.name.partition('.')[2]]}"
        # stacklevel 2 is the importing line: warnings skips importlib's own frames
        warnings.warn(f"{spec.name} moved to {new}: import {new} instead (the old path goes in the next release)",
                      DeprecationWarning, stacklevel=2)
        module = importlib.import_module(new)
        spec.loader_state = module.__spec__      # the import system sets __spec__ to the old path's: put it back
        return module

    def exec_module(self, module):
        module.__spec__ = module.__spec__.loader_state      # already executed at its new path


if not any(isinstance(f, _MovedModules) for f in sys.meta_path):
    sys.meta_path.append(_MovedModules())


def load_ipython_extension(ip):
    """``%load_ext course_lib``: register the %%cuda cell magic."""
    from .notebook.magic import register
    register(ip)

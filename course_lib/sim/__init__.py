"""The CPU simulator: run the PTX NVRTC emitted for a kernel, with exact memory metrics.

The core, from the launch down: ``executor`` (one launch: batches of blocks, limits, findings),
``plan`` (batch sizes, and whether a launch is worth starting), ``cost`` (what it costs, in
thread-steps), ``scheduler`` (the SIMT loop of one batch: divergence, barriers), ``state`` (a
batch's registers and the workspace its batches share), ``registers`` (which registers may share
storage), ``fusion`` (which PTX accesses ptxas fused, from the SASS), ``heap`` (a steady C heap),
``progress``, ``kept`` (what a notebook's kernel keeps of a stopped run, given back). The rest
are subpackages, each saying what it models and what it leaves to the others:

- ``results``: ``result`` (SimRun), ``metrics`` (Nsight Compute's counting rules), ``code_view``
  (its listings), ``async_result`` (what SimRun reports of the asynchronous copies);
- ``isa``: ``instructions`` (one closure per PTX instruction, a table per opcode) with ``operands``,
  ``control`` (what jumps, exits and barriers tell the scheduler), ``convert`` (cvt), ``warp_ops``
  (shfl, vote), ``calls`` (printf, assert, trap), ``access`` (loads and stores), ``atomics``,
  ``param_ops`` (arguments in memory, TensorMaps among them), and for Hopper's data movement
  ``copy_ops`` (cp.async), ``tensor_ops`` (bulk and TMA copies), ``sync_ops`` (mbarrier),
  ``matrix_ops`` (ldmatrix, stmatrix, movmatrix);
- ``checks``: ``races``/``shadow`` (racecheck), ``copy_races`` (touching what a copy is still
  writing), ``diagnose``/``recursion`` (what to tell the student), ``finding``, ``owners`` (which
  block touched which element, for checkers);
- ``movement``: the units' own rules: ``async_copy``, ``mbarrier``, ``tma``, ``matrix_moves``;
- ``arith``: ``alu`` with ``int_ops``/``bitops``/``float_ops``/``float_select``/``rounding``/``exact``;
- ``spaces``: ``memory`` (global memory, the address windows), ``block_memory`` (shared, local),
  ``layout`` (where variables live).

Each layer imports only those below it (pyproject.toml's contract, docs/ARCHITECTURE.md):
executor; scheduler, plan, heap, progress, kept; cost, results; isa; state, registers, checks; movement,
spaces, arith, fusion. Modules of the flat sim/ (until 2026-11) keep their old path for one release
(``MOVED``): ``course_lib.sim.tma`` is ``course_lib.sim.movement.tma``, with a DeprecationWarning.
"""
from __future__ import annotations

import importlib
import warnings

import numpy as np

from ..compile import nvrtc
from ..errors import ArgumentError, Unavailable
from . import fusion, kept, plan  # noqa: F401  (sim.plan: the launch's limits, for callers)
from .executor import Program
from .gc_pause import gc_paused
from .isa import param_ops
from .results.result import SimRun
from .spaces.memory import GlobalMemory

__all__ = ["simulate", "SimRun"]

kept.watch()     # imported in a notebook's kernel: from now on, a run stopped before its first launch too


def simulate(fn, launch, **options) -> SimRun:
    """Simulate ``fn`` (a course_lib Function) for ``launch``, which passed ``Function.check_launch``
    (grid, block, args converted to the kernel's types, shared_mem)."""
    kernel, grid, block = fn.kernel, launch.grid, launch.block
    kept.watch()                # in a notebook: a stopped run's kept traceback holds none of its matrices
    memory = GlobalMemory()
    try:
        params, offsets, write_back = param_ops.place_arguments(fn, launch.args, memory)
    except BaseException:       # stopped while placing: a kept traceback holds its closure, which holds memory
        memory.buffers.clear()  # (the Program drops its own when stopped: executor.Program.release)
        raise
    program = Program(fn.module.parsed, kernel, grid=grid, block=block, params=params,
                      param_offsets=offsets, globals_=memory, dynamic_shared=int(launch.shared_mem),
                      source=fn.module.code, filename=fn.module.filename, **_trace(options, grid))
    with gc_paused():               # reading the machine code makes thousands of objects at once
        program.fusion = machine_plan(fn)
    run = program.run()
    for dev, host in write_back:
        dev.set(host)
    return run


def machine_plan(fn) -> fusion.Plan:
    """How ptxas's machine code groups the kernel's PTX accesses (once per Function); a plan
    with only a ``note`` when there is no machine code, and the metrics follow the PTX."""
    grouping = getattr(fn, "_machine_plan", None)
    if grouping is None:
        compiled = fn.module.compiled
        if compiled.machine and not fusion.could_fuse(fn.kernel):   # nothing to group: read it if shown
            grouping = fusion.Plan(made_by=compiled.machine, pending=lambda: _read_plan(fn))
        else:
            grouping = _read_plan(fn)
        fn._machine_plan = grouping
    return grouping


def _read_plan(fn) -> fusion.Plan:
    compiled = fn.module.compiled
    try:
        code = nvrtc.machine_code(compiled)
        if fn.entry not in code:
            raise Unavailable(f"the machine code has no kernel {fn.entry}")
        grouping = fusion.plan(fn.kernel, code[fn.entry])
        grouping.made_by = compiled.machine
    except Unavailable as exc:
        grouping = fusion.unavailable(str(exc))
    return grouping


def _trace(options, grid):
    tb = options.pop("trace_block", (0, 0, 0))
    c = tuple(tb) if isinstance(tb, (tuple, list)) else (tb,)
    if not 1 <= len(c) <= 3 or not all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in c):
        raise ArgumentError(f"trace_block={tb!r}: give the block whose accesses to record, e.g. (0, 0)",
                            hint="trace_block=(x, y) names one block of the grid (a linear index also works)")
    c = tuple(int(v) for v in c) + (0,) * (3 - len(c))
    options["trace_block"] = c[0] + c[1] * grid[0] + c[2] * grid[0] * grid[1]
    return options


# module of the flat sim/ (until 2026-11) -> where it lives now, kept for one release: course_lib.MOVED
# finds `import course_lib.sim.tma`, __getattr__ answers `course_lib.sim.tma` and `from course_lib.sim import tma`
MOVED = {old: f"{package}.{old}" for package, olds in (
    ("arith", "alu bitops exact float_ops float_select int_ops rounding"),
    ("checks", "copy_races diagnose finding owners races recursion shadow"),
    ("isa", "access atomics calls control convert copy_ops instructions matrix_ops operands param_ops "
            "sync_ops tensor_ops warp_ops"),
    ("movement", "async_copy matrix_moves mbarrier tma"),
    ("results", "async_result code_view metrics result"),
    ("spaces", "block_memory layout memory"),
) for old in olds.split()}


def __getattr__(name):
    if name not in MOVED:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    new = f"{__name__}.{MOVED[name]}"
    warnings.warn(f"{__name__}.{name} moved to {new}: import {new} instead (the old path goes in the next release)",
                  DeprecationWarning, stacklevel=2)
    module = globals()[name] = importlib.import_module(new)      # warned once; `import` of the old path warns again
    return module

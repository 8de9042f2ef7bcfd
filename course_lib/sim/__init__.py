"""The CPU simulator: run the PTX NVRTC emitted for a kernel, with exact memory metrics.

Modules, from the launch down: ``executor`` (one launch: batches of blocks, limits, findings),
``plan`` (batch sizes, and whether a launch is worth starting), ``cost`` (what it costs, in
thread-steps), ``scheduler`` (the SIMT loop of one batch: divergence, barriers), ``control``
(what jumps, exits and barriers tell it), ``state`` (a batch's registers and the workspace its
batches share), ``registers`` (which registers may share storage), ``layout`` (where variables
live); ``instructions`` (one closure per PTX instruction, a table per opcode) with ``operands``,
``alu``/``int_ops``/``bitops``/``float_ops``/``float_select``/``rounding``/``exact``
(arithmetic), ``convert`` (cvt), ``warp_ops`` (shfl, vote), ``access`` (loads and stores),
``atomics``, ``calls`` (printf, assert, trap); ``memory``/``block_memory`` (address spaces),
``metrics`` (Nsight Compute's counting rules), ``owners`` (which block touched which element, for
checkers), ``fusion`` (which PTX accesses ptxas fused, from
the SASS), ``races``/``shadow`` (racecheck), ``diagnose``/``recursion`` (what to tell the
student), ``heap`` (a steady C heap), ``progress``; ``result`` (SimRun) and ``code_view`` (its
listings). Hopper's data movement: ``copy_ops`` (cp.async) and ``tensor_ops`` (bulk and TMA copies)
with ``async_copy`` and ``tma``, ``sync_ops`` with ``mbarrier``, ``matrix_ops`` with ``matrix_moves``
(ldmatrix, stmatrix, movmatrix), ``param_ops`` (arguments in memory, TensorMaps among them),
``copy_races`` (touching what a copy is still writing) and ``async_result`` (what SimRun reports of them).
"""
from __future__ import annotations

import numpy as np

from ..compile import nvrtc
from ..errors import ArgumentError, Unavailable
from . import fusion, param_ops, plan  # noqa: F401  (sim.plan: the launch's limits, for callers)
from .executor import Program
from .memory import GlobalMemory
from .result import SimRun

__all__ = ["simulate", "SimRun"]


def simulate(fn, launch, **options) -> SimRun:
    """Simulate ``fn`` (a course_lib Function) for ``launch``, which passed ``Function.check_launch``
    (grid, block, args converted to the kernel's types, shared_mem)."""
    kernel, grid, block = fn.kernel, launch.grid, launch.block
    memory = GlobalMemory()
    params, offsets, write_back = param_ops.place_arguments(fn, launch.args, memory)
    program = Program(fn.module.parsed, kernel, grid=grid, block=block, params=params,
                      param_offsets=offsets, globals_=memory, dynamic_shared=int(launch.shared_mem),
                      source=fn.module.code, filename=fn.module.filename, **_trace(options, grid))
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

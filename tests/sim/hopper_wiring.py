"""Test helper (issue 19, until the new instructions are in the simulator's dispatch): run a kernel
in the simulator with the closures of copy_ops, sync_ops, matrix_ops and param_ops installed.

    with hopper_wiring.installed():
        run = hopper_wiring.simulate(fn, grid, block, args, shared_mem=0)
"""
import contextlib

import numpy as np

from course_lib.sim import (access, async_result, copy_ops, copy_races, executor, instructions, matrix_ops, metrics,
                            param_ops, sync_ops)
from course_lib.sim.memory import GlobalMemory


@contextlib.contextmanager
def installed():
    saved = dict(instructions.BUILDERS)
    instructions.BUILDERS.update({"cp": copy_ops.build, "mbarrier": sync_ops.build, "ldmatrix": matrix_ops.build,
                                  "stmatrix": matrix_ops.build, "movmatrix": matrix_ops.build,
                                  "mov": param_ops.mov(saved["mov"]), "cvta": param_ops.cvta(saved["cvta"])})
    plain = access.access

    def checked(program, b, mask, ins, space, addr, width, vec, values):
        if space == "shared" and ins.index >= 0:
            slots = np.arange(b.n) if mask is None else np.flatnonzero(mask)
            flat = b.shared.flat_offsets(addr, b.shared_base[slots], width * vec)
            if not hasattr(flat, "kind"):                # a Fault: the access itself will say so
                copy_races.check_shared(program, b, mask, ins, flat, width * vec, values is None)
        return plain(program, b, mask, ins, space, addr, width, vec, values)
    access.access = checked
    try:
        yield
    finally:
        access.access = plain
        instructions.BUILDERS.clear()
        instructions.BUILDERS.update(saved)


def simulate(fn, grid, block, args, shared_mem=0, **options):
    """Function.simulate with TensorMap arguments (sim.simulate's steps, arguments placed by param_ops)."""
    from course_lib.sim import machine_plan
    launch = fn.check_launch(grid, block, args, shared_mem)
    memory = GlobalMemory()
    params, offsets, write_back = param_ops.place_arguments(fn, launch.args, memory)
    options.setdefault("echo", False)
    program = executor.Program(fn.module.parsed, fn.kernel, grid=launch.grid, block=launch.block, params=params,
                               param_offsets=offsets, globals_=memory, dynamic_shared=int(launch.shared_mem),
                               source=fn.module.code, filename=fn.module.filename, **options)
    program.fusion = machine_plan(fn)
    run = program.run()
    # what result.SimRun will do once the dispatch runs these instructions (issue 19, phase 2)
    run.instructions += async_result.rows(program)
    run.metrics = {**metrics.totals(run.instructions), **async_result.extra_metrics(program)}
    run.by_line = {line: metrics.totals([r for r in run.instructions if r["line"] == line])
                   for line in sorted({r["line"] for r in run.instructions})}
    run.warnings += async_result.notes(program)
    run.tma_counts = async_result.extra_metrics(program)
    run.counters = program.counters
    for dev, host in write_back:
        dev.set(host)
    return run

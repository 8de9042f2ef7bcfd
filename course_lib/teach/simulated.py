"""How a checker simulates a student's kernel: the checked run, and the second run that tells
whether out's data passed through shared memory.

    run = launch(fn, grid, block, args, owners=True)      # a SimRun; run.owners when asked for
    run.shared_flow = shared_flow(fn, grid, block, a, want, out_like)   # (through, bypassed, mixed)

:func:`launch` is ``Function.simulate`` with the checker's limits, plus what only a checker asks
the simulator for: ``owners`` (which block touched which element, ``sim.owners``). :func:`shared_flow`
runs the launch again with the byte 0xA5 xor-ed into every value a shared-memory load returns
(``scramble_shared``) and sorts the elements of the new output: changed by exactly that byte in
every byte (it was moved through shared memory: once, or an odd number of times), unchanged (it
bypassed shared memory, or went through it an even number of times: no exercise stages twice), or
anything else (computed from shared data, or the run faulted or stopped because shared data
steered it). It judges nothing (``properties.uses_shared`` does).
"""
from __future__ import annotations

import numpy as np

from .. import sim
from ..errors import KernelError

# a check stays within seconds: per batch of blocks (steps, wall clock), and for a whole launch (thread-steps,
# about 6 s at the simulator's pace; a correct kernel of the course's shapes needs under 1% of it)
LIMITS = dict(max_steps=50_000, timeout=4.0, max_work=2 * 10**9)
SCRAMBLE = 0xA5


def launch(fn, grid, block, args, *, owners=False, check_races=True, **options):
    """Simulate as ``fn.simulate(...)`` does, quietly, with the checker's limits and `owners`."""
    checked = fn.check_launch(grid, block, args)
    return sim.simulate(fn, checked, check_races=check_races, trace_block=(0, 0, 0), progress=None, echo=False,
                        blocks=None, owners=owners, **{**LIMITS, **options})


def shared_flow(fn, grid, block, a, want, out) -> tuple[int, int, int]:
    """(elements moved through shared memory, elements that bypassed it, the others) of `want`,
    from a second run on input `a` into `out` (a fresh poisoned output) with shared loads scrambled."""
    rows, cols = a.shape[-2:]
    total = int(want.size)
    try:
        launch(fn, grid, block, (out, a, np.int32(rows), np.int32(cols)), check_races=False, count_metrics=False,
               scramble_shared=SCRAMBLE)
    except KernelError:
        return 0, 0, total
    got = out.reshape(-1).view(np.uint8).reshape(total, -1)
    right = want.reshape(-1).view(np.uint8).reshape(total, -1)
    through = int((got == (right ^ np.uint8(SCRAMBLE))).all(axis=1).sum())
    bypassed = int((got == right).all(axis=1).sum())
    return through, bypassed, total - through - bypassed

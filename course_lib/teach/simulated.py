"""How a checker simulates a student's kernel: the checked run, and the second run that tells
whether out's data passed through shared memory.

    run = launch(fn, grid, block, args, owners=True)      # a SimRun; run.owners when asked for
    run.shared_flow = shared_flow(fn, grid, block, a, want, out_like)   # (through, bypassed, mixed)

:func:`launch` is ``Function.simulate`` with the checker's limits, plus what only a checker asks
the simulator for: ``owners`` (which block touched which element, ``sim.checks.owners``). :func:`shared_flow`
runs the launch again with the byte 0xA5 xor-ed into every value a shared-memory load returns
(``scramble_shared``) and sorts the elements of the new output: changed by exactly that byte in
every byte (it was moved through shared memory: once, or an odd number of times), unchanged (it
bypassed shared memory, or went through it an even number of times: no exercise stages twice), or
anything else (computed from shared data, or the run faulted or stopped because shared data
steered it). :func:`too_slow` words a launch the simulator would not finish within the checker's
work limit: how long it would take, how many times the limit that is, and why (instructions per
thread against the elements per thread the launch implies). It judges nothing
(``properties.uses_shared`` does).
"""
from __future__ import annotations

import re

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
    return flow(fn, grid, block, (out, a, np.int32(rows), np.int32(cols)), [(out, want)])


def flow(fn, grid, block, args, pairs) -> tuple[int, int, int]:
    """shared_flow for any parameter list: `args` with fresh buffers, `pairs` [(array written, what it
    must hold)], counted over every written buffer."""
    total = sum(int(want.size) for _, want in pairs)
    try:
        launch(fn, grid, block, args, check_races=False, count_metrics=False, scramble_shared=SCRAMBLE)
    except KernelError:
        return 0, 0, total
    through = bypassed = 0
    for out, want in pairs:
        n = int(want.size)
        got = out.reshape(-1).view(np.uint8).reshape(n, -1)
        right = want.reshape(-1).view(np.uint8).reshape(n, -1)
        through += int((got == (right ^ np.uint8(SCRAMBLE))).all(axis=1).sum())
        bypassed += int((got == right).all(axis=1).sum())
    return through, bypassed, total - through - bypassed


SLOW_HINT = ("a transpose needs only a few elements per thread: spread the work over the grid the launch implies "
             "(one tile per block, each thread a few elements of it) instead of a few threads looping over the "
             "matrix")


def implied(ex, on) -> str:
    """'this launch of N threads implies E elements per thread' for a shape of the exercise."""
    grid, block = ex.launch(on.rows, on.cols, on.batch)
    threads = int(np.prod(grid)) * int(np.prod(block))
    per = max(1, -(-on.rows * on.cols * on.batch // threads))
    return f"this launch of {threads:,} threads implies {per} element{'s' if per > 1 else ''} per thread"


def too_slow(ex, on, exc, fn=None) -> tuple[str, str]:
    """(what, hint) for a launch stopped by the work limit (``exc.reason == "work"``), in numbers: the
    instructions its first blocks ran per thread against one pass through the kernel's code, the
    elements per thread the launch implies, and the whole launch's work against the checker's limit."""
    text = exc.message.split(" The simulator")[0]
    work = re.search(r"\(([\d.]+e[+-]?\d+|[\d.]+) thread-steps", text)
    ran = re.search(r"executed ([\d,]+) instructions over ([\d,]+) thread slots", text)
    if not work:
        return f"the kernel is too slow: {text}", SLOW_HINT
    factor = float(work[1]) / LIMITS["max_work"]
    if ran:
        per = int(ran[1].replace(",", ""))
        code = len(fn.kernel.instructions) if fn is not None else 0
        passes = f", {per / code:,.0f} passes through its {code} instructions," if code else ""
        why = f"its first blocks ran {per:,} instructions per thread{passes} where {implied(ex, on)}"
    else:
        why = text[0].lower() + text[1:].rstrip(".")
    return (f"the kernel is too slow: {why}; the whole launch needs {factor:.2g} times the work "
            f"the checker allows ({float(work[1]):.2g} thread-steps against {LIMITS['max_work']:.2g}), and a correct "
            f"kernel of this exercise needs a small fraction of that allowance: some threads do the work of many",
            SLOW_HINT)

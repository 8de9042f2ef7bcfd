"""Running an exercise's kernel on its shapes, and saying why a result is wrong.

    runs, wrong, crashes = run_shapes(ex, transpose_tile, np.float32, seed=0)

For exercises.check, once ``given`` found the student's kernel and checked its parameter list:
simulates it on every shape of the exercise with race checking (``cases``: random input, poisoned
output, for the course's parameter list or a declared one), turning a KernelError — out of bounds, misaligned, a barrier
some threads skip, an endless loop — into a problem with the simulator's hint (a loop stopped by
the step limit is called endless only if it does not end on the exercise's tiny shape either;
otherwise the kernel is slow, and the problem says so); compares every element, with a hint from
where the wrong elements are and what they hold (``wrong``; a declared signature's buffers:
``outputs``); and reruns passing kernels on a GPU when there is one. It judges no property (``properties``) and writes no
report text beyond each problem's (what, hint).
"""
from __future__ import annotations

import dataclasses
import re

import numpy as np

from ..errors import KernelError, SimulationLimit
from . import cases, evidence, outputs, record, simulated
from .simulated import LIMITS, SLOW_HINT
from .evidence import Problem
from .wrong import diagnose

BOUNDS = "check the bounds tests: every index must stay inside in and out"


def needs(ex) -> set:
    """What the runs must record for the exercise's properties (``Property.needs``; own_tiles: owners)."""
    return {n for p in ex.properties for n in getattr(p, "needs", ())} | ({"owners"} if ex.own_tiles else set())


def run_shapes(ex, fn, dtype, seed):
    """([(Shape, SimRun)], [(Shape, (what, hint))] wrong results, [(Shape, (what, hint))] stopped runs).
    Each Shape carries the exercise's tile, block and element type; each run records what the
    exercise's properties need (``needs``): its owners, and for a right result its shared_flow."""
    runs, wrong, crashes = [], [], []
    wanted, loops = needs(ex), evidence.has_loops(fn)
    shared = cases.shared_arrays(getattr(fn.module, "code", ""))
    for i, shape in enumerate(ex.shapes):
        c = cases.case(ex, shape, dtype, seed + i, shared)
        on = dataclasses.replace(c.on, loops=loops)
        grid, block = ex.launch(on.rows, on.cols, on.batch)
        try:
            run = simulated.launch(fn, grid, block, c.args, owners="owners" in wanted)
        except SimulationLimit as exc:                 # every other shape would hit the limit too: stop
            crashes.append((on, Problem(*stopped(ex, fn, dtype, exc, on), evidence.STOPPED)))
            record.stopped(on, exc, crashes[-1][1])
            break
        except KernelError as exc:
            where = f" (line {exc.line})" if exc.line and f"line {exc.line}" not in exc.message else ""
            hint = (evidence.stopped_hint(ex, exc, on.batch) if not ex.custom else None) or exc.hint or BOUNDS
            crashes.append((on, Problem(exc.message + where, hint, evidence.STOPPED)))
            record.stopped(on, exc, crashes[-1][1])
            continue
        except Exception as exc:                       # the simulator's own limits must not reach the student raw
            crashes.append((on, Problem(f"{type(exc).__name__}: {exc}",
                                        "the simulator could not run this kernel; if it compiles and you think it is "
                                        "right, try it on a GPU and tell the course's maintainers", evidence.STOPPED)))
            record.stopped(on, exc, crashes[-1][1])
            break
        runs.append((on, run))
        run.out_written = cases.written_share(c)        # for evidence.did_work: what 'already right' may say
        problem = diagnose(ex, c.out, c.a, run, loops) if c.problem is None else outputs.diagnose(ex, c.problem, run)
        record.ran(on, run, *c.result(), problem)
        if problem:
            wrong.append((on, problem))
        elif "flow" in wanted:
            run.shared_flow = simulated.flow(fn, grid, block, *c.again())
    return runs, wrong, crashes


def stopped(ex, fn, dtype, exc, shape=None) -> tuple[str, str]:
    """(what, hint) for a run the simulator stopped. A loop still running is called endless only
    when the kernel does not finish on the exercise's tiny shape either; if it does, it is slow."""
    message = exc.message + (f" (line {exc.line})" if exc.line and f"line {exc.line}" not in exc.message else "")
    if getattr(exc, "reason", "") == "work":          # the first blocks' pace, projected over the launch
        return simulated.too_slow(ex, shape, exc, fn)
    if getattr(exc, "reason", "") != "loop":
        return message, exc.hint or SLOW_HINT
    c = cases.case(ex, ex.tiny, dtype, 0)
    on = c.on
    grid, block = ex.launch(on.rows, on.cols, on.batch)
    try:
        fn.simulate(grid, block, c.args, check_races=False, progress=False, max_steps=20_000, timeout=2.0)
    except SimulationLimit:
        return message.replace("probably an infinite loop", f"an endless loop (on a {on} matrix too)"), exc.hint
    except KernelError:
        pass
    loop = re.search(r"the loop at (lines? [\d-]+) has run ([\d,]+) times", exc.message)
    where = f"the loop at {loop[1]} had run {loop[2]} times" if loop else "a loop was"
    return (f"the kernel is too slow: {where} and was still running when the simulator stopped it "
            f"(max_steps={LIMITS['max_steps']:,} steps or {LIMITS['timeout']:g} s per batch of blocks), yet on a "
            f"{on} matrix it ends: it is not stuck, it does far too much work per thread"
            + (f" ({simulated.implied(ex, shape)})" if shape is not None else ""), SLOW_HINT)


# ---------------------------------------------------------------------------- on a GPU

def run_on_gpu(ex, fn, dtype, report, seed):
    """Every shape again on the GPU (through the launch guard); a difference becomes a problem."""
    import cupy as cp
    for i, shape in enumerate(ex.shapes):
        c = cases.case(ex, shape, dtype, seed + i)
        on = c.on
        grid, block = ex.launch(on.rows, on.cols, on.batch)
        device = tuple(cp.asarray(x) if isinstance(x, np.ndarray) else x for x in c.args)
        try:
            fn(grid, block, device)
            cp.cuda.runtime.deviceSynchronize()
        except Exception as exc:
            report.problems.append((f"on the GPU, a {on} matrix: {str(exc).splitlines()[0]}",
                                    "the simulator passed it: look for a race or an uninitialised read"))
            return
        for x, d in zip(c.args, device):               # what the GPU wrote, where the checker looks
            if isinstance(x, np.ndarray):
                x[...] = d.get()
        problem = diagnose(ex, c.out, c.a) if c.problem is None else outputs.diagnose(ex, c.problem)
        if problem:
            report.problems.append((f"on the GPU, a {on} matrix: {problem[0]}",
                                    "the simulator passed it: a missing __syncthreads() shows up only on a GPU sometimes"))
            return
    report.passed.append("correct on the GPU too")

"""Running an exercise's kernel on its shapes, and saying why a result is wrong.

    runs, wrong, crashes = run_shapes(ex, transpose_tile, np.float32, seed=0)

For exercises.check: finds the student's kernel (by name in the notebook, or the object passed)
and checks its parameter list; simulates it on every shape of the exercise with race checking
(random input, poisoned output), turning a KernelError — out of bounds, misaligned, a barrier
some threads skip, an endless loop — into a problem with the simulator's hint (a loop stopped by
the step limit is called endless only if it does not end on the exercise's tiny shape either;
otherwise the kernel is slow, and the problem says so); compares every element, with a hint from
where the wrong elements are and what they hold (``wrong``); refuses a kernel whose last
``%%cuda`` cell did not compile (``kernel.cells``); and reruns passing kernels on a GPU when there
is one. It judges no property (``properties``) and writes no
report text beyond each problem's (what, hint).
"""
from __future__ import annotations

import dataclasses
import re

import numpy as np

from ..compile.source import C_NAME
from ..errors import KernelError, SimulationLimit
from ..kernel import cells
from ..kernel.module import Function, Template
from . import evidence, origin, record, sensors, simulated
from .exercise import expected, input_for, output_for
from .simulated import LIMITS, SLOW_HINT
from .evidence import Problem
from .wrong import diagnose, written_share

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
    for i, shape in enumerate(ex.shapes):
        a, on = input_for(ex, shape, dtype, seed + i)
        on = dataclasses.replace(on, tile=tuple(ex.tile) if ex.tile else None, block=tuple(ex.block),
                                 ctype=C_NAME[np.dtype(dtype)], loops=loops)
        out = output_for(ex, a)
        grid, block = ex.launch(on.rows, on.cols, on.batch)
        try:
            run = simulated.launch(fn, grid, block, (out, a, np.int32(on.rows), np.int32(on.cols)),
                                   owners="owners" in wanted)
        except SimulationLimit as exc:                 # every other shape would hit the limit too: stop
            crashes.append((on, Problem(*stopped(ex, fn, dtype, exc, on), evidence.STOPPED)))
            record.stopped(on, exc, crashes[-1][1])
            break
        except KernelError as exc:
            where = f" (line {exc.line})" if exc.line and f"line {exc.line}" not in exc.message else ""
            hint = evidence.stopped_hint(ex, exc, on.batch) or exc.hint or BOUNDS
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
        run.out_written = written_share(out)            # for evidence.did_work: what 'already right' may say
        problem = diagnose(ex, out, a, run, loops)
        record.ran(on, run, out, expected(ex, a), problem)
        if problem:
            wrong.append((on, problem))
        elif "flow" in wanted:
            run.shared_flow = simulated.shared_flow(fn, grid, block, a, expected(ex, a), output_for(ex, a))
    return runs, wrong, crashes


def stopped(ex, fn, dtype, exc, shape=None) -> tuple[str, str]:
    """(what, hint) for a run the simulator stopped. A loop still running is called endless only
    when the kernel does not finish on the exercise's tiny shape either; if it does, it is slow."""
    message = exc.message + (f" (line {exc.line})" if exc.line and f"line {exc.line}" not in exc.message else "")
    if getattr(exc, "reason", "") == "work":          # the first blocks' pace, projected over the launch
        return simulated.too_slow(ex, shape, exc, fn)
    if getattr(exc, "reason", "") != "loop":
        return message, exc.hint or SLOW_HINT
    a, on = input_for(ex, ex.tiny, dtype, 0)
    grid, block = ex.launch(on.rows, on.cols, on.batch)
    try:
        fn.simulate(grid, block, (output_for(ex, a), a, np.int32(on.rows), np.int32(on.cols)), check_races=False,
                    progress=False, max_steps=20_000, timeout=2.0)
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


# ---------------------------------------------------------------------------- finding the kernel

def find_kernel(ex, kernel, report):
    """The compiled Function to check, or None with the reason added to `report`: none found, not a
    kernel, compiled from the course's sources (``origin``), or not the exercise's parameter list."""
    if kernel is None:
        try:
            from IPython import get_ipython
            kernel = get_ipython().user_ns.get(ex.kernel)
        except (ImportError, AttributeError):
            kernel = None
        if kernel is None:
            failed = cells.failure(ex.kernel)
            report.problems.append(_not_compiled(ex.kernel, failed, None) if failed else (
                f"there is no kernel named {ex.kernel} yet",
                f"run the %%cuda cell that defines __global__ void {ex.kernel}(...) first"))
            return None
    if isinstance(kernel, Template):
        report.problems.append((f"{kernel.name} is a template", f"check one instance: {kernel.name}[np.float32, ...]"))
        return None
    if not isinstance(kernel, Function):
        report.problems.append((f"{kernel!r} is not a compiled kernel",
                                f"pass the name the %%cuda cell bound, e.g. check('{ex.key}', {ex.kernel})"))
        return None
    failed = cells.outdated(kernel, dict.fromkeys((ex.kernel, kernel.name)))
    if failed:
        report.problems.append(_not_compiled(kernel.name, failed, kernel.name))
        return None
    refused = origin.borrowed(kernel, ex) or sensors.reads_clock(kernel)
    if refused:
        report.problems.append(refused)
        return None
    sig = kernel.signature or []
    shape_ok = len(sig) == 4 and sig[0].pointer and sig[1].pointer and not sig[2].pointer and not sig[3].pointer
    if not shape_ok:
        have = ", ".join(f"{p.ctype} {p.name}" for p in sig)
        report.problems.append((f"{kernel.name}({have}) does not take (T* out, const T* in, int rows, int cols)",
                                "keep the parameter list of the exercise: out first, then in, then rows and cols"))
        return None
    types = {p.dtype for p in sig[:2] if p.dtype is not None}
    if len(types) > 1:
        report.problems.append((f"{kernel.name} takes out and in of different types ({sig[0].base} and {sig[1].base})",
                                "out and in hold the same elements: give both the exercise's element type"))
        return None
    if types and types.pop() not in [np.dtype(d) for d in ex.dtypes]:
        report.problems.append((f"{kernel.name} moves {sig[0].base}; this exercise is about "
                                + ", ".join(C_NAME[np.dtype(d)] for d in ex.dtypes),
                                "use the element type of the exercise's stub"))
        return None
    return kernel


def _not_compiled(name, cell, older) -> tuple[str, str]:
    """(what, hint) for a check whose kernel's last %%cuda cell did not compile (``kernel.cells``)."""
    what = f"the last %%cuda cell that defines {name} did not compile ({cell.where()})"
    what += (f": {older} still holds an earlier cell's kernel, and this check judges only the code you see, so it "
             "checked nothing" if older else f", so there is no {name} to check")
    own = getattr(cell.error, "hint", None)
    return what, ("fix the error shown under that cell" + (f" ({own.rstrip('.')})" if own else " (the caret marks "
                                                           "the place)") + ", then run that cell again and this check")


# ---------------------------------------------------------------------------- on a GPU

def run_on_gpu(ex, fn, dtype, report, seed):
    """Every shape again on the GPU (through the launch guard); a difference becomes a problem."""
    import cupy as cp
    for i, shape in enumerate(ex.shapes):
        a, on = input_for(ex, shape, dtype, seed + i)
        out = cp.asarray(output_for(ex, a))
        grid, block = ex.launch(on.rows, on.cols, on.batch)
        try:
            fn(grid, block, (out, cp.asarray(a), np.int32(on.rows), np.int32(on.cols)))
            cp.cuda.runtime.deviceSynchronize()
        except Exception as exc:
            report.problems.append((f"on the GPU, a {on} matrix: {str(exc).splitlines()[0]}",
                                    "the simulator passed it: look for a race or an uninitialised read"))
            return
        problem = diagnose(ex, out.get(), a)
        if problem:
            report.problems.append((f"on the GPU, a {on} matrix: {problem[0]}",
                                    "the simulator passed it: a missing __syncthreads() shows up only on a GPU sometimes"))
            return
    report.passed.append("correct on the GPU too")

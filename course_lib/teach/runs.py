"""Running an exercise's kernel on its shapes, and saying why a result is wrong.

    runs, wrong, crashes = run_shapes(ex, transpose_tile, np.float32, seed=0)

For exercises.check: finds the student's kernel (by name in the notebook, or the object passed)
and checks its parameter list; simulates it on every shape of the exercise with race checking
(random input, poisoned output), turning a KernelError — out of bounds, misaligned, a barrier
some threads skip, an endless loop — into a problem with the simulator's hint (a loop stopped by
the step limit is called endless only if it does not end on the exercise's tiny shape either;
otherwise the kernel is slow, and the problem says so); compares every element and picks a hint from where the wrong elements are and what they hold (misplaced
elements of `in`: an index; values `in` does not hold: a type that changed them on the way; a
matrix of a batch written by another matrix's blocks: the batch offset); and reruns passing
kernels on a GPU when there is one. It judges no property (``properties``) and writes no
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
from ..transposes import verify
from ..transposes.data import poisoned
from . import origin, sensors, simulated
from .exercise import expected, input_for, output_for
from .simulated import LIMITS, SLOW_HINT

BOUNDS = "check the bounds tests: every index must stay inside in and out"


def needs(ex) -> set:
    """What the runs must record for the exercise's properties (``Property.needs``; own_tiles: owners)."""
    return {n for p in ex.properties for n in getattr(p, "needs", ())} | ({"owners"} if ex.own_tiles else set())


def run_shapes(ex, fn, dtype, seed):
    """([(Shape, SimRun)], [(Shape, (what, hint))] wrong results, [(Shape, (what, hint))] stopped runs).
    Each Shape carries the exercise's tile, block and element type; each run records what the
    exercise's properties need (``needs``): its owners, and for a right result its shared_flow."""
    runs, wrong, crashes = [], [], []
    wanted = needs(ex)
    for i, shape in enumerate(ex.shapes):
        a, on = input_for(ex, shape, dtype, seed + i)
        on = dataclasses.replace(on, tile=tuple(ex.tile) if ex.tile else None, block=tuple(ex.block),
                                 ctype=C_NAME[np.dtype(dtype)])
        out = output_for(ex, a)
        grid, block = ex.launch(on.rows, on.cols, on.batch)
        try:
            run = simulated.launch(fn, grid, block, (out, a, np.int32(on.rows), np.int32(on.cols)),
                                   owners="owners" in wanted)
        except SimulationLimit as exc:                 # every other shape would hit the limit too: stop
            crashes.append((on, stopped(ex, fn, dtype, exc, on)))
            break
        except KernelError as exc:
            where = f" (line {exc.line})" if exc.line and f"line {exc.line}" not in exc.message else ""
            crashes.append((on, (exc.message + where, exc.hint or BOUNDS)))
            continue
        except Exception as exc:                       # the simulator's own limits must not reach the student raw
            crashes.append((on, (f"{type(exc).__name__}: {exc}",
                                 "the simulator could not run this kernel; if it compiles and you think it is "
                                 "right, try it on a GPU and tell the course's maintainers")))
            break
        runs.append((on, run))
        problem = diagnose(ex, out, a, run)
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


def diagnose(ex, out, a, run=None):
    """(what is wrong, hint) for one shape's output, or None when every element is right."""
    want = expected(ex, a)
    if out.ndim == 3:
        return _diagnose_batch(ex, out, a, want)
    m = verify.compare(out, want, 32 if ex.grid else ex.tile[0])
    if m.ok:
        return None
    return str(m), _hint(m, out, a, want, ex, run)


def _hint(m, out, a, want, ex, run=None) -> str:
    bad = ~_same(out, want)
    written = bad & ~_same(out, np.broadcast_to(poisoned((1,), out.dtype)[0], out.shape))
    early = next((r for r in getattr(run, "races", []) if getattr(r, "copy", None) and r.op == "reads"), None)
    if early:       # the values stored were read before they landed: poison in out does not mean unwritten
        return (f"line {early.lines[1]} reads the tile before the {early.copy} copy of line {early.lines[0]} has "
                "landed, and what it read reaches out: wait for the copies first (its __pipeline_wait_prior(N) "
                "must leave no group of them on its way, then __syncthreads() for every thread's)")
    if m.unwritten == m.total:
        return "nothing was written: every element of out must be stored by some thread"
    if m.unwritten == m.wrong:      # before 'more than half wrong': an unwritten element is no misplaced one
        return _unwritten_hint(m, bad, a, ex)
    uninitialized = [w for w in getattr(run, "warnings", []) if w.kind == "uninitialized"]
    if uninitialized:
        w = uninitialized[0]
        return (f"line {w.line} reads shared memory that no thread of the block wrote, and those values reach out: "
                "every element a thread reads from the tile must be stored first — fill the whole tile")
    if written.any():
        changed = _changed_values(out[written], want[written], a)
        if changed:
            return changed
    edge = _partial_tiles(ex, a.shape, out.shape)
    if edge is not None and edge[bad].all():
        return ("all wrong elements come from the last, partial tiles (the matrix is not a multiple of the tile): "
                "threads past the edge must skip loading and storing, but the others must still do their part — "
                "test rows and cols separately, on the way in and on the way out")
    if m.wrong > m.total // 2:
        if ex.copy:
            return "out has the shape of in: element (r, c) goes to out[r * cols + c]"
        hint = "out is cols x rows: element (r, c) of in goes to out[c * rows + r]"
        if any(p.name == "stages the tile in shared memory" for p in ex.properties):
            hint += ("; after the barrier each thread reads the tile transposed (tile[threadIdx.x][...]) and the "
                     "block lands at the mirrored place")
        return hint
    return "compare the indices used to read in and to write out for the elements listed above"


def _unwritten_hint(m, bad, a, ex) -> str:
    """Every wrong element unwritten: threads all on a few elements, whole tiles unstored, or single misses."""
    if (m.total - m.unwritten) * 32 <= m.total:
        return (f"only {m.total - m.unwritten} element(s) of out were written: the threads store to the same few "
                "places — each thread's (r, c) must come from its threadIdx and blockIdx")
    tiles = _tile_mask(ex, a.shape, bad)
    if tiles is not None and tiles.any() and (tiles.all(axis=(1, 3)) | ~tiles.any(axis=(1, 3))).all():
        return ("the elements written are right, but whole tiles were never written: each block must cover its "
                f"own tile ({ex.tile[0]} columns x {ex.tile[1]} rows of in) — check which blockIdx picks the "
                "tile's columns and which its rows, each times the tile's size")
    return ("those elements of out were never written: find the thread that should store the ones listed "
            "above — is there one, and does its bounds test let it?")


def _tile_mask(ex, in_shape, bad):     # bad in in's coordinates, (tile row, row, tile column, column)
    (rows, cols), (tx, ty) = in_shape, ex.tile
    if ex.grid is not None or rows % ty or cols % tx:
        return None
    b = bad.reshape(in_shape) if ex.copy else np.ascontiguousarray(bad.reshape(cols, rows).T)
    return b.reshape(rows // ty, ty, cols // tx, tx)


def _partial_tiles(ex, in_shape, out_shape):
    """Mask over out of the elements whose source lies in a partial tile of the grid (None: no grid of tiles)."""
    rows, cols = in_shape
    if ex.grid is not None or (rows % ex.tile[1] == 0 and cols % ex.tile[0] == 0):
        return None
    edge = np.zeros(in_shape, bool)
    if rows % ex.tile[1]:
        edge[rows - rows % ex.tile[1]:, :] = True
    if cols % ex.tile[0]:
        edge[:, cols - cols % ex.tile[0]:] = True
    return edge if ex.copy else np.ascontiguousarray(edge.T).reshape(out_shape)


def _changed_values(got, want, a) -> str | None:
    """A hint when the wrong elements hold values that `in` does not: a type changed them."""
    if np.isin(got, a).mean() > 0.5:
        return None                                    # elements of in, in the wrong place: an index problem
    t = C_NAME[a.dtype]
    if a.dtype.kind == "f":
        if np.array_equal(got, np.trunc(want).astype(a.dtype)):
            return (f"the values lost their fraction (1.73 became 1.0): an int holds the elements on the way — "
                    f"declare the tile and any temporary as {t}")
        if np.allclose(got, want, rtol=1e-2):
            return (f"the values are close but not equal: they passed through a narrower type (half, or float for "
                    f"double) — keep them {t} all the way")
    elif (got == np.iinfo(a.dtype).max).mean() > 0.5:
        return (f"the wrong elements hold all ones ({np.iinfo(a.dtype).max}): a signed type's sign was spread into "
                f"them (a short or char widened, then shifted or or-ed) — keep the elements {t}, unsigned")
    return (f"the wrong elements hold values that are nowhere in `in`: they were changed on the way (another type "
            f"than {t}, or bytes mixed up) — keep the elements {t} from the load to the store")


def _diagnose_batch(ex, out, a, want):
    offsets = ("matrix b starts at element b * rows * cols of in, and its transpose at b * cols * rows of out "
               "(the same count): move both pointers by blockIdx.z times that")
    unwritten = [k for k in range(len(a)) if np.isnan(out[k]).all()] if out.dtype.kind == "f" else []
    for k in range(len(a)):
        m = verify.compare(out[k], want[k], ex.tile[0])
        if m.ok:
            continue
        if unwritten and k == unwritten[0] and k > 0:
            return (f"matrices {', '.join(map(str, unwritten))} of out were never written (matrix 0 was)",
                    "every block of grid.z = b must work on matrix b: move in and out by "
                    "blockIdx.z * rows * cols elements (as size_t) before indexing")
        bad = ~_same(out[k], want[k])
        source = [b for b in range(len(a)) if b != k and np.isin(out[k][bad], a[b]).mean() > 0.9]
        if source:
            return (f"matrix {k}: {m}; the wrong values come from matrix {source[0]} of in",
                    f"blocks of matrix {source[0]} wrote into matrix {k}'s part of out: {offsets}")
        if m.unwritten:
            return (f"matrix {k}: {m}",
                    "a thread outside the matrix when loading may be inside it when storing (the roles of x and y "
                    "swap): do not return early — test every load and store against rows and cols")
        return (f"matrix {k}: {m}", offsets if k > 0 else
                "check the single-matrix transpose (bounds tests, out[c * rows + r])")
    return None


def _same(x, y):
    return (x == y) | (np.isnan(x) & np.isnan(y)) if x.dtype.kind == "f" else x == y


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
    refused = origin.borrowed(kernel) or sensors.reads_clock(kernel)
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

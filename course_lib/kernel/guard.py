"""The guarded GPU launch: simulate a launch's edge blocks on the CPU before the GPU runs it.

On a GPU, an out-of-bounds write either corrupts memory silently (CuPy's memory pool hides
it even from compute-sanitizer) or kills the CUDA context, and the student must restart the
notebook. So ``Function.__call__`` first runs :func:`before_launch`: the simulator executes
the launch's corner blocks (``edge_blocks``: first and last on each axis, at most 8) — where
bounds tests, partial tiles and overflowing indexes go wrong — against stand-in
buffers of exactly the arguments' sizes. If a simulated block faults (out of bounds,
misaligned, barrier deadlock, failed assert), the launch is refused with the simulator's
diagnosis, raised as the same exception class with ``refused = True``.

What is honest about it: the stand-ins read the *real* data (a numpy argument directly; a
CuPy argument page by page from the device, only the pages the simulated blocks touch) and
keep the kernel's own writes in an overlay, so the simulated blocks take the same path as on
the GPU and nothing is copied back. What it cannot see: blocks it did not simulate, data
another block writes during the launch, and timing; a kernel still running when the budget
(``BUDGET_S``) runs out is launched unchecked (the guard cannot tell a long loop from an
infinite one in 0.4 s). A launch whose configuration, argument shapes and scalar values
equal one that already passed is not checked again.

Opt out per call with ``fn(grid, block, args, guard=False)``, for the session with
``cl.guard.ENABLED = False`` (or ``COURSE_LIB_GUARD=0``). The course's own kernels (modules marked
``trusted`` by ``course_lib.transposes``) are never checked. ``Shape(shape, dtype)``
stands for an array without allocating it, to ask "would this launch over a 50000 x 50000
matrix fault?" on a laptop.
"""
from __future__ import annotations

import copy
import itertools
import os
import time
from dataclasses import dataclass, field

import numpy as np

from ..errors import BarrierError, KernelError, KernelTrap, MemoryAccessError, SimulationLimit
from ..sim.executor import Program
from ..sim.movement.tma import TensorMap
from ..sim.spaces.memory import GlobalMemory
from .launch import Launch

ENABLED = os.environ.get("COURSE_LIB_GUARD", "1").lower() not in ("0", "off", "false", "no")
BUDGET_S = 0.4          # wall-clock seconds the simulation may take before the launch goes ahead
PAGE = 4096             # bytes fetched from the device at a time
_CACHE_SIZE = 128

last: "GuardReport | None" = None   # what the most recent guarded launch did, for notebooks


class Shape:
    """An array's shape and dtype, without its memory: a stand-in for :func:`check`."""

    def __init__(self, shape, dtype=np.float32):
        self.shape = tuple(int(s) for s in (shape if isinstance(shape, (tuple, list)) else (shape,)))
        self.dtype = np.dtype(dtype)
        self.size = int(np.prod(self.shape, dtype=object))
        self.nbytes = self.size * self.dtype.itemsize
        self.itemsize = self.dtype.itemsize
        self.ndim = len(self.shape)

    def __repr__(self):
        return f"Shape({self.shape}, {self.dtype})"


@dataclass
class GuardReport:
    """What one guard check did: which blocks it simulated, how long it took, and why it stopped."""
    checked: bool
    blocks: list = field(default_factory=list)
    elapsed: float = 0.0
    note: str = ""

    def __str__(self):
        if not self.checked:
            return f"not checked: {self.note}"
        return f"simulated blocks {self.blocks} in {self.elapsed * 1e3:.0f} ms: {self.note}"


def edge_blocks(grid) -> list[tuple]:
    """The corner blocks of the grid (first and last on each axis): at most 8."""
    axes = [sorted({0, int(g) - 1}) for g in tuple(grid) + (1,) * (3 - len(grid))]
    return list(itertools.product(*axes))


def before_launch(fn, launch, *, guard=None, stream=None):
    """Called by ``Function.__call__`` with the checked launch: simulate its corner blocks unless
    switched off; raise the simulator's diagnosis if the GPU must not run it."""
    global last
    if not (ENABLED if guard is None else guard):
        last = GuardReport(False, note="switched off (guard=False or course_lib.guard.ENABLED = False)")
        return last
    if getattr(fn.module, "trusted", False):
        last = GuardReport(False, note="a course kernel (course_lib.transposes): not checked")
        return last
    key = _launch_key(launch)
    passed = fn.__dict__.setdefault("_guard_passed", {})
    if key is not None and key in passed:
        last = GuardReport(False, note="the same launch configuration and shapes passed before")
        return last
    if stream is not None and any(_on_device(a) for a in launch.args):
        stream.synchronize()   # fetch what earlier work on this stream wrote
    try:
        last = simulate_edges(fn, launch)
    except KernelError as err:
        last = getattr(err, "report", last)   # a refusal still says which blocks it took and how long
        raise
    if key is not None:
        if len(passed) >= _CACHE_SIZE:
            passed.pop(next(iter(passed)))
        passed[key] = True
    return last


def check(fn, grid, block, args, shared_mem=0, *, budget=BUDGET_S, limits=None, blocks=None) -> GuardReport:
    """Would this launch fault? Check it (arrays may be :class:`Shape` stand-ins), then simulate its
    edge blocks (or `blocks`). Returns a GuardReport if it may go ahead; raises the simulator's
    diagnosis (with ``refused = True``) if not. Configuration and argument errors raise as usual."""
    probe = [np.empty(0, a.dtype) if isinstance(a, Shape) else a for a in args]
    checked = fn.check_launch(grid, block, probe, shared_mem, limits=limits)
    real = tuple(a if isinstance(a, Shape) else c for a, c in zip(args, checked.args))
    return simulate_edges(fn, Launch(checked.grid, checked.block, real, checked.shared_mem),
                          budget=budget, blocks=blocks)


def simulate_edges(fn, launch, *, budget=BUDGET_S, blocks=None) -> GuardReport:
    """Simulate the checked launch's corner blocks (or `blocks`) on stand-ins for its arrays."""
    t0 = time.perf_counter()
    memory = GlobalMemory()
    params, offsets = _pack(fn, launch.args, memory)
    chosen = blocks if blocks is not None else edge_blocks(launch.grid)
    try:
        program = Program(fn.module.parsed, fn.kernel, grid=launch.grid, block=launch.block, params=params,
                          param_offsets=offsets, globals_=memory, dynamic_shared=int(launch.shared_mem),
                          source=fn.module.code, filename=fn.module.filename, check_races=False,
                          count_metrics=False, timeout=budget, echo=False, blocks=chosen, trace_block=-1)
        program.run()
    except (MemoryAccessError, BarrierError, KernelTrap) as err:   # a failed assert, a trap: the context dies
        raise refused(err, chosen, t0) from None
    except SimulationLimit as err:
        if getattr(err, "reason", "") == "loop" and not err.timed_out:   # a loop past max_steps: it would hang the GPU
            raise refused(err, chosen, t0) from None
        return GuardReport(True, chosen, time.perf_counter() - t0,
                           f"still running after {budget} s: launched without a verdict")
    except KernelError as err:
        return GuardReport(True, chosen, time.perf_counter() - t0, f"the simulator could not finish ({err.message})")
    except Exception as err:  # a simulator bug must never stop a student's launch
        return GuardReport(True, chosen, time.perf_counter() - t0, f"the simulator failed ({type(err).__name__}: {err})")
    return GuardReport(True, chosen, time.perf_counter() - t0, "no fault")


def refused(err: KernelError, blocks, t0=None) -> KernelError:
    """The simulator's error, reworded as the reason a GPU launch was refused (``.report`` says
    which blocks were simulated and for how long)."""
    new = copy.copy(err)
    elapsed = time.perf_counter() - t0 if t0 is not None else 0.0
    new.report = GuardReport(True, list(blocks), elapsed, f"refused: {err.message.splitlines()[0]}")
    new.message = (f"GPU launch refused: the guard simulated {len(blocks)} corner block(s) of this launch on "
                   f"the CPU first and found a fault that on the GPU corrupts memory or breaks the CUDA context:\n"
                   f"{err.message}")
    new.hint = ((err.hint + "\n") if err.hint else "") + (
        "the GPU did not run; to launch anyway pass guard=False, or set course_lib.guard.ENABLED = False")
    new.refused = True
    new.args = (new._render(),)
    return new


# ----------------------------------------------------------------------------- stand-in buffers

def _on_device(a):
    return hasattr(a, "__cuda_array_interface__") and not isinstance(a, np.ndarray)


def _pack(fn, args, memory):
    """Kernel parameter bytes, with every array argument placed as a stand-in buffer."""
    params, offsets = bytearray(), {}
    for i, (arg, (pname, _, psize, palign)) in enumerate(zip(args, fn.kernel.params)):
        start = -(-len(params) // palign) * palign
        params.extend(b"\0" * (start - len(params)))
        offsets[pname] = start
        tensor_map = arg if isinstance(arg, TensorMap) else None
        if tensor_map is not None:
            arg = tensor_map.array              # the map is encoded over its array's stand-in
        if isinstance(arg, (np.ndarray, Shape)) or _on_device(arg):
            p = fn.signature[i] if fn.signature and i < len(fn.signature) else None
            name = p.name if p else f"arg{i}"
            label = f"argument {i}" + (f" '{p.name}'" if p else "") + f" ({'x'.join(map(str, arg.shape))} {arg.dtype})"
            base = memory.add_stand_in(name, int(arg.nbytes), arg.dtype.itemsize, _reader(arg), label=label)
            raw = tensor_map.encode(base) if tensor_map is not None else int(base).to_bytes(8, "little")
        else:
            raw = np.asarray(arg).tobytes()
        params.extend(raw[:psize].ljust(psize, b"\0"))
    return bytes(params), offsets


def _reader(arg):
    """byte offsets -> the argument's bytes there."""
    if isinstance(arg, Shape):
        return lambda off: np.zeros(np.shape(off), np.uint8)
    if isinstance(arg, np.ndarray):
        flat = arg.reshape(-1).view(np.uint8)
        return lambda off: flat[off]
    return device_reader(arg)


def device_reader(arr, fetch=None):
    """Read a device array's bytes a page at a time, only the pages asked for (cached).

    `fetch(lo, n) -> n bytes` copies device memory; by default a synchronous cudaMemcpy."""
    nbytes = int(np.prod(arr.shape, dtype=np.int64)) * np.dtype(arr.dtype).itemsize
    if fetch is None:
        ptr = int(arr.__cuda_array_interface__["data"][0])
        fetch = _memcpy_from(ptr)
    pages: dict[int, np.ndarray] = {}

    def read(off):
        off = np.asarray(off, np.int64)
        page_of = off // PAGE
        wanted = np.unique(page_of)
        missing = [int(p) for p in wanted if int(p) not in pages]
        for run in _runs(missing):   # one copy per run of adjacent pages
            lo, hi = run[0] * PAGE, min((run[-1] + 1) * PAGE, nbytes)
            data = np.zeros((len(run)) * PAGE, np.uint8)
            data[:hi - lo] = fetch(lo, hi - lo)
            for k, p in enumerate(run):
                pages[p] = data[k * PAGE:(k + 1) * PAGE]
        table = np.stack([pages[int(p)] for p in wanted])
        return table[np.searchsorted(wanted, page_of), off % PAGE]
    return read


def _memcpy_from(ptr):
    import cupy

    def fetch(lo, n):
        out = np.empty(n, np.uint8)
        cupy.cuda.runtime.memcpy(out.ctypes.data, ptr + lo, n, cupy.cuda.runtime.memcpyDeviceToHost)
        return out
    return fetch


def _runs(pages):
    out = []
    for p in sorted(pages):
        if out and p == out[-1][-1] + 1:
            out[-1].append(p)
        else:
            out.append([p])
    return out


def _launch_key(launch):
    try:
        parts = [launch.grid, launch.block, launch.shared_mem]
        for a in launch.args:
            if isinstance(a, Shape) or hasattr(a, "shape") and getattr(a, "ndim", 0) > 0:
                parts.append(("array", tuple(a.shape), str(a.dtype)))
            else:
                parts.append(("scalar", type(a).__name__, np.asarray(a).tobytes()))
        return tuple(parts)
    except Exception:
        return None

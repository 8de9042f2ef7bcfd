"""What simulating a kernel costs, in thread-steps, so that a launch can be judged before it runs.

A *thread-step* is one arithmetic instruction over one thread slot: what the simulator's numpy
operations cost per element, ``STEPS_PER_SECOND`` of them per second on one core of the CI
machine. Other instructions cost more per slot (:func:`weight`): a global load or store ~60
(address checks, sector counting, a gather or scatter whose host cache misses grow with the
stride: 20 for a coalesced access, 130 for a transpose's strided store), a shared one ~110
(bank costing and the race detector), a warp shuffle ~50, an atomic ~150 (a read and a write,
applied to all threads at once where no two share an address, as when an atomic stands for a load
or a store; thread by thread, some 50 times slower, where they do: rare in course kernels); branches,
barriers and parameter loads ~0. Every instruction a batch executes also costs ``OVERHEAD`` steps
whatever its threads (Python's part), every thread slot of a batch ``SLOT`` steps whatever its
kernel (its ids, masks and exit: an empty kernel on 2^31-1 blocks is two minutes of that alone),
and building the launch's code ``BUILD`` steps per instruction. The constants were fitted on 18 course kernels at 1024² to
4096² (2026-11-26); ``benchmarks/simulator.py --estimates`` prints estimate against real time.

- :func:`straight_line`: a batch running the kernel once along the path its threads usually take
  (an ``if`` body, the cheaper of ``if``/``else``), every loop body once: exact for straight-line
  code, a lower bound for loops;
- :func:`executed`: a batch running the instructions the counts say (measured after a batch).

Limits: divergent batches (partial tiles) cost up to twice what this says, since masked
operations cost more than whole ones; a kernel whose threads usually take the costlier of two
alternatives is underestimated up front (not after its first batch, which counts what ran).
"""
from __future__ import annotations

import numpy as np

from ..compile.ptx import TYPES
from .isa.access import space_of

STEPS_PER_SECOND = 7e9
OVERHEAD = 70_000          # steps per instruction a batch executes
SLOT = 10                  # steps per thread slot of a batch, whatever it executes (measured: 8.6)
BUILD = 600_000            # steps per instruction of the kernel, once per launch
PER_SLOT = {"arith": 1, "free": 0, "global": 60, "shared": 110, "local": 60, "warp": 50,
            "atomic add": 100, "atomic": 150, "call": 3_000}
_FREE = ("bra", "bar", "barrier", "ret", "exit", "membar", "fence")


def kind(ins) -> str:
    op = ins.opcode
    if op in ("ld", "st", "ldu"):
        space = space_of(ins)
        return {"param": "free", "shared": "shared", "local": "local"}.get(space, "global")
    if op in ("atom", "red"):
        integer = ins.type in TYPES and ins.type[0] in "bus"
        return "atomic add" if "add" in ins.mods and integer else "atomic"
    if op in ("shfl", "vote", "activemask"):
        return "warp"
    if op == "call":
        return "call"
    return "free" if op in _FREE else "arith"


def weight(ins) -> int:
    """Thread-steps per thread slot of one execution of `ins`."""
    return PER_SLOT[kind(ins)]


def weights(kernel) -> np.ndarray:
    return np.array([weight(ins) for ins in kernel.instructions], np.float64)


def executed(kernel, slots: int, counts) -> float:
    """Steps for a batch of `slots` thread slots that executed instruction i counts[i] times."""
    counts = np.asarray(counts[:len(kernel.instructions)], np.float64)
    return float(counts @ (OVERHEAD + slots * weights(kernel))) + SLOT * slots


def straight_line(kernel, slots: int) -> float:
    """Steps for a batch of `slots` running the kernel once along the path its threads usually
    take (loops once). At an ``if`` without ``else`` the body counts (the usual case is the
    bounds test that holds); of two alternatives that meet again (``if``/``else``) the cheaper
    counts: a vector path and its scalar fallback for edges, a fast path and a careful one."""
    cost = OVERHEAD + slots * weights(kernel)
    n = len(kernel.instructions)
    best = np.zeros(n + 1)
    for i in range(n - 1, -1, -1):
        ways = [best[s] for s in _forward(kernel, i)]
        pick = min if len(ways) == 2 and not _flows_into(kernel, i) else max
        best[i] = cost[i] + pick(ways, default=0.0)
    return (float(best[0]) if n else 0.0) + SLOT * slots


def _flows_into(kernel, i):
    """Does the code between conditional branch i and its target always reach the target (an
    ``if`` without ``else``), rather than jump past it or leave?"""
    target = kernel.labels[kernel.instructions[i].operands[0].name]
    for ins in kernel.instructions[i + 1:target]:
        if ins.opcode in ("ret", "exit", "trap"):
            return False
        if ins.opcode == "bra" and ins.operands and kernel.labels.get(ins.operands[0].name, target) > target:
            return False
    return True


def _forward(kernel, i):
    """Where instruction i goes next, back edges (loops) left out."""
    ins = kernel.instructions[i]
    if ins.opcode in ("ret", "exit") and ins.guard is None:
        return ()
    if ins.opcode != "bra":
        return (i + 1,)
    target = kernel.labels.get(ins.operands[0].name) if ins.operands else None
    ahead = (target,) if target is not None and target > i else ()
    return ahead + ((i + 1,) if ins.guard is not None or not ahead else ())


def seconds(steps: float) -> float:
    return steps / STEPS_PER_SECOND

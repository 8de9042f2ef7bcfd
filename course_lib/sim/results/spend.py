"""What a simulated kernel spends: the one computation that budgets and leaderboards judge by.

    from course_lib.sim.results.spend import spend, rank_key
    s = spend(run)                      # a SimRun, or what sim.run(...) returns (its .sim)
    s.sectors, s.wavefronts, s.instructions
    s.per(elements)                     # {"sectors": ..., ...} per 1024 of `elements`
    sorted(kernels, key=lambda k: rank_key(spend(runs[k])))   # a ranking: fewer first

Three counts, each exact and the same on every machine, each including everything of its kind a
kernel makes the hardware do, so that no kernel looks cheaper by moving work where a count does not
look (issue 35: a 16-byte cp.async kernel once "beat" ``fast`` on counts that left out its writes
into shared memory and every instruction but the memory ones):

- **sectors**: 32-byte sectors of global memory, every load, store, atomic and cp.async read
  (Nsight Compute's l1tex__t_sectors_pipe_lsu_mem_global_op_{ld,st}), and the sectors the TMA and bulk
  copies read and write (l1tex__m_*_sectors_mem_global_op_tma_{ld,st});
- **wavefronts**: shared-memory wavefronts of every load and store (ldmatrix/stmatrix and shared
  atomics included), of cp.async's writes into shared memory (op_ldgsts), and, for the TMA and bulk
  copies, which no load/store-unit counter sees, their bytes into and out of shared memory at 128 bytes
  a wavefront (the most any access moves in one): a model, since ncu reports no such wavefronts;
- **instructions**: every PTX instruction executed, counted once per warp with an active thread
  (``SimRun.warp_instructions``): index arithmetic, branches, barriers, waits and commits as much as
  loads and stores. PTX, not the machine code: ptxas unrolls, predicates and expands (a 64-bit division
  is one PTX instruction and dozens of SASS ones), so this is not ncu's smsp__inst_executed.sum, but
  it is the same for every kernel and every machine.

``rank_key`` orders by sectors, then wavefronts, then instructions (ties in one broken by the next):
global traffic is what bounds a transpose's time, shared-memory passes next, issue slots last. Nothing
here runs a kernel.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..movement.tma import TMA_READ_BYTES, TMA_READ_SECTORS, TMA_WRITE_BYTES, TMA_WRITE_SECTORS

COUNTS = ("sectors", "wavefronts", "instructions")
WAVEFRONT_BYTES = 128            # the most bytes one shared-memory wavefront moves (32 banks x 4 bytes)


@dataclass(frozen=True)
class Spend:
    sectors: int
    wavefronts: int
    instructions: int

    def per(self, elements: float, unit: int = 1024) -> dict:
        """Each count per `unit` of `elements` (1024 elements of a 32 x 32 tile by default), one decimal."""
        return {k: round(getattr(self, k) * unit / elements, 1) for k in COUNTS}

    def __str__(self):
        return ", ".join(f"{getattr(self, k):,} {k}" for k in COUNTS)


def spend(run) -> Spend:
    """The three counts of a simulated launch (see the module's docstring)."""
    sim = getattr(run, "sim", None) or run
    rows = list(sim.instructions) + list(getattr(sim, "atomics", []) or [])
    tma = getattr(sim, "tma_counts", None) or {}
    sectors = sum(r["sectors"] for r in rows if r["space"] == "global")
    sectors += tma.get(TMA_READ_SECTORS, 0) + tma.get(TMA_WRITE_SECTORS, 0)
    wavefronts = sum(r["wavefronts"] for r in rows if r["space"] == "shared")
    wavefronts += -(-(tma.get(TMA_READ_BYTES, 0) + tma.get(TMA_WRITE_BYTES, 0)) // WAVEFRONT_BYTES)
    return Spend(int(sectors), int(wavefronts), int(sim.warp_instructions))


def rank_key(s: Spend) -> tuple:
    """Sort key of a leaderboard: fewer sectors first, then fewer wavefronts, then fewer instructions."""
    return tuple(getattr(s, k) for k in COUNTS)

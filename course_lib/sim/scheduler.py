"""Run one batch of blocks: which threads execute next, and what control flow does to them.

Every thread of the batch has a program counter. While all live threads share one PC the
batch is *converged* and each instruction is one numpy operation over all of them. A branch
that splits them switches to groups of threads by PC: the scheduler then always runs the lowest
PC's group, which re-converges structured code at the join point (the threads that went ahead
wait there until the others catch up); the batch is converged again once every live thread is
at one PC.

``bar.sync`` parks threads until no thread of the batch can run; then every block whose
waiting threads are all at the same barrier is released (threads that have exited do not
count, as on Volta and later). Threads of one block waiting at *different* barriers, or a
barrier released while threads of its block have already left the kernel, raise
:class:`BarrierError` (``diagnose`` words it): on a GPU that hangs or silently mis-synchronises.

A ``mbarrier.try_wait`` that fails parks its threads too (``poll``), so that a spin loop on a
barrier does not keep running ahead of the threads that would complete it (a producer warp later
in the code): they ask again once some mbarrier phase of the batch has completed. Their block's
``bar.sync`` is not released while they wait. When no thread can run and no phase completed since
they last asked, the barriers cannot complete: a :class:`BarrierError` names them.

Limits: warps run in lock-step, one instruction at a time, so a schedule-dependent bug shows up
as the race the race detector reports, never as a different value.
"""
from __future__ import annotations

import time

import numpy as np

from ..errors import KernelError
from .checks import diagnose
from .isa.control import Exit

LEFT = np.iinfo(np.int64).max      # the PC of a thread that has left the kernel


def run_batch(program, batch):
    """Execute `batch` from its first instruction until every thread has left the kernel."""
    code, end = program.code, len(program.code)
    counts, max_steps, deadline = program.exec_counts, program.max_steps, program.deadline
    # warp-level instructions (SimRun.warp_instructions): the warps with an active thread, per instruction
    warps = program.counters.warp_instructions if program.count_metrics else None
    every_warp = batch.n // 32
    threads = Threads(program, batch)
    while True:
        group = threads.next_group()
        if group is None:
            return
        pc, mask = group
        if pc >= end:                                  # ran off the end of the code: a `ret`
            outcome = Exit(mask)
        else:
            batch.steps += 1
            counts[pc] += 1
            if warps is not None:
                warps[pc] += every_warp if mask is None else np.count_nonzero(np.packbits(mask).view(np.uint32))
            # CPU time of this thread, never the wall clock: a loaded machine must not change a verdict
            if batch.steps > max_steps or (batch.steps & 7) == 0 and time.thread_time() > deadline:
                raise diagnose.limit_error(program, batch, pc, mask, time.thread_time() - program.batch_start)
            try:
                outcome = code[pc](batch, mask)
            except KernelError as err:
                raise program.located(err, batch, pc, mask) from None
        if outcome is None:
            threads.advance(pc, mask)
        else:
            outcome.apply(threads, pc, mask)


class Threads:
    """Where the threads of one batch are: one PC for all (converged), or groups of threads by PC.

    While diverged, ``groups`` maps each PC to the mask of the live threads there that can run, and
    ``waiting`` each barrier's PC to the threads parked at it; together they hold every live thread
    once. The lowest PC's group runs next, and the threads it moves join the group at their new PC,
    so an instruction costs one merge, whatever the number of threads."""

    def __init__(self, program, batch):
        self.program, self.batch = program, batch
        self.end = len(program.code)
        self.pc = 0                # every live thread's PC, while converged
        self.groups = None         # {pc: mask} while diverged
        self.waiting = None        # {barrier pc: mask} while diverged
        self.polling = None        # {try_wait pc: mask} while diverged: threads waiting for an mbarrier phase
        self.polled_at = -1        # phases the batch's mbarriers had completed when pollers last asked

    def next_group(self):
        """(pc, mask) of the threads to run next (mask None: every slot); None when all have left."""
        b = self.batch
        if self.groups is None:
            if b.all_alive:
                return self.pc, None
            return (self.pc, b.alive.copy()) if b.alive.any() else None
        while not self.groups:
            if not self.waiting and not self.polling:
                return None
            self._release()
        if len(self.groups) == 1 and not self.waiting and not self.polling:   # every live thread at one PC
            (pc, mask), = self.groups.items()
            self.groups = self.waiting = self.polling = None
            self.pc = pc
            return pc, (None if b.all_alive else mask)
        pc = min(self.groups)
        return pc, self.groups.pop(pc)

    def advance(self, pc, mask):
        if self.groups is None:
            self.pc = pc + 1
        else:
            self._join(pc + 1, mask)

    def branch(self, pc, mask, taken, target):
        """The threads in `taken` (all of `mask` when None) jump to `target`; the others fall through."""
        if taken is None:
            if self.groups is None:
                self.pc = target
            else:
                self._join(target, mask)
            return
        if self.groups is None:
            n_taken = np.count_nonzero(taken)
            if n_taken == 0 or n_taken == (self.batch.n if mask is None else np.count_nonzero(mask)):
                self.pc = target if n_taken else pc + 1    # a uniform branch keeps them together
                return
            mask = self._diverge(mask)
            taken = taken & mask                          # `taken` may be a predicate register itself
        self._join(pc + 1, mask & ~taken)
        self._join(target, taken)

    def leave(self, pc, mask, leaving):
        b = self.batch
        leaving = b.alive.copy() if leaving is None else leaving
        if b.exit_pc is None:
            b.exit_pc = np.full(b.n, -1, np.int64)
        b.exit_pc[leaving] = min(pc, self.end - 1)
        b.alive[leaving] = False
        b.all_alive = False
        if self.groups is None:
            self.pc = pc + 1          # the survivors (a guarded ret) were all here: still converged
        elif leaving is not mask:
            self._join(pc + 1, mask & ~leaving)

    def arrive(self, pc, mask, arriving):
        b = self.batch
        everyone = arriving is None or np.count_nonzero(arriving) == np.count_nonzero(b.alive)
        if self.groups is None and everyone:              # the whole batch is here: release at once
            if b.exit_pc is not None:
                here = b.alive if arriving is None else arriving
                self._check_skipped(pc, np.flatnonzero(here.reshape(b.nblocks, b.tp).any(axis=1)))
            if b.races is not None:
                b.races.barrier_all()
            self.pc = pc + 1
            return
        if self.groups is None:
            mask = self._diverge(mask)
            arriving = mask if arriving is None else arriving
        elif arriving is None:
            arriving = mask
        if arriving is not mask:
            self._join(pc + 1, mask & ~arriving)
        self._join(pc, arriving, self.waiting)

    def poll(self, pc, mask, failed):
        """Threads in `failed` wait at this try_wait for an mbarrier phase; the others go on."""
        if self.groups is None:
            mask = self._diverge(mask)
        self._join(pc + 1, mask & ~failed)
        self._join(pc, failed, self.polling)

    # ------------------------------------------------------------------ groups and barriers
    def _diverge(self, mask):
        """Leave the converged state; the threads that ran the instruction, as a mask we own."""
        self.groups, self.waiting, self.polling = {}, {}, {}
        return self.batch.alive.copy() if mask is None else mask

    def _join(self, pc, mask, into=None):
        groups = self.groups if into is None else into
        if not mask.any():
            return
        have = groups.get(pc)
        if have is None:
            groups[pc] = mask
        else:
            np.logical_or(have, mask, out=have)

    def _release(self):
        """No thread can run: let threads waiting for an mbarrier ask again if a phase completed since
        they last asked; else release every block whose threads all wait at one bar.sync."""
        b = self.batch
        if self.polling:
            completed = b.mbarriers.completed if b.mbarriers is not None else 0
            if completed != self.polled_at:
                self.polled_at = completed
                polling, self.polling = self.polling, {}
                for pc, m in polling.items():
                    self._join(pc, m)
                return
        at = {pc: m.reshape(b.nblocks, b.tp).any(axis=1) for pc, m in self.waiting.items()}
        if len(at) > 1:
            clash = np.flatnonzero(np.sum(list(at.values()), axis=0) > 1)
            if clash.size:
                raise diagnose.divergent_barrier(self.program, b, int(clash[0]), *self._dense())
        ready = np.logical_or.reduce(list(at.values())) if at else np.zeros(b.nblocks, np.bool_)
        if self.polling:          # a block with threads waiting for an mbarrier is not at its bar.sync
            ready &= ~np.logical_or.reduce([m.reshape(b.nblocks, b.tp).any(axis=1) for m in self.polling.values()])
            if not ready.any():
                raise diagnose.stuck_mbarrier(self.program, b, self.polling)
        blocks = np.flatnonzero(ready)
        if b.exit_pc is not None:
            self._check_skipped(None, blocks)
        waiting, self.waiting = self.waiting, {}
        go = np.repeat(ready, b.tp) if self.polling else None
        for pc, m in waiting.items():
            if go is None:
                self._join(pc + 1, m)
            else:
                self._join(pc + 1, m & go)
                self._join(pc, m & ~go, self.waiting)
        if b.races is not None:
            b.races.barrier(blocks)

    def _dense(self):
        """(PCs, waiting) per block and thread, as the diagnoses read them."""
        b = self.batch
        pcs, waiting = np.full(b.n, LEFT, np.int64), np.zeros(b.n, np.bool_)
        for pc, m in self.groups.items():
            pcs[m] = pc
        for pc, m in self.waiting.items():
            pcs[m] = pc
            waiting |= m
        for pc, m in (self.polling or {}).items():
            pcs[m] = pc
        return pcs.reshape(b.nblocks, b.tp), waiting.reshape(b.nblocks, b.tp)

    def _check_skipped(self, pc, blocks):
        """A barrier is released for `blocks`: every thread of each must have reached it. A thread
        that already left the kernel (an early `return`, or a barrier inside an `if` it skipped)
        breaks the Programming Guide's rule that all threads of a block reach each __syncthreads()."""
        b = self.batch
        gone = b.exit_pc.reshape(b.nblocks, b.tp)[blocks] >= 0
        if not gone.any():
            return
        i = int(np.flatnonzero(gone.any(axis=1))[0])
        block = int(blocks[i])
        if pc is None:                        # released after divergence: where do they wait?
            pc = min(p for p, m in self.waiting.items() if m.reshape(b.nblocks, b.tp)[block].any())
        raise diagnose.skipped_barrier(self.program, b, pc, block, np.flatnonzero(gone[i]))

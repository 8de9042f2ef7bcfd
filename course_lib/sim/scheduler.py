"""Run one batch of blocks: which threads execute next, and what control flow does to them.

Every thread of the batch has a program counter. While all live threads share one PC the
batch is *converged* and each instruction is one numpy operation over all of them. A branch
that splits them switches to one PC per thread: the scheduler then always runs the lowest PC
among runnable threads, for exactly the threads at that PC, which re-converges structured
code at the join point (the threads that went ahead wait there until the others catch up);
the batch is converged again once every live thread is at one PC.

``bar.sync`` parks threads until no thread of the batch can run; then every block whose
waiting threads are all at the same barrier is released (threads that have exited do not
count, as on Volta and later). Threads of one block waiting at *different* barriers, or a
barrier released while threads of its block have already left the kernel, raise
:class:`BarrierError` (``diagnose`` words it): on a GPU that hangs or silently mis-synchronises.

Limits: warps run in lock-step, one instruction at a time, so a schedule-dependent bug shows up
as the race the race detector reports, never as a different value.
"""
from __future__ import annotations

import time

import numpy as np

from ..errors import KernelError
from . import diagnose
from .control import Exit

LEFT = np.iinfo(np.int64).max      # the PC of a thread that has left the kernel


def run_batch(program, batch):
    """Execute `batch` from its first instruction until every thread has left the kernel."""
    code, end = program.code, len(program.code)
    counts, max_steps, deadline = program.exec_counts, program.max_steps, program.deadline
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
            if batch.steps > max_steps or (batch.steps & 7) == 0 and time.perf_counter() > deadline:
                raise diagnose.limit_error(program, batch, pc, mask, time.perf_counter() - program.batch_start)
            try:
                outcome = code[pc](batch, mask)
            except KernelError as err:
                raise program.located(err, batch, pc, mask) from None
        if outcome is None:
            threads.advance(pc, mask)
        else:
            outcome.apply(threads, pc, mask)


class Threads:
    """Where the threads of one batch are: one PC for all (converged) or one each (diverged)."""

    def __init__(self, program, batch):
        self.program, self.batch = program, batch
        self.end = len(program.code)
        self.pc = 0                # every live thread's PC, while converged
        self.pcs = None            # per-thread PCs while diverged (LEFT once a thread has left)
        self.waiting = None        # per-thread: parked at a barrier (only while diverged)

    def next_group(self):
        """(pc, mask) of the threads to run next (mask None: every slot); None when all have left."""
        b = self.batch
        if self.pcs is None:
            if b.all_alive:
                return self.pc, None
            return (self.pc, b.alive.copy()) if b.alive.any() else None
        runnable = b.alive & ~self.waiting
        while not runnable.any():
            if not (self.waiting & b.alive).any():
                return None
            self._release()
            runnable = b.alive & ~self.waiting
        pc = int(self.pcs[runnable].min())
        mask = runnable & (self.pcs == pc)
        if not self.waiting.any() and mask.sum() == runnable.sum():     # re-converged
            self.pcs = self.waiting = None
            self.pc = pc
            return pc, (None if b.all_alive else b.alive.copy())
        return pc, mask

    def advance(self, pc, mask):
        if self.pcs is None:
            self.pc = pc + 1
        else:
            self.pcs[mask] = pc + 1

    def branch(self, pc, mask, taken, target):
        """The threads in `taken` (all of `mask` when None) jump to `target`; the others fall through."""
        if taken is None:
            if self.pcs is None:
                self.pc = target
            else:
                self.pcs[mask] = target
            return
        if self.pcs is None:
            n_taken = int(taken.sum())
            if n_taken == 0 or n_taken == (self.batch.n if mask is None else int(mask.sum())):
                self.pc = target if n_taken else pc + 1    # a uniform branch keeps them together
                return
            self._diverge(pc)
        self.pcs[self.batch.alive if mask is None else mask] = pc + 1
        self.pcs[taken] = target

    def leave(self, pc, mask, leaving):
        b = self.batch
        leaving = b.alive.copy() if leaving is None else leaving
        if b.exit_pc is None:
            b.exit_pc = np.full(b.n, -1, np.int64)
        b.exit_pc[leaving] = min(pc, self.end - 1)
        b.alive[leaving] = False
        b.all_alive = False
        if self.pcs is None:
            self.pc = pc + 1          # the survivors (a guarded ret) were all here: still converged
        else:
            self.pcs[mask] = pc + 1
            self.pcs[leaving] = LEFT

    def arrive(self, pc, mask, arriving):
        b = self.batch
        everyone = arriving is None or int(arriving.sum()) == int(b.alive.sum())
        if self.pcs is None and everyone:              # the whole batch is here: release at once
            if b.exit_pc is not None:
                here = b.alive if arriving is None else arriving
                self._check_skipped(pc, np.flatnonzero(here.reshape(b.nblocks, b.tp).any(axis=1)))
            if b.races is not None:
                b.races.barrier_all()
            self.pc = pc + 1
            return
        arriving = b.alive.copy() if arriving is None else arriving
        if self.pcs is None:
            self._diverge(pc)
        self.pcs[b.alive if mask is None else mask] = pc + 1
        self.pcs[arriving] = pc
        self.waiting[arriving] = True

    # ------------------------------------------------------------------ barriers
    def _diverge(self, pc):
        b = self.batch
        self.pcs = np.full(b.n, LEFT, np.int64)
        self.pcs[b.alive] = pc
        self.waiting = np.zeros(b.n, np.bool_)

    def _release(self):
        """No thread can run: release every block whose waiting threads share one barrier."""
        b = self.batch
        waiting = (self.waiting & b.alive).reshape(b.nblocks, b.tp)
        pcs = self.pcs.reshape(b.nblocks, b.tp)
        lowest = np.where(waiting, pcs, LEFT).min(axis=1)
        highest = np.where(waiting, pcs, -1).max(axis=1)
        has = waiting.any(axis=1)
        split = np.flatnonzero(has & (lowest != highest))
        if split.size:
            raise diagnose.divergent_barrier(self.program, b, int(split[0]), pcs, waiting)
        blocks = np.flatnonzero(has)
        if b.exit_pc is not None:
            self._check_skipped(None, blocks, pcs, waiting)
        flat = waiting.reshape(-1)
        self.pcs[flat] += 1
        self.waiting[flat] = False
        if b.races is not None:
            b.races.barrier(blocks)

    def _check_skipped(self, pc, blocks, pcs=None, waiting=None):
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
            pc = int(pcs[block][waiting[block]].min())
        raise diagnose.skipped_barrier(self.program, b, pc, block, np.flatnonzero(gone[i]))

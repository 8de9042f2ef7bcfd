"""cp.async (LDGSTS): asynchronous 4/8/16-byte copies from global to shared memory, per thread.

    copies = AsyncCopies(total_shared_bytes)
    copies.issue(pc, line, slots, dst_flat, data)     # data: (n, size) bytes read now (zero-filled)
    copies.commit(slots)                               # cp.async.commit_group
    for pc, slots, dst, data in copies.wait(slots, keep=0): ...   # cp.async.wait_group 0 / wait_all
    copies.in_flight(flat, width)                      # pc of a copy still writing these bytes, or -1

Semantics (PTX ISA, cp.async; H100 checked by benchmarks/hopper_probe.py): each thread's copies
join the thread's current *group*; ``commit_group`` closes it; ``wait_group N`` returns once at
most N of the thread's committed groups are incomplete, ``wait_all`` (= commit + wait 0) once all
are done. Copies of one thread complete in no particular order within a group. ``src-size`` s <
cp-size copies s bytes and zero-fills the rest (s = 0 reads nothing: no address check either);
the ignore-src predicate zero-fills all of it. A copy's source is read when it is issued (the
simulator's choice; on a GPU any time before the wait) and its destination written when the
issuing thread's wait covers it: until then the bytes hold whatever was there, and reading or
writing them is a race (:meth:`in_flight` names the copy). After the wait only the issuing thread
may rely on the data; others need a barrier, as after its own stores (the executor records the
completion as that thread's write for the race detector).

Counting (ncu on an H100, issue 19): an LDGSTS is one global *load* request per warp with its
sectors (l1tex__t_requests/sectors_pipe_lsu_mem_global_op_ld), no shared-store wavefronts, and
not an smsp__inst_executed_op_global_ld; ``global_load_counts`` gives its requests and sectors.
Its writes into shared memory have counters of their own (op_ldgsts, issue 35): the destinations
cost what a store of the copy's width to them would (metrics.Counters.add_ldgsts), and on a GPU
other warps' shared traffic at the same time can add conflicts there (``NOTE``).
This module keeps the bookkeeping; the executor reads global memory and writes shared memory.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

SIZES = (4, 8, 16)
NONE = -1


@dataclass
class Copy:
    pc: int
    line: int
    slots: np.ndarray        # (n,) issuing threads
    groups: np.ndarray       # (n,) the group number each copy belongs to (per thread)
    dst: np.ndarray          # (n,) flat shared offsets
    data: np.ndarray         # (n, size) uint8


class AsyncCopies:
    """In-flight cp.async copies of one batch of blocks."""

    def __init__(self, shared_bytes: int, n_slots: int):
        self.pending = np.full(max(int(shared_bytes), 1), NONE, np.int32)   # per shared byte: pc writing it
        self.open_group = np.zeros(n_slots, np.int64)    # number of the group new copies join
        self.copies: list[Copy] = []

    @property
    def busy(self) -> bool:
        return bool(self.copies)

    def issue(self, pc, line, slots, dst_flat, data):
        slots = np.asarray(slots, np.int64)
        data = np.asarray(data, np.uint8)
        if slots.size == 0:
            return
        size = data.shape[1]
        if size not in SIZES:
            raise ValueError(f"cp.async copies 4, 8 or 16 bytes, not {size}")
        dst = np.asarray(dst_flat, np.int64)
        self.copies.append(Copy(pc, line, slots, self.open_group[slots].copy(), dst, data))
        self.pending[(dst[:, None] + np.arange(size)).reshape(-1)] = pc

    def commit(self, slots):
        self.open_group[np.asarray(slots, np.int64)] += 1

    def wait(self, slots, keep: int, committed_only: bool = True):
        """Complete the copies of threads `slots` in all but their newest `keep` committed groups (or,
        ``committed_only=False``, every copy they issued: cp.async.mbarrier.arrive); returns
        [(pc, line, slots, dst_flat, data)] to write now, in issue order."""
        slots = np.asarray(slots, np.int64)
        waiting = np.zeros(self.open_group.shape, np.bool_)
        waiting[slots] = True
        done, left = [], []
        for c in self.copies:
            finish = waiting[c.slots] & ((c.groups < self.open_group[c.slots] - keep) | (not committed_only))
            if finish.any():
                done.append((c.pc, c.line, c.slots[finish], c.dst[finish], c.data[finish]))
                size = c.data.shape[1]
                self.pending[(c.dst[finish][:, None] + np.arange(size)).reshape(-1)] = NONE
            if not finish.all():
                rest = ~finish
                left.append(Copy(c.pc, c.line, c.slots[rest], c.groups[rest], c.dst[rest], c.data[rest]))
        self.copies = left
        # a byte written by two copies, one done and one not, is still in flight
        for c in left:
            self.pending[(c.dst[:, None] + np.arange(c.data.shape[1])).reshape(-1)] = c.pc
        return done

    def in_flight(self, flat: np.ndarray, width: int) -> np.ndarray:
        """Per access at flat shared offsets: the pc of a copy still writing one of its bytes, or -1."""
        if not self.copies:
            return np.full(len(flat), NONE, np.int32)
        span = self.pending[(np.asarray(flat, np.int64)[:, None] + np.arange(width)).reshape(-1)].reshape(len(flat), width)
        return span.max(axis=1)

    def unfinished(self) -> list[Copy]:
        """Copies nobody waited for (at the end of the kernel: their data may never have landed)."""
        return list(self.copies)


def source_bytes(cp_size: int, src_size: int | None, ignore_src: bool) -> int:
    """How many bytes a copy reads from global memory (the rest of cp_size is zero-filled)."""
    if cp_size not in SIZES:
        raise ValueError(f"cp.async copies 4, 8 or 16 bytes, not {cp_size}")
    if ignore_src:
        return 0
    if src_size is None:
        return cp_size
    if not 0 <= src_size <= cp_size:
        raise ValueError(f"cp.async src-size {src_size} is outside 0..{cp_size}")
    return int(src_size)


def zero_filled(read: np.ndarray, cp_size: int) -> np.ndarray:
    """(n, k) bytes read (k <= cp_size) -> (n, cp_size) with zeros after them."""
    out = np.zeros((read.shape[0], cp_size), np.uint8)
    out[:, :read.shape[1]] = read
    return out


def global_load_counts(src: np.ndarray, dst: np.ndarray, reads: np.ndarray, level: str) -> tuple[int, int]:
    """(requests, sectors) ncu counts under l1tex__t_{requests,sectors}_pipe_lsu_mem_global_op_ld for
    one cp.async over whole warps: ``src``/``dst`` (nw, 32) addresses, ``reads`` (nw, 32) the lanes
    that execute it *and* read global memory (src-size > 0, not ignore-src).

    Measured on an H100 (benchmarks/results/h100_2026-11-26_hopper, 76 patterns): a warp whose
    lanes all zero-fill counts nothing; otherwise one request, and
      .ca: the distinct 32-byte sectors of the lanes' sources (a partial src-size counts its whole
           cp-size, an aligned copy of at most 16 bytes never straddles a sector);
      .cg: per 32-byte sector of *destination*, the distinct 128-byte lines its lanes read from,
           summed (16-byte copies to consecutive shared addresses from one line: one per pair of
           lanes; scattered destinations: one per lane even from a single source address)."""
    rows = reads.any(axis=1)
    if not rows.any():
        return 0, 0
    s, d, r = src[rows], dst[rows], reads[rows]
    if level == "cg":
        keys = (np.right_shift(d, 5) << 40) | np.right_shift(s, 7)
    else:
        keys = np.right_shift(s, 5)
    keys = np.where(r, keys, SENTINEL)
    ordered = np.sort(keys, axis=1)
    new = np.ones(ordered.shape, np.bool_)
    new[:, 1:] = ordered[:, 1:] != ordered[:, :-1]
    return int(rows.sum()), int((new & (ordered != SENTINEL)).sum())


SENTINEL = np.iinfo(np.int64).max
NOTE = ("cp.async (LDGSTS): ncu counts it as a global load (requests and sectors); its writes into shared "
        "memory are not shared stores but have counters of their own (op_ldgsts in run.metrics: wavefronts and bank "
        "conflicts, the destinations costed as a store of the copy's width). On a GPU, other warps' shared-memory "
        "traffic at the same time can add conflicts to that counter that depend on timing (H100, async_tile float32 "
        "100x130: 24 in one run, 65 in another, where the destinations alone cost none); the simulator counts the "
        "destinations' own")


def parse(mods, operands, registers: dict) -> dict:
    """What a ``cp.async.{ca,cg}.shared{::cta}.global [dst], [src], cp-size{, src-size | , ignore-src}``
    asks for: its level, and whether a fourth operand is a src-size or the ignore-src predicate
    (a register of type pred: ``registers`` maps the kernel's register names to their types)."""
    extra = operands[3] if len(operands) > 3 else None
    kind = None
    if extra is not None:
        kind = "ignore" if extra.kind == "reg" and registers.get(extra.name) == "pred" else "src_size"
    return dict(level="cg" if "cg" in mods else "ca", extra=kind)


@dataclass
class AsyncRace:
    """A thread touched shared memory an asynchronous copy was still writing: a cp.async before the
    wait_group that covers it, or a TMA / bulk copy before the thread saw its mbarrier's phase
    complete. Reported with the races (SimRun.races), at the copy's line and the access's line."""
    copy: str                 # 'cp.async' | 'TMA' (bulk copies too)
    lines: tuple              # (line of the copy, line of the access)
    threads: tuple            # ((x, y, z) that issued the copy or None, (x, y, z) that touched the bytes)
    block: tuple
    op: str                   # 'reads' | 'writes'
    count: int = 1
    pcs: tuple = ()
    scope: str = "block"
    kind: str = "ASYNC"

    @property
    def severity(self):
        return "error"

    @property
    def hint(self) -> str:
        first, second = self.lines
        if self.copy == "cp.async":
            return (f"wait for the copy before using its destination: __pipeline_wait_prior(0) (cp.async.wait_group 0) "
                    f"after line {first} and before line {second}, then __syncthreads() if other threads read it")
        return (f"wait on the mbarrier the copy of line {first} completes (bar.wait(token), mbarrier.try_wait) before "
                f"line {second}: the bytes land at an unknown time after the copy is issued")

    def __str__(self):
        first, second = self.lines
        what = "the destination of" if self.op == "reads" else "bytes still being written by"
        return (f"{self.copy} race (error): line {second} (thread {self.threads[1]}) {self.op} {what} the {self.copy} "
                f"copy at line {first}, before waiting for it, block {self.block} — seen {self.count} time(s)\n"
                f"  hint: {self.hint}")

"""Races with asynchronous copies: touching shared memory a copy is still writing.

    tag_tma(b, flat, width, key, pc)                   # a TMA / bulk copy wrote these bytes for mbarrier `key`
    written(b, pc, slots, flat, data)                  # a cp.async completed: its thread's write
    initialized(b, flat, width)                        # bytes a copy wrote are no longer uninitialised
    check_shared(program, b, mask, ins, flat, width, is_load)   # every shared access: name such a touch
    barriers_of(b)                                     # the batch's MBarriers (sync_ops, tensor_ops)
    phase_completed(b, key, before)                    # a phase completed: a block-wide one is a barrier epoch

A cp.async's destination is in flight from the copy until the issuing thread's wait_group covers it
(async_copy.AsyncCopies.in_flight); a TMA or bulk copy's bytes belong to the phase of the mbarrier
it completes, and a thread may use them once it has seen that phase complete (mbarrier.has_seen:
a try_wait or test_wait that returned true). Anything else is an ``async_copy.AsyncRace`` kept
with the launch's races, one per pair of lines. An ordinary store over tagged bytes clears their
tag. Ordering between threads after the wait (a __syncthreads before other threads read a
cp.async's bytes) is the race detector's business, as for ordinary stores.
"""
from __future__ import annotations

import numpy as np

from ..movement import async_copy, mbarrier


def barriers_of(b) -> mbarrier.MBarriers:
    bars = getattr(b, "mbarriers", None)
    if bars is None:
        bars = b.mbarriers = mbarrier.MBarriers(b.tp)
    return bars


def phase_completed(b, key, before: int, arriving=None):
    """Threads `arriving` (batch slots, or None) arrived on barrier `key`, whose phase was number
    `before`. When the phase completes, what its arriving threads did before they arrived is ordered
    before what any thread does after a successful wait on it: with an arrival count of the whole
    block that is a __syncthreads() (the race detector starts a new epoch for the block); with fewer
    (a producer warp, say) the detector forgets those threads' accesses (``RaceDetector.publish``).
    Approximations: a thread that reads them without waiting is not named, and accesses a thread
    makes between its arrive and its wait are not told apart."""
    if b.races is None:
        return
    if arriving is not None and len(arriving):
        b.arrivals = b.arrivals if b.arrivals is not None else {}
        b.arrivals.setdefault(key, []).append(np.asarray(arriving, np.int64))
    bar = barriers_of(b).bars.get(key)
    if bar is None or bar.phase <= before:
        return
    arrived = (b.arrivals or {}).pop(key, [])
    block = key[0]
    live = int(b.alive.reshape(b.nblocks, b.tp)[block].sum())        # threads that have not left
    if bar.count >= max(live, 1):
        b.races.barrier(np.array([block]))
    elif arrived:
        b.races.publish(block, np.concatenate(arrived))


def initialized(b, flat, width):
    """Shared bytes a copy wrote count as written for the uninitialised-read check. (Who may read
    them when is the mbarrier's or the wait's business, not the race detector's barrier epochs.)"""
    if b.races is None:
        return
    entries = b.races.entries(flat.astype(np.int64), width)
    b.races.initialized[entries.reshape(-1)] = True


def written(b, pc, slots, flat, data):
    """A cp.async completes: for the race detector, its thread wrote those bytes now (other threads
    need a barrier after this thread's wait before they read them)."""
    width = data.shape[1]
    if b.races is None or width % b.races.granule:
        initialized(b, flat, width)
        return
    entries = b.races.entries(flat.astype(np.int64), width)
    g = b.races.granule
    values = np.ascontiguousarray(data).view({1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[g])
    b.races.access(pc, slots, entries, True, values)


def _tags(b):
    """Per shared byte of the batch: the barrier (index into b.tma_keys, -1 none) and phase a TMA or
    bulk copy completes it with."""
    if getattr(b, "tma_bar", None) is None:
        b.tma_bar = np.full(b.shared.data.size, -1, np.int32)
        b.tma_phase = np.zeros(b.shared.data.size, np.int64)
        b.tma_pc = np.zeros(b.shared.data.size, np.int32)
        b.tma_keys = []
    return b


def tag_tma(b, flat, width, key, pc):
    """Bytes a TMA load or bulk copy wrote, owed to barrier `key`'s current phase."""
    _tags(b)
    if key not in b.tma_keys:
        b.tma_keys.append(key)
    spots = (np.asarray(flat, np.int64)[:, None] + np.arange(width)).reshape(-1)
    b.tma_bar[spots] = b.tma_keys.index(key)
    b.tma_phase[spots] = barriers_of(b).phase_of(key)
    b.tma_pc[spots] = pc


def check_shared(program, b, mask, ins, flat, width, is_load):
    """Called for every shared access (flat offsets of the active threads): name an access to bytes
    a cp.async has not been waited for, or that a TMA copy delivers through an mbarrier phase this
    thread has not seen complete. Ordinary stores clear the TMA tags of the bytes they write."""
    slots = np.arange(b.n) if mask is None else np.flatnonzero(mask)
    copies = getattr(b, "async_copies", None)
    if copies is not None and copies.busy:
        pcs = copies.in_flight(flat, width)
        for pos in np.flatnonzero(pcs >= 0)[:1]:
            _record(program, b, ins, "cp.async", int(pcs[pos]), None, int(slots[pos]), is_load, int((pcs >= 0).sum()))
    if getattr(b, "tma_bar", None) is None:
        return
    spots = (np.asarray(flat, np.int64)[:, None] + np.arange(width))
    bar = b.tma_bar[spots]
    if not (bar >= 0).any():
        return
    if not is_load:
        b.tma_bar[spots.reshape(-1)] = -1
    tagged = np.flatnonzero((bar >= 0).any(axis=1))
    j = np.argmax(bar[tagged] >= 0, axis=1)                          # each lane's first tagged byte
    first, owed = spots[tagged, j], bar[tagged, j]
    phases = b.tma_phase[first]
    unseen = np.zeros(len(tagged), np.bool_)
    for k in np.unique(owed):          # one question per barrier, not one per lane (a warp's access is 32 lanes)
        of_k = owed == k
        unseen[of_k] = ~barriers_of(b).has_seen(b.tma_keys[int(k)], slots[tagged[of_k]], phases[of_k])
    bad = np.flatnonzero(unseen)
    if len(bad):
        pos = tagged[bad[0]]
        _record(program, b, ins, "TMA", int(b.tma_pc[first[bad[0]]]), None, int(slots[pos]), is_load, len(bad))


def _record(program, b, ins, copy, copy_pc, copy_slot, slot, is_load, count):
    key = ("race", "async", copy_pc, ins.index, "block")
    found = program.findings.get(key)
    if found is not None:
        found.count += count
        return
    line = program.kernel.instructions[copy_pc].line if 0 <= copy_pc < len(program.kernel.instructions) else 0
    program.findings[key] = async_copy.AsyncRace(
        copy=copy, lines=(line, ins.line), threads=(None, program.thread_of(b, slot)), block=program.block_of(b, slot),
        op="reads" if is_load else "writes", count=count, pcs=(copy_pc, ins.index))

"""Closures for the asynchronous copies (opcode ``cp``): cp.async (LDGSTS) here, the bulk and tensor
copies (TMA) in ``tensor_ops``.

    build(ins, program)          # -> run(batch, mask), like instructions.py's builders, for opcode 'cp'
    unfinished(program, b)       # at the end of a batch: a warning for cp.async copies nobody waited for

The semantics live in ``async_copy`` (groups, zero-fill, counting); this module reads operands,
reads global memory when a copy is issued, writes shared memory when the issuing thread's
wait_group (or cp.async.mbarrier.arrive) covers the copy, and counts what ncu counts: a cp.async
is a global load (requests and sectors), and its writes into shared memory (LDGSTS's shared side)
have counters of their own. Per batch it keeps the copies in flight (``b.async_copies``), which
``copy_races`` reads to name a touch of their destination before the wait.
Bulk stores complete at once in the simulator, so their commit_group / wait_group do nothing.
"""
from __future__ import annotations

import numpy as np

from ...errors import BarrierError, KernelError
from ..checks.copy_races import barriers_of, phase_completed, written
from ..checks.finding import Finding
from ..movement import async_copy, mbarrier
from ..spaces.memory import Fault, check_alignment
from . import tensor_ops
from .access import address_reader, raise_fault
from .operands import reader


def _slots(b, mask):
    return np.arange(b.n) if mask is None else np.flatnonzero(mask)


def _copies(b) -> async_copy.AsyncCopies:
    if b.async_copies is None:
        b.async_copies = async_copy.AsyncCopies(b.shared.data.size, b.n)
    return b.async_copies


def build(ins, program):
    mods = ins.mods
    if "bulk" in mods:
        if "tensor" in mods:
            dst_space = mods[mods.index("tensor") + 2]          # cp.async.bulk.tensor.2d.<dst>.<src>...
            return tensor_ops.tensor_load(ins, program) if dst_space.startswith("shared") else \
                tensor_ops.tensor_store(ins, program)
        if "commit_group" in mods or "wait_group" in mods:
            return lambda b, mask: None      # bulk stores complete at once in the simulator
        return tensor_ops.bulk_load(ins, program)
    if "commit_group" in mods:
        return lambda b, mask: _copies(b).commit(_slots(b, mask))
    if "wait_group" in mods or "wait_all" in mods:
        return _wait(ins, program)
    if "mbarrier" in mods:
        return _copies_arrive(ins, program)
    return _cp_async(ins, program)


def _land(b, done):
    """Write completed copies into shared memory: for the race detector, their threads' writes."""
    for pc, _, slots, dst, data in done:
        b.shared.data.reshape(-1)[dst[:, None] + np.arange(data.shape[1])] = data
        written(b, pc, slots, dst, data)


def _wait(ins, program):
    """cp.async.wait_group N (keep the newest N groups in flight) or wait_all (commit, then wait 0)."""
    keep = reader(ins.operands[0], "u32", program) if "wait_group" in ins.mods else None

    def run(b, mask):
        copies, slots = _copies(b), _slots(b, mask)
        if keep is None:
            copies.commit(slots)
        _land(b, copies.wait(slots, 0 if keep is None else int(np.max(keep(b, mask)))))
    return run


def _copies_arrive(ins, program):
    """cp.async.mbarrier.arrive{.noinc}.shared.b64 [mbar]: an arrival once this thread's earlier
    cp.async copies are done. The simulator completes them here; without .noinc the arrival is on
    top of the expected count (the thread still arrives itself), with .noinc it is one of them."""
    bar_r = address_reader(ins.operands[0], program)
    noinc = "noinc" in ins.mods

    def run(b, mask):
        slots = _slots(b, mask)
        _land(b, _copies(b).wait(slots, 0, committed_only=False))
        if not noinc:
            return
        bars, addr = barriers_of(b), bar_r(b, mask)
        for slot, blk, a in zip(slots.tolist(), b.block_of[slots].tolist(), np.asarray(addr).astype(np.int64).tolist()):
            key = (blk, a)
            try:
                before = bars.phase_of(key)
                bars.arrive(key)
            except mbarrier.MBarrierError as exc:
                raise BarrierError(str(exc), line=ins.line or None) from None
            phase_completed(b, key, before, [slot])
    return run


def _source_sizes(ins, program, form, size):
    """(batch, mask, slots) -> bytes each thread's copy reads (the rest of `size` is zero-filled)."""
    if form["extra"] is None:
        return lambda b, mask, slots: np.full(slots.shape, size)
    extra = reader(ins.operands[3], "pred" if form["extra"] == "ignore" else "u32", program)
    if form["extra"] == "ignore":
        return lambda b, mask, slots: np.where(np.broadcast_to(extra(b, mask), slots.shape), 0, size)

    def src_size(b, mask, slots):
        n = np.broadcast_to(np.asarray(extra(b, mask)).astype(np.int64), slots.shape)
        if (n > size).any():
            raise KernelError(f"cp.async src-size {int(n.max())} is larger than its copy size {size}", line=ins.line)
        return n
    return src_size


def _cp_async(ins, program):
    dst_r, src_r = address_reader(ins.operands[0], program), address_reader(ins.operands[1], program)
    size = int(ins.operands[2].value)
    form = async_copy.parse(ins.mods, ins.operands, program.kernel.registers)
    sizes = _source_sizes(ins, program, form, size)

    def run(b, mask):
        slots = _slots(b, mask)
        dst, src, n = dst_r(b, mask), src_r(b, mask), sizes(b, mask, slots)
        flat = _destination(program, b, mask, ins, dst, size)
        data = np.zeros((len(slots), size), np.uint8)
        for k in np.unique(n[n > 0]):
            sel = n == k
            fault = check_alignment(src[sel], size)
            if fault:
                raise_fault(program, b, mask, ins, "global", fault, True)
            data[sel, :k] = tensor_ops.read_global(program, b, mask, ins, src[sel], int(k))
        _copies(b).issue(ins.index, ins.line, slots, flat, data)
        if program.count_metrics:
            _count(program, b, ins, slots, src, dst, n > 0, form["level"], size)
    return run


def _destination(program, b, mask, ins, addr, width):
    """Flat offsets into the batch's shared memory of each active thread's destination."""
    fault = check_alignment(addr, width)
    if fault:
        raise_fault(program, b, mask, ins, "shared", fault, False)
    flat = b.shared.flat_offsets(addr, b.shared_base[_slots(b, mask)], width)
    if isinstance(flat, Fault):
        raise_fault(program, b, mask, ins, "shared", flat, False)
    return flat


def _count(program, b, ins, slots, src, dst, reads, level, size):
    """ncu's global load requests and sectors of one cp.async over the batch's warps, and its shared
    side: every lane that executes it writes `size` bytes at its destination, zero-filled or not."""
    s, d, r = (np.zeros(b.n, np.int64) for _ in range(3))
    s[slots], d[slots], r[slots] = src.astype(np.int64), dst.astype(np.int64), reads
    req, sec = async_copy.global_load_counts(s.reshape(-1, 32), d.reshape(-1, 32), r.reshape(-1, 32).astype(bool), level)
    c = program.counters
    c.global_requests[ins.index] += req
    c.sectors[ins.index] += sec
    c.global_bytes[ins.index] += int(reads.sum()) * size
    writes = np.zeros(b.n, np.bool_)
    writes[slots] = True
    c.add_ldgsts(ins.index, d.reshape(-1, 32), writes.reshape(-1, 32), size)


def unfinished(program, b):
    """cp.async copies still in flight when the batch's threads left: a warning at the copy's line
    (on a GPU their bytes land at some time nobody waited for, perhaps after the block is gone)."""
    if b.async_copies is None:
        return
    for c in b.async_copies.unfinished():
        key = ("cp.async unfinished", c.pc)
        found = program.findings.get(key)
        if found is not None:
            found.count += len(c.slots)
            continue
        slot = int(c.slots[0])
        program.findings[key] = Finding(
            "cp.async unfinished", c.line, "a cp.async copy nobody waited for: its thread left the kernel before a "
            "cp.async.wait_group covered it", len(c.slots), program.thread_of(b, slot), program.block_of(b, slot),
            "commit the copies and wait for them (__pipeline_commit(); __pipeline_wait_prior(0)) before using or "
            "leaving them")

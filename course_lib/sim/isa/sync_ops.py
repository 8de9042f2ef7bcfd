"""Closures for mbarrier instructions (init, arrive, arrive.expect_tx, expect_tx, complete_tx,
try_wait / test_wait with a state token or a phase parity, inval), on the batch's ``MBarriers``.

    build(ins, program)          # -> run(batch, mask) for opcode 'mbarrier'

A barrier is keyed by (block of the batch, shared address). Threads of one instruction that name
the same barrier act together: their arrival counts and transaction bytes add up (expect_tx
first, then the arrivals, so a phase never completes between them), each arriving thread gets the
phase it arrived in as its 64-bit state, and each waiting thread learns whether the phase it asks
about has completed. Misuse (use before init, init twice, more arrivals than the count) is a
BarrierError at the instruction's line. A try_wait that fails (the hardware may suspend the thread
until the phase completes) returns ``control.Poll``: the scheduler parks those threads until some
phase completes, then they ask again; test_wait never blocks.
"""
from __future__ import annotations

import numpy as np

from ...errors import BarrierError, UnsupportedInstruction
from ..checks.copy_races import barriers_of, phase_completed
from ..movement import mbarrier
from .access import address_reader
from .control import Poll
from .operands import reader, writer

KINDS = ("init", "arrive", "arrive_drop", "expect_tx", "complete_tx", "try_wait", "test_wait", "inval")


def _slots(b, mask):
    return np.arange(b.n) if mask is None else np.flatnonzero(mask)


def _groups(b, slots, addr):
    """{(block, address): positions (array) of the active threads naming that barrier}, in thread order."""
    blk = b.block_of[slots].astype(np.int64)
    a = np.broadcast_to(np.asarray(addr).astype(np.int64), blk.shape)
    packed = (blk << 32) | (a & 0xFFFFFFFF)
    uniq, inverse = np.unique(packed, return_inverse=True)
    order = np.argsort(inverse, kind="stable")
    bounds = np.searchsorted(inverse[order], np.arange(len(uniq) + 1))
    return {(int(u >> 32), int(u & 0xFFFFFFFF)): order[bounds[i]:bounds[i + 1]] for i, u in enumerate(uniq)}


def build(ins, program):
    kind = next((m for m in ins.mods if m in KINDS), None)
    if kind == "arrive" and "expect_tx" in ins.mods:
        kind = "arrive_expect_tx"
    handlers = {"init": _init, "arrive": _arrive, "arrive_expect_tx": _arrive, "arrive_drop": _arrive,
                "expect_tx": _expect_tx, "complete_tx": _expect_tx, "try_wait": _wait, "test_wait": _wait,
                "inval": _inval}
    if kind not in handlers:
        def unsupported(b, mask):
            raise UnsupportedInstruction(f"this mbarrier operation is not simulated: `{ins.text}`", line=ins.line or None)
        return unsupported
    run = handlers[kind](ins, program, kind)

    def guarded(b, mask):
        try:
            return run(b, mask)
        except mbarrier.MBarrierError as exc:
            raise BarrierError(str(exc), line=ins.line or None) from None
    return guarded


def _init(ins, program, kind):
    addr_r = address_reader(ins.operands[0], program)
    count_r = reader(ins.operands[1], "u32", program)

    def run(b, mask):
        slots = _slots(b, mask)
        counts = np.broadcast_to(np.asarray(count_r(b, mask)).astype(np.int64), slots.shape)
        for key, pos in _groups(b, slots, addr_r(b, mask)).items():
            if len(pos) > 1:
                raise mbarrier.MBarrierError(f"{len(pos)} threads initialise the same mbarrier at once: let one "
                                             "thread (threadIdx.x == 0) do it")
            barriers_of(b).init(key, int(counts[pos[0]]))
    return run


def _arrive(ins, program, kind):
    ops = ins.operands
    state_w = writer(ops[0], "b64") if ops[0].kind in ("reg", "sink") else None
    addr_op = ops[1] if state_w is not None else ops[0]
    addr_r = address_reader(addr_op, program)
    extra = ops[2] if state_w is not None and len(ops) > 2 else None
    extra_r = reader(extra, "u32", program) if extra is not None else None

    def run(b, mask):
        slots = _slots(b, mask)
        bars = barriers_of(b)
        value = np.broadcast_to(np.asarray(extra_r(b, mask)).astype(np.int64), slots.shape) if extra_r else None
        tokens = np.zeros(len(slots), np.uint64)
        for key, pos in _groups(b, slots, addr_r(b, mask)).items():
            tx = int(value[pos].sum()) if kind == "arrive_expect_tx" else 0
            count = len(pos) if kind == "arrive_expect_tx" or value is None else int(value[pos].sum())
            if kind == "arrive_drop":
                bars.bars[key].count -= count if key in bars.bars else 0
            before = bars.phase_of(key)
            tokens[pos] = bars.token_bits(bars.arrive(key, count=count, tx=tx))
            phase_completed(b, key, before, slots[pos])
        if state_w is not None:
            state_w(b, mask, tokens)
    return run


def _expect_tx(ins, program, kind):
    addr_r = address_reader(ins.operands[0], program)
    tx_r = reader(ins.operands[1], "u32", program)

    def run(b, mask):
        slots = _slots(b, mask)
        tx = np.broadcast_to(np.asarray(tx_r(b, mask)).astype(np.int64), slots.shape)
        for key, pos in _groups(b, slots, addr_r(b, mask)).items():
            before = barriers_of(b).phase_of(key)
            (barriers_of(b).expect_tx if kind == "expect_tx" else barriers_of(b).complete_tx)(key, int(tx[pos].sum()))
            phase_completed(b, key, before)
    return run


def _wait(ins, program, kind):
    ops = ins.operands
    pred_w = writer(ops[0], "pred")
    addr_r = address_reader(ops[1], program)
    parity = "parity" in ins.mods
    blocking = kind == "try_wait"
    what_r = reader(ops[2], "u32" if parity else "b64", program)

    def run(b, mask):
        slots = _slots(b, mask)
        what = np.broadcast_to(np.asarray(what_r(b, mask)).astype(np.int64), slots.shape)
        done = np.zeros(len(slots), np.bool_)
        for key, pos in _groups(b, slots, addr_r(b, mask)).items():
            done[pos] = barriers_of(b).test(key, slots[pos], **({"parity": what[pos]} if parity else {"token": what[pos]}))
        pred_w(b, mask, done)
        if blocking and not done.all():           # try_wait may suspend the thread: it waits for a phase
            waiting = np.zeros(b.n, np.bool_)
            waiting[slots[~done]] = True
            return Poll(waiting)
        return None
    return run


def _inval(ins, program, kind):
    addr_r = address_reader(ins.operands[0], program)

    def run(b, mask):
        for key in _groups(b, _slots(b, mask), addr_r(b, mask)):
            barriers_of(b).inval(key)
    return run

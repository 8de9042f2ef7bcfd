"""Atomics (``atom``, ``red``) on global and shared memory, applied in thread order.

Threads that update one address see each other's updates, in the order of their slots (the
GPU's order is unspecified; any order gives the same final value for add/min/max/and/or/xor on
integers). Integer ``add`` is a prefix sum per address; the other operations a plain loop,
since atomics are rare in the course's kernels. Shared memory is per block: one address in two
blocks of a batch is two different words. Nsight Compute counts atomics apart from loads and
stores (``op_atom``, ``op_red``): their requests, sectors (global) and wavefronts (shared) are
counted at the atomic's own instruction, which ``SimRun.atomics`` reports apart from
``SimRun.instructions`` (a checker judges them as the load and store each one is); their reads and
write-backs are not race-checked. Where no two threads of a group share an address (a kernel that
uses an atomic as a plain load or store), every operation is applied at once; otherwise in order.
"""
from __future__ import annotations

import numpy as np

from ...compile.ptx import TYPES
from ..spaces.memory import SHARED_WINDOW, UINT, WINDOW_SIZE
from .access import access, address_reader, slots_of, space_of
from .operands import reader, unsupported, writer

ORDERED = ("add", "min", "max", "and", "or", "xor", "exch", "cas", "inc", "dec")
_BINARY = {"add": np.add, "min": np.minimum, "max": np.maximum, "and": np.bitwise_and,
           "or": np.bitwise_or, "xor": np.bitwise_xor}


def build_atomic(ins, program):
    space, t = space_of(ins), ins.type
    op = next((m for m in ins.mods if m in ORDERED), None)
    if op is None or t is None or TYPES[t][1] is None:
        return unsupported(ins, "this atomic operation is not simulated")
    has_dst = ins.opcode == "atom"
    ops = ins.operands[1:] if has_dst else ins.operands
    address = address_reader(ops[0], program)
    srcs = [reader(o, t, program) for o in ops[1:]]
    out = writer(ins.operands[0], t) if has_dst else None
    width, npt = TYPES[t]
    silent = _Silent(ins)

    def run(b, mask):
        addr = address(b, mask)
        _count(program, b, mask, ins, space, addr, width)
        vals = [np.broadcast_to(np.asarray(s(b, mask)), addr.shape).astype(npt) for s in srcs]
        old = access(program, b, mask, silent, space, addr, width, 1, None)[:, 0].view(npt).copy()
        in_shared = np.full(addr.shape, space == "shared") | (
            (space == "generic") & (addr >= SHARED_WINDOW) & (addr < SHARED_WINDOW + WINDOW_SIZE))
        group = np.where(in_shared, b.block_of[slots_of(b, mask)], -1)
        order = np.lexsort((addr, group))
        sa, sg = addr[order], group[order]
        first = np.ones(len(order), np.bool_)              # the first thread of each address
        first[1:] = (sa[1:] != sa[:-1]) | (sg[1:] != sg[:-1])
        if op == "add" and t[0] in "us":
            result_old, last, finals = _integer_add(old, vals[0], order, first)
        elif first.all() and op != "inc" and op != "dec":
            result_old, last, finals = old, order, _at_once(op, t, old[order], [v[order] for v in vals])
        else:
            result_old, last, finals = _in_order(op, t, old, vals, order, first)
        _write_back(program, b, mask, silent, space, addr, last, finals.view(UINT[width])[:, None])
        if out is not None:
            out(b, mask, result_old)
    return run


def _integer_add(old, v, order, first):
    """Each thread's old value and each address's final one: a prefix sum per address."""
    v = v[order]
    seg = np.cumsum(first) - 1
    csum = np.cumsum(v)
    base = (csum - v)[first][seg]               # running total before each segment
    before = (csum - v) - base                  # what earlier threads added
    result_old = np.empty_like(old)
    result_old[order] = (old[order] + before).astype(old.dtype)
    last = np.append(first[1:], True)
    idx = order[last]
    return result_old, idx, (old[idx] + (csum[last] - base[last])).astype(old.dtype)


def _in_order(op, t, old, vals, order, first):
    """The other operations, one thread after another (atomics are rare in course kernels)."""
    npt = old.dtype.type
    result_old = np.empty_like(old)
    final = {}
    cur = None
    for pos, i in enumerate(order):
        if first[pos]:
            cur = old[i]
        result_old[i] = cur
        v = [x[i] for x in vals]
        if op == "add" and t == "f32":   # flushes subnormal inputs and results (ISA; H100 too)
            cur = _flush(npt(_flush(cur) + _flush(v[0])))
        elif op == "add" and t[0] == "f":
            cur = npt(cur + v[0])
        elif op in _BINARY:
            cur = _BINARY[op](cur, v[0]).astype(npt) if t[0] != "f" else _BINARY[op](cur, v[0])
        elif op == "exch":
            cur = v[0]
        elif op == "cas":
            cur = v[1] if cur == v[0] else cur
        elif op == "inc":
            cur = npt(0) if cur >= v[0] else npt(cur + 1)
        elif op == "dec":
            cur = v[0] if (cur == 0 or cur > v[0]) else npt(cur - 1)
        final[pos] = (i, cur)
    ends = [pos for pos in range(len(order)) if pos + 1 == len(order) or first[pos + 1]]
    idx = np.array([final[p][0] for p in ends], np.int64)
    return result_old, idx, np.array([final[p][1] for p in ends], npt)


def _at_once(op, t, old, vals):
    """The final value at each address when each is updated by one thread only."""
    if op == "exch":
        return vals[0].copy()
    if op == "cas":
        return np.where(old == vals[0], vals[1], old)
    if op == "add" and t == "f32":
        flush = lambda x: np.where(np.abs(x) < np.float32(1.1754944e-38), np.copysign(np.float32(0), x), x)
        return flush(flush(old) + flush(vals[0])).astype(old.dtype)
    if op == "add":
        return (old + vals[0]).astype(old.dtype)
    return _BINARY[op](old, vals[0]).astype(old.dtype)


def _count(program, b, mask, ins, space, addr, width):
    """Count the atomic at its own instruction, as the global or shared access it is (a generic
    atomic that lands in shared memory is not counted)."""
    if not program.count_metrics or ins.index < 0 or space not in ("global", "shared", "generic"):
        return
    slots = slots_of(b, mask)
    if space == "generic":
        keep = (addr < SHARED_WINDOW) | (addr >= SHARED_WINDOW + WINDOW_SIZE)
        slots, addr = slots[keep], addr[keep]
    full, active = np.zeros(b.n, np.int64), np.zeros(b.n, np.bool_)
    full[slots], active[slots] = addr.view(np.int64), True
    a2, act2 = full.reshape(-1, 32), active.reshape(-1, 32)
    if space == "shared":
        program.counters.add_shared(ins.index, a2, act2, width, False)
    else:
        program.counters.add_global(ins.index, a2, act2, width)


def _flush(x):
    """An f32 subnormal -> zero of its sign."""
    return np.copysign(np.float32(0), x) if abs(x) < np.float32(1.1754944e-38) else x


def _write_back(program, b, mask, silent, space, addr, idx, finals):
    """Store each address's final value (one thread per address), uncounted."""
    slots = slots_of(b, mask)[idx]
    sub = np.zeros(b.n, np.bool_)
    sub[slots] = True
    by_slot = np.argsort(slots)
    access(program, b, sub, silent, space, addr[idx][by_slot], finals.dtype.itemsize, 1, finals[by_slot])


class _Silent:
    """An atomic's own read and write-back: same instruction for errors, not counted or race-checked."""
    def __init__(self, ins):
        self.__dict__.update(ins.__dict__)
        self.index = -1

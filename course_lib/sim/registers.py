"""Which PTX registers may share one array of storage: those never live at the same time.

NVRTC's PTX names a fresh virtual register for almost every value (a 32x8 tile transpose has
141 of them, an unrolled 64-bit kernel over 4,000), and the simulator keeps each register as
an array over every thread slot of a batch. Most are live only for a few instructions, so
:func:`plan_storage` computes liveness over the control-flow graph (backward dataflow, per
instruction) and gives registers that never hold a needed value at the same point one array:
a greedy colouring of the interference graph, per storage type. A transpose then needs a dozen
arrays instead of a hundred, which is both the batch's memory and what stays in cache.

Liveness is per thread, and every write the simulator makes goes to the lanes of the threads
that execute it, so sharing is exact however threads diverge. The interference graph is the
usual one, made conservative where an instruction's closure could notice sharing: each register
an instruction writes interferes with what is live after it, with the instruction's other
operands and with its other destinations. A guarded write does not end a register's earlier
value (threads whose guard is false keep it).

Registers keep arrays of their own (``dedicated``), zeroed on first use in each batch, where
sharing would not be exact: registers read before any write on some path (they read zeros),
``shfl`` sources (read from other lanes, which may be elsewhere in the code), and every register
of an instruction not listed in :data:`WRITES_FIRST` or :data:`WRITES_NOTHING` (an opcode added
to the simulator stays exact without this module knowing it; list it here to let its registers
share).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..compile.ptx import TYPES
from .arith import alu

# mbarrier: arrive writes its state and try_wait/test_wait their predicate first; init, expect_tx and
# inval start with the barrier's address, which only a register operand is taken for (see _facts)
WRITES_FIRST = ({"mov", "cvt", "cvta", "isspacep", "ld", "ldu", "atom", "vote", "activemask", "shfl", "ldmatrix",
                 "movmatrix", "mbarrier"} | set(alu.OPS))
WRITES_NOTHING = {"st", "red", "bra", "ret", "exit", "bar", "barrier", "membar", "fence", "cp", "stmatrix"}
_ENDS_BLOCK = ("ret", "exit", "trap")
_REGISTER = re.compile(r"%[A-Za-z_$][\w$]*")


@dataclass
class Storage:
    key: dict = field(default_factory=dict)        # register -> (storage dtype, colour): its array
    dedicated: set = field(default_factory=set)    # registers with an array of their own


def plan_storage(kernel) -> Storage:
    facts = [_facts(ins) for ins in kernel.instructions]
    order = list(dict.fromkeys(r for ins, f in zip(kernel.instructions, facts) for r in sorted(f[1]) + sorted(f[0])))
    index = {r: i for i, r in enumerate(order)}
    bits = lambda names: sum(1 << index[r] for r in names)
    uses, defs, kills = ([bits(f[k]) for f in facts] for k in range(3))
    live_out = _live_out(kernel, uses, kills)
    entry = uses[0] | (live_out[0] & ~kills[0]) if facts else 0
    dedicated = {r for f in facts for r in f[3]} | {r for r in order if entry >> index[r] & 1}
    clash = [0] * len(order)
    for i, (u, d) in enumerate(zip(uses, defs)):
        if d:
            around = live_out[i] | u | d
            for r in facts[i][1]:
                clash[index[r]] |= around
    return _colour(kernel, order, clash, dedicated)


def _facts(ins):
    """(registers read, registers written, writes that end the old value, registers kept apart)."""
    guard = {ins.guard[0]} if ins.guard else set()
    if ins.opcode not in WRITES_FIRST and ins.opcode not in WRITES_NOTHING:
        regs = guard | {r for op in ins.operands for r in _names(op)}
        return regs, set(), set(), regs
    first = ins.operands[0] if ins.operands and ins.opcode in WRITES_FIRST and \
        ins.operands[0].kind in ("reg", "vec", "sink") else None
    written = set(_names(first)) if first is not None and first.kind in ("reg", "vec") else set()
    rest = ins.operands[1:] if first is not None else ins.operands
    read = guard | {r for op in rest for r in _names(op)}
    own = set(_names(ins.operands[1])) if ins.opcode == "shfl" and len(ins.operands) > 1 else set()
    return read, written, (set() if ins.guard else written), own


def _names(op):
    """The registers an operand names: itself, a vector's items, an address's base, or every
    %name in an operand the parser kept as text (``[%rd2, {%r3, %r4}]`` of a tensor copy)."""
    if op.kind == "vec":
        return [r for item in op.items for r in _names(item)]
    if op.kind == "reg":
        return [op.name]
    text = " ".join(str(x) for x in (op.name, op.value) if isinstance(x, str))
    return _REGISTER.findall(text)


def _successors(kernel, i, ins, n):
    if ins.opcode in _ENDS_BLOCK and ins.guard is None:
        return ()
    if ins.opcode == "bra":
        target = kernel.labels.get(ins.operands[0].name) if ins.operands else None
        if target is None:
            return tuple(range(n))        # an indirect branch could go anywhere
        return (target,) if ins.guard is None else (target, i + 1)
    return (i + 1,)


def _live_out(kernel, uses, kills):
    """Registers (bitsets) live after each instruction, by backward dataflow to a fixed point."""
    n = len(uses)
    succ = [[s for s in _successors(kernel, i, ins, n) if s < n] for i, ins in enumerate(kernel.instructions)]
    live_in, live_out = [0] * n, [0] * n
    changed = True
    while changed:
        changed = False
        for i in range(n - 1, -1, -1):
            out = 0
            for s in succ[i]:
                out |= live_in[s]
            new_in = uses[i] | (out & ~kills[i])
            if out != live_out[i] or new_in != live_in[i]:
                live_out[i], live_in[i] = out, new_in
                changed = True
    return live_out


def _colour(kernel, order, clash, dedicated) -> Storage:
    """Greedy colouring in order of first appearance, per storage dtype. `clash[r]` holds the
    registers live where r is written; two registers interfere when either is in the other's
    set, so a colour keeps both its members and the union of their clash sets."""
    storage = Storage(dedicated=set(dedicated))
    members: dict = {}                           # (kind, colour) -> bitset of its registers
    blocked: dict = {}                           # (kind, colour) -> union of its members' clash sets
    for i, r in enumerate(order):
        kind = _storage_kind(kernel, r)
        if r in dedicated:
            storage.key[r] = (kind, "own", r)
            continue
        c = 0
        while (kind, c) in members and (clash[i] & members[kind, c] or blocked[kind, c] >> i & 1):
            c += 1
        members[kind, c] = members.get((kind, c), 0) | 1 << i
        blocked[kind, c] = blocked.get((kind, c), 0) | clash[i]
        storage.key[r] = (kind, "shared", c)
    return storage


def _storage_kind(kernel, r):
    t = kernel.registers.get(r, "b64")
    return "pred" if t == "pred" else TYPES[t][0] if t in TYPES else 8

"""What a compiled kernel does, as a fingerprint its source's spelling does not change.

    print_ = codeprint.of(fn)              # fn: a Function (its PTX, parsed)
    codeprint.of(fn) == codeprint.of(fn2)  # the same computation, however each source was written

The fingerprint is the multiset of the kernel's PTX instructions, each named by its value: its
opcode and modifiers, its guard, and the values of its operands, recursively (value numbering over
the dataflow graph). Register names, the order of instructions, labels, ``.loc`` lines, the
kernel's name and the names of its parameters and shared arrays do not enter it; parameters are
named by position and variables by space, size and alignment. So an extra ``;``, constants written
in for a template's, dropped comments, renamed variables, a kernel renamed, a loop unrolled by hand
where the compiler unrolls it too, and independent statements in another order all leave it as it
is: they leave NVRTC's code as it is, up to the order of its instructions and the names of its
registers. What changes the code changes the fingerprint: another index arithmetic, a different
bounds test, ``__restrict__`` (read-only loads, ``ld.global.nc``), another loop.

A register written more than once (a loop's counter, a value set on two paths) is named by its
type and the opcodes of its writes, not by their operands: the graph has cycles there, and naming
it from its writes would depend on where the walk starts. Its writes are in the multiset in full.
``mov`` is transparent (a copy's value is its source's). This module reads parsed PTX and runs nothing.
"""
from __future__ import annotations

import hashlib
from collections import Counter

# opcodes whose first operand, when it is a register, is read, not written (a barrier's number, a branch
# table's index, a sleep's nanoseconds); most others that write nothing start with an address or a label
_READS_FIRST = frozenset("st red bar barrier bra brx ret exit nanosleep trap call".split())


# operands whose order does not change the value (mad and fma: the two factors)
_COMMUTATIVE = frozenset("add addc mul and or xor min max".split())
_FACTORS = frozenset("mad madc fma".split())
_EQUALITY = frozenset("eq ne equ neu".split())
_MIRROR = {"gt": "lt", "ge": "le", "hi": "lo", "hs": "ls", "gtu": "ltu", "geu": "leu"}   # a > b is b < a


def _h(*parts) -> str:
    return hashlib.blake2b(repr(parts).encode(), digest_size=10).hexdigest()


def _written(ins) -> list:
    """The registers an instruction writes: its first operand (a register or a vector of them), unless
    its opcode reads the first operand."""
    if not ins.operands or ins.opcode in _READS_FIRST:
        return []
    first = ins.operands[0]
    if first.kind == "reg":
        return [(first.name, None)]
    if first.kind == "vec":
        return [(x.name, pos) for pos, x in enumerate(first.items) if x.kind == "reg"]
    return []


def _transparent(ins) -> bool:
    """An unguarded register-to-value copy: its value is its source's."""
    return ins.opcode == "mov" and ins.guard is None and len(ins.operands) == 2 and ins.operands[0].kind == "reg"


def _ordered(opcode: str, mods: tuple, ops: list) -> tuple[tuple, tuple]:
    """(modifiers, operands) in one order for what is written in two: a + b and b + a, a > b and b < a."""
    if opcode in _COMMUTATIVE and len(ops) >= 2:
        ops[:2] = sorted(ops[:2], key=repr)
    elif opcode in _FACTORS and len(ops) >= 3:
        ops[:2] = sorted(ops[:2], key=repr)
    elif opcode in ("setp", "set") and mods and len(ops) >= 2 and (mods[0] in _EQUALITY or mods[0] in _MIRROR):
        if mods[0] in _MIRROR:
            mods = (_MIRROR[mods[0]],) + mods[1:]
            ops[:2] = ops[1::-1]
        else:
            ops[:2] = sorted(ops[:2], key=repr)
    return mods, tuple(ops)


class _Walk:
    """Value numbering over one kernel's instructions."""

    def __init__(self, kernel, module_variables: dict):
        self.ins = kernel.instructions
        self.types = kernel.registers
        self.params = {p[0]: i for i, p in enumerate(kernel.params)}
        self.variables = {**module_variables, **kernel.variables}
        self.writes: dict[str, list] = {}
        for k, ins in enumerate(self.ins):
            for name, pos in _written(ins):
                self.writes.setdefault(name, []).append((k, pos))
        self.values: dict[int, str] = {}
        self.busy: set[int] = set()

    def register(self, name: str) -> str:
        writes = self.writes.get(name, [])
        if len(writes) != 1:                  # never written (undefined), or a loop's / two paths' value
            return _h("multi", self.types.get(name), tuple(sorted(self.ins[k].opcode for k, _ in writes)))
        k, pos = writes[0]
        src = self.ins[k].operands[-1]
        if _transparent(self.ins[k]) and src.kind == "reg" and not src.negated and src.name != name:
            return self.register(src.name)
        return _h(self.value(k), pos)

    def symbol(self, name: str):
        if name in self.params:
            return ("param", self.params[name])
        v = self.variables.get(name)
        return ("var", v.space, v.size, v.align, v.init) if v is not None else ("symbol",)

    def operand(self, o):
        kind = o.kind
        if kind == "reg":
            return ("r", self.register(o.name), o.negated)
        if kind == "addr":
            base = None if o.name is None else self.register(o.name) if o.name.startswith("%") else self.symbol(o.name)
            return ("a", base, o.value)
        if kind == "vec":
            return ("v", tuple(self.operand(x) for x in o.items), o.value)
        if kind == "symbol":
            return ("y", self.symbol(o.name))
        if kind in ("imm", "special", "raw"):
            return (kind, o.value if kind != "special" else o.name)
        return (kind,)                        # label, sink: where a branch goes is not part of a value

    def value(self, k: int) -> str:
        if k in self.values:
            return self.values[k]
        if k in self.busy:                    # a cycle through registers written once: not NVRTC's code
            return _h("cycle", self.ins[k].opcode)
        self.busy.add(k)
        ins = self.ins[k]
        read = ins.operands[1:] if _written(ins) else ins.operands
        if _transparent(ins):
            v = _h("=", self.operand(read[0]))
        else:
            guard = None if ins.guard is None else (self.register(ins.guard[0]), ins.guard[1])
            mods, ops = _ordered(ins.opcode, ins.mods, [self.operand(o) for o in read])
            v = _h(ins.opcode, mods, guard, ops)
        self.busy.discard(k)
        self.values[k] = v
        return v


def digest(print_: frozenset) -> str:
    """A short name for a fingerprint: equal fingerprints, equal digests."""
    return _h(tuple(sorted(print_)))


def of(fn) -> frozenset:
    """The fingerprint of a compiled Function: {(instruction value, count)}, hashable and comparable.
    Values are numbered in the PTX's order, so the walk rarely goes deep (a value used before the line
    that makes it); a kernel it cannot walk gets a fingerprint of its own, equal to no other."""
    walk = _Walk(fn.kernel, getattr(fn.module.parsed, "variables", {}))
    try:
        # a copy into a register written once is counted where its value is used; one into a loop's
        # register (its start value) is counted on its own
        counts = Counter(walk.value(k) for k, ins in enumerate(walk.ins)
                         if not (_transparent(ins) and len(walk.writes[ins.operands[0].name]) == 1))
    except RecursionError:
        return frozenset({(f"unwalked {id(fn)} {id(walk)}", 1)})
    return frozenset(counts.items())

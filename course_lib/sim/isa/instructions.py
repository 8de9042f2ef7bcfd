"""Turn each parsed PTX instruction into a small Python closure ``run(batch, mask)``.

``mask`` is None (every slot of the batch executes) or a boolean array over slots. A closure
returns None to fall through, or a ``control`` outcome for the scheduler (``Jump``, ``Exit``,
``Arrive``). :data:`BUILDERS` maps each opcode to the function that builds its closure, one
line per opcode; arithmetic and logic come from ``alu.OPS`` through :func:`build_alu`.
Adding an instruction is one builder (here or in the module of its kind: ``access`` for
memory, ``warp_ops``, ``convert``, ``calls``; ``copy_ops``/``tensor_ops`` for cp.async and the TMA,
``sync_ops`` for mbarriers, ``matrix_ops`` for ldmatrix/stmatrix/movmatrix, ``param_ops`` for a
parameter's address) and one line in the table.

Unsupported instructions are not an error until they execute: a kernel whose unusual path
is never taken still runs.
"""
from __future__ import annotations

import numpy as np

from ...compile.ptx import TYPES
from ..arith import alu
from ..spaces.memory import LOCAL_WINDOW, SHARED_WINDOW, WINDOW_SIZE
from . import access, atomics, calls, convert, copy_ops, matrix_ops, param_ops, sync_ops, warp_ops
from .control import Arrive, Exit, Jump
from .operands import plain_integer, reader, unsupported, writer


def build(ins, program):
    """The closure for one instruction, with its guard predicate applied."""
    builder = BUILDERS.get(ins.opcode)
    if builder is not None:
        run = builder(ins, program)
    elif ins.opcode in alu.OPS:
        run = build_alu(ins, program)
    else:
        run = unsupported(ins, f"the PTX instruction '{ins.opcode}' is not simulated")
    if ins.guard is None or ins.opcode == "bra":     # a branch reads its own guard
        return run
    reg, negated = ins.guard

    def guarded(b, mask):
        p = b.reg(reg)
        p = ~p if negated else p
        m = p if mask is None else (mask & p)
        return run(b, m) if m.any() else None
    return guarded


# ----------------------------------------------------------------------------- generic helpers

def no_effect(ins, program):
    """Fences, prefetches, cache policies: nothing to do in a memory that is always coherent."""
    return lambda b, mask: None


def build_alu(ins, program):
    """dst = fn(sources) for an arithmetic or logic instruction of ``alu.OPS``. With integer types
    only, threads of a diverged batch are computed over every slot and stored through the mask:
    cheaper than gathering each source and scattering the result."""
    try:
        fn, src_types, dst_type = alu.plan(ins)
    except (KeyError, IndexError, TypeError):
        return unsupported(ins, f"'{ins.opcode}' with modifiers .{'.'.join(ins.mods)} is not simulated")
    if ins.opcode == "setp" and ins.operands[0].kind == "vec":
        return _setp_pair(ins, program, src_types)
    srcs = [reader(o, t, program) for o, t in zip(ins.operands[1:], src_types)]
    whole = all(plain_integer(t) for t in [*src_types, dst_type])
    dst = writer(ins.operands[0], dst_type, whole)
    if whole:
        return lambda b, mask: dst(b, mask, fn(*[s(b, None) for s in srcs]))
    if len(srcs) == 2:
        a, c = srcs
        return lambda b, mask: dst(b, mask, fn(a(b, mask), c(b, mask)))
    return lambda b, mask: dst(b, mask, fn(*[s(b, mask) for s in srcs]))


def _setp_pair(ins, program, src_types):
    """setp.cmp[.op] p|q, a, b[, c]: q gets the complement of the comparison, then combined."""
    cmp = alu.compare(ins.mods[0], ins.type)
    combine = next((m for m in ins.mods if m in ("and", "or", "xor")), None)
    c = {"and": np.logical_and, "or": np.logical_or, "xor": np.logical_xor}.get(combine)
    srcs = [reader(o, t, program) for o, t in zip(ins.operands[1:], src_types)]
    p, q = (writer(x, "pred") for x in ins.operands[0].items)

    def run(b, mask):
        vals = [s(b, mask) for s in srcs]
        t = cmp(vals[0], vals[1])
        if c is not None:
            p(b, mask, c(t, vals[2]))
            q(b, mask, c(~t, vals[2]))
        else:
            p(b, mask, t)
            q(b, mask, ~t)
    return run


def build_mov(ins, program):
    t = ins.type
    dst, src = ins.operands
    if param_ops.names_parameter(src, program):        # the address of a parameter (a TensorMap's)
        return param_ops.build_mov(ins, program)
    read = reader(src, t, program)
    whole = plain_integer(t)
    write = writer(dst, t, whole)
    return lambda b, mask: write(b, mask, read(b, None if whole else mask))


def build_cvta(ins, program):
    """cvta[.to].space: a generic address from a space's own (.to: the other way round)."""
    to = "to" in ins.mods
    space = next(m for m in ins.mods if m in ("global", "shared", "local", "const", "param"))
    if space == "param":
        return param_ops.build_cvta(ins, program)
    window = {"shared": SHARED_WINDOW, "local": LOCAL_WINDOW}.get(space, 0)
    t = ins.type
    read = reader(ins.operands[1], t, program)
    write = writer(ins.operands[0], t)
    delta = np.asarray(window, np.uint64).astype(TYPES[t][1])

    def run(b, mask):
        v = read(b, mask)
        write(b, mask, (v - delta) if to else (v + delta))
    return run


def build_isspacep(ins, program):
    space = ins.mods[0]
    read = reader(ins.operands[1], "u64", program)
    write = writer(ins.operands[0], "pred")
    inside = lambda a, start: (a >= start) & (a < start + WINDOW_SIZE)

    def run(b, mask):
        a = read(b, mask)
        if space in ("shared", "local"):
            write(b, mask, inside(a, SHARED_WINDOW if space == "shared" else LOCAL_WINDOW))
        else:
            write(b, mask, ~(inside(a, SHARED_WINDOW) | inside(a, LOCAL_WINDOW)))
    return run


# ----------------------------------------------------------------------------- control

def build_bra(ins, program):
    target = program.kernel.labels.get(ins.operands[0].name)
    if target is None:
        return unsupported(ins, "indirect branches are not simulated")
    if ins.guard is None:
        always = Jump(None, target)
        return lambda b, mask: always
    reg, negated = ins.guard

    def run(b, mask):
        p = b.reg(reg)
        taken = ~p if negated else p
        return Jump(taken if mask is None else (taken & mask), target)
    return run


def build_exit(ins, program):
    return lambda b, mask: Exit(mask)


def build_bar(ins, program):
    if ins.opcode == "bar" and "warp" in ins.mods:          # __syncwarp(): orders a warp's accesses
        def syncwarp(b, mask):
            if b.races is not None:
                b.races.syncwarp(b.slot if mask is None else np.flatnonzero(mask))
        return syncwarp
    if any(m in ins.mods for m in ("arrive", "red")) or len(ins.operands) > 1:
        return unsupported(ins, "named barriers, bar.arrive and __syncthreads_count/and/or are not simulated")
    return lambda b, mask: Arrive(mask)


BUILDERS = {
    # data movement and conversion
    "mov": build_mov,
    "cvt": convert.build_cvt,
    "cvta": build_cvta,
    "isspacep": build_isspacep,
    # control flow
    "bra": build_bra,
    "ret": build_exit,
    "exit": build_exit,
    "trap": calls.build_trap,
    "call": calls.build_call,
    "bar": build_bar,
    "barrier": build_bar,
    # warp-level
    "shfl": warp_ops.build_shfl,
    "vote": warp_ops.build_vote,
    "activemask": warp_ops.build_activemask,
    # memory
    "ld": access.build_memory,
    "ldu": access.build_memory,
    "st": access.build_memory,
    "atom": atomics.build_atomic,
    "red": atomics.build_atomic,
    # asynchronous copies (cp.async, bulk and TMA copies), mbarriers, warp-wide matrix moves
    "cp": copy_ops.build,
    "mbarrier": sync_ops.build,
    "ldmatrix": matrix_ops.build,
    "stmatrix": matrix_ops.build,
    "movmatrix": matrix_ops.build,
    # no effect in the simulator's memory
    "membar": no_effect,
    "fence": no_effect,
    "nanosleep": no_effect,
    "prefetch": no_effect,
    "prefetchu": no_effect,
    "applypriority": no_effect,
    "discard": no_effect,
    "createpolicy": no_effect,
    "pmevent": no_effect,
}

"""Reading and writing an instruction's operands: registers, immediates, special registers, symbols.

``reader(op, t, program)`` returns ``read(batch, mask)``: the operand's value for the threads in
``mask`` (every slot when None) viewed as PTX type ``t``, a numpy array or a scalar that
broadcasts; ``writer(op, t)`` returns ``write(batch, mask, value)``, which stores a typed result
into a register's storage for those threads only. Vector operands (``{%r1, %r2}``) pack into and
unpack from one wide value, as PTX's ``mov.b64 %rd, {%r1, %r2}`` does.

What it does not do: know what an instruction computes (``alu``, ``convert``, ``access``...).
"""
from __future__ import annotations

import numpy as np

from ...compile.ptx import TYPES
from ...errors import UnsupportedInstruction
from ..arith import alu, rounding
from ..spaces.memory import UINT
from ..state import as_type, to_storage


def reader(op, t, program):
    """A function (batch, mask) -> value of operand `op` viewed as PTX type `t`."""
    if op.kind == "reg":
        name, neg = op.name, op.negated

        def read(b, mask):
            v = as_type(b.reg(name), t)
            v = v if mask is None else v[mask]
            return ~v if neg else v
        return read
    if op.kind == "imm":
        value = immediate(op.value, t)
        return lambda b, mask: value
    if op.kind == "special":
        name = op.name
        dynamic = name.startswith(("%clock", "%globaltimer"))

        def special(b, mask):
            v = b._compute_special(name) if dynamic else b.special(name)
            v = np.asarray(v)
            if t in TYPES and TYPES[t][1] is not None and v.dtype.itemsize != TYPES[t][0]:
                v = v.astype(UINT[TYPES[t][0]])
            v = v.view(TYPES[t][1]) if t in TYPES else v
            return v if (mask is None or v.ndim == 0) else v[mask]
        return special
    if op.kind == "symbol":
        addr = program.symbol_address(op.name)
        value = immediate(addr, t)
        return lambda b, mask: value
    if op.kind == "vec" and op.value != "pair":  # packed vector source: {%r1, %r2} as one wide value
        parts = [reader(x, _part_type(op, t), program) for x in op.items]
        w = TYPES[t][0] // len(op.items)

        def pack(b, mask):
            vals = [np.asarray(p(b, mask)).astype(np.uint64) for p in parts]
            out = np.uint64(0)
            for i, v in enumerate(vals):
                out = out | ((v & np.uint64((1 << (8 * w)) - 1)) << np.uint64(8 * w * i))
            return np.asarray(out).astype(UINT[TYPES[t][0]]).view(TYPES[t][1])
        return pack
    raise UnsupportedInstruction(f"operand '{op.name or op.kind}' of this kind cannot be read")


def _part_type(op, t):
    w = TYPES[t][0] // len(op.items)
    return {1: "b8", 2: "b16", 4: "b32", 8: "b64"}[w]


def immediate(value, t):
    if t == "pred":
        return np.bool_(value)
    w, npt = TYPES[t]
    if isinstance(value, float):
        if t == "bf16":    # bf16 lives in u16 storage: a float literal becomes its bits
            return rounding.round_exact(np.float64(value), "bf16")[()]
        return np.asarray(value, np.float64).astype(npt)[()] if alu.is_float(t) else npt(int(value))
    if alu.is_float(t) and t != "bf16":   # an integer literal for a float operand: its value
        return npt(value)
    return np.asarray(int(value) & ((1 << (8 * w)) - 1), np.uint64).astype(UINT[w]).view(npt)[()]


def writer(op, t, whole=False):
    """A function (batch, mask, value) storing `value` (typed t) into operand `op` for the threads
    in `mask`: `value` holds just those threads' values, or, with ``whole=True``, one per slot."""
    if op.kind == "sink":
        return lambda b, mask, v: None
    if op.kind == "vec":  # unpack one wide value into several registers
        w = TYPES[t][0] // len(op.items)
        part_t = {1: "b8", 2: "b16", 4: "b32", 8: "b64"}[w]
        subs = [writer(x, part_t, whole) for x in op.items]

        def unpack(b, mask, v):
            u = np.asarray(v).view(UINT[TYPES[t][0]]).astype(np.uint64)
            for i, s in enumerate(subs):
                s(b, mask, ((u >> np.uint64(8 * w * i)) & np.uint64((1 << (8 * w)) - 1)).astype(UINT[w]))
        return unpack
    name = op.name

    def write(b, mask, v):
        arr = b.reg(name, overwrite=mask is None)
        vals = to_storage(v, t, arr.dtype)
        if mask is None:
            arr[...] = vals
        elif whole:
            np.copyto(arr, vals, where=mask)
        else:
            arr[mask] = vals
    return write


def plain_integer(t) -> bool:
    """An integer, bit-field or predicate type: arithmetic on it cannot fail or slow down on any
    value, so an instruction may compute it for every slot and keep the active ones."""
    return t == "pred" or (t[0] in "bus" and t in TYPES and t != "bf16")


def unsupported(ins, why):
    """The closure for an instruction the simulator cannot run: an error only if it executes, so
    a kernel whose unusual path is never taken still runs."""
    def run(b, mask):
        raise UnsupportedInstruction(
            f"{why}: `{ins.text}`", line=ins.line or None,
            hint="the simulator covers what course kernels use; run this kernel on a GPU (Colab's GPU runtime works)")
    return run

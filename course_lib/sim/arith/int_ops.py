"""Integer PTX arithmetic: add/sub (.sat), mul (.lo/.hi/.wide), mad, mul24/mad24, div/rem, shifts,
bitwise logic, and integer comparisons, as numpy over all active threads.

Each builder takes a parsed instruction and returns ``(fn, src_types, dst_type)`` for ``alu.plan``.
Exact PTX semantics, not C's or numpy's: integers wrap; shifts by >= the width clamp (the shift
amount is unsigned, so a negative one is huge); division truncates toward zero; ``mul24``/
``mad24`` use the low 24 bits (sign-extended for .s32). Division and remainder by zero give all
ones and ``MIN / -1`` gives MIN, as on an H100 (``alu``'s docstring says where that comes from).
"""
from __future__ import annotations

import numpy as np

from ...compile.ptx import TYPES


def np_type(t):
    return TYPES[t][1]


def bits(t):
    return TYPES[t][0] * 8


def is_signed(t):
    return t.startswith("s")


def _wide_type(t):
    return {"s16": "s32", "u16": "u32", "s32": "s64", "u32": "u64"}[t]


def _mul_hi64(a, b, signed):
    """High 64 bits of a 64x64 product, via 32-bit limbs."""
    ua, ub = a.astype(np.uint64), b.astype(np.uint64)
    m = np.uint64(0xFFFFFFFF)
    a0, a1, b0, b1 = ua & m, ua >> np.uint64(32), ub & m, ub >> np.uint64(32)
    lo = a0 * b0
    mid1 = a1 * b0 + (lo >> np.uint64(32))
    mid2 = a0 * b1 + (mid1 & m)
    hi = a1 * b1 + (mid1 >> np.uint64(32)) + (mid2 >> np.uint64(32))
    if signed:
        hi = hi - np.where(a < 0, ub, np.uint64(0)) - np.where(b < 0, ua, np.uint64(0))
        return hi.view(np.int64)
    return hi


def mul(ins):
    t = ins.type
    n = np_type(t)
    if "wide" in ins.mods:
        w = _wide_type(t)
        return (lambda a, b: a.astype(np_type(w)) * b.astype(np_type(w))), [t, t], w
    if "hi" in ins.mods:
        if bits(t) == 64:
            return (lambda a, b: _mul_hi64(a, b, is_signed(t))), [t, t], t
        w = np_type(_wide_type(t))
        return (lambda a, b: ((a.astype(w) * b.astype(w)) >> bits(t)).astype(n)), [t, t], t
    return (lambda a, b: (a * b).astype(n, copy=False)), [t, t], t


def mad(ins):
    t = ins.type
    product, _, mt = mul(ins)
    if "sat" in ins.mods:     # mad.hi.sat.s32: the high half plus c, saturated
        return (lambda a, b, c: np.clip(product(a, b).astype(np.int64) + c, -2**31, 2**31 - 1).astype(np.int32)), [t] * 3, t
    if "wide" in ins.mods:
        return (lambda a, b, c: product(a, b) + c), [t, t, mt], mt
    return (lambda a, b, c: (product(a, b) + c).astype(np_type(t), copy=False)), [t, t, t], t


def mul24(ins, mad=False):
    """The 48-bit product of the low 24 bits (sign-extended for .s32); .hi = bits 47..16."""
    t = ins.type
    hi = "hi" in ins.mods
    if "sat" in ins.mods:
        raise KeyError("mad24.hi.sat")

    def low24(x):
        x = x.astype(np.int64)
        return ((x << 40) >> 40) if is_signed(t) else (x & 0xFFFFFF)

    def fn(a, b, c=None):
        p = low24(a) * low24(b)
        r = (p >> 16) if hi else p
        if c is not None:
            r = r + c.astype(np.int64)
        return (r & 0xFFFFFFFF).astype(np.uint32).view(np_type(t))
    return fn, [t] * (3 if mad else 2), t


def _sat_add(op):
    def fn(a, b):
        r = op(a.astype(np.int64), b.astype(np.int64))
        return np.clip(r, -2**31, 2**31 - 1).astype(np.int32)
    return fn


def int_arith(op):
    def build(ins):
        t = ins.type
        if "sat" in ins.mods and t == "s32":
            return _sat_add(op), [t, t], t
        n = np_type(t)
        return (lambda a, b: op(a, b).astype(n, copy=False)), [t, t], t
    return build


def _magnitude(x):
    """|x| of a signed integer array as uint64 (exact for the most negative value too)."""
    x = x.astype(np.int64)
    return np.where(x < 0, (~x).view(np.uint64) + np.uint64(1), x.view(np.uint64))


def divmod_op(ins, want_rem):
    t = ins.type
    n = np_type(t)

    def fn(a, b):
        zero = b == 0
        if is_signed(t):  # truncate toward zero; MIN / -1 wraps to MIN and MIN % -1 is 0
            ua, ub = _magnitude(a), _magnitude(b)
            ub = np.where(zero, np.uint64(1), ub)
            q, r = ua // ub, ua % ub
            q = np.where((a < 0) != (b < 0), ~q + np.uint64(1), q)
            r = np.where(a < 0, ~r + np.uint64(1), r)
            out = (r if want_rem else q).view(np.int64).astype(n)
        else:
            safe = np.where(zero, n(1), b)
            out = (a % safe) if want_rem else (a // safe)
        # division by zero is unspecified in PTX; an H100 gives all ones, quotient and remainder
        fill = n(-1) if is_signed(t) else np.iinfo(n).max
        return np.where(zero, fill, out).astype(n)
    return fn, [t, t], t


def shift(left):
    def build(ins):
        t = ins.type
        n = np_type(t)
        w = bits(t)

        def fn(a, s):
            if np.ndim(s) == 0:  # the usual case: a constant shift
                k = int(s)
                if k >= w:
                    return (a >> n(w - 1)) if (is_signed(t) and not left) else np.zeros_like(a)
                return (a << n(k)) if left else (a >> n(k))
            s = np.minimum(s.astype(np.uint64), w)
            k = np.minimum(s, w - 1).astype(n)
            if left:
                r = np.where(s >= w, 0, a << k)
            elif is_signed(t):
                r = a >> k          # arithmetic shift: clamping to w-1 gives the sign fill
            else:
                r = np.where(s >= w, 0, a >> k)
            return r.astype(n, copy=False)
        return fn, [t, "u32"], t
    return build


def bitwise(op):
    def build(ins):
        t = ins.type
        if t == "pred":
            return op, ["pred", "pred"], "pred"
        return (lambda a, b: op(a, b).astype(np_type(t), copy=False)), [t, t], t
    return build


def int_compare(cmp):
    return {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal,
            "gt": np.greater, "ge": np.greater_equal,
            "lo": np.less, "ls": np.less_equal, "hi": np.greater, "hs": np.greater_equal}[cmp]

"""What each PTX arithmetic/logic instruction computes, as numpy over all active threads.

``plan(ins)`` returns ``(fn, src_types, dst_type)``: the executor fetches each source operand
viewed as ``src_types[i]`` (a PTX type name), calls ``fn(*sources)``, and stores the result
as ``dst_type``. The table ``OPS`` has one entry per opcode, built from a few generic helpers;
floating-point arithmetic lives in ``float_ops`` (rounding modes, ftz, sat, halves).

Exact PTX semantics, not C's or numpy's: integers wrap; shifts by >= the width clamp (the
shift amount is unsigned, so a negative one is huge); division truncates toward zero;
``mul24``/``mad24`` use the low 24 bits (sign-extended for .s32); ``bfe``/``bfi``/``prmt``/
``shf``/``lop3`` follow the ISA's bit-level pseudocode. Values the ISA leaves unspecified
(integer division by zero: -1 / all ones; ``MIN / -1``: MIN) are what this simulator picks,
not promises; ``benchmarks/gpu_semantics.py`` compares them with a GPU.
"""
from __future__ import annotations

import numpy as np

from ..ptx import TYPES
from . import float_ops
from .float_ops import canon, compare, ftz  # noqa: F401  (used by instructions.py)

FLOAT_TYPES = ("f16", "f32", "f64", "bf16")
PACKED = ("f16x2", "bf16x2")


def np_type(t):
    return TYPES[t][1]


def bits(t):
    return TYPES[t][0] * 8


def is_float(t):
    return t in FLOAT_TYPES


def is_signed(t):
    return t.startswith("s")


# ----------------------------------------------------------------------------- integer helpers

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


def _mul(ins):
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


def _mad(ins):
    t = ins.type
    mul, _, mt = _mul(ins)
    if "sat" in ins.mods:     # mad.hi.sat.s32: the high half plus c, saturated
        return (lambda a, b, c: np.clip(mul(a, b).astype(np.int64) + c, -2**31, 2**31 - 1).astype(np.int32)), [t] * 3, t
    if "wide" in ins.mods:
        return (lambda a, b, c: mul(a, b) + c), [t, t, mt], mt
    return (lambda a, b, c: (mul(a, b) + c).astype(np_type(t), copy=False)), [t, t, t], t


def _mul24(ins, mad=False):
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


def _int_arith(name, op):
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


def _divmod(ins, want_rem):
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
        # division by zero is unspecified in PTX: a quotient of all ones, a remainder of a
        fill = a if want_rem else (n(-1) if is_signed(t) else np.iinfo(n).max)
        return np.where(zero, fill, out).astype(n)
    return fn, [t, t], t


def _shift(left):
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


def _bitwise(op):
    def build(ins):
        t = ins.type
        if t == "pred":
            return op, ["pred", "pred"], "pred"
        return (lambda a, b: op(a, b).astype(np_type(t), copy=False)), [t, t], t
    return build


def _setp(ins):
    cmp = ins.mods[0]
    t = ins.type
    if t in PACKED:
        raise KeyError("setp on packed halves")
    combine = next((m for m in ins.mods if m in ("and", "or", "xor")), None)
    fn = compare(cmp, t) if is_float(t) else _int_compare(cmp)
    if combine:
        c = {"and": np.logical_and, "or": np.logical_or, "xor": np.logical_xor}[combine]
        return (lambda a, b, p: c(fn(a, b), p)), [t, t, "pred"], "pred"
    return fn, [t, t], "pred"


def _int_compare(cmp):
    return {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal,
            "gt": np.greater, "ge": np.greater_equal,
            "lo": np.less, "ls": np.less_equal, "hi": np.greater, "hs": np.greater_equal}[cmp]


def _selp(ins):
    t = ins.type
    return (lambda a, b, c: np.where(c, a, b)), [t, t, "pred"], t


def _slct(ins):
    t, ct = ins.mods[-2], ins.mods[-1]
    flush = "ftz" in ins.mods
    return (lambda a, b, c: np.where((ftz(c) if flush else c) >= 0, a, b)), [t, t, ct], t


def _popc(ins):
    t = ins.type
    return (lambda a: np.bitwise_count(a).astype(np.uint32)), [t], "u32"


def _clz(ins):
    t = ins.type
    w = bits(t)

    def fn(a):
        u = a.astype(np.uint64)
        n = np.zeros(u.shape, np.uint32)
        for shift in (32, 16, 8, 4, 2, 1):
            if shift >= w:
                continue
            top = (u >> np.uint64(w - shift)) == 0
            n = np.where(top, n + shift, n)
            u = np.where(top, (u << np.uint64(shift)) & np.uint64((1 << w) - 1), u)
        return np.where(a == 0, np.uint32(w), n).astype(np.uint32)
    return fn, [t], "u32"


def _bfind(ins):
    """Position of the most significant 1 (unsigned) or non-sign bit (signed); 0xFFFFFFFF if
    there is none; .shiftamt gives w-1 minus that position instead."""
    t = ins.type
    w = bits(t)
    shiftamt = "shiftamt" in ins.mods

    def fn(a):
        u = _unsigned_bits(np.asarray(a), w)
        if is_signed(t):
            neg = (u >> np.uint64(w - 1)) & np.uint64(1) == 1
            u = np.where(neg, ~u & _low_mask(np.full(u.shape, w)), u)
        _, e = np.frexp(u.astype(np.float64))
        pos = e.astype(np.int64) - 1
        pos = np.where((pos >= 0) & ((u >> np.clip(pos, 0, 63).astype(np.uint64)) == 0), pos - 1, pos)
        pos = np.minimum(pos, w - 1)
        r = np.where(shiftamt, w - 1 - pos, pos)
        return np.where(u == 0, np.uint32(0xFFFFFFFF), r.astype(np.uint32)).astype(np.uint32)
    return fn, [t], "u32"


def _brev(ins):
    t = ins.type
    w = bits(t)
    n = np_type(t)

    def fn(a):
        b = np.unpackbits(a.astype(n).view(np.uint8).reshape(-1, w // 8), axis=1, bitorder="little")
        return np.packbits(b[:, ::-1], axis=1, bitorder="little").view(n).reshape(a.shape)
    return fn, [t], t


def _unsigned_bits(a, w):
    return a.view(np.uint32 if w == 32 else np.uint64).astype(np.uint64)


def _low_mask(nbits):
    """(1 << nbits) - 1 for nbits in 0..64, as uint64."""
    nb = nbits.astype(np.uint64)
    return np.where(nb >= 64, np.uint64(2**64 - 1), (np.uint64(1) << np.minimum(nb, np.uint64(63))) - np.uint64(1))


def _bfe(ins):
    """d[i] = a[pos+i] for i < len and pos+i < w, else the sign bit a[min(pos+len-1, w-1)]
    (0 for unsigned types or len == 0); pos and len are the low 8 bits of b and c."""
    t = ins.type
    w = bits(t)
    n = np_type(t)

    def fn(a, pos, length):
        p = (np.asarray(pos).astype(np.int64) & 0xFF)
        ln = (np.asarray(length).astype(np.int64) & 0xFF)
        u = _unsigned_bits(np.asarray(a), w)
        taken = np.clip(np.minimum(ln, w - p), 0, w)
        shifted = np.where(p < w, u >> np.minimum(p, 63).astype(np.uint64), np.uint64(0))
        mask = _low_mask(taken)
        r = shifted & mask
        if is_signed(t):
            top = np.clip(p + ln - 1, 0, w - 1).astype(np.uint64)
            sbit = ((u >> top) & np.uint64(1)).astype(bool) & (ln > 0)
            r = np.where(sbit, r | (~mask & _low_mask(np.full(r.shape, w))), r)
        return r.astype(np.uint32 if w == 32 else np.uint64).view(n)
    return fn, [t, "u32", "u32"], t


def _bfi(ins):
    t = ins.type
    w = bits(t)
    n = np_type(t)

    def fn(f, b, pos, length):
        p = np.minimum(pos & 0xFF, w).astype(np.uint64)
        ln = np.minimum(length & 0xFF, w).astype(np.uint64)
        mask = ((np.where(ln >= 64, np.uint64(0), np.uint64(1) << np.minimum(ln, 63)) - np.uint64(1)) << np.minimum(p, w - 1))
        mask = np.where(p >= w, np.uint64(0), mask) & np.uint64((1 << w) - 1)
        r = (b.astype(np.uint64) & ~mask) | ((f.astype(np.uint64) << np.minimum(p, w - 1)) & mask)
        return r.astype(n)
    return fn, [t, t, "u32", "u32"], t


# byte i of the result, for each prmt mode and selector c[1:0] = k (PTX ISA table)
_PRMT = {"f4e": lambda k, i: (k + i) & 7, "b4e": lambda k, i: (k - i) & 7, "rc8": lambda k, i: k,
         "ecl": lambda k, i: np.maximum(k, i), "ecr": lambda k, i: np.minimum(k, i),
         "rc16": lambda k, i: (k & 1) * 2 + (i & 1)}


def _prmt(ins):
    mode = next((m for m in ins.mods if m in _PRMT), None)

    def fn(a, b, c):
        src = a.astype(np.uint64) | (b.astype(np.uint64) << np.uint64(32))
        sel = np.asarray(c).astype(np.int64)
        out = np.zeros(np.broadcast(a, b, c).shape, np.uint32)
        for i in range(4):
            if mode is None:
                s = (sel >> (4 * i)) & 0xF
                byte = (src >> (np.uint64(8) * (s & 7).astype(np.uint64))) & np.uint64(0xFF)
                msb = (byte >> np.uint64(7)) & np.uint64(1)
                byte = np.where(s & 8, msb * np.uint64(0xFF), byte)
            else:
                idx = np.asarray(_PRMT[mode](sel & 3, i), np.int64).astype(np.uint64)
                byte = (src >> (np.uint64(8) * idx)) & np.uint64(0xFF)
            out |= (byte.astype(np.uint32) << np.uint32(8 * i))
        return out
    return fn, ["b32", "b32", "b32"], "b32"


def _shf(ins):
    left = "l" in ins.mods
    clamp = "clamp" in ins.mods

    def fn(a, b, c):
        n = np.minimum(c, 32) if clamp else c & np.uint32(31)
        wide = a.astype(np.uint64) | (b.astype(np.uint64) << np.uint64(32))
        n = np.asarray(n).astype(np.uint64)
        if left:
            return ((wide << n) >> np.uint64(32)).astype(np.uint32)
        return (wide >> n).astype(np.uint32)
    return fn, ["b32", "b32", "u32"], "b32"


def _lop3(ins):
    def fn(a, b, c, lut):
        out = np.zeros(np.broadcast(a, b, c).shape, np.uint32)
        for k in range(8):
            term = ((a if k & 4 else ~a) & (b if k & 2 else ~b) & (c if k & 1 else ~c))
            out |= np.where((lut >> np.uint32(k)) & np.uint32(1), term, np.uint32(0)).astype(np.uint32)
        return out
    return fn, ["b32", "b32", "b32", "b32"], "b32"


def _copysign(ins):
    t = ins.type
    return (lambda a, b: np.copysign(b, a)), [t, t], t


def _testp(ins):
    t = ins.type
    kind = ins.mods[0]
    f = {"finite": np.isfinite, "infinite": np.isinf, "number": lambda x: ~np.isnan(x),
         "notanumber": np.isnan, "normal": lambda x: np.isfinite(x) & (np.abs(x) >= np.finfo(x.dtype).tiny),
         "subnormal": lambda x: (x != 0) & (np.abs(x) < np.finfo(x.dtype).tiny)}[kind]
    return f, [t], "pred"


# ----------------------------------------------------------------------------- float dispatch

_ARITY = {"add": 2, "sub": 2, "mul": 2, "div": 2, "fma": 3, "sqrt": 1, "rcp": 1}
_APPROX = {"sqrt": np.sqrt, "rcp": lambda x: 1 / x, "div": None}


def _float(name, ins):
    """(fn, srcs, dst) for float add/sub/mul/fma/div/sqrt/rcp of any float type."""
    t = ins.type
    if t in PACKED:
        return float_ops.packed(plan, ins)
    n = _ARITY[name]
    if t == "f32" and name in _APPROX and ("approx" in ins.mods or "full" in ins.mods):
        if name == "div":
            flush = "ftz" in ins.mods
            return (lambda a, b: canon(ftz(ftz(a) / ftz(b)) if flush else a / b)), [t, t], t
        return float_ops.approx(_APPROX[name], ins), [t], t
    if t == "f32":
        return float_ops.f32(name, ins), [t] * n, t
    if t == "f64":
        return float_ops.f64(name, ins), [t] * n, t
    if t in float_ops.HALF:
        return float_ops.half(name, ins, t), [t] * n, t
    raise KeyError(t)


def _either(name, int_build):
    """Integer builder for integer types, float_ops for floats (mul and mad too)."""
    def build(ins):
        if is_float(ins.type) or ins.type in PACKED:
            return _float("fma" if name == "mad" else name, ins)
        return int_build(ins)
    return build


def _minmax(is_max):
    def build(ins):
        t = ins.type
        if t in PACKED:
            return float_ops.packed(plan, ins)
        if is_float(t):
            return float_ops.minmax(is_max, ins), [t, t], t
        return (np.maximum if is_max else np.minimum), [t, t], t
    return build


def _sign(kind):
    def build(ins):
        t = ins.type
        if t in PACKED:
            return float_ops.packed(plan, ins)
        if is_float(t):
            return float_ops.sign_op(kind, ins), [t], t
        n = np_type(t)
        if kind == "neg":
            return (lambda a: np.negative(a).astype(n)), [t], t
        return (lambda a: np.where(a < 0, -a, a).astype(n)), [t], t
    return build


def _approx(f64fn):
    def build(ins):
        return float_ops.approx(f64fn, ins), [ins.type], ins.type
    return build


OPS = {
    "add": _either("add", _int_arith("add", np.add)),
    "sub": _either("sub", _int_arith("sub", np.subtract)),
    "mul": _either("mul", _mul),
    "mad": _either("mad", _mad),
    "fma": lambda ins: _float("fma", ins),
    "mul24": lambda ins: _mul24(ins),
    "mad24": lambda ins: _mul24(ins, mad=True),
    "div": _either("div", lambda ins: _divmod(ins, False)),
    "rem": lambda ins: _divmod(ins, True),
    "shl": _shift(True),
    "shr": _shift(False),
    "and": _bitwise(np.bitwise_and),
    "or": _bitwise(np.bitwise_or),
    "xor": _bitwise(np.bitwise_xor),
    "not": lambda ins: ((np.logical_not if ins.type == "pred" else np.invert), [ins.type], ins.type),
    "cnot": lambda ins: ((lambda a: (a == 0).astype(np_type(ins.type))), [ins.type], ins.type),
    "min": _minmax(False),
    "max": _minmax(True),
    "abs": _sign("abs"),
    "neg": _sign("neg"),
    "setp": _setp,
    "selp": _selp,
    "slct": _slct,
    "popc": _popc,
    "clz": _clz,
    "brev": _brev,
    "bfind": _bfind,
    "bfe": _bfe,
    "bfi": _bfi,
    "prmt": _prmt,
    "shf": _shf,
    "lop3": _lop3,
    "sqrt": lambda ins: _float("sqrt", ins),
    "rcp": lambda ins: _float("rcp", ins),
    "rsqrt": _approx(lambda x: 1 / np.sqrt(x)),
    "ex2": _approx(np.exp2),
    "lg2": _approx(np.log2),
    "sin": _approx(np.sin),
    "cos": _approx(np.cos),
    "tanh": _approx(np.tanh),
    "copysign": _copysign,
    "testp": _testp,
}


def plan(ins):
    """(fn, src_types, dst_type) for an ALU instruction, or None if the opcode is not ALU."""
    build = OPS.get(ins.opcode)
    if build is None:
        return None
    return build(ins)

"""What each PTX arithmetic/logic instruction computes, as numpy over all active threads.

``plan(ins)`` returns ``(fn, src_types, dst_type)``: the executor fetches each source operand
viewed as ``src_types[i]`` (a PTX type name), calls ``fn(*sources)``, and stores the result
as ``dst_type``. The table ``OPS`` has one entry per opcode, built from a few generic helpers;
floating-point arithmetic lives in ``float_ops`` (rounding modes, ftz, sat, halves).

Exact PTX semantics, not C's or numpy's: integers wrap; shifts by >= the width clamp (the
shift amount is unsigned, so a negative one is huge); division truncates toward zero;
``mul24``/``mad24`` use the low 24 bits (sign-extended for .s32); ``bfe``/``bfi``/``prmt``/
``shf``/``lop3`` follow the ISA's bit-level pseudocode.

Where the ISA leaves a result open, or its text and the hardware part, the answer is an
H100's (``benchmarks/gpu_semantics.py``, 2026-11-22; ``tests/test_gpu_semantics_replay.py``
replays every saved answer): integer division *and remainder* by zero give all ones, ``MIN /
-1`` gives MIN; 64-bit ``bfe``/``bfi`` read 32 bits of position and length (``bitops``);
``testp.normal`` is true for zeros; NaN bits, ``.sat`` of -0 and ``cvt`` of NaNs are in
``float_ops`` and ``instructions.convert``.

Approximate instructions are the exact result rounded to the type, except rcp.approx.ftz.f64,
modelled bit for bit (``float_ops._rcp64h``). The hardware's function units are not correctly
rounded and no simple formula reproduces them: a*RN(1/b) matches div.approx's saved answers
but not its agreement count, for instance. Largest distance between this simulator and the
H100 over the run's inputs (moderate arguments, in ulp of the result): div.approx, div.full
and div.approx.ftz.f32 2; sqrt.approx, rcp.approx and rsqrt.approx.f32 1; ex2.approx.f32 2;
lg2.approx.f32 12 (lg2(0.5) is -0.99999988 on the GPU); sin.approx.f32 797 and cos.approx.f32
1096 (their error is absolute: many ulp where the result is near zero); tanh.approx.f32 114;
ex2.approx.f16 1; rsqrt.approx.f64 1.
"""
from __future__ import annotations

import numpy as np

from ..compile.ptx import TYPES
from . import bitops, float_ops
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
        # division by zero is unspecified in PTX; an H100 gives all ones, quotient and remainder
        fill = n(-1) if is_signed(t) else np.iinfo(n).max
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


def _copysign(ins):
    t = ins.type
    return (lambda a, b: np.copysign(b, a)), [t, t], t


def _testp(ins):
    t = ins.type
    kind = ins.mods[0]
    f = {"finite": np.isfinite, "infinite": np.isinf, "number": lambda x: ~np.isnan(x),
         "notanumber": np.isnan,
         # an H100 counts zeros as normal (IEEE does not; the ISA says "normal number")
         "normal": lambda x: np.isfinite(x) & ((np.abs(x) >= np.finfo(x.dtype).tiny) | (x == 0)),
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
    "popc": bitops.popc,
    "clz": bitops.clz,
    "brev": bitops.brev,
    "bfind": bitops.bfind,
    "bfe": bitops.bfe,
    "bfi": bitops.bfi,
    "prmt": bitops.prmt,
    "shf": bitops.shf,
    "lop3": bitops.lop3,
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

"""What each PTX arithmetic/logic instruction computes, as numpy over all active threads.

``plan(ins)`` returns ``(fn, src_types, dst_type)``: the executor fetches each source operand
viewed as ``src_types[i]`` (a PTX type name), calls ``fn(*sources)``, and stores the result
as ``dst_type``. The table ``OPS`` has one entry per opcode, built from a few generic helpers.

Exact PTX semantics, not C's or numpy's: integers wrap; shifts by >= the width clamp;
division truncates toward zero; float->int conversions saturate and send NaN to 0; float
comparisons are ordered unless the ``u`` form is used; f32 arithmetic results that are NaN
are the GPU's canonical NaN; directed rounding modes (.rz/.rm/.rp) are exact for add, sub,
mul, fma, div and sqrt in f32. Limits: approximate instructions (``ex2.approx``, ``sin.approx``,
``rsqrt.approx``...) are computed exactly and rounded, which can differ from the hardware in
the last bits; f64 ``fma`` uses error-free transformations (exact except in rare
double-rounding cases).
"""
from __future__ import annotations

import numpy as np

from ..ptx import TYPES

F32_NAN = np.uint32(0x7FFFFFFF).view(np.float32)
F64_NAN = np.uint64(0x7FFFFFFFFFFFFFFF).view(np.float64)


def np_type(t):
    return TYPES[t][1]


def bits(t):
    return TYPES[t][0] * 8


def is_float(t):
    return t in ("f16", "f32", "f64", "bf16")


def is_signed(t):
    return t.startswith("s")


def _rounding(ins):
    for m in ins.mods:
        if m in ("rn", "rz", "rm", "rp", "rni", "rzi", "rmi", "rpi", "rna"):
            return m
    return None


def canon(x):
    """Replace NaN results with the canonical NaN the GPU produces."""
    if x.dtype == np.float32:
        return np.where(np.isnan(x), F32_NAN, x)
    if x.dtype == np.float64:
        return np.where(np.isnan(x), F64_NAN, x)
    return x


def ftz(x):
    if x.dtype == np.float32:
        return np.where(np.abs(x) < np.float32(1.1754944e-38), np.copysign(np.float32(0), x), x)
    return x


# ----------------------------------------------------------------------------- float rounding

def _two_sum(a, b):
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def round_to_f32(x64, err, mode):
    """Round the exact value x64 + err (an f64 plus a tiny residual) to f32 in a PTX mode."""
    r = x64.astype(np.float32)
    if mode in (None, "rn") and not np.any(err):
        return r
    r64 = r.astype(np.float64)
    finite = np.isfinite(x64)
    d = np.sign((x64 - r64) + err)                       # sign of (exact - r)
    if mode in (None, "rn"):
        # rounding x64 is right unless x64 sits exactly halfway; then the residual decides
        other = np.nextafter(r, np.where(x64 > r64, np.float32(np.inf), np.float32(-np.inf)))
        tie = np.abs(x64 - r64) * 2 == np.abs(other.astype(np.float64) - r64)
        fix = finite & tie & (err != 0) & (np.sign(err) == np.sign(x64 - r64))
        return np.where(fix, other, r)
    if mode == "rz":
        bad, target = finite & (d != 0) & (d == -np.sign(r64)), np.float32(0)
    elif mode == "rm":
        bad, target = finite & (d < 0), np.float32(-np.inf)
    else:  # rp
        bad, target = finite & (d > 0), np.float32(np.inf)
    return np.where(bad, np.nextafter(r, target), r)


def _f32_exact(op):
    """f32 op with any rounding mode: compute exactly in f64 (+ residual), round once."""
    def build(ins):
        mode = _rounding(ins)
        flush = "ftz" in ins.mods
        sat = "sat" in ins.mods

        def fn(*xs):
            if flush:
                xs = [ftz(x) for x in xs]
            if mode in (None, "rn") and op in _NATIVE:
                r = _NATIVE[op](*xs)
            else:
                x64, err = _EXACT[op](*[x.astype(np.float64) for x in xs])
                r = round_to_f32(x64, err, mode)
            if flush:
                r = ftz(r)
            if sat:
                r = np.where(np.isnan(r), np.float32(0), np.clip(r, 0, 1)).astype(np.float32)
            return canon(r)
        return fn
    return build


_NATIVE = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide,
           "sqrt": np.sqrt, "rcp": lambda x: np.float32(1) / x}


def _fma64(a, b, c):  # a*b exact in f64 for f32 inputs; the sum's residual is kept
    return _two_sum(a * b, c)


def _div64(a, b):
    q = a / b
    r = q.astype(np.float32).astype(np.float64)
    # residual sign of a/b - q: a - q*b computed exactly where q is an f32 value
    with np.errstate(all="ignore"):
        resid = np.where(q == r, (a - r * b) * np.sign(b), 0.0)
    return q, resid


def _sqrt64(a):
    q = np.sqrt(a)
    r = q.astype(np.float32).astype(np.float64)
    with np.errstate(all="ignore"):
        resid = np.where(q == r, a - r * r, 0.0)
    return q, resid


_EXACT = {"add": lambda a, b: _two_sum(a, b), "sub": lambda a, b: _two_sum(a, -b),
          "mul": lambda a, b: (a * b, 0.0), "fma": _fma64, "div": _div64, "sqrt": _sqrt64,
          "rcp": lambda a: _div64(np.ones_like(a), a)}


def _fma_f64(a, b, c):
    """Fused a*b+c in f64 via Dekker's exact product and a compensated sum."""
    p = a * b
    split = 134217729.0
    def halves(x):
        t = split * x
        hi = t - (t - x)
        return hi, x - hi
    ah, al = halves(a)
    bh, bl = halves(b)
    pe = ((ah * bh - p) + ah * bl + al * bh) + al * bl
    s, e = _two_sum(p, c)
    out = s + (e + pe)
    return np.where(np.isfinite(p), out, p + c)


def _float_op(name):
    def build(ins):
        t = ins.type
        if t == "f32" or (name == "fma" and t == "f32"):
            f = _f32_exact(name)(ins)
            return f
        if t == "f64":
            if name == "fma":
                return lambda a, b, c: canon(_fma_f64(a, b, c))
            return lambda *xs: canon(_NATIVE[name](*xs))
        if t == "f16":
            def f16(*xs):
                r = _NATIVE[name](*[x.astype(np.float32) for x in xs]) if name != "fma" else \
                    xs[0].astype(np.float64) * xs[1] + xs[2]
                return r.astype(np.float16)
            return f16
        raise KeyError
    return build


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
    if is_float(t):
        return _float_op("mul")(ins), [t, t], t
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
    if is_float(t):
        return _float_op("fma")(ins), [t, t, t], t
    mul, _, mt = _mul(ins)
    if "wide" in ins.mods:
        return (lambda a, b, c: mul(a, b) + c), [t, t, mt], mt
    return (lambda a, b, c: (mul(a, b) + c).astype(np_type(t), copy=False)), [t, t, t], t


def _sat_add(op):
    def fn(a, b):
        r = op(a.astype(np.int64), b.astype(np.int64))
        return np.clip(r, -2**31, 2**31 - 1).astype(np.int32)
    return fn


def _arith(name, op):
    def build(ins):
        t = ins.type
        if is_float(t):
            return _float_op(name)(ins), [t, t], t
        if "sat" in ins.mods and t == "s32":
            return _sat_add(op), [t, t], t
        n = np_type(t)
        return (lambda a, b: op(a, b).astype(n, copy=False)), [t, t], t
    return build


def _div(ins):
    t = ins.type
    if is_float(t):
        if t == "f32" and ("approx" in ins.mods or "full" in ins.mods):
            return (lambda a, b: canon(a / b)), [t, t], t
        return _float_op("div")(ins), [t, t], t
    n = np_type(t)

    def fn(a, b):
        zero = b == 0
        safe = np.where(zero, 1, b)
        if is_signed(t):  # C division: truncate toward zero; MIN / -1 wraps to MIN
            q = (np.abs(a.astype(np.int64) if bits(t) < 64 else a) // np.abs(safe)).astype(n)
            q = np.where((a < 0) != (safe < 0), -q, q).astype(n)
        else:
            q = a // safe
        return np.where(zero, n(-1) if is_signed(t) else np.iinfo(n).max, q).astype(n)
    return fn, [t, t], t


def _rem(ins):
    t = ins.type
    n = np_type(t)

    def fn(a, b):
        zero = b == 0
        safe = np.where(zero, 1, b)
        r = np.fmod(a, safe) if is_signed(t) else a % safe
        return np.where(zero, a, r).astype(n)
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


def _minmax(name):
    npop = np.minimum if name == "min" else np.maximum

    def build(ins):
        t = ins.type
        if is_float(t):
            def fn(a, b):  # PTX min/max return the non-NaN operand
                r = np.where(np.isnan(a), b, np.where(np.isnan(b), a, npop(a, b)))
                return canon(r)
            return fn, [t, t], t
        return (lambda a, b: npop(a, b)), [t, t], t
    return build


def _unary(fn_int, fn_float=None):
    def build(ins):
        t = ins.type
        if is_float(t) and fn_float is not None:
            if t == "f32" and "ftz" in ins.mods:
                return (lambda a: ftz(canon(fn_float(ftz(a))))), [t], t
            return (lambda a: canon(fn_float(a)) if fn_float is not np.negative else fn_float(a)), [t], t
        n = np_type(t)
        return (lambda a: fn_int(a).astype(n)), [t], t
    return build


def _setp(ins):
    cmp = ins.mods[0]
    t = ins.type
    combine = next((m for m in ins.mods if m in ("and", "or", "xor")), None)
    fn = compare(cmp, t)
    if combine:
        c = {"and": np.logical_and, "or": np.logical_or, "xor": np.logical_xor}[combine]
        return (lambda a, b, p: c(fn(a, b), p)), [t, t, "pred"], "pred"
    return fn, [t, t], "pred"


def compare(cmp, t):
    ops = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal,
           "gt": np.greater, "ge": np.greater_equal,
           "lo": np.less, "ls": np.less_equal, "hi": np.greater, "hs": np.greater_equal}
    if is_float(t):
        if cmp in ("num", "nan"):
            return lambda a, b: (~(np.isnan(a) | np.isnan(b))) if cmp == "num" else (np.isnan(a) | np.isnan(b))
        base = ops[cmp.rstrip("u")] if cmp.endswith("u") and cmp != "u" else ops[cmp]
        if cmp.endswith("u"):
            return lambda a, b: base(a, b) | np.isnan(a) | np.isnan(b)
        return lambda a, b: base(a, b) & ~(np.isnan(a) | np.isnan(b))
    return ops[cmp]


def _selp(ins):
    t = ins.type
    return (lambda a, b, c: np.where(c, a, b)), [t, t, "pred"], t


def _slct(ins):
    t, ct = ins.mods[-2], ins.mods[-1]
    return (lambda a, b, c: np.where(c >= 0, a, b)), [t, t, ct], t


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


def _brev(ins):
    t = ins.type
    w = bits(t)
    n = np_type(t)

    def fn(a):
        b = np.unpackbits(a.astype(n).view(np.uint8).reshape(-1, w // 8), axis=1, bitorder="little")
        return np.packbits(b[:, ::-1], axis=1, bitorder="little").view(n).reshape(a.shape)
    return fn, [t], t


def _bfe(ins):
    t = ins.type
    w = bits(t)
    n = np_type(t)

    def fn(a, pos, length):
        p = np.minimum(pos & 0xFF, 255).astype(np.int64)
        ln = np.minimum(length & 0xFF, 255).astype(np.int64)
        u = a.astype(np.uint64) if not is_signed(t) else a.astype(np.int64).view(np.uint64)
        shifted = np.where(p >= w, np.uint64(0) if not is_signed(t) else u >> np.uint64(w - 1),
                           u >> np.minimum(p, w - 1).astype(np.uint64))
        mask = np.where(ln >= 64, np.uint64(2**64 - 1), (np.uint64(1) << np.minimum(ln, 63).astype(np.uint64)) - np.uint64(1))
        r = shifted & mask
        if is_signed(t):  # sign bit is bit min(pos+len-1, w-1) of a
            sbit = np.minimum(p + ln - 1, w - 1)
            sign = ((a.astype(np.int64).view(np.uint64) >> sbit.astype(np.uint64)) & np.uint64(1)).astype(bool) & (ln > 0)
            r = np.where(sign & (ln < w), r | ~mask, r)
        r = np.where(ln == 0, np.uint64(0), r)
        return r.astype(np.uint64 if w == 64 else np.uint32).astype(n) if not is_signed(t) else r.view(np.int64).astype(n)
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


def _prmt(ins):
    mode = next((m for m in ins.mods if m in ("f4e", "b4e", "rc8", "ecl", "ecr", "rc16")), None)

    def fn(a, b, c):
        src = np.stack([a.astype(np.uint64) | (b.astype(np.uint64) << np.uint64(32))], -1)[..., 0]
        sel = c.astype(np.uint32)
        out = np.zeros(np.broadcast(a, b, c).shape, np.uint32)
        for i in range(4):
            if mode is None:
                s = (sel >> np.uint32(4 * i)) & np.uint32(0xF)
                byte = (src >> (np.uint64(8) * (s & np.uint32(7)).astype(np.uint64))) & np.uint64(0xFF)
                msb = (byte >> np.uint64(7)) & np.uint64(1)
                byte = np.where(s & np.uint32(8), msb * np.uint64(0xFF), byte)
            else:
                k = sel & np.uint32(3)
                idx = {"f4e": (k + i) & 7, "b4e": (k - i) & 7,
                       "rc8": k, "ecl": np.maximum(k, i) if False else np.where(i >= k, k, i),
                       "ecr": np.where(i <= k, k, i), "rc16": (k & 1) * 2 + (i & 1)}[mode]
                idx = np.asarray(idx, np.uint64)
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
        n = n.astype(np.uint64)
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


def _approx(f64fn):
    def build(ins):
        t = ins.type
        return (lambda a: canon(f64fn(a.astype(np.float64)).astype(np_type(t)))), [t], t
    return build


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


def _abs_int(a):
    return np.where(a < 0, -a, a)


OPS = {
    "add": _arith("add", np.add),
    "sub": _arith("sub", np.subtract),
    "mul": _mul,
    "mad": _mad,
    "fma": _mad,
    "mul24": _mul,
    "div": _div,
    "rem": _rem,
    "shl": _shift(True),
    "shr": _shift(False),
    "and": _bitwise(np.bitwise_and),
    "or": _bitwise(np.bitwise_or),
    "xor": _bitwise(np.bitwise_xor),
    "not": lambda ins: ((np.logical_not if ins.type == "pred" else np.invert), [ins.type], ins.type),
    "cnot": lambda ins: ((lambda a: (a == 0).astype(np_type(ins.type))), [ins.type], ins.type),
    "min": _minmax("min"),
    "max": _minmax("max"),
    "abs": _unary(_abs_int, np.abs),
    "neg": _unary(np.negative, np.negative),
    "setp": _setp,
    "selp": _selp,
    "slct": _slct,
    "popc": _popc,
    "clz": _clz,
    "brev": _brev,
    "bfe": _bfe,
    "bfi": _bfi,
    "prmt": _prmt,
    "shf": _shf,
    "lop3": _lop3,
    "sqrt": lambda ins: ((_float_op("sqrt")(ins) if "approx" not in ins.mods else _approx(np.sqrt)(ins)[0]), [ins.type], ins.type),
    "rcp": lambda ins: ((_float_op("rcp")(ins) if "approx" not in ins.mods else _approx(lambda x: 1 / x)(ins)[0]), [ins.type], ins.type),
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

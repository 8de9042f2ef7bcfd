"""Float arithmetic, comparison and conversion cases for the PTX semantics catalog.

Imported by ``ptx_cases`` (which it extends through ``ptx_cases.add``). See that module for
what a case is. Approximate instructions (``.approx``, ``div.full``) are compared with a
relative tolerance in the tests; the GPU script reports their exact bits.
"""
from __future__ import annotations

import math

import ptx_reference as R
from ptx_cases import INT_T, add, val, U, S

MODES = ("rn", "rz", "rm", "rp")
NAN_NOTE = "NaN result bits"


def _nan_or(fn):
    return fn


def _float_arith():
    for f in ("f32", "f64"):
        for m in MODES:
            add(f"add.{m}.{f}", f, (f, f), (f, f), lambda a, b, f=f, m=m: R.f_add(a, b, f, m), unspecified=NAN_NOTE)
            add(f"sub.{m}.{f}", f, (f, f), (f, f), lambda a, b, f=f, m=m: R.f_add(a, b, f, m, negate_b=True),
                unspecified=NAN_NOTE)
            add(f"mul.{m}.{f}", f, (f, f), (f, f), lambda a, b, f=f, m=m: R.f_mul(a, b, f, m), unspecified=NAN_NOTE)
            add(f"fma.{m}.{f}", f, (f, f, f), (f, f, f), lambda a, b, c, f=f, m=m: R.f_fma(a, b, c, f, m),
                unspecified=NAN_NOTE)
            add(f"div.{m}.{f}", f, (f, f), (f, f), lambda a, b, f=f, m=m: R.f_div(a, b, f, m), unspecified=NAN_NOTE)
            add(f"sqrt.{m}.{f}", f, (f,), (f,), lambda a, f=f, m=m: R.f_sqrt(a, f, m), unspecified=NAN_NOTE)
            add(f"rcp.{m}.{f}", f, (f,), (f,), lambda a, f=f, m=m: R.f_rcp(a, f, m), unspecified=NAN_NOTE)
        add(f"abs.{f}", f, (f,), (f,), lambda a, f=f: _keep_nan(a, f, a & ~(1 << (R.width(f) - 1))),
            unspecified="NaN input gives an unspecified NaN")
        add(f"neg.{f}", f, (f,), (f,), lambda a, f=f: _keep_nan(a, f, a ^ (1 << (R.width(f) - 1))),
            unspecified="NaN input gives an unspecified NaN")
        add(f"min.{f}", f, (f, f), (f, f), lambda a, b, f=f: R.f_minmax(a, b, f, False),
            unspecified="min(+0, -0); NaN bits when both are NaN")
        add(f"max.{f}", f, (f, f), (f, f), lambda a, b, f=f: R.f_minmax(a, b, f, True),
            unspecified="max(+0, -0); NaN bits when both are NaN")
        add(f"copysign.{f}", f, (f, f), (f, f), lambda a, b, f=f: _copysign(a, b, f),
            unspecified="NaN payload")
        for cmp in ("eq", "ne", "lt", "le", "gt", "ge", "equ", "neu", "ltu", "leu", "gtu", "geu", "num", "nan"):
            add(f"setp.{cmp}.{f}", "u32", (f, f), (f, f), lambda a, b, f=f, cmp=cmp: int(R.f_compare(a, b, f, cmp)),
                text=f"setp.{cmp}.{f} p, %1, %2;", pred_out=True)
        for kind in ("finite", "infinite", "number", "notanumber", "normal", "subnormal"):
            # testp.normal: the ISA says "normal number", which zero is not; an H100 says true
            # for +0 and -0 (and false for subnormals, as the ISA)
            hw = (lambda a, f=f: int(_testp(a, f, "normal") or R.to_value(a, f) == 0)) if kind == "normal" else None
            add(f"testp.{kind}.{f}", "u32", (f,), (f,), hw or (lambda a, f=f, kind=kind: int(_testp(a, f, kind))),
                text=f"testp.{kind}.{f} p, %1;", pred_out=True,
                isa=(lambda a, f=f: int(_testp(a, f, "normal"))) if hw else None)
    f = "f32"
    # flush-to-zero and saturation forms
    add("add.rn.ftz.f32", f, (f, f), (f, f), lambda a, b: R.f_add(a, b, f, "rn", ftz=True), unspecified=NAN_NOTE)
    add("add.rn.sat.f32", f, (f, f), (f, f), lambda a, b: R.f_add(a, b, f, "rn", sat=True),
        unspecified="sat of -0")
    add("add.rz.ftz.sat.f32", f, (f, f), (f, f), lambda a, b: R.f_add(a, b, f, "rz", ftz=True, sat=True),
        unspecified="sat of -0")
    add("sub.rm.ftz.f32", f, (f, f), (f, f), lambda a, b: R.f_add(a, b, f, "rm", ftz=True, negate_b=True),
        unspecified=NAN_NOTE)
    add("mul.rn.ftz.f32", f, (f, f), (f, f), lambda a, b: R.f_mul(a, b, f, "rn", ftz=True), unspecified=NAN_NOTE)
    add("mul.rp.sat.f32", f, (f, f), (f, f), lambda a, b: R.f_mul(a, b, f, "rp", sat=True),
        unspecified="sat of -0")
    add("fma.rn.ftz.f32", f, (f, f, f), (f, f, f), lambda a, b, c: R.f_fma(a, b, c, f, "rn", ftz=True),
        unspecified=NAN_NOTE)
    add("fma.rn.sat.f32", f, (f, f, f), (f, f, f), lambda a, b, c: R.f_fma(a, b, c, f, "rn", sat=True),
        unspecified="sat of -0")
    add("fma.rz.ftz.sat.f32", f, (f, f, f), (f, f, f), lambda a, b, c: R.f_fma(a, b, c, f, "rz", ftz=True, sat=True),
        unspecified="sat of -0")
    add("mad.rn.f32", f, (f, f, f), (f, f, f), lambda a, b, c: R.f_fma(a, b, c, f, "rn"), unspecified=NAN_NOTE)
    add("div.rn.ftz.f32", f, (f, f), (f, f), lambda a, b: R.f_div(a, b, f, "rn", ftz=True), unspecified=NAN_NOTE)
    add("sqrt.rn.ftz.f32", f, (f,), (f,), lambda a: R.f_sqrt(a, f, "rn", ftz=True), unspecified=NAN_NOTE)
    add("rcp.rn.ftz.f32", f, (f,), (f,), lambda a: R.f_rcp(a, f, "rn", ftz=True), unspecified=NAN_NOTE)
    add("abs.ftz.f32", f, (f,), (f,), lambda a: _keep_nan(a, f, R.flush(a, f) & 0x7FFFFFFF),
        unspecified="NaN input gives an unspecified NaN")
    add("neg.ftz.f32", f, (f,), (f,), lambda a: _keep_nan(a, f, R.flush(a, f) ^ 0x80000000),
        unspecified="NaN input gives an unspecified NaN")
    add("min.ftz.f32", f, (f, f), (f, f), lambda a, b: R.f_minmax(R.flush(a, f), R.flush(b, f), f, False),
        unspecified="min(+0, -0)")
    add("max.NaN.f32", f, (f, f), (f, f), lambda a, b: _minmax_nan(a, b, f, True), unspecified=NAN_NOTE)
    add("min.NaN.f32", f, (f, f), (f, f), lambda a, b: _minmax_nan(a, b, f, False), unspecified=NAN_NOTE)
    add("add.f32", f, (f, f), (f, f), lambda a, b: R.f_add(a, b, f, "rn"), unspecified=NAN_NOTE,
        name="k_add_f32_default")
    # approximate instructions: the ISA gives error bounds, not bits
    approx = [("div.approx.f32", 2, lambda a, b: R.f_div(a, b, f)), ("div.full.f32", 2, lambda a, b: R.f_div(a, b, f)),
              ("sqrt.approx.f32", 1, lambda a: R.f_sqrt(a, f)), ("rcp.approx.f32", 1, lambda a: R.f_rcp(a, f)),
              ("rsqrt.approx.f32", 1, lambda a: _math(a, f, lambda x: 1 / math.sqrt(x))),
              ("ex2.approx.f32", 1, lambda a: _math(a, f, lambda x: 2.0 ** x)),
              ("lg2.approx.f32", 1, lambda a: _math(a, f, math.log2)),
              ("sin.approx.f32", 1, lambda a: _math(a, f, math.sin)),
              ("cos.approx.f32", 1, lambda a: _math(a, f, math.cos)),
              ("tanh.approx.f32", 1, lambda a: _math(a, f, math.tanh)),
              ("div.approx.ftz.f32", 2, lambda a, b: R.f_div(a, b, f)),
              ("ex2.approx.f16", 1, lambda a: _math(a, "f16", lambda x: 2.0 ** x)),
              ("rcp.approx.ftz.f64", 1, lambda a: R.f_rcp(a, "f64", ftz=False)),
              ("rsqrt.approx.f64", 1, lambda a: _math(a, "f64", lambda x: 1 / math.sqrt(x)))]
    for ptx, nin, ref in approx:
        t = ptx.rsplit(".", 1)[1]
        add(ptx, t, (t,) * nin, {"f32": ("f32m",) * nin, "f64": ("f64m",), "f16": ("f16",)}[t], ref, approx=True,
            tol=2.0 ** -10 if "tanh" in ptx or "sin" in ptx or "cos" in ptx else 2.0 ** -20,
            unspecified="approximate: bits are the hardware's")


def _keep_nan(a, f, bits):
    return R.ANY_NAN if R.is_nan_bits(a, f) else bits


def _copysign(a, b, f):
    if R.is_nan_bits(b, f):
        return R.ANY_NAN
    sign = 1 << (R.width(f) - 1)
    return (b & ~sign) | (a & sign)


def _minmax_nan(a, b, f, is_max):
    if R.is_nan_bits(a, f) or R.is_nan_bits(b, f):
        return R.ANY_NAN
    return R.f_minmax(a, b, f, is_max)


def _testp(a, f, kind):
    v, s = R.decode(a, f)
    e, m, bias, emin, _ = R.fmt_params(f)
    if kind == "notanumber":
        return v == "nan"
    if kind == "number":
        return v != "nan"
    if kind == "finite":
        return v not in ("nan", "inf")
    if kind == "infinite":
        return v == "inf"
    if v in ("nan", "inf") or v == 0:
        return False
    normal = v >= R.Fraction(2) ** emin
    return normal if kind == "normal" else not normal


def _math(a, f, fn):
    x = R.to_value(a, f)
    if isinstance(x, str):
        return R.UNSPEC
    try:
        y = fn(float(x))
    except (ValueError, ZeroDivisionError, OverflowError):
        return R.UNSPEC
    return R.round_float(R.Fraction(y), f)


def _half_arith():
    for f in ("f16", "bf16"):
        rn = "" if f == "f16" else ".rn"
        add(f"add{rn}.{f}", f, (f, f), (f, f), lambda a, b, f=f: R.f_add(a, b, f), unspecified=NAN_NOTE,
            name=f"k_add_{f}")
        add(f"sub{rn}.{f}", f, (f, f), (f, f), lambda a, b, f=f: R.f_add(a, b, f, negate_b=True),
            unspecified=NAN_NOTE, name=f"k_sub_{f}")
        add(f"mul{rn}.{f}", f, (f, f), (f, f), lambda a, b, f=f: R.f_mul(a, b, f), unspecified=NAN_NOTE,
            name=f"k_mul_{f}")
        add(f"fma.rn.{f}", f, (f, f, f), (f, f, f), lambda a, b, c, f=f: R.f_fma(a, b, c, f), unspecified=NAN_NOTE)
        add(f"neg.{f}", f, (f,), (f,), lambda a, f=f: _keep_nan(a, f, a ^ 0x8000), unspecified=NAN_NOTE)
        add(f"abs.{f}", f, (f,), (f,), lambda a, f=f: _keep_nan(a, f, a & 0x7FFF), unspecified=NAN_NOTE)
        add(f"min.{f}", f, (f, f), (f, f), lambda a, b, f=f: R.f_minmax(a, b, f, False), unspecified="min(+0, -0)")
        add(f"max.{f}", f, (f, f), (f, f), lambda a, b, f=f: R.f_minmax(a, b, f, True), unspecified="max(+0, -0)")
        for cmp in ("lt", "equ", "ge", "nan"):
            add(f"setp.{cmp}.{f}", "u32", (f, f), (f, f), lambda a, b, f=f, cmp=cmp: int(R.f_compare(a, b, f, cmp)),
                text=f"setp.{cmp}.{f} p, %1, %2;", pred_out=True)
    f = "f16"
    add("add.ftz.f16", f, (f, f), (f, f), lambda a, b, f=f: R.f_add(a, b, f, ftz=True), unspecified=NAN_NOTE)
    add("fma.rn.sat.f16", f, (f, f, f), (f, f, f), lambda a, b, c, f=f: R.f_fma(a, b, c, f, sat=True),
        unspecified="sat of -0")
    add("fma.rn.relu.f16", f, (f, f, f), (f, f, f), lambda a, b, c, f=f: _relu(R.f_fma(a, b, c, f), f),
        unspecified=NAN_NOTE)
    # packed pairs: lane 0 is the low half
    for f2, f in (("f16x2", "f16"), ("bf16x2", "bf16")):
        rn = "" if f == "f16" else ".rn"
        add(f"add{rn}.{f2}", f2, (f2, f2), ("i32", "i32"), _pair(lambda x, y, f=f: R.f_add(x, y, f)),
            unspecified=NAN_NOTE, name=f"k_add_{f2}")
        add(f"mul{rn}.{f2}", f2, (f2, f2), ("i32", "i32"), _pair(lambda x, y, f=f: R.f_mul(x, y, f)),
            unspecified=NAN_NOTE, name=f"k_mul_{f2}")
        add(f"fma.rn.{f2}", f2, (f2, f2, f2), ("i32", "i32", "i32"),
            _pair(lambda x, y, z, f=f: R.f_fma(x, y, z, f)), unspecified=NAN_NOTE)
        add(f"max.{f2}", f2, (f2, f2), ("i32", "i32"), _pair(lambda x, y, f=f: R.f_minmax(x, y, f, True)),
            unspecified="max(+0, -0)")
        add(f"neg.{f2}", f2, (f2,), ("i32",), _pair(lambda x, f=f: _keep_nan(x, f, x ^ 0x8000)),
            unspecified=NAN_NOTE)


def _relu(bits, f):
    if not isinstance(bits, int):
        return bits
    return 0 if bits >> (R.width(f) - 1) else bits


def _pair(fn):
    def ref(*xs):
        lo = fn(*[x & 0xFFFF for x in xs])
        hi = fn(*[x >> 16 for x in xs])
        if not isinstance(lo, int) or not isinstance(hi, int):
            return R.PAIR(lo, hi)
        return lo | (hi << 16)
    return ref


# ----------------------------------------------------------------------------- conversions

INT8 = ("s8", "u8")
ALL_INT = INT8 + INT_T
FLOAT_FMT = {"f16": "f16", "f32": "f32", "f64": "f64", "bf16": "bf16"}


def _reg(t):
    """Register type for a cvt operand: 8-bit values live in 32-bit registers here."""
    return "u32" if t == "u8" else "s32" if t == "s8" else t


def _kind(t):
    return {"s8": "i32", "u8": "i32", "s16": "i16", "u16": "i16", "s32": "i32", "u32": "i32",
            "s64": "i64", "u64": "i64"}.get(t, t)


def _extend(v, t, reg_bits):
    """A value of type t written to a wider register: sign- or zero-extended (PTX cvt notes)."""
    w = int(t[1:])
    v &= (1 << w) - 1
    return U(S(v, w), reg_bits) if t[0] == "s" else v


def _cvt_cases():
    for st in ALL_INT:
        for dt in ALL_INT:
            if st == dt:
                continue
            rbits = 64 if dt[1:] == "64" else 16 if dt[1:] == "16" else 32
            ref = lambda a, st=st, dt=dt, r=rbits: _extend(R.cvt_int_to_int(val(a, st), st, dt), dt, r)
            add(f"cvt.{dt}.{st}", _reg(dt), (_reg(st),), (_kind(st),), ref)
            lo_s, hi_s = R.int_range(st)
            lo_d, hi_d = R.int_range(dt)
            if lo_s < lo_d or hi_s > hi_d:   # .sat is only legal where it can clamp
                ref = lambda a, st=st, dt=dt, r=rbits: _extend(R.cvt_int_to_int(val(a, st), st, dt, sat=True), dt, r)
                add(f"cvt.sat.{dt}.{st}", _reg(dt), (_reg(st),), (_kind(st),), ref)
    nan_note = "NaN -> 0, or 1 << (w-1) for an f64 source or 64-bit destination (ISA cvt notes)"
    for sf in ("f32", "f64", "f16"):
        modes = ("rni", "rzi", "rmi", "rpi") if sf != "f16" else ("rni", "rzi")
        for dt in ALL_INT:
            for m in modes:
                add(f"cvt.{m}.{dt}.{sf}", _reg(dt), (sf,), (sf,),
                    lambda a, sf=sf, dt=dt, m=m: _extend(R.cvt_float_to_int(a, sf, dt, m), dt, 64 if dt[1:] == "64" else 16 if dt[1:] == "16" else 32),
                    unspecified=nan_note)
    for dt in ("s32", "u64"):
        add(f"cvt.rzi.ftz.{dt}.f32", dt, ("f32",), ("f32",), lambda a, dt=dt: R.cvt_float_to_int(a, "f32", dt, "rzi", ftz=True))
    for st in INT_T:
        for df in ("f16", "f32", "f64"):
            for m in MODES:
                add(f"cvt.{m}.{df}.{st}", df, (st,), (_kind(st),),
                    lambda a, st=st, df=df, m=m: R.cvt_int_to_float(val(a, st), df, m))
    for st in ("s32", "u32", "s64", "u64"):
        for m in ("rn", "rz"):
            add(f"cvt.{m}.bf16.{st}", "bf16", (st,), (_kind(st),),
                lambda a, st=st, m=m: R.cvt_int_to_float(val(a, st), "bf16", m))
    for dt in ("s32", "u32", "s64"):
        add(f"cvt.rzi.{dt}.bf16", dt, ("bf16",), ("bf16",), lambda a, dt=dt: R.cvt_float_to_int(a, "bf16", dt, "rzi"),
            unspecified=nan_note)
    narrow = [("f16", "f32"), ("f16", "f64"), ("f32", "f64"), ("bf16", "f32"), ("bf16", "f64"), ("bf16", "f16")]
    for df, sf in narrow:
        modes = MODES if df != "bf16" else ("rn", "rz") if sf == "f32" else ("rn",)
        for m in modes:
            add(f"cvt.{m}.{df}.{sf}", df, (sf,), (sf,), lambda a, sf=sf, df=df, m=m: R.cvt_float_to_float(a, sf, df, m),
                unspecified=NAN_NOTE)
    for df, sf in (("f32", "f16"), ("f64", "f16"), ("f64", "f32"), ("f32", "bf16"), ("f64", "bf16")):
        add(f"cvt.{df}.{sf}", df, (sf,), (sf,), lambda a, sf=sf, df=df: R.cvt_float_to_float(a, sf, df, None),
            unspecified=NAN_NOTE)
    for f in ("f16", "f32", "f64"):
        for m in ("rni", "rzi", "rmi", "rpi"):
            add(f"cvt.{m}.{f}.{f}", f, (f,), (f,), lambda a, f=f, m=m: R.cvt_round_integral(a, f, m), unspecified=NAN_NOTE)
    add("cvt.rni.ftz.f32.f32", "f32", ("f32",), ("f32",), lambda a: R.cvt_round_integral(a, "f32", "rni", ftz=True),
        unspecified=NAN_NOTE)
    add("cvt.ftz.f32.f32", "f32", ("f32",), ("f32",), lambda a: R.cvt_float_to_float(a, "f32", "f32", None, ftz=True),
        unspecified=NAN_NOTE)
    add("cvt.sat.f32.f32", "f32", ("f32",), ("f32",), lambda a: R.cvt_float_to_float(a, "f32", "f32", None, sat=True),
        unspecified="sat of -0")
    add("cvt.rn.sat.f32.f64", "f32", ("f64",), ("f64",), lambda a: R.cvt_float_to_float(a, "f64", "f32", "rn", sat=True),
        unspecified="sat of -0")
    add("cvt.rn.ftz.f32.f64", "f32", ("f64",), ("f64",), lambda a: R.cvt_float_to_float(a, "f64", "f32", "rn", ftz=True),
        unspecified=NAN_NOTE)
    add("cvt.ftz.f64.f32", "f64", ("f32",), ("f32",), lambda a: R.cvt_float_to_float(a, "f32", "f64", None, ftz=True),
        unspecified=NAN_NOTE)
    add("cvt.rn.f16x2.f32", "f16x2", ("f32", "f32"), ("f32", "f32"),
        lambda a, b: _pack(R.cvt_float_to_float(b, "f32", "f16", "rn"), R.cvt_float_to_float(a, "f32", "f16", "rn")),
        unspecified=NAN_NOTE)
    add("cvt.rn.bf16x2.f32", "bf16x2", ("f32", "f32"), ("f32", "f32"),
        lambda a, b: _pack(R.cvt_float_to_float(b, "f32", "bf16", "rn"), R.cvt_float_to_float(a, "f32", "bf16", "rn")),
        unspecified=NAN_NOTE)


def _pack(lo, hi):
    """Two 16-bit results in one register (a goes to the upper half for cvt.*x2)."""
    if isinstance(lo, int) and isinstance(hi, int):
        return lo | (hi << 16)
    return R.PAIR(lo, hi)


def _float_immediates():
    one32, two64, neg_one32 = 0x3F800000, 0x4000000000000000, 0xBF800000
    add("add.rn.f32 imm 0f3F800000", "f32", ("f32",), ("f32",), lambda a: R.f_add(a, one32, "f32"),
        text="add.rn.f32 %0, %1, 0f3F800000;", name="k_imm_add_f32", unspecified=NAN_NOTE)
    add("mul.rz.f64 imm 0d4000000000000000", "f64", ("f64",), ("f64",), lambda a: R.f_mul(a, two64, "f64", "rz"),
        text="mul.rz.f64 %0, %1, 0d4000000000000000;", name="k_imm_mul_f64", unspecified=NAN_NOTE)
    add("fma.rn.f32 imm a*-1+a", "f32", ("f32",), ("f32",), lambda a: R.f_fma(a, neg_one32, a, "f32"),
        text="fma.rn.f32 %0, %1, 0fBF800000, %1;", name="k_imm_fma_f32", unspecified=NAN_NOTE)
    add("setp.gtu.f32 imm 0f00000000", "u32", ("f32",), ("f32",), lambda a: int(R.f_compare(a, 0, "f32", "gtu")),
        text="setp.gtu.f32 p, %1, 0f00000000;", pred_out=True, name="k_imm_setp_f32")
    add("max.f64 imm 0d8000000000000000", "f64", ("f64",), ("f64",), lambda a: R.f_minmax(a, 1 << 63, "f64", True),
        text="max.f64 %0, %1, 0d8000000000000000;", name="k_imm_max_f64", unspecified="max(+0, -0)")


_float_arith()
_half_arith()
_cvt_cases()
_float_immediates()

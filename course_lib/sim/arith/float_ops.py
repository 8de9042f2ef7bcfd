"""Floating-point PTX arithmetic: f32, f64, f16, bf16 and the packed f16x2/bf16x2 forms.

Each builder takes a parsed instruction and returns ``fn(*operands)`` over numpy arrays of
the operand type (bf16 and packed types arrive as their raw unsigned bits).

Semantics. Results are correctly rounded in every mode the instruction names (``.rn`` is
numpy's own IEEE arithmetic where that is exact; ``.rz/.rm/.rp``, every ``fma`` and all
half-precision math go through ``rounding``). ``.ftz`` flushes subnormal inputs and results to
zeros of the same sign; ``.sat`` clamps to [0, 1] with NaN and -0 -> +0; ``.relu`` clamps
negatives to +0. ``copysign``, ``neg``, ``abs``, ``min``, ``max`` and comparisons are ``float_select``'s.

NaN results, as an H100 gives them (the ISA leaves the bits open): f32, f16 and bf16 give the
canonical NaN (0x7FFFFFFF, 0x7FFF). f64 keeps payloads (``f64_nans``): a NaN operand comes back
quieted with its sign; an invalid operation on numbers (0 * inf, inf - inf, 0 / 0, sqrt(-1))
gives 0xFFF8000000000000. Approximate instructions (``.approx``, ``div.full``, ``ex2``
...) are computed exactly and rounded, except rcp.approx.ftz.f64 (the hardware's top-word
reciprocal); ``alu``'s docstring lists how far the hardware is from the others.
"""
from __future__ import annotations

import dataclasses

import numpy as np

from . import exact, rounding

F32_NAN = np.uint32(0x7FFFFFFF).view(np.float32)
F64_NAN = np.uint64(0x7FFFFFFFFFFFFFFF).view(np.float64)
HALF = ("f16", "bf16")
MODES = ("rn", "rz", "rm", "rp", "rni", "rzi", "rmi", "rpi", "rna")


def rounding_mode(ins):
    return next((m for m in ins.mods if m in MODES), None)


def canon(x):
    """Replace NaN results with the canonical NaN the GPU produces."""
    if x.dtype == np.float32:
        return np.where(np.isnan(x), F32_NAN, x)
    if x.dtype == np.float64:
        return np.where(np.isnan(x), F64_NAN, x)
    return x


def ftz(x):
    """Subnormal f32 (or f16) values -> zero of the same sign."""
    if x.dtype == np.float32:
        return np.where(np.abs(x) < np.float32(1.1754944e-38), np.copysign(np.float32(0), x), x)
    if x.dtype == np.float16:
        return np.where(np.abs(x) < np.float16(6.104e-05), np.copysign(np.float16(0), x), x)
    return x


def _sat(r):
    """Clamp to [0, 1]; NaN -> +0 and, as on the GPU, -0 -> +0 (adding +0 does that)."""
    return (np.where(np.isnan(r), r.dtype.type(0), np.clip(r, 0, 1)) + r.dtype.type(0)).astype(r.dtype)


# f64 NaN results (H100): a NaN operand's payload, quieted, sign kept; an invalid operation
# without NaN operands (0 * inf, inf - inf, 0 / 0, sqrt(-x)) gives this one. Which operand
# wins when several are NaN differs by instruction: the last one listed here (b for add, sub,
# mul, min, max; a for div, a software sequence; fma: b, then c, then a).
F64_INVALID = np.uint64(0xFFF8000000000000)
F64_QUIET = np.uint64(1 << 51)
_NAN_ORDER = {"add": (0, 1), "sub": (0, 1), "mul": (0, 1), "div": (1, 0), "fma": (0, 2, 1),
              "sqrt": (0,), "rcp": (0,), "min": (0, 1), "max": (0, 1)}


def f64_nans(name, xs, r):
    """Replace NaN elements of the f64 result r by the NaN the GPU gives (host-independent)."""
    nan = np.isnan(r)
    if not nan.any():
        return r
    out = np.where(nan, F64_INVALID, np.asarray(r).view(np.uint64))
    for k in _NAN_ORDER[name]:
        x = np.asarray(xs[k], np.float64)
        out = np.where(nan & np.isnan(x), x.view(np.uint64) | F64_QUIET, out)
    return out.view(np.float64)


# ----------------------------------------------------------------------------- f32 / f64

def _resid_div(a, b, q):
    """Sign carrier of a/b - q where q (f64) is an f32 value; 0 elsewhere (not needed there)."""
    r = q.astype(np.float32).astype(np.float64)
    return np.where(q == r, (a - r * b) * np.sign(b), 0.0)


def _resid_sqrt(a, q):
    r = q.astype(np.float32).astype(np.float64)
    return np.where(q == r, a - r * r, 0.0)


def _f32_exact(name, xs):
    """(value in f64, residual) with value + residual == the exact result (sign-exact residual)."""
    x = [v.astype(np.float64) for v in xs]
    if name in ("add", "sub"):
        return exact.two_sum(x[0], x[1] if name == "add" else -x[1])
    if name == "mul":
        return x[0] * x[1], np.zeros(x[0].shape)
    if name == "fma":
        return exact.two_sum(x[0] * x[1], x[2])
    if name in ("div", "rcp"):
        a, b = (np.ones_like(x[0]), x[0]) if name == "rcp" else x
        q = a / b
        return q, _resid_div(a, b, q)
    q = np.sqrt(x[0])
    return q, _resid_sqrt(x[0], q)


_NATIVE = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide,
           "sqrt": np.sqrt, "rcp": lambda x: np.float32(1) / x}


def _zero_sign_rm(name, xs, r, exact_zero):
    """IEEE: an exact zero sum is -0 when rounding toward -inf, unless both addends are +0."""
    if name == "fma":
        t1, t2 = xs[0] * xs[1], xs[2]
    elif name in ("add", "sub"):
        t1, t2 = xs[0], (xs[1] if name == "add" else -xs[1])
    else:
        return r
    plus = (t1 == 0) & ~np.signbit(t1) & (t2 == 0) & ~np.signbit(t2)
    return np.where(exact_zero & ~plus, -r.dtype.type(0), r)


def f32(name, ins):
    mode = rounding_mode(ins)
    flush, sat = "ftz" in ins.mods, "sat" in ins.mods

    def fn(*xs):
        if flush:
            xs = [ftz(x) for x in xs]
        if mode in (None, "rn") and name in _NATIVE:
            r = _NATIVE[name](*xs)
        else:
            x64, err = _f32_exact(name, xs)
            r = x64.astype(np.float32)
            hard = (err != 0) if mode in (None, "rn") else np.ones(r.shape, bool)
            hard = hard | (np.isfinite(x64) & ~np.isfinite(r))
            if hard.any():
                fixed = rounding.round_exact(x64[hard], "f32", mode, err[hard]).view(np.float32)
                r = r.copy()
                r[hard] = fixed
            if mode == "rm":
                r = _zero_sign_rm(name, xs, r, (x64 == 0) & (err == 0))
        if flush:
            r = ftz(r)
        if sat:
            r = _sat(r)
        return canon(r)
    return fn


def f64(name, ins):
    mode = rounding_mode(ins)
    sat = "sat" in ins.mods
    if "approx" in ins.mods:
        if name == "rcp":
            return lambda x: f64_nans("rcp", (x,), _rcp64h(x))
        return approx(np.sqrt, ins)

    def fn(*xs):
        r = f64_nans(name, xs, exact.f64_op(name, xs, mode))
        return _sat(r) if sat else r
    return fn


# ----------------------------------------------------------------------------- f16 / bf16

def to64(x, fmt):
    return x.astype(np.float64) if fmt == "f16" else rounding.from_bits(x, "bf16")


def from_bits(bits, fmt):
    return bits.view(np.float16) if fmt == "f16" else bits


def half(name, ins, fmt):
    """f16/bf16 add/sub/mul/fma (.rn only in PTX): exact in f64, one correct rounding."""
    flush = "ftz" in ins.mods and fmt == "f16"
    sat, relu = "sat" in ins.mods, "relu" in ins.mods

    def fn(*xs):
        if flush:
            xs = [ftz(x) for x in xs]
        x = [to64(v, fmt) for v in xs]
        if name in ("add", "sub"):
            s, e = exact.two_sum(x[0], x[1] if name == "add" else -x[1])
        elif name == "mul":
            s, e = x[0] * x[1], None
        elif name == "fma":
            s, e = exact.two_sum(x[0] * x[1], x[2])
        else:
            raise KeyError(name)
        with np.errstate(invalid="ignore"):
            e = None if e is None else np.where(np.isfinite(s), e, 0.0)
        r = from_bits(rounding.round_exact(s, fmt, "rn", e), fmt)
        if flush:
            r = ftz(r)
        if sat or relu:
            v = to64(r, fmt)
            nan = np.isnan(v)
            v = np.clip(v, 0.0, 1.0) if sat else np.maximum(v, 0.0)
            v = np.where(v == 0, 0.0, v)
            r = from_bits(rounding.round_exact(np.where(nan & sat, 0.0, v), fmt), fmt)
            if relu:
                r = np.where(nan & ~sat, from_bits(np.full(r.shape, 0x7FFF, np.uint16), fmt), r)
        return r
    return fn


def packed(plan_scalar, ins):
    """f16x2/bf16x2: the scalar instruction on both 16-bit lanes (lane 0 = low half)."""
    fmt = "f16" if "f16x2" in ins.mods else "bf16"
    scalar = dataclasses.replace(ins, mods=tuple(fmt if m in ("f16x2", "bf16x2") else m for m in ins.mods))
    fn, srcs, dst = plan_scalar(scalar)
    if dst != fmt or any(s != fmt for s in srcs):
        raise KeyError("packed form with mixed operand types")
    t = ins.type

    def lane(x, k):
        return from_bits(((x.astype(np.uint32) >> np.uint32(16 * k)) & np.uint32(0xFFFF)).astype(np.uint16), fmt)

    def pack(*xs):
        lo = np.asarray(fn(*[lane(x, 0) for x in xs])).view(np.uint16).astype(np.uint32)
        hi = np.asarray(fn(*[lane(x, 1) for x in xs])).view(np.uint16).astype(np.uint32)
        return lo | (hi << np.uint32(16))
    return pack, [t] * len(srcs), t


_HI_WORD = np.uint64(0xFFFFFFFF00000000)


def _rcp64h(x):
    """rcp.approx.ftz.f64 as an H100 gives it: only the top 32 bits of x are read and only the
    top 32 bits of the result produced (MUFU.RCP64H), i.e. 1/x_top truncated to its top word;
    subnormal inputs and results flush to zero (.ftz). On the 2026-11-22 run this reproduces the
    5 saved answers, the 12 of 232 equal to the exactly rounded 1/x and the largest distance
    from it, 6169042424 ulp."""
    x = np.asarray(x, np.float64)
    x = np.where(np.abs(x) < 2.2250738585072014e-308, np.copysign(0.0, x), x)
    with np.errstate(all="ignore"):
        r = 1 / (x.view(np.uint64) & _HI_WORD).view(np.float64)
    r = np.where(np.abs(r) < 2.2250738585072014e-308, np.copysign(0.0, r), r)
    return (r.view(np.uint64) & _HI_WORD).view(np.float64)


def approx(f64fn, ins):
    """ex2/lg2/sin/cos/tanh/rsqrt... computed exactly, rounded to the type (f32, f64, f16)."""
    t = ins.type
    if t not in ("f32", "f64", "f16"):
        raise KeyError(f"approximate {t}")
    npt = {"f32": np.float32, "f64": np.float64, "f16": np.float16}[t]
    flush = "ftz" in ins.mods

    def fn(a):
        with np.errstate(all="ignore"):
            r = f64fn((ftz(a) if flush else a).astype(np.float64)).astype(npt)
        r = canon(ftz(r) if flush else r)
        return np.where(np.isnan(r), np.uint16(0x7FFF).view(np.float16), r) if t == "f16" else r
    return fn

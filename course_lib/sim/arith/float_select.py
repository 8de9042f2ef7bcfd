"""Floating-point operations that pick, compare or flip a sign: min, max, setp's comparisons, neg, abs.

Nothing here rounds. ``min``/``max`` return the non-NaN operand (``.NaN``: NaN if either is),
ordering -0 below +0; comparisons are IEEE's, the ``u`` forms true for unordered operands;
``neg``/``abs`` work on the sign bit. NaN results as an H100 gives them: the canonical NaN for
f16, bf16 and f32 (abs/neg of a NaN included); for f64 the operand's own bits, quieted, with the
sign unchanged by abs/neg, and the second operand's payload when min/max see two NaNs.
"""
from __future__ import annotations

import numpy as np

from .float_ops import F32_NAN, F64_NAN, f64_nans, ftz, to64


def minmax(is_max, ins):
    t = ins.type
    flush, nan_prop = "ftz" in ins.mods, "NaN" in ins.mods
    if "xorsign" in ins.mods or "abs" in ins.mods:
        raise KeyError("min/max.xorsign.abs")

    nanval = {"bf16": np.uint16(0x7FFF), "f16": np.uint16(0x7FFF).view(np.float16), "f32": F32_NAN}.get(t)

    def fn(a, b):
        if t == "bf16":
            x, y = to64(a, "bf16"), to64(b, "bf16")
        elif flush:
            a, b = x, y = ftz(a), ftz(b)
        else:
            x, y = a, b
        if is_max:
            pick_a = (x > y) | ((x == y) & ~np.signbit(x))
        else:
            pick_a = (x < y) | ((x == y) & np.signbit(x))
        r = np.where(pick_a, a, b)
        na, nb = np.isnan(x), np.isnan(y)
        r = np.where(na & ~nb, b, np.where(nb & ~na, a, r))
        nan_out = (na | nb) if nan_prop else (na & nb)
        if t == "f64":     # both NaN: the second operand's payload, quieted
            return f64_nans("max" if is_max else "min", (a, b), np.where(nan_out, F64_NAN, r))
        return np.where(nan_out, nanval, r)
    return fn


def compare(cmp, t):
    ops = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal,
           "gt": np.greater, "ge": np.greater_equal}
    conv = (lambda v: to64(v, "bf16")) if t == "bf16" else (lambda v: v)
    if cmp in ("num", "nan"):
        def f(a, b):
            un = np.isnan(conv(a)) | np.isnan(conv(b))
            return ~un if cmp == "num" else un
        return f
    base = ops[cmp[:-1] if cmp.endswith("u") else cmp]
    unordered_true = cmp.endswith("u")

    def fn(a, b):
        x, y = conv(a), conv(b)
        un = np.isnan(x) | np.isnan(y)
        return (base(x, y) | un) if unordered_true else (base(x, y) & ~un)
    return fn


_INF_BITS = {"f16": 0x7C00, "bf16": 0x7F80, "f32": 0x7F800000, "f64": 0x7FF0000000000000}


def sign_op(kind, ins):
    """neg/abs on the sign bit (with .ftz flushing first). A NaN operand gives the canonical NaN
    for f16/bf16/f32 and, for f64, its own bits quieted with the sign unchanged (as an H100)."""
    t = ins.type
    flush = "ftz" in ins.mods
    width = {"f16": 16, "bf16": 16, "f32": 32, "f64": 64}[t]
    u = {16: np.uint16, 32: np.uint32, 64: np.uint64}[width]
    bit = u(1) << u(width - 1)
    inf = u(_INF_BITS[t])
    nan_out = u(0x7FFF) if width == 16 else u(0x7FFFFFFF) if width == 32 else None

    def fn(a):
        if flush:
            a = ftz(a)
        b = np.asarray(a).view(u)
        r = (b ^ bit) if kind == "neg" else (b & ~bit)
        nan = (b & ~bit) > inf
        if nan.any():
            r = np.where(nan, (b | u(1 << 51)) if nan_out is None else nan_out, r)
        return r.view(a.dtype)
    return fn

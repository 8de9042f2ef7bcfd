"""f64 arithmetic correctly rounded in every PTX rounding mode, vectorized with numpy.

``f64_op(op, xs, mode)``: f64 add/sub/mul/div/sqrt/rcp/fma in any mode. Error-free
transformations (``two_sum``, Dekker's ``two_prod``) give the exact result as a value and a
residual, which decides the rounding of the f64 sum; the few elements where they cannot be
trusted (over/underflow of intermediate terms, fma results next to a rounding boundary) are
recomputed one by one with Fractions. NaN results are canonical (``float_ops`` gives them the
bits an H100 gives).
"""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np


def two_sum(a, b):
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def two_prod(a, b):
    """p + e == a * b exactly, if no intermediate over/underflows (see _safe_prod)."""
    p = a * b
    split = 134217729.0

    def halves(v):
        t = split * v
        hi = t - (t - v)
        return hi, v - hi
    ah, al = halves(a)
    bh, bl = halves(b)
    err = ((ah * bh - p) + ah * bl + al * bh) + al * bl
    return p, np.where((a == 0) | (b == 0), 0.0, err)


def _safe_prod(a, b):
    ea = np.frexp(a)[1]
    eb = np.frexp(b)[1]
    return (a == 0) | (b == 0) | ((ea + eb > -968) & (ea < 995) & (eb < 995) & (ea + eb < 1022))


def f64_op(op, xs, mode=None):
    """Correctly rounded f64 result of op in a PTX mode; NaN results are canonical."""
    xs = [np.asarray(x, np.float64) for x in xs]
    shape = np.broadcast(*xs).shape
    xs = [np.broadcast_to(x, shape) for x in xs]
    directed = mode not in (None, "rn")
    if op == "fma":
        a, b, c = xs
        p, pe = two_prod(a, b)
        s, e1 = two_sum(p, c)
        t, e2 = two_sum(e1, pe)
        r, resid = two_sum(s, t)
        r = np.where(t == 0, s, r)          # keep the sign of an exact zero sum (-0 + -0)
        # exact = r + resid + e2. e2 (usually 0, always tiny) only matters next to a rounding
        # boundary: resid within 2|e2| of half the gap to r's neighbour (nearest), or resid
        # itself tiny next to e2 (directed). Only those elements take the slow exact path.
        with np.errstate(invalid="ignore", over="ignore"):
            ar = np.abs(r)
            above = np.sign(resid) == np.sign(r)
            gap = np.where(above, np.nextafter(ar, np.inf) - ar, ar - np.nextafter(ar, 0.0))
            tiny = 2 * np.abs(e2)
            unsure = (e2 != 0) & ((np.abs(np.abs(resid) - gap / 2) <= tiny) | ((resid != 0) & (np.abs(resid) <= tiny)))
        resid = np.where(resid == 0, e2, resid)
        finite_ab = np.isfinite(a) & np.isfinite(b)
        finite = finite_ab & np.isfinite(c)
        hard = finite & (~_safe_prod(a, b) | unsure | ~np.isfinite(r))
        # a non-finite operand: IEEE special cases, exact in one step (a finite a*b + inf is c)
        r = np.where(finite, r, np.where(finite_ab & np.isinf(c), c, p + c))
        resid = np.where(finite, resid, 0.0)
    elif not directed:
        return _native(op, xs)
    else:
        r, resid, hard = _eft(op, xs)
    if directed or op == "fma":
        r = _adjust(r, resid, mode, op, xs)
    if hard.any():
        idx = np.flatnonzero(hard.reshape(-1))
        flat = r.reshape(-1).copy()
        for i in idx:
            flat[i] = _exact_scalar(op, [float(x.reshape(-1)[i]) for x in xs], mode)
        r = flat.reshape(shape)
    return np.where(np.isnan(r), np.uint64(0x7FFFFFFFFFFFFFFF).view(np.float64), r)


def _native(op, xs):
    with np.errstate(all="ignore"):
        return {"add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
                "div": lambda a, b: a / b, "sqrt": np.sqrt, "rcp": lambda a: 1.0 / a}[op](*xs)


def _eft(op, xs):
    finite_in = np.logical_and.reduce([np.isfinite(x) for x in xs])
    if op in ("add", "sub"):
        a, b = xs
        r, resid = two_sum(a, b if op == "add" else -b)
        hard = np.zeros(r.shape, bool)
    elif op == "mul":
        a, b = xs
        r, resid = two_prod(a, b)
        hard = ~_safe_prod(a, b)
    elif op in ("div", "rcp"):
        a, b = (np.ones_like(xs[0]), xs[0]) if op == "rcp" else xs
        r = a / b
        p, pe = two_prod(r, b)
        resid = ((a - p) - pe) * np.sign(b)
        hard = (~_safe_prod(r, b) | (r == 0) | ~np.isfinite(r)) & (a != 0) & (b != 0)
    else:  # sqrt
        a = xs[0]
        r = np.sqrt(a)
        p, pe = two_prod(r, r)
        resid = (a - p) - pe
        hard = ~_safe_prod(r, r) & (a > 0)
    hard = (hard | (~np.isfinite(r) & (op in ("add", "sub", "mul")))) & finite_in
    resid = np.where(np.isfinite(r) & finite_in, resid, 0.0)
    return r, resid, hard


def _adjust(r, resid, mode, op, xs):
    if mode in (None, "rn"):
        return r
    resid = np.nan_to_num(resid)
    if mode == "rz":
        r = np.where((resid != 0) & (np.sign(resid) != np.sign(r)), np.nextafter(r, 0.0), r)
    elif mode == "rm":
        r = np.where(resid < 0, np.nextafter(r, -np.inf), r)
    else:
        r = np.where(resid > 0, np.nextafter(r, np.inf), r)
    if mode == "rm" and op in ("add", "sub", "fma"):   # an exact zero sum is -0 when rounding down
        r = np.where((r == 0) & (resid == 0) & ~_both_plus_zero(op, xs), -0.0, r)
    return r


def _both_plus_zero(op, xs):
    if op == "fma":
        t1, t2 = xs[0] * xs[1], xs[2]
    else:
        t1, t2 = xs[0], (xs[1] if op == "add" else -xs[1])
    return (t1 == 0) & ~np.signbit(t1) & (t2 == 0) & ~np.signbit(t2)


def _exact_scalar(op, vals, mode):
    """One element with Fractions: the slow path for over/underflowing intermediates."""
    F = [Fraction(v) for v in vals]
    sticky = False
    if op == "add":
        q = F[0] + F[1]
    elif op == "sub":
        q = F[0] - F[1]
    elif op == "mul":
        q = F[0] * F[1]
    elif op in ("div", "rcp"):
        num, den = (Fraction(1), F[0]) if op == "rcp" else (F[0], F[1])
        q = num / den
    elif op == "fma":
        q = F[0] * F[1] + F[2]
    else:
        k = 600
        n = (F[0] * Fraction(4) ** k).numerator
        r = math.isqrt(n)
        q, sticky = Fraction(r, 2 ** k), r * r != n
    if q == 0 and not sticky:   # an exact zero sum: signs of the addends decide
        t1 = vals[0] * vals[1] if op == "fma" else vals[0]
        t2 = vals[2] if op == "fma" else (vals[1] if op == "add" else -vals[1])
        if t1 == 0 and t2 == 0 and math.copysign(1, t1) == math.copysign(1, t2):
            return t1
        return -0.0 if mode == "rm" else 0.0
    return _round_fraction(q, mode, sticky)


def _round_fraction(q, mode, sticky=False):
    neg = q < 0
    mag = -q if neg else q
    k = mag.numerator.bit_length() - mag.denominator.bit_length()
    while Fraction(2) ** k > mag:
        k -= 1
    while Fraction(2) ** (k + 1) <= mag:
        k += 1
    qe = max(k, -1022) - 52
    scaled = mag / Fraction(2) ** qe
    n = scaled.numerator // scaled.denominator
    rem = scaled - n
    toward = mode == "rz" or (mode == "rm" and not neg) or (mode == "rp" and neg)
    if mode in (None, "rn"):
        n += rem > Fraction(1, 2) or (rem == Fraction(1, 2) and (sticky or n % 2 == 1))
    elif not toward and (rem > 0 or sticky):
        n += 1
    try:
        v = math.ldexp(n, qe)
    except OverflowError:
        v = math.inf
    if v == math.inf and toward:
        v = 1.7976931348623157e308
    return -v if neg else v

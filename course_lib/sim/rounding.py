"""Correctly rounded floating-point results in every PTX rounding mode, vectorized with numpy.

- ``round_exact(x, fmt, mode, resid)``: round exact f64 values (plus an optional residual whose
  *sign* says on which side of ``x`` the true value lies) to f16, bf16, f32 or f64 bit patterns,
  with subnormals, overflow to infinity or to the largest finite value, and ties.
- ``int_to_bits(x, fmt, mode)``: integer -> float conversion, exact for 64-bit integers.
- ``nan_convert(bits, sfmt, dfmt)``: a NaN to another format keeping sign and top payload bits.
- ``f64_op(op, xs, mode)``: f64 add/sub/mul/div/sqrt/rcp/fma in any mode. Error-free
  transformations (two_sum, Dekker's product) give the residual; the few elements where they
  cannot be trusted (over/underflow of intermediate terms) are recomputed with Fractions.

It does not know PTX modifiers beyond the rounding mode: ``.ftz``/``.sat`` and NaN payloads
are ``alu.py``'s business. NaNs come back as the canonical NaN of the format.
"""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

# format: (precision incl. hidden bit, emin, emax, bits, canonical NaN)
FORMATS = {"f16": (11, -14, 15, 16, 0x7FFF), "bf16": (8, -126, 127, 16, 0x7FFF),
           "f32": (24, -126, 127, 32, 0x7FFFFFFF), "f64": (53, -1022, 1023, 64, 0x7FFFFFFFFFFFFFFF)}
UINT = {16: np.uint16, 32: np.uint32, 64: np.uint64}


def _modes(mode, negative):
    """Per element: round the magnitude to nearest, toward zero, or away from zero."""
    if mode in (None, "rn", "rna"):
        return None, None
    toward = np.full(negative.shape, mode == "rz") | ((mode == "rm") & ~negative) | ((mode == "rp") & negative)
    return toward, ~toward


def _round_mag(M, shift, mode, negative, resid_mag):
    """Round the integers M / 2**shift (uint64, shift >= 0) -> (q, pred): pred marks values to
    step one unit *down* (the true value is a hair below an exactly representable M)."""
    big = shift > 63               # then q = 0 and the dropped bits are below half (M < 2**63)
    s = np.minimum(shift, 63).astype(np.uint64)
    q = np.where(big, np.uint64(0), M >> s)
    rem = np.where(big, M, M - (q << s))
    half = np.where(s > 0, np.uint64(1) << np.maximum(s, np.uint64(1)) - np.uint64(1), np.uint64(0))
    inexact = rem != 0
    above = np.where(big, False, (rem > half) & (s > 0))
    tie = np.where(big, False, (rem == half) & (s > 0))
    rpos = np.zeros(M.shape, bool) if resid_mag is None else resid_mag > 0
    rneg = np.zeros(M.shape, bool) if resid_mag is None else resid_mag < 0
    toward, away = _modes(mode, negative)
    if toward is None:
        if mode == "rna":
            up = above | tie
        else:
            up = above | (tie & (rpos | (~rneg & ((q & np.uint64(1)) == 1))))
        pred = np.zeros(M.shape, bool)
    else:
        up = away & (inexact | rpos)
        pred = toward & ~inexact & rneg
    return q + up.astype(np.uint64), pred


def round_exact(x, fmt, mode=None, resid=None):
    """Bit patterns of the float64 values ``x`` (+ a residual of sign ``resid``) rounded to fmt."""
    p, emin, emax, width, nan = FORMATS[fmt]
    x = np.asarray(x, np.float64)
    neg = np.signbit(x)
    mag = np.abs(x)
    finite = np.isfinite(x)
    m, e = np.frexp(np.where(finite, mag, 1.0))
    M = np.ldexp(m, 53).astype(np.uint64)
    E = e.astype(np.int64) - 1
    qe = np.maximum(E, emin) - (p - 1)
    shift = np.maximum(qe - (E - 52), 0)
    rmag = None if resid is None else np.where(neg, -np.asarray(resid, np.float64), resid)
    q, pred = _round_mag(M, shift, mode, neg, rmag)
    step = np.where((q == np.uint64(1) << np.uint64(p - 1)) & (E > emin), qe - 1, qe)
    value = np.ldexp(q.astype(np.float64), qe) - np.where(pred, np.ldexp(1.0, step), 0.0)
    value = np.where(mag == 0, 0.0, value)
    return _to_bits(value, neg, finite, np.isnan(x), fmt, mode)


def _to_bits(value, neg, finite, isnan, fmt, mode):
    p, emin, emax, width, nan = FORMATS[fmt]
    top = (2.0 - 2.0 ** (1 - p)) * 2.0 ** emax
    toward, _ = _modes(mode, neg)
    over = value > top
    clamp = over & (False if toward is None else toward)
    value = np.where(clamp, top, np.where(over | ~finite, np.inf, value))
    if fmt == "f64":
        bits = value.view(np.uint64)
    elif fmt == "f32":
        bits = value.astype(np.float32).view(np.uint32)
    elif fmt == "f16":
        bits = value.astype(np.float16).view(np.uint16)
    else:
        bits = (value.astype(np.float32).view(np.uint32) >> np.uint32(16)).astype(np.uint16)
    t = UINT[width]
    bits = bits | (neg.astype(t) << t(width - 1))
    return np.where(isnan, t(nan), bits).astype(t)


def nan_convert(bits, sfmt, dfmt):
    """NaN bit patterns of sfmt -> dfmt keeping the sign and the top payload bits, quieted."""
    ps, pd = FORMATS[sfmt][0] - 1, FORMATS[dfmt][0] - 1       # stored mantissa bits
    ws, wd = FORMATS[sfmt][3], FORMATS[dfmt][3]
    b = np.asarray(bits).astype(np.uint64)
    sign = (b >> np.uint64(ws - 1)) & np.uint64(1)
    man = b & np.uint64((1 << ps) - 1)
    man = (man << np.uint64(pd - ps)) if pd >= ps else (man >> np.uint64(ps - pd))
    top = np.uint64(((1 << (wd - pd)) - 1) << (pd - 1))      # exponent all ones and the quiet bit
    return ((sign << np.uint64(wd - 1)) | top | man).astype(UINT[wd])


def int_to_bits(x, fmt, mode=None):
    """Integer array (any width, signed or not) -> float bits of fmt, exactly rounded."""
    p, emin, emax, width, nan = FORMATS[fmt]
    x = np.asarray(x)
    if x.dtype.kind == "i":
        neg = x < 0
        mag = np.where(neg, (~x.astype(np.int64)).view(np.uint64) + np.uint64(1), x.astype(np.int64).view(np.uint64))
    else:
        neg = np.zeros(x.shape, bool)
        mag = x.astype(np.uint64)
    _, e = np.frexp(mag.astype(np.float64))
    E = np.minimum(e.astype(np.int64) - 1, 63)          # floor(log2), maybe one too big
    E = np.where((mag >> np.maximum(E, 0).astype(np.uint64)) == 0, E - 1, E)
    qe = np.maximum(E - (p - 1), 0)
    q, _ = _round_mag(mag, qe, mode, neg, None)
    value = np.where(mag == 0, 0.0, np.ldexp(q.astype(np.float64), qe))
    return _to_bits(value, neg, np.ones(x.shape, bool), np.zeros(x.shape, bool), fmt, mode)


def from_bits(bits, fmt):
    """float64 values of f16/bf16/f32/f64 bit patterns (exact)."""
    bits = np.asarray(bits)
    if fmt == "f16":
        return bits.astype(np.uint16).view(np.float16).astype(np.float64)
    if fmt == "bf16":
        return (bits.astype(np.uint32) << np.uint32(16)).view(np.float32).astype(np.float64)
    if fmt == "f32":
        return bits.astype(np.uint32).view(np.float32).astype(np.float64)
    return bits.astype(np.uint64).view(np.float64)


# ----------------------------------------------------------------------------- exact f64 arithmetic

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

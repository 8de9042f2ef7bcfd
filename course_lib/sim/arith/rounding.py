"""Correctly rounded floating-point results in every PTX rounding mode, vectorized with numpy.

- ``round_exact(x, fmt, mode, resid)``: round exact f64 values (plus an optional residual whose
  *sign* says on which side of ``x`` the true value lies) to f16, bf16, f32 or f64 bit patterns,
  with subnormals, overflow to infinity or to the largest finite value, and ties.
- ``int_to_bits(x, fmt, mode)``: integer -> float conversion, exact for 64-bit integers.
- ``nan_convert(bits, sfmt, dfmt)``: a NaN to another format keeping sign and top payload bits.
(``exact`` computes f64 arithmetic results exactly enough to round them with these.)

It does not know PTX modifiers beyond the rounding mode: ``.ftz``/``.sat`` and NaN payloads
are ``alu.py``'s business. NaNs come back as the canonical NaN of the format.
"""
from __future__ import annotations

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

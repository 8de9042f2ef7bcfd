"""Reference PTX arithmetic in plain Python (ints, fractions.Fraction, struct), for tests.

Independent of the simulator on purpose: nothing here uses numpy arithmetic, so a test that
compares the simulator with these functions compares two separate implementations of the
PTX ISA's wording. Values are exchanged as *bit patterns* (Python ints); floats are decoded
to exact Fractions, computed exactly, and rounded once with the requested PTX rounding mode.

Results that the ISA leaves open are returned as markers instead of invented values:
``ANY_NAN`` (some NaN, bits unspecified) and ``UNSPEC`` (anything goes, e.g. integer
division by zero). ``ONE_OF(a, b)`` accepts either of two bit patterns.
"""
from __future__ import annotations

import math
from fractions import Fraction
from functools import lru_cache


class _Marker:
    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return self.name


ANY_NAN = _Marker("ANY_NAN")
UNSPEC = _Marker("UNSPEC")


class ONE_OF(tuple):
    def __new__(cls, *vals):
        return super().__new__(cls, vals)


class PAIR(tuple):
    """Expected halves (low, high) of a packed 2 x 16-bit result, each possibly a marker."""
    def __new__(cls, lo, hi):
        return super().__new__(cls, (lo, hi))


def matches(expected, got: int, out_t: str) -> bool:
    """Does bit pattern `got` satisfy `expected` for a result of PTX type out_t?"""
    if isinstance(expected, PAIR):
        half = out_t[:-2]
        return matches(expected[0], got & 0xFFFF, half) and matches(expected[1], got >> 16, half)
    if expected is UNSPEC:
        return True
    if expected is ANY_NAN:
        return out_t in FORMATS and is_nan_bits(got, out_t)
    if isinstance(expected, ONE_OF):
        return any(matches(e, got, out_t) for e in expected)
    return got == expected


# ----------------------------------------------------------------------------- integers

def wrap(v: int, bits: int, signed: bool) -> int:
    v &= (1 << bits) - 1
    if signed and v >> (bits - 1):
        v -= 1 << bits
    return v


def ubits(v: int, bits: int) -> int:
    """Two's-complement bit pattern of v in `bits` bits."""
    return v & ((1 << bits) - 1)


def trunc_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def trunc_rem(a: int, b: int) -> int:
    return a - b * trunc_div(a, b)


# ----------------------------------------------------------------------------- float formats

FORMATS = {  # name: (exponent bits, stored mantissa bits)
    "f16": (5, 10), "bf16": (8, 7), "f32": (8, 23), "f64": (11, 52),
}


def fmt_params(fmt):
    e, m = FORMATS[fmt]
    bias = (1 << (e - 1)) - 1
    return e, m, bias, 1 - bias, bias   # ebits, mbits, bias, emin, emax


def width(fmt):
    e, m = FORMATS[fmt]
    return 1 + e + m


@lru_cache(maxsize=1 << 16)
def decode(bits: int, fmt: str):
    """-> ('nan', sign) | ('inf', sign) | (Fraction magnitude, sign); sign is 0 or 1."""
    e, m, bias, emin, _ = fmt_params(fmt)
    sign = bits >> (e + m) & 1
    exp = bits >> m & ((1 << e) - 1)
    man = bits & ((1 << m) - 1)
    if exp == (1 << e) - 1:
        return ("nan" if man else "inf"), sign
    if exp == 0:
        return Fraction(man) * Fraction(2) ** (emin - m), sign
    return Fraction((1 << m) | man) * Fraction(2) ** (exp - bias - m), sign


def to_value(bits, fmt):
    """Signed Fraction, or the string 'nan' / '+inf' / '-inf'."""
    v, s = decode(bits, fmt)
    if v == "nan":
        return "nan"
    if v == "inf":
        return "-inf" if s else "+inf"
    return -v if s else v


def encode(sign, exp_field, man, fmt):
    e, m = FORMATS[fmt]
    return (sign << (e + m)) | (exp_field << m) | man


def inf_bits(sign, fmt):
    e, m = FORMATS[fmt]
    return encode(sign, (1 << e) - 1, 0, fmt)


def max_bits(sign, fmt):
    e, m = FORMATS[fmt]
    return encode(sign, (1 << e) - 2, (1 << m) - 1, fmt)


def zero_bits(sign, fmt):
    return encode(sign, 0, 0, fmt)


def is_nan_bits(bits, fmt):
    return decode(bits, fmt)[0] == "nan"


def _ilog2(q: Fraction) -> int:
    """floor(log2(q)) for q > 0, with integer arithmetic only."""
    n, d = q.numerator, q.denominator
    k = n.bit_length() - d.bit_length()
    if (n << -k if k < 0 else n) < (d << k if k > 0 else d):
        k -= 1
    return k


def round_int(q: Fraction, mode: str, sticky: bool = False) -> int:
    """Round q to an integer. `sticky`: the true value is q plus a positive infinitesimal."""
    fl = math.floor(q)
    frac = q - fl
    if frac == 0 and not sticky:
        return fl
    if mode in ("rz", "rzi"):
        return fl if q >= 0 else fl + 1
    if mode in ("rm", "rmi"):
        return fl
    if mode in ("rp", "rpi"):
        return fl + 1
    half = Fraction(1, 2)
    if frac > half or (frac == half and sticky):
        return fl + 1
    if frac < half:
        return fl
    if mode in ("rna",):                     # exact tie: away from zero
        return fl + 1 if q > 0 else fl
    return fl if fl % 2 == 0 else fl + 1     # rn / rni: tie to even


def round_float(value: Fraction, fmt: str, mode: str = "rn", *, zero_sign: int = 0,
                sticky: bool = False) -> int:
    """Bits of `value` rounded to fmt. `sticky` means |true value| = |value| + tiny (same sign).

    Rounding works on the magnitude; rm/rp are mapped to rz/away by the sign."""
    e, m, bias, emin, emax = fmt_params(fmt)
    if value == 0 and not sticky:
        return zero_bits(zero_sign, fmt)
    sign = 1 if value < 0 else 0
    mag = -value if sign else value
    mag_mode = {"rn": "rn", "rna": "rna", "rz": "rz",
                "rm": "rp" if sign else "rz", "rp": "rz" if sign else "rp"}[mode]
    exp = max(_ilog2(mag), emin) if mag > 0 else emin
    # n = round(mag / 2**(exp - m)) with integers: num / den, remainder against den / 2
    shift = m - exp
    num = mag.numerator << shift if shift >= 0 else mag.numerator
    den = mag.denominator if shift >= 0 else mag.denominator << -shift
    n, r = divmod(num, den)
    if r or sticky:
        twice = 2 * r
        if mag_mode == "rz":
            pass
        elif mag_mode == "rp":
            n += 1
        elif twice > den or (twice == den and (sticky or mag_mode == "rna" or n % 2 == 1)):
            n += 1
    if n == 0:
        return zero_bits(sign, fmt)
    if n >= 1 << (m + 1):            # rounding carried into the next binade
        n >>= 1
        exp += 1
    if exp > emax:                   # overflow: infinity or the largest finite value
        to_inf = mag_mode in ("rn", "rna", "rp")
        return inf_bits(sign, fmt) if to_inf else max_bits(sign, fmt)
    if n < 1 << m:                   # subnormal
        return encode(sign, 0, n, fmt)
    return encode(sign, exp + bias, n - (1 << m), fmt)


def is_subnormal_bits(bits, fmt):
    e, m = FORMATS[fmt]
    return (bits >> m) & ((1 << e) - 1) == 0 and bits & ((1 << m) - 1) != 0


def flush(bits, fmt):
    """ftz: a subnormal becomes a zero of the same sign."""
    if is_subnormal_bits(bits, fmt):
        return zero_bits(bits >> (width(fmt) - 1), fmt)
    return bits


def f32_bits(x: float) -> int:
    import struct
    return struct.unpack("<I", struct.pack("<f", x))[0]


def f64_bits(x: float) -> int:
    import struct
    return struct.unpack("<Q", struct.pack("<d", x))[0]


# ----------------------------------------------------------------------------- float ops

def _zero_sum_sign(s1, s2, mode):
    """Sign of an exact zero sum: both operands' signs if they agree, else +0 (-0 in rm)."""
    if s1 == s2:
        return s1
    return 1 if mode == "rm" else 0


def f_add(a, b, fmt, mode="rn", *, ftz=False, sat=False, negate_b=False):
    """a + b (or a - b) on bit patterns, exactly rounded; NaN results are ANY_NAN."""
    if ftz:
        a, b = flush(a, fmt), flush(b, fmt)
    va, sa = decode(a, fmt)
    vb, sb = decode(b, fmt)
    if negate_b:
        sb ^= 1
    if va == "nan" or vb == "nan":
        return _sat_nan(sat)
    if va == "inf" or vb == "inf":
        if va == "inf" and vb == "inf" and sa != sb:
            return _sat_nan(sat)
        s = sa if va == "inf" else sb
        return _finish(inf_bits(s, fmt), fmt, ftz, sat)
    exact = (-va if sa else va) + (-vb if sb else vb)
    zs = _zero_sum_sign(sa, sb, mode) if exact == 0 else 0
    return _finish(round_float(exact, fmt, mode, zero_sign=zs), fmt, ftz, sat, exact)


def f_mul(a, b, fmt, mode="rn", *, ftz=False, sat=False):
    if ftz:
        a, b = flush(a, fmt), flush(b, fmt)
    va, sa = decode(a, fmt)
    vb, sb = decode(b, fmt)
    s = sa ^ sb
    if va == "nan" or vb == "nan":
        return _sat_nan(sat)
    if va == "inf" or vb == "inf":
        if va == 0 or vb == 0:
            return _sat_nan(sat)
        return _finish(inf_bits(s, fmt), fmt, ftz, sat)
    exact = va * vb
    return _finish(round_float(-exact if s else exact, fmt, mode, zero_sign=s), fmt, ftz, sat, exact)


def f_fma(a, b, c, fmt, mode="rn", *, ftz=False, sat=False):
    if ftz:
        a, b, c = flush(a, fmt), flush(b, fmt), flush(c, fmt)
    va, sa = decode(a, fmt)
    vb, sb = decode(b, fmt)
    vc, sc = decode(c, fmt)
    sp = sa ^ sb
    if "nan" in (va, vb, vc):
        return _sat_nan(sat)
    if va == "inf" or vb == "inf":
        if va == 0 or vb == 0:
            return _sat_nan(sat)
        if vc == "inf" and sc != sp:
            return _sat_nan(sat)
        return _finish(inf_bits(sp, fmt), fmt, ftz, sat)
    if vc == "inf":
        return _finish(inf_bits(sc, fmt), fmt, ftz, sat)
    prod = va * vb
    exact = (-prod if sp else prod) + (-vc if sc else vc)
    zs = 0
    if exact == 0:
        zs = _zero_sum_sign(sp, sc, mode) if (prod == 0 and vc == 0) else (1 if mode == "rm" else 0)
        if prod == 0 and vc == 0:
            zs = sp if sp == sc else (1 if mode == "rm" else 0)
    return _finish(round_float(exact, fmt, mode, zero_sign=zs), fmt, ftz, sat, exact)


def f_div(a, b, fmt, mode="rn", *, ftz=False, sat=False):
    if ftz:
        a, b = flush(a, fmt), flush(b, fmt)
    va, sa = decode(a, fmt)
    vb, sb = decode(b, fmt)
    s = sa ^ sb
    if va == "nan" or vb == "nan":
        return _sat_nan(sat)
    if va == "inf":
        return _sat_nan(sat) if vb == "inf" else _finish(inf_bits(s, fmt), fmt, ftz, sat)
    if vb == "inf":
        return _finish(zero_bits(s, fmt), fmt, ftz, sat)
    if vb == 0:
        return _sat_nan(sat) if va == 0 else _finish(inf_bits(s, fmt), fmt, ftz, sat)
    exact = va / vb
    return _finish(round_float(-exact if s else exact, fmt, mode, zero_sign=s), fmt, ftz, sat, exact)


def f_rcp(a, fmt, mode="rn", *, ftz=False):
    one = round_float(Fraction(1), fmt)
    return f_div(one, a, fmt, mode, ftz=ftz)


def f_sqrt(a, fmt, mode="rn", *, ftz=False):
    if ftz:
        a = flush(a, fmt)
    va, sa = decode(a, fmt)
    if va == "nan":
        return ANY_NAN
    if va == 0:
        return a
    if sa:
        return ANY_NAN
    if va == "inf":
        return a
    # sqrt(va) = sqrt(N) / 2^k with N an integer: isqrt gives the floor and exactness
    k = 600
    scaled = va * Fraction(4) ** k
    assert scaled.denominator == 1
    n = scaled.numerator
    r = math.isqrt(n)
    exact = r * r == n
    r = _finish(round_float(Fraction(r, 2 ** k), fmt, mode, sticky=not exact), fmt, ftz, False)
    return r


def _sat_nan(sat):
    return 0 if sat else ANY_NAN      # .sat: NaN results become +0


def _finish(bits, fmt, ftz, sat, exact=None):
    if ftz:
        if exact is not None and is_subnormal_bits(bits, fmt) is False:
            # exact value below the normal range that rounded up to the smallest normal:
            # whether ftz looks before or after rounding is not specified
            e, m, bias, emin, _ = fmt_params(fmt)
            tiny = Fraction(2) ** emin
            if 0 < abs(exact) < tiny and abs(to_value(bits, fmt)) == tiny:
                return UNSPEC
        bits = flush(bits, fmt)
    if sat:
        v = to_value(bits, fmt)
        if v == "-inf" or (not isinstance(v, str) and v < 0):
            return zero_bits(0, fmt)
        if v == "+inf" or (not isinstance(v, str) and v > 1):
            return round_float(Fraction(1), fmt)
        if v == 0 and bits != 0:
            return ONE_OF(0, bits)          # -0 clamped to [0, 1]: +0 or -0, not specified
    return bits


def f_minmax(a, b, fmt, is_max):
    va, sa = decode(a, fmt)
    vb, sb = decode(b, fmt)
    if va == "nan" and vb == "nan":
        return ANY_NAN
    if va == "nan":
        return b
    if vb == "nan":
        return a
    x, y = to_value(a, fmt), to_value(b, fmt)
    key = lambda v: (-Fraction(10) ** 400 if v == "-inf" else Fraction(10) ** 400 if v == "+inf" else v)
    kx, ky = key(x), key(y)
    if kx == ky:
        return a if a == b else ONE_OF(a, b)    # +0 vs -0: the ISA does not order them
    return (a if kx > ky else b) if is_max else (a if kx < ky else b)


def f_compare(a, b, fmt, op):
    """setp on floats: ordered compares are false with a NaN; 'u' forms are true."""
    va, _ = decode(a, fmt)
    vb, _ = decode(b, fmt)
    unordered = va == "nan" or vb == "nan"
    if op == "num":
        return not unordered
    if op == "nan":
        return unordered
    if unordered:
        return op.endswith("u")
    base = op[:-1] if op.endswith("u") else op
    big = Fraction(10) ** 400
    x, y = (to_value(v, fmt) for v in (a, b))
    x = -big if x == "-inf" else big if x == "+inf" else x
    y = -big if y == "-inf" else big if y == "+inf" else y
    return {"eq": x == y, "ne": x != y, "lt": x < y, "le": x <= y, "gt": x > y, "ge": x >= y}[base]


# ----------------------------------------------------------------------------- conversions

INT_TYPES = {"s8": (8, True), "u8": (8, False), "s16": (16, True), "u16": (16, False),
             "s32": (32, True), "u32": (32, False), "s64": (64, True), "u64": (64, False)}


def int_range(t):
    bits, signed = INT_TYPES[t]
    return (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)


def cvt_float_to_int(bits, sfmt, dt, mode, *, ftz=False):
    """cvt.{irnd}.dt.sfmt: round, saturate; NaN -> 0, or 1 << (w-1) when the source is f64
    or the destination is 64-bit (PTX ISA, cvt 'Integer Notes')."""
    if ftz and sfmt == "f32":
        bits = flush(bits, sfmt)
    w, signed = INT_TYPES[dt]
    lo, hi = int_range(dt)
    v = to_value(bits, sfmt)
    if v == "nan":
        return 1 << (w - 1) if (sfmt == "f64" or w == 64) else 0
    if v == "+inf":
        return ubits(hi, w)
    if v == "-inf":
        return ubits(lo, w)
    r = round_int(v, mode or "rzi")
    return ubits(min(max(r, lo), hi), w)


def cvt_int_to_float(value: int, dfmt, mode):
    return round_float(Fraction(value), dfmt, mode or "rn")


def cvt_float_to_float(bits, sfmt, dfmt, mode, *, ftz=False, sat=False):
    """Widening is exact; narrowing rounds with `mode`; NaN stays some NaN (bits open)."""
    if ftz and sfmt == "f32":
        bits = flush(bits, sfmt)
    v, s = decode(bits, sfmt)
    if v == "nan":
        return 0 if sat else ANY_NAN
    if v == "inf":
        out = inf_bits(s, dfmt)
    else:
        out = round_float(-v if s else v, dfmt, mode or "rn", zero_sign=s)
    if ftz and dfmt == "f32":
        out = flush(out, dfmt)
    return _finish(out, dfmt, False, sat)


def cvt_round_integral(bits, fmt, mode, *, ftz=False):
    """cvt.rni/rzi/rmi/rpi.fX.fX: round to an integral value in the same format."""
    if ftz and fmt == "f32":
        bits = flush(bits, fmt)
    v, s = decode(bits, fmt)
    if v == "nan":
        return ANY_NAN
    if v == "inf" or v == 0:
        return bits
    r = round_int(-v if s else v, mode)
    return round_float(Fraction(r), fmt, "rn", zero_sign=s)


def cvt_int_to_int(value: int, st, dt, sat=False):
    """Sign/zero extension follows the source type; .sat clamps to the destination range."""
    w, _ = INT_TYPES[dt]
    if sat:
        lo, hi = int_range(dt)
        value = min(max(value, lo), hi)
    return ubits(value, w)

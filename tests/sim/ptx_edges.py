"""Edge values and random values for the PTX semantics kernels, as bit patterns (Python ints).

``make_inputs(kinds, widths, rng)`` returns one list of bit patterns per operand: the
cross product of the operands' edge values (sampled down to ``limit`` rows when larger),
followed by random rows. Kinds: ``i16/i24/i32/i64`` integers, ``sh`` shift amounts,
``pos`` bit-field positions/lengths, ``sel`` prmt selectors, ``bool``, and the float
formats ``f16/bf16/f32/f64`` (signed zeros, subnormals, ties, overflow boundaries, NaNs with
payloads, infinities, and values near integer-conversion limits).
"""
from __future__ import annotations

import itertools
import struct

import numpy as np

import ptx_reference as R


def _ints(w):
    m = (1 << w) - 1
    top = 1 << (w - 1)
    base = [0, 1, 2, 3, 5, 7, 8, 15, 16, 31, 32, 33, 63, 64, 100, 127, 128, 255, 256, 1000,
            top - 1, top, top + 1, top - 2, m, m - 1, (1 << (w // 2)) - 1, 1 << (w // 2),
            0x5555555555555555 & m, 0xAAAAAAAAAAAAAAAA & m, 3 << (w - 2)]
    base += [-x for x in (1, 2, 3, 5, 7, 8, 16, 31, 32, 33, 100, 128, 255, 256, 1000, 1 << (w // 2))]
    return sorted({x & m for x in base})


def _f32(*xs):
    return [struct.unpack("<I", struct.pack("<f", x))[0] for x in xs]


def _f64(*xs):
    return [struct.unpack("<Q", struct.pack("<d", x))[0] for x in xs]


_COMMON = [0.5, 0.75, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 0.25, 1 / 3, 3.14159265, 7.0, 10.0, 100.5,
           127.0, 127.5, 128.0, 255.0, 255.5, 256.0, 32767.0, 32767.5, 32768.0, 65504.0, 65520.0,
           65535.0, 65536.0, 2.0 ** 24, 2.0 ** 24 + 2, 2.0 ** 31, 2.0 ** 31 - 128, 2.0 ** 32,
           2.0 ** 63, 2.0 ** 64, 2.0 ** -14, 2.0 ** -24, 2.0 ** -25, 1.5 * 2 ** -24, 2.0 ** -23,
           1e-3, 6.1e-5, 129.0, 2.0 ** 53, 2.0 ** 53 + 2, 2147483520.0, 4294967040.0]

EDGES = {f"i{w}": _ints(w) for w in (16, 32, 64)}
EDGES["i24"] = sorted({x & 0xFFFFFFFF for x in [0, 1, 2, 7, 255, 0x7FFFFF, 0x800000, 0xFFFFFF, 0x1000000,
                                                   -1, -2, -7, -0x800000, -0x800001, 0x123456, -0x123456,
                                                   0x7FFFFFFF, 0x80000000, 0xFF000001]})
EDGES["sh"] = [0, 1, 2, 7, 8, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100, 127, 128, 255, 256,
               0x7FFFFFFF, 0x80000000, 0xFFFFFFE0, 0xFFFFFFFE, 0xFFFFFFFF, 0x100000020 & 0xFFFFFFFF]
EDGES["pos"] = [0, 1, 3, 7, 8, 15, 16, 24, 31, 32, 33, 40, 63, 64, 65, 100, 200, 255, 256, 257,
                0x1FF, 0x10F, 0xFFFFFFFF, 0x80000008]
EDGES["sel"] = [0x3210, 0x7654, 0x0123, 0x4567, 0x8888, 0xFFFF, 0x89AB, 0xCDEF, 0x1, 0x2, 0x3, 0x4,
                0x7, 0xC, 0xFFFFFFFC, 0x12345678]
EDGES["bool"] = [0, 1]
_MODERATE = [0.5, 0.75, 1.0, 1.5, 2.0, 2.5, 3.0, 0.1, 0.3, 0.7, 1.25, 4.0, 7.5, 10.0, 0.01, 100.0]

_f32_special = [0, 0x80000000, 1, 0x80000001, 0x007FFFFF, 0x807FFFFF, 0x00800000, 0x80800000,
                0x00800001, 0x00400000, 0x3F800001, 0x3F7FFFFF, 0x7F7FFFFF, 0xFF7FFFFF, 0x7EFFFFFF,
                0x7F800000, 0xFF800000, 0x7FC00000, 0x7FFFFFFF, 0xFFC00000, 0x7F800001, 0x7FA00000,
                0xFFFFFFFF, 0x4B000001, 0x0C000000]
EDGES["f32"] = sorted(set(_f32_special + _f32(*_COMMON) + _f32(*[-x for x in _COMMON])))
_f64_special = [0, 1 << 63, 1, (1 << 63) | 1, (1 << 52) - 1, 1 << 52, (1 << 63) | (1 << 52),
                0x7FEFFFFFFFFFFFFF, 0xFFEFFFFFFFFFFFFF, 0x7FF0000000000000, 0xFFF0000000000000,
                0x7FF8000000000000, 0x7FFFFFFFFFFFFFFF, 0xFFF8000000000000, 0x7FF0000000000001,
                0x7FF4000000000000, 0x3FF0000000000001, 0x3FEFFFFFFFFFFFFF]
_f64_extra = [2.0 ** -149, 2.0 ** -126, 3.4028234663852886e38, 3.4028235677973366e38, 1 + 2 ** -24,
              1 + 2 ** -24 + 2 ** -50, 1e300, 1e-300, 2.0 ** 62 * 3, -(2.0 ** 63) - 2048, 2.0 ** 31 - 0.5]
EDGES["f64"] = sorted(set(_f64_special + _f64(*_COMMON, *_f64_extra) +
                          _f64(*[-x for x in _COMMON + _f64_extra])))
EDGES["f32m"] = _f32(*_MODERATE, *[-x for x in _MODERATE])
EDGES["f64m"] = _f64(*_MODERATE, *[-x for x in _MODERATE])
EDGES["f16"] = sorted({0, 0x8000, 1, 0x8001, 0x3FF, 0x83FF, 0x400, 0x8400, 0x3C00, 0xBC00, 0x3C01,
                       0x3BFF, 0x3E00, 0x4100, 0xC100, 0x3800, 0x3555, 0x4200, 0x4300, 0x7BFF, 0xFBFF,
                       0x7C00, 0xFC00, 0x7E00, 0x7FFF, 0xFE00, 0x7C01, 0x6000, 0x57F8, 0x5800, 0xD800,
                       0x4E00, 0x0200, 0x1000, 0x7800})
EDGES["bf16"] = sorted({0, 0x8000, 1, 0x8001, 0x7F, 0x80, 0x3F80, 0xBF80, 0x3F81, 0x3FC0, 0x4020,
                        0xC020, 0x7F7F, 0xFF7F, 0x7F80, 0xFF80, 0x7FC0, 0x7FFF, 0xFFC0, 0x7F81, 0x4300,
                        0x4F00, 0xCF00, 0x3EAB, 0x0100})


def random_bits(kind, w, rng, n):
    """Random bit patterns: uniform bits mixed with 'numeric' values that round interestingly."""
    if kind in ("bool",):
        return [int(x) for x in rng.integers(0, 2, n)]
    if kind == "sh":
        return [int(x) for x in rng.integers(0, 70, n)]
    if kind == "pos":
        return [int(x) for x in rng.integers(0, 80, n)]
    if kind == "i24":
        return [int(x) & 0xFFFFFFFF for x in rng.integers(-(1 << 23), 1 << 23, n)]
    if kind.startswith("i") or kind == "sel":
        bits = int(kind[1:]) if kind.startswith("i") else 32
        u = [int(x) for x in rng.integers(0, 1 << 62, n)] if bits == 64 else [int(x) for x in rng.integers(0, 1 << bits, n)]
        if bits == 64:
            u = [x | (int(rng.integers(0, 4)) << 62) for x in u]
        small = [int(x) & ((1 << bits) - 1) for x in rng.integers(-300, 300, n)]
        return [u[i] if i % 2 else small[i] for i in range(n)]
    if kind in ("f32m", "f64m"):    # moderate magnitudes only (approximate functions)
        return _float_bits(rng.uniform(-8, 8, n), kind[:3])
    sign = np.where(rng.integers(0, 2, n) == 1, -1.0, 1.0)
    nice = rng.uniform(-4, 4, n) * np.exp2(rng.integers(-6, 7, n))            # inexact sums, products
    quarters = rng.integers(-4000, 4000, n) / 4                               # ties when rounding to ints
    short = sign * rng.integers(1, 1 << 12, n) * np.exp2(rng.integers(-30, 30, n))  # ties in sums
    values = np.choose(np.arange(n) % 4 % 3, [nice, quarters, short])
    out = _float_bits(values, kind)
    w = R.width(kind)
    anybits = [int(x) for x in rng.integers(0, 1 << min(w, 62), n)]
    if w == 64:
        anybits = [x | (int(t) << 62) for x, t in zip(anybits, rng.integers(0, 4, n))]
    return [anybits[i] if i % 4 == 3 else out[i] for i in range(n)]


def _float_bits(values, fmt):
    """Bit patterns of float64 values converted (by numpy, any rounding) to fmt: inputs only."""
    v = np.asarray(values, np.float64)
    with np.errstate(over="ignore"):
        return _convert(v, fmt)


def _convert(v, fmt):
    if fmt == "f64":
        return [int(x) for x in v.view(np.uint64)]
    if fmt == "f16":
        return [int(x) for x in v.astype(np.float16).view(np.uint16)]
    u = v.astype(np.float32).view(np.uint32)
    return [int(x) for x in (u >> 16 if fmt == "bf16" else u)]


# for floats, every combination of these is always included: zeros, ones, infinities, NaN,
# the smallest subnormal and the largest finite value, both signs
CORE = {"f32": [0, 0x80000000, 0x3F800000, 0xBF800000, 0x7F800000, 0xFF800000, 0x7FC00000, 1, 0x80000001,
                0x7F7FFFFF, 0xFF7FFFFF],
        "f64": [0, 1 << 63, 0x3FF0000000000000, 0xBFF0000000000000, 0x7FF0000000000000, 0xFFF0000000000000,
                0x7FF8000000000000, 1, (1 << 63) | 1, 0x7FEFFFFFFFFFFFFF, 0xFFEFFFFFFFFFFFFF],
        "f16": [0, 0x8000, 0x3C00, 0xBC00, 0x7C00, 0xFC00, 0x7E00, 1, 0x8001, 0x7BFF, 0xFBFF],
        "bf16": [0, 0x8000, 0x3F80, 0xBF80, 0x7F80, 0xFF80, 0x7FC0, 1, 0x8001, 0x7F7F, 0xFF7F]}


def make_inputs(kinds, widths, rng, limit=1200, n_random=200):
    """Rows of operand bit patterns: every edge combination when there are few enough (integer
    operands: up to 2500), else the float core combinations plus a random sample of edge
    combinations, then random rows."""
    edges = [EDGES[k] for k in kinds]
    total = int(np.prod([len(e) for e in edges]))
    if not any(k in R.FORMATS or k in ("f32m", "f64m") for k in kinds):   # integers: cheap, be exhaustive
        limit = max(limit, 2500)
    if total <= limit:
        rows = list(itertools.product(*edges))
    else:
        core = [CORE.get(k, e[:6]) for k, e in zip(kinds, edges)]
        rows = list(itertools.product(*core)) if len(kinds) < 3 else []
        rows += [tuple(e[int(rng.integers(0, len(e)))] for e in edges) for _ in range(limit)]
        # keep every edge value of the first operand against the same second operand
        rows += [(x,) + tuple(e[0] for e in edges[1:]) for x in edges[0]]
    cols = [list(c) for c in zip(*rows)]
    for i, (k, w) in enumerate(zip(kinds, widths)):
        cols[i] += [v & ((1 << w) - 1) for v in random_bits(k, w, rng, n_random)]
    return cols

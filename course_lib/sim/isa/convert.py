"""``cvt``: conversions between every pair of PTX types, with rounding modes, .sat and .ftz.

``convert(st, dt, mode, sat, flush)`` returns the conversion as a function over numpy arrays;
``build_cvt`` turns a ``cvt`` instruction into the closure the executor runs. The H100's NaN
results are in ``convert``'s docstring; the rounding itself is ``rounding``'s.
"""
from __future__ import annotations

import numpy as np

from ...compile.ptx import TYPES
from ..arith import alu, rounding
from ..spaces.memory import UINT
from ..state import SINT
from .operands import reader, unsupported, writer

CVT_ROUND = ("rn", "rz", "rm", "rp", "rni", "rzi", "rmi", "rpi", "rna")


def build_cvt(ins, program):
    types = [m for m in ins.mods if m in TYPES]
    dt, st = types[0], types[1]
    mode = next((m for m in ins.mods if m in CVT_ROUND), None)
    sat, flush = "sat" in ins.mods, "ftz" in ins.mods
    if any(m in ins.mods for m in ("relu", "satfinite", "rs")) or dt in ("tf32",):
        return unsupported(ins, "cvt with .relu/.satfinite/.rs or to tf32 is not simulated")
    write = writer(ins.operands[0], dt)
    if dt in ("f16x2", "bf16x2"):   # cvt.rn.f16x2.f32 d, a, b: a -> upper half, b -> lower half
        conv = convert(st, dt[:-2], mode, sat, flush)
        hi, lo = (reader(o, st, program) for o in ins.operands[1:3])
        bits16 = lambda v: np.asarray(v).view(np.uint16).astype(np.uint32)
        return lambda b, mask: write(b, mask, (bits16(conv(hi(b, mask))) << np.uint32(16)) | bits16(conv(lo(b, mask))))
    read = reader(ins.operands[1], st, program)
    conv = convert(st, dt, mode, sat, flush)
    return lambda b, mask: write(b, mask, conv(read(b, mask)))


def convert(st, dt, mode, sat, flush):
    """The cvt semantics for one source/destination type pair (PTX ISA, cvt).

    Floats are first turned into their exact f64 values (.ftz flushes f32 subnormals), then
    rounded once: to an integer (.rni/.rzi/.rmi/.rpi, saturating), to an integral value of the
    same format, or to the destination format in .rn/.rz/.rm/.rp. Integer sources extend by
    their own signedness; .sat clamps to the destination's range (or [0, 1] for floats, -0 and
    NaN becoming +0).

    NaN sources, as an H100 converts them: with f64 on either side the sign and the top payload
    bits carry over and the NaN is quieted; bf16 -> f32 is a plain 16-bit shift (a signalling
    NaN stays one); other float pairs give the canonical NaN. .ftz from f32 canonicalises a NaN
    source first (cvt.ftz.f64.f32 of any NaN is 0x7FFFFFFFE0000000)."""
    src_f, dst_f = st in alu.FLOAT_TYPES, dt in alu.FLOAT_TYPES
    dnp = TYPES[dt][1]
    payload = src_f and dst_f and "f64" in (st, dt)

    def fn(x):
        x = np.asarray(x)
        if src_f:
            if flush and st == "f32":
                x = alu.canon(alu.ftz(x))
            sbits = x.view(UINT[x.dtype.itemsize])
            if st == "bf16" and dt == "f32":
                r = (sbits.astype(np.uint32) << np.uint32(16)).view(np.float32)
            else:
                x64 = rounding.from_bits(sbits, st)
                if not dst_f:
                    return _float_to_int(x64, dt, mode, wide_nan=st == "f64")
                r = _float_to_float(x64, dt, mode)
                nan = np.isnan(x64) if payload else None
                if payload and nan.any():
                    r = np.where(nan, rounding.nan_convert(sbits, st, dt).view(dnp), r)
        elif dst_f:
            r = _int_to_float(x, dt, mode)
        elif sat:
            return _int_to_int(_clamp_int(x, dt), st, dt)
        else:
            return _int_to_int(x, st, dt)
        if flush and dt == "f32":
            r = alu.ftz(r)
        if sat:
            v = rounding.from_bits(r.view(UINT[r.dtype.itemsize]), dt)
            v = np.where(np.isnan(v), 0.0, np.clip(v, 0.0, 1.0)) + 0.0
            r = rounding.round_exact(v, dt).view(dnp)
        return r
    return fn


def _clamp_int(x, dt):
    """Clamp an integer array to dt's range, exactly (no float round trip for 64-bit values)."""
    info = np.iinfo(TYPES[dt][1])
    if x.dtype.kind == "u":
        return np.minimum(x, x.dtype.type(min(info.max, np.iinfo(x.dtype).max)))
    lo = max(info.min, np.iinfo(x.dtype).min)
    hi = min(info.max, np.iinfo(x.dtype).max)
    return np.clip(x, x.dtype.type(lo), x.dtype.type(hi))


def _int_to_int(x, st, dt):
    """Truncate, or sign/zero-extend according to the *source* type."""
    w = TYPES[dt][0]
    if x.dtype.itemsize >= w:
        return x.view(UINT[x.dtype.itemsize]).astype(UINT[w]).view(TYPES[dt][1])
    return x.astype(SINT[w] if st[0] == "s" else UINT[w]).view(TYPES[dt][1])


def _round_int(x, mode):
    f = {"rni": np.rint, "rzi": np.trunc, "rmi": np.floor, "rpi": np.ceil, "rna": lambda v: np.trunc(v + np.copysign(0.5, v))}
    return f.get(mode, np.trunc)(x)


def _float_to_int(x64, dt, mode, wide_nan=False):
    """Round, then saturate to dt's range. NaN -> 0, except 1 << (w-1) when the source is f64
    or the destination is 64-bit (PTX ISA, cvt 'Integer Notes')."""
    npt = TYPES[dt][1]
    info = np.iinfo(npt)
    w = TYPES[dt][0] * 8
    v = _round_int(x64, mode)
    nan = np.isnan(v)
    lo, hi = float(info.min), float(info.max)     # hi rounds up to 2**k for 32/64-bit types
    inside = np.where(nan | (v <= lo) | (v >= hi), 0.0, v)
    out = inside.astype(np.int64).astype(npt) if info.min < 0 else inside.astype(np.uint64).astype(npt)
    out = np.where(v <= lo, npt(info.min), np.where(v >= hi, npt(info.max), out))
    nan_value = npt(0) if not (wide_nan or w == 64) else np.uint64(1 << (w - 1)).astype(UINT[w // 8]).view(npt)
    return np.where(nan, nan_value, out).astype(npt)


def _int_to_float(x, dt, mode):
    return rounding.int_to_bits(x, dt, mode or "rn").view(TYPES[dt][1])


def _float_to_float(x64, dt, mode):
    """Exact f64 values -> dt: rounded to an integral value (.rni...) or to dt's precision."""
    if mode in ("rni", "rzi", "rmi", "rpi"):   # integral value in the same format
        x64 = np.where(np.isfinite(x64), _round_int(x64, mode), x64)
        mode = None
    return rounding.round_exact(x64, dt, mode).view(TYPES[dt][1])

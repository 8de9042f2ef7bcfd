"""Bit-manipulation PTX instructions: popc, clz, brev, bfind, bfe, bfi, prmt, shf, lop3.

Each builder takes a parsed instruction and returns ``(fn, src_types, dst_type)`` like
``alu.plan``. They follow the PTX ISA's bit-level pseudocode, including its corner cases, and
an H100 where the two part: ``bfe``/``bfi`` clamp at the register width and use the low 8 bits
of position and length for 32-bit types but all 32 bits for 64-bit types (the hardware's
choice, measured 2026-11-22), ``bfind`` returns 0xFFFFFFFF when no bit is found, ``prmt`` has
its six named modes, ``shf`` clamps or wraps the shift amount.
"""
from __future__ import annotations

import numpy as np

from ...compile.ptx import TYPES


def bits(t):
    return TYPES[t][0] * 8


def np_type(t):
    return TYPES[t][1]


def is_signed(t):
    return t.startswith("s")


def popc(ins):
    t = ins.type
    return (lambda a: np.bitwise_count(a).astype(np.uint32)), [t], "u32"


def clz(ins):
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


def bfind(ins):
    """Position of the most significant 1 (unsigned) or non-sign bit (signed); 0xFFFFFFFF if
    there is none; .shiftamt gives w-1 minus that position instead."""
    t = ins.type
    w = bits(t)
    shiftamt = "shiftamt" in ins.mods

    def fn(a):
        u = _unsigned_bits(np.asarray(a), w)
        if is_signed(t):
            neg = (u >> np.uint64(w - 1)) & np.uint64(1) == 1
            u = np.where(neg, ~u & _low_mask(np.full(u.shape, w)), u)
        _, e = np.frexp(u.astype(np.float64))
        pos = e.astype(np.int64) - 1
        pos = np.where((pos >= 0) & ((u >> np.clip(pos, 0, 63).astype(np.uint64)) == 0), pos - 1, pos)
        pos = np.minimum(pos, w - 1)
        r = np.where(shiftamt, w - 1 - pos, pos)
        return np.where(u == 0, np.uint32(0xFFFFFFFF), r.astype(np.uint32)).astype(np.uint32)
    return fn, [t], "u32"


def brev(ins):
    t = ins.type
    w = bits(t)
    n = np_type(t)

    def fn(a):
        b = np.unpackbits(a.astype(n).view(np.uint8).reshape(-1, w // 8), axis=1, bitorder="little")
        return np.packbits(b[:, ::-1], axis=1, bitorder="little").view(n).reshape(a.shape)
    return fn, [t], t


def _unsigned_bits(a, w):
    return a.view(np.uint32 if w == 32 else np.uint64).astype(np.uint64)


def _low_mask(nbits):
    """(1 << nbits) - 1 for nbits in 0..64, as uint64."""
    nb = nbits.astype(np.uint64)
    return np.where(nb >= 64, np.uint64(2**64 - 1), (np.uint64(1) << np.minimum(nb, np.uint64(63))) - np.uint64(1))


def _field(x, w):
    """bfe/bfi position or length: the low 8 bits for 32-bit types, as the ISA says; all 32 bits
    for 64-bit types, as an H100 does (bfe.u64 a, 8, 0x100 takes a[63:8], not nothing)."""
    return np.asarray(x).astype(np.int64) & (0xFF if w == 32 else 0xFFFFFFFF)


def bfe(ins):
    """d[i] = a[pos+i] for i < len and pos+i < w, else the sign bit a[min(pos+len-1, w-1)]
    (0 for unsigned types or len == 0); pos and len from b and c (see _field)."""
    t = ins.type
    w = bits(t)
    n = np_type(t)

    def fn(a, pos, length):
        p, ln = _field(pos, w), _field(length, w)
        u = _unsigned_bits(np.asarray(a), w)
        taken = np.clip(np.minimum(ln, w - p), 0, w)
        shifted = np.where(p < w, u >> np.minimum(p, 63).astype(np.uint64), np.uint64(0))
        mask = _low_mask(taken)
        r = shifted & mask
        if is_signed(t):
            top = np.clip(p + ln - 1, 0, w - 1).astype(np.uint64)
            sbit = ((u >> top) & np.uint64(1)).astype(bool) & (ln > 0)
            r = np.where(sbit, r | (~mask & _low_mask(np.full(r.shape, w))), r)
        return r.astype(np.uint32 if w == 32 else np.uint64).view(n)
    return fn, [t, "u32", "u32"], t


def bfi(ins):
    t = ins.type
    w = bits(t)
    n = np_type(t)

    def fn(f, b, pos, length):
        p = np.minimum(_field(pos, w), w).astype(np.uint64)
        ln = np.minimum(_field(length, w), w).astype(np.uint64)
        mask = ((np.where(ln >= 64, np.uint64(0), np.uint64(1) << np.minimum(ln, 63)) - np.uint64(1)) << np.minimum(p, w - 1))
        mask = np.where(p >= w, np.uint64(0), mask) & np.uint64((1 << w) - 1)
        r = (b.astype(np.uint64) & ~mask) | ((f.astype(np.uint64) << np.minimum(p, w - 1)) & mask)
        return r.astype(n)
    return fn, [t, t, "u32", "u32"], t


# byte i of the result, for each prmt mode and selector c[1:0] = k (PTX ISA table)
_PRMT = {"f4e": lambda k, i: (k + i) & 7, "b4e": lambda k, i: (k - i) & 7, "rc8": lambda k, i: k,
         "ecl": lambda k, i: np.maximum(k, i), "ecr": lambda k, i: np.minimum(k, i),
         "rc16": lambda k, i: (k & 1) * 2 + (i & 1)}


def prmt(ins):
    mode = next((m for m in ins.mods if m in _PRMT), None)

    def fn(a, b, c):
        src = a.astype(np.uint64) | (b.astype(np.uint64) << np.uint64(32))
        sel = np.asarray(c).astype(np.int64)
        out = np.zeros(np.broadcast(a, b, c).shape, np.uint32)
        for i in range(4):
            if mode is None:
                s = (sel >> (4 * i)) & 0xF
                byte = (src >> (np.uint64(8) * (s & 7).astype(np.uint64))) & np.uint64(0xFF)
                msb = (byte >> np.uint64(7)) & np.uint64(1)
                byte = np.where(s & 8, msb * np.uint64(0xFF), byte)
            else:
                idx = np.asarray(_PRMT[mode](sel & 3, i), np.int64).astype(np.uint64)
                byte = (src >> (np.uint64(8) * idx)) & np.uint64(0xFF)
            out |= (byte.astype(np.uint32) << np.uint32(8 * i))
        return out
    return fn, ["b32", "b32", "b32"], "b32"


def shf(ins):
    left = "l" in ins.mods
    clamp = "clamp" in ins.mods

    def fn(a, b, c):
        n = np.minimum(c, 32) if clamp else c & np.uint32(31)
        wide = a.astype(np.uint64) | (b.astype(np.uint64) << np.uint64(32))
        n = np.asarray(n).astype(np.uint64)
        if left:
            return ((wide << n) >> np.uint64(32)).astype(np.uint32)
        return (wide >> n).astype(np.uint32)
    return fn, ["b32", "b32", "u32"], "b32"


def lop3(ins):
    def fn(a, b, c, lut):
        out = np.zeros(np.broadcast(a, b, c).shape, np.uint32)
        for k in range(8):
            term = ((a if k & 4 else ~a) & (b if k & 2 else ~b) & (c if k & 1 else ~c))
            out |= np.where((lut >> np.uint32(k)) & np.uint32(1), term, np.uint32(0)).astype(np.uint32)
        return out
    return fn, ["b32", "b32", "b32", "b32"], "b32"

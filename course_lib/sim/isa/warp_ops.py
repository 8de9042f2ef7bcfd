"""Warp-level instructions: ``shfl.sync``, ``vote.sync``, ``activemask``.

A warp is slots 32w .. 32w+31 of the batch (``state``), so a warp-wide operation is a reshape
to (warps, 32). Lanes that are not active in the instruction neither give nor take a value,
except that ``shfl`` reads its source register from whichever lane it names, as the hardware
does (a value from an inactive lane is undefined there; here it is what that lane's register holds).
"""
from __future__ import annotations

import numpy as np

from ..state import as_type
from .operands import reader, writer


def build_shfl(ins, program):
    mode = next(m for m in ins.mods if m in ("up", "down", "bfly", "idx"))
    dst = ins.operands[0]
    d_op, p_op = (dst.items if dst.kind == "vec" else (dst, None))
    val = reader(ins.operands[1], "b32", program)
    lane_b = reader(ins.operands[2], "b32", program)
    c_read = reader(ins.operands[3], "b32", program)
    wd, wp = writer(d_op, "b32"), (writer(p_op, "pred") if p_op is not None else None)

    def run(b, mask):
        full = as_type(b.reg(ins.operands[1].name), "b32") if ins.operands[1].kind == "reg" else None
        lane = (np.arange(b.n) % 32) if mask is None else (np.flatnonzero(mask) % 32)
        bval = np.asarray(lane_b(b, mask)).astype(np.int64) & 31
        cval = np.asarray(c_read(b, mask)).astype(np.int64)
        seg = (cval >> 8) & 31
        clamp = cval & 31
        max_lane = (lane & seg) | (clamp & ~seg)
        min_lane = lane & seg
        if mode == "up":
            j = lane - bval
            ok = j >= max_lane
        elif mode == "down":
            j = lane + bval
            ok = j <= max_lane
        elif mode == "bfly":
            j = lane ^ bval
            ok = j <= max_lane
        else:
            j = min_lane | (bval & ~seg)
            ok = j <= max_lane
        j = np.where(ok, j, lane)
        slots = np.arange(b.n) if mask is None else np.flatnonzero(mask)
        src = slots - lane + j
        out = full[src] if full is not None else np.broadcast_to(val(b, mask), slots.shape)
        wd(b, mask, out)
        if wp is not None:
            wp(b, mask, ok)
    return run


def build_vote(ins, program):
    mode = next(m for m in ins.mods if m in ("all", "any", "uni", "ballot"))
    pred = reader(ins.operands[1], "pred", program)
    t = "b32" if mode == "ballot" else "pred"
    write = writer(ins.operands[0], t)

    def run(b, mask):
        p = np.zeros(b.n, np.bool_)
        m = np.ones(b.n, np.bool_) if mask is None else mask
        p[m] = pred(b, mask)
        pw, mw = p.reshape(-1, 32), m.reshape(-1, 32)
        if mode == "ballot":
            r = (pw.astype(np.uint64) << np.arange(32, dtype=np.uint64)).sum(1).astype(np.uint32)
        elif mode == "all":
            r = np.all(pw | ~mw, axis=1)
        elif mode == "any":
            r = np.any(pw & mw, axis=1)
        else:
            r = np.all(pw | ~mw, axis=1) | ~np.any(pw & mw, axis=1)
        r = np.repeat(r, 32)
        write(b, mask, r if mask is None else r[mask])
    return run


def build_activemask(ins, program):
    write = writer(ins.operands[0], "b32")

    def run(b, mask):
        m = np.ones(b.n, np.bool_) if mask is None else mask
        r = (m.reshape(-1, 32).astype(np.uint64) << np.arange(32, dtype=np.uint64)).sum(1).astype(np.uint32)
        r = np.repeat(r, 32)
        write(b, mask, r if mask is None else r[mask])
    return run

"""Turn each parsed PTX instruction into a small Python closure ``run(batch, mask)``.

``mask`` is None (every slot of the batch executes) or a boolean array over slots. A closure
returns None to fall through, or a control tuple for the scheduler: ``("bra", taken, target)``,
``("exit", mask)``, ``("bar", mask)``. ALU instructions come from ``alu.OPS``; this module
adds operand access, moves, conversions, memory access, warp-level operations and calls.

Unsupported instructions are not an error until they execute: a kernel whose unusual path
is never taken still runs.
"""
from __future__ import annotations

import numpy as np

from ..compile.ptx import TYPES
from ..errors import UnsupportedInstruction
from . import alu, rounding
from .memory import LOCAL_WINDOW, SHARED_WINDOW, UINT
from .state import SINT, as_type, to_storage

IGNORED = {"membar", "fence", "nanosleep", "prefetch", "prefetchu", "applypriority",
           "discard", "createpolicy", "pmevent"}
CVT_ROUND = ("rn", "rz", "rm", "rp", "rni", "rzi", "rmi", "rpi", "rna")


# ----------------------------------------------------------------------------- operands

def reader(op, t, program):
    """A function (batch, mask) -> value of operand `op` viewed as PTX type `t`."""
    if op.kind == "reg":
        name, neg = op.name, op.negated

        def read(b, mask):
            v = as_type(b.reg(name), t)
            v = v if mask is None else v[mask]
            return ~v if neg else v
        return read
    if op.kind == "imm":
        value = immediate(op.value, t)
        return lambda b, mask: value
    if op.kind == "special":
        name = op.name
        dynamic = name.startswith(("%clock", "%globaltimer"))

        def special(b, mask):
            v = b._compute_special(name) if dynamic else b.special(name)
            v = np.asarray(v)
            if t in TYPES and TYPES[t][1] is not None and v.dtype.itemsize != TYPES[t][0]:
                v = v.astype(UINT[TYPES[t][0]])
            v = v.view(TYPES[t][1]) if t in TYPES else v
            return v if (mask is None or v.ndim == 0) else v[mask]
        return special
    if op.kind == "symbol":
        addr = program.symbol_address(op.name)
        value = immediate(addr, t)
        return lambda b, mask: value
    if op.kind == "vec" and op.value != "pair":  # packed vector source: {%r1, %r2} as one wide value
        parts = [reader(x, _part_type(op, t), program) for x in op.items]
        w = TYPES[t][0] // len(op.items)

        def pack(b, mask):
            vals = [np.asarray(p(b, mask)).astype(np.uint64) for p in parts]
            out = np.uint64(0)
            for i, v in enumerate(vals):
                out = out | ((v & np.uint64((1 << (8 * w)) - 1)) << np.uint64(8 * w * i))
            return np.asarray(out).astype(UINT[TYPES[t][0]]).view(TYPES[t][1])
        return pack
    raise UnsupportedInstruction(f"operand '{op.name or op.kind}' of this kind cannot be read")


def _part_type(op, t):
    w = TYPES[t][0] // len(op.items)
    return {1: "b8", 2: "b16", 4: "b32", 8: "b64"}[w]


def immediate(value, t):
    if t == "pred":
        return np.bool_(value)
    w, npt = TYPES[t]
    if isinstance(value, float):
        if t == "bf16":    # bf16 lives in u16 storage: a float literal becomes its bits
            return rounding.round_exact(np.float64(value), "bf16")[()]
        return np.asarray(value, np.float64).astype(npt)[()] if alu.is_float(t) else npt(int(value))
    if alu.is_float(t) and t != "bf16":   # an integer literal for a float operand: its value
        return npt(value)
    return np.asarray(int(value) & ((1 << (8 * w)) - 1), np.uint64).astype(UINT[w]).view(npt)[()]


def writer(op, t):
    """A function (batch, mask, value) storing `value` (typed t) into operand `op`."""
    if op.kind == "sink":
        return lambda b, mask, v: None
    if op.kind == "vec":  # unpack one wide value into several registers
        w = TYPES[t][0] // len(op.items)
        part_t = {1: "b8", 2: "b16", 4: "b32", 8: "b64"}[w]
        subs = [writer(x, part_t) for x in op.items]

        def unpack(b, mask, v):
            u = np.asarray(v).view(UINT[TYPES[t][0]]).astype(np.uint64)
            for i, s in enumerate(subs):
                s(b, mask, ((u >> np.uint64(8 * w * i)) & np.uint64((1 << (8 * w)) - 1)).astype(UINT[w]))
        return unpack
    name = op.name

    def write(b, mask, v):
        arr = b.reg(name, overwrite=mask is None)
        vals = to_storage(v, t, arr.dtype)
        if mask is None:
            arr[...] = vals
        else:
            arr[mask] = vals
    return write


# ----------------------------------------------------------------------------- builders

def build(ins, program):
    """The closure for one instruction, with its guard predicate applied."""
    op = ins.opcode
    if op in IGNORED:
        run = lambda b, mask: None
    elif op in BUILDERS:
        run = BUILDERS[op](ins, program)
    elif op in alu.OPS:
        run = _alu(ins, program)
    else:
        run = _unsupported(ins, f"the PTX instruction '{op}' is not simulated")
    if ins.guard is None or op == "bra":
        return run
    reg, neg = ins.guard

    def guarded(b, mask):
        p = b.reg(reg)
        p = ~p if neg else p
        m = p if mask is None else (mask & p)
        if not m.any():
            return None
        res = run(b, m)
        if res is not None and res[0] == "exit":
            return res
        return res
    return guarded


def _unsupported(ins, why):
    def run(b, mask):
        raise UnsupportedInstruction(
            f"{why}: `{ins.text}`", line=ins.line or None,
            hint="the simulator covers what course kernels use; run this kernel on a GPU (Colab's GPU runtime works)")
    return run


def _alu(ins, program):
    try:
        planned = alu.plan(ins)
    except (KeyError, IndexError, TypeError):
        return _unsupported(ins, f"'{ins.opcode}' with modifiers .{'.'.join(ins.mods)} is not simulated")
    fn, src_types, dst_type = planned
    if ins.opcode == "setp" and ins.operands[0].kind == "vec":
        return _setp_pair(ins, program, src_types)
    srcs = [reader(o, t, program) for o, t in zip(ins.operands[1:], src_types)]
    dst = writer(ins.operands[0], dst_type)

    def run(b, mask):
        dst(b, mask, fn(*[s(b, mask) for s in srcs]))
    return run


def _setp_pair(ins, program, src_types):
    """setp.cmp[.op] p|q, a, b[, c]: q gets the complement of the comparison, then combined."""
    cmp = alu.compare(ins.mods[0], ins.type)
    combine = next((m for m in ins.mods if m in ("and", "or", "xor")), None)
    c = {"and": np.logical_and, "or": np.logical_or, "xor": np.logical_xor}.get(combine)
    srcs = [reader(o, t, program) for o, t in zip(ins.operands[1:], src_types)]
    p, q = (writer(x, "pred") for x in ins.operands[0].items)

    def run(b, mask):
        vals = [s(b, mask) for s in srcs]
        t = cmp(vals[0], vals[1])
        if c is not None:
            p(b, mask, c(t, vals[2]))
            q(b, mask, c(~t, vals[2]))
        else:
            p(b, mask, t)
            q(b, mask, ~t)
    return run


def _mov(ins, program):
    t = ins.type
    dst, src = ins.operands
    read = reader(src, t, program)
    write = writer(dst, t)
    return lambda b, mask: write(b, mask, read(b, mask))


def _cvt(ins, program):
    types = [m for m in ins.mods if m in TYPES]
    dt, st = types[0], types[1]
    mode = next((m for m in ins.mods if m in CVT_ROUND), None)
    sat, flush = "sat" in ins.mods, "ftz" in ins.mods
    if any(m in ins.mods for m in ("relu", "satfinite", "rs")) or dt in ("tf32",):
        return _unsupported(ins, "cvt with .relu/.satfinite/.rs or to tf32 is not simulated")
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


def _f32_to_bf16(x):
    """f32 -> bf16 bits, round to nearest even (NaN -> 0x7FFF)."""
    return rounding.round_exact(np.asarray(x, np.float32).astype(np.float64), "bf16")


def _cvta(ins, program):
    to = "to" in ins.mods
    space = next(m for m in ins.mods if m in ("global", "shared", "local", "const", "param"))
    window = {"shared": SHARED_WINDOW, "local": LOCAL_WINDOW}.get(space, 0)
    t = ins.type
    read = reader(ins.operands[1], t, program)
    write = writer(ins.operands[0], t)
    delta = np.asarray(window, np.uint64).astype(TYPES[t][1])

    def run(b, mask):
        v = read(b, mask)
        write(b, mask, (v - delta) if to else (v + delta))
    return run


def _isspacep(ins, program):
    space = ins.mods[0]
    read = reader(ins.operands[1], "u64", program)
    write = writer(ins.operands[0], "pred")

    def run(b, mask):
        a = read(b, mask)
        inside = {"shared": lambda: (a >= SHARED_WINDOW) & (a < SHARED_WINDOW + (1 << 32)),
                  "local": lambda: (a >= LOCAL_WINDOW) & (a < LOCAL_WINDOW + (1 << 32))}
        r = inside[space]() if space in inside else ~(((a >= SHARED_WINDOW) & (a < SHARED_WINDOW + (1 << 32))) |
                                                      ((a >= LOCAL_WINDOW) & (a < LOCAL_WINDOW + (1 << 32))))
        write(b, mask, r)
    return run


def _bra(ins, program):
    target = program.kernel.labels.get(ins.operands[0].name)
    if target is None:
        return _unsupported(ins, "indirect branches are not simulated")
    guard = ins.guard

    def run(b, mask):
        if guard is None:
            return ("bra", None, target)
        p = b.reg(guard[0])
        taken = ~p if guard[1] else p
        return ("bra", taken if mask is None else (taken & mask), target)
    return run


def _exit(ins, program):
    return lambda b, mask: ("exit", mask)


def _bar(ins, program):
    if ins.opcode == "bar" and "warp" in ins.mods:
        return lambda b, mask: b.races.syncwarp(np.flatnonzero(mask) if mask is not None else np.arange(b.n)) if b.races else None
    if any(m in ins.mods for m in ("arrive", "red")) or len(ins.operands) > 1:
        return _unsupported(ins, "named barriers, bar.arrive and __syncthreads_count/and/or are not simulated")
    return lambda b, mask: ("bar", mask)


def _shfl(ins, program):
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


def _vote(ins, program):
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


def _activemask(ins, program):
    write = writer(ins.operands[0], "b32")

    def run(b, mask):
        m = np.ones(b.n, np.bool_) if mask is None else mask
        r = (m.reshape(-1, 32).astype(np.uint64) << np.arange(32, dtype=np.uint64)).sum(1).astype(np.uint32)
        r = np.repeat(r, 32)
        write(b, mask, r if mask is None else r[mask])
    return run


def _memory(ins, program):
    from .access import build_memory
    return build_memory(ins, program)


def _call(ins, program):
    from .calls import build_call
    return build_call(ins, program)


def _trap(ins, program):
    from .calls import build_trap
    return build_trap(ins, program)


BUILDERS = {
    "mov": _mov, "cvt": _cvt, "cvta": _cvta, "isspacep": _isspacep,
    "bra": _bra, "ret": _exit, "exit": _exit, "trap": _trap,
    "bar": _bar, "barrier": _bar,
    "shfl": _shfl, "vote": _vote, "activemask": _activemask,
    "ld": _memory, "st": _memory, "ldu": _memory, "atom": _memory, "red": _memory,
    "call": _call,
}

"""What each PTX arithmetic/logic instruction computes, as numpy over all active threads.

``plan(ins)`` returns ``(fn, src_types, dst_type)``: the executor fetches each source operand
viewed as ``src_types[i]`` (a PTX type name), calls ``fn(*sources)``, and stores the result
as ``dst_type``. The table ``OPS`` has one entry per opcode, built from a few generic helpers:
integer arithmetic in ``int_ops``, bit fields and permutations in ``bitops``, floating-point
arithmetic in ``float_ops`` (rounding modes, ftz, sat, halves; exact f64 in ``exact``),
min/max/comparisons/sign operations in ``float_select``; selection, testp and setp here.

Exact PTX semantics, not C's or numpy's: integers wrap; shifts by >= the width clamp (the
shift amount is unsigned, so a negative one is huge); division truncates toward zero;
``mul24``/``mad24`` use the low 24 bits (sign-extended for .s32); ``bfe``/``bfi``/``prmt``/
``shf``/``lop3`` follow the ISA's bit-level pseudocode.

Where the ISA leaves a result open, or its text and the hardware part, the answer is an
H100's (``benchmarks/gpu_semantics.py``, 2026-11-22; ``tests/sim/test_gpu_semantics_replay.py``
replays every saved answer): integer division *and remainder* by zero give all ones, ``MIN /
-1`` gives MIN; 64-bit ``bfe``/``bfi`` read 32 bits of position and length (``bitops``);
``testp.normal`` is true for zeros; NaN bits, ``.sat`` of -0 and ``cvt`` of NaNs are in
``float_ops``, ``float_select`` and ``convert``.

Approximate instructions are the exact result rounded to the type, except rcp.approx.ftz.f64,
modelled bit for bit (``float_ops._rcp64h``). The hardware's function units are not correctly
rounded and no simple formula reproduces them: a*RN(1/b) matches div.approx's saved answers
but not its agreement count, for instance. Largest distance between this simulator and the
H100 over the run's inputs (moderate arguments, in ulp of the result): div.approx, div.full
and div.approx.ftz.f32 2; sqrt.approx, rcp.approx and rsqrt.approx.f32 1; ex2.approx.f32 2;
lg2.approx.f32 12 (lg2(0.5) is -0.99999988 on the GPU); sin.approx.f32 797 and cos.approx.f32
1096 (their error is absolute: many ulp where the result is near zero); tanh.approx.f32 114;
ex2.approx.f16 1; rsqrt.approx.f64 1.
"""
from __future__ import annotations

import numpy as np

from . import bitops, float_ops, float_select
from .float_ops import canon, ftz  # noqa: F401  (convert uses alu.canon, alu.ftz)
from .float_select import compare
from .int_ops import bitwise, divmod_op, int_arith, int_compare, mad, mul, mul24, np_type, shift

FLOAT_TYPES = ("f16", "f32", "f64", "bf16")
PACKED = ("f16x2", "bf16x2")


def is_float(t):
    return t in FLOAT_TYPES


def _setp(ins):
    cmp = ins.mods[0]
    t = ins.type
    if t in PACKED:
        raise KeyError("setp on packed halves")
    combine = next((m for m in ins.mods if m in ("and", "or", "xor")), None)
    fn = compare(cmp, t) if is_float(t) else int_compare(cmp)
    if combine:
        c = {"and": np.logical_and, "or": np.logical_or, "xor": np.logical_xor}[combine]
        return (lambda a, b, p: c(fn(a, b), p)), [t, t, "pred"], "pred"
    return fn, [t, t], "pred"


def _selp(ins):
    t = ins.type
    return (lambda a, b, c: np.where(c, a, b)), [t, t, "pred"], t


def _slct(ins):
    t, ct = ins.mods[-2], ins.mods[-1]
    flush = "ftz" in ins.mods
    return (lambda a, b, c: np.where((ftz(c) if flush else c) >= 0, a, b)), [t, t, ct], t


def _copysign(ins):
    t = ins.type
    return (lambda a, b: np.copysign(b, a)), [t, t], t


def _testp(ins):
    t = ins.type
    kind = ins.mods[0]
    f = {"finite": np.isfinite, "infinite": np.isinf, "number": lambda x: ~np.isnan(x),
         "notanumber": np.isnan,
         # an H100 counts zeros as normal (IEEE does not; the ISA says "normal number")
         "normal": lambda x: np.isfinite(x) & ((np.abs(x) >= np.finfo(x.dtype).tiny) | (x == 0)),
         "subnormal": lambda x: (x != 0) & (np.abs(x) < np.finfo(x.dtype).tiny)}[kind]
    return f, [t], "pred"


# ----------------------------------------------------------------------------- float dispatch

_ARITY = {"add": 2, "sub": 2, "mul": 2, "div": 2, "fma": 3, "sqrt": 1, "rcp": 1}
_APPROX = {"sqrt": np.sqrt, "rcp": lambda x: 1 / x, "div": None}


def _float(name, ins):
    """(fn, srcs, dst) for float add/sub/mul/fma/div/sqrt/rcp of any float type."""
    t = ins.type
    if t in PACKED:
        return float_ops.packed(plan, ins)
    n = _ARITY[name]
    if t == "f32" and name in _APPROX and ("approx" in ins.mods or "full" in ins.mods):
        if name == "div":
            flush = "ftz" in ins.mods
            return (lambda a, b: canon(ftz(ftz(a) / ftz(b)) if flush else a / b)), [t, t], t
        return float_ops.approx(_APPROX[name], ins), [t], t
    if t == "f32":
        return float_ops.f32(name, ins), [t] * n, t
    if t == "f64":
        return float_ops.f64(name, ins), [t] * n, t
    if t in float_ops.HALF:
        return float_ops.half(name, ins, t), [t] * n, t
    raise KeyError(t)


def _either(name, int_build):
    """Integer builder for integer types, float_ops for floats (mul and mad too)."""
    def build(ins):
        if is_float(ins.type) or ins.type in PACKED:
            return _float("fma" if name == "mad" else name, ins)
        return int_build(ins)
    return build


def _minmax(is_max):
    def build(ins):
        t = ins.type
        if t in PACKED:
            return float_ops.packed(plan, ins)
        if is_float(t):
            return float_select.minmax(is_max, ins), [t, t], t
        return (np.maximum if is_max else np.minimum), [t, t], t
    return build


def _sign(kind):
    def build(ins):
        t = ins.type
        if t in PACKED:
            return float_ops.packed(plan, ins)
        if is_float(t):
            return float_select.sign_op(kind, ins), [t], t
        n = np_type(t)
        if kind == "neg":
            return (lambda a: np.negative(a).astype(n)), [t], t
        return (lambda a: np.where(a < 0, -a, a).astype(n)), [t], t
    return build


def _approx(f64fn):
    def build(ins):
        return float_ops.approx(f64fn, ins), [ins.type], ins.type
    return build


OPS = {
    "add": _either("add", int_arith(np.add)),
    "sub": _either("sub", int_arith(np.subtract)),
    "mul": _either("mul", mul),
    "mad": _either("mad", mad),
    "fma": lambda ins: _float("fma", ins),
    "mul24": lambda ins: mul24(ins),
    "mad24": lambda ins: mul24(ins, mad=True),
    "div": _either("div", lambda ins: divmod_op(ins, False)),
    "rem": lambda ins: divmod_op(ins, True),
    "shl": shift(True),
    "shr": shift(False),
    "and": bitwise(np.bitwise_and),
    "or": bitwise(np.bitwise_or),
    "xor": bitwise(np.bitwise_xor),
    "not": lambda ins: ((np.logical_not if ins.type == "pred" else np.invert), [ins.type], ins.type),
    "cnot": lambda ins: ((lambda a: (a == 0).astype(np_type(ins.type))), [ins.type], ins.type),
    "min": _minmax(False),
    "max": _minmax(True),
    "abs": _sign("abs"),
    "neg": _sign("neg"),
    "setp": _setp,
    "selp": _selp,
    "slct": _slct,
    "popc": bitops.popc,
    "clz": bitops.clz,
    "brev": bitops.brev,
    "bfind": bitops.bfind,
    "bfe": bitops.bfe,
    "bfi": bitops.bfi,
    "prmt": bitops.prmt,
    "shf": bitops.shf,
    "lop3": bitops.lop3,
    "sqrt": lambda ins: _float("sqrt", ins),
    "rcp": lambda ins: _float("rcp", ins),
    "rsqrt": _approx(lambda x: 1 / np.sqrt(x)),
    "ex2": _approx(np.exp2),
    "lg2": _approx(np.log2),
    "sin": _approx(np.sin),
    "cos": _approx(np.cos),
    "tanh": _approx(np.tanh),
    "copysign": _copysign,
    "testp": _testp,
}


def plan(ins):
    """(fn, src_types, dst_type) for an ALU instruction, or None if the opcode is not ALU."""
    build = OPS.get(ins.opcode)
    if build is None:
        return None
    return build(ins)

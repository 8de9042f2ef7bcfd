"""A catalog of one-instruction CUDA kernels with edge-value inputs and Python references.

Shared by ``tests/sim/test_ptx_semantics.py`` (simulator vs reference) and
``benchmarks/gpu_semantics.py`` (GPU vs simulator vs reference). Each :class:`Case` is an
elementwise kernel ``out[i] = OP(a[i], b[i], c[i])`` whose body is inline PTX, so the
instruction under test is exactly the one named (C++ would let the compiler pick another).
``source()`` puts every case into one translation unit, compiled once.

References come from ``ptx_reference`` (Python ints / Fraction) and see bit patterns as
unsigned ints. ``unspecified`` says what the PTX ISA leaves open for that instruction; the
reference returns ``UNSPEC``/``ANY_NAN`` there and only the GPU can tell what happens (the
saved H100 answers are replayed by ``test_gpu_semantics_replay``). Where the ISA text fixes a
result and an H100 gives another, ``ref`` is the hardware's answer (what the simulator must
give) and ``isa`` keeps the ISA text's, with a comment at the case saying what differs.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

import ptx_edges as E
import ptx_reference as R

C_TYPE = {"s16": "short", "u16": "unsigned short", "b16": "unsigned short", "f16": "unsigned short",
          "bf16": "unsigned short", "s32": "int", "u32": "unsigned", "b32": "unsigned", "f32": "float",
          "s64": "long long", "u64": "unsigned long long", "b64": "unsigned long long", "f64": "double",
          "f16x2": "unsigned", "bf16x2": "unsigned", "s8": "int", "u8": "unsigned"}
NP_TYPE = {"short": np.int16, "unsigned short": np.uint16, "int": np.int32, "unsigned": np.uint32,
           "float": np.float32, "long long": np.int64, "unsigned long long": np.uint64, "double": np.float64}
CONSTRAINT = {"short": "h", "unsigned short": "h", "int": "r", "unsigned": "r", "float": "f",
              "long long": "l", "unsigned long long": "l", "double": "d"}
BITS = {"short": 16, "unsigned short": 16, "int": 32, "unsigned": 32, "float": 32,
        "long long": 64, "unsigned long long": 64, "double": 64}


@dataclass
class Case:
    name: str                 # kernel name (a C identifier)
    ptx: str                  # the instruction under test, as the table shows it
    out_t: str                # PTX type of the result (for NaN checks)
    out: str                  # C type of the result register
    ins: tuple                # C types of the operands
    kinds: tuple              # input kinds (ptx_edges.EDGES keys), one per operand
    body: str                 # C statements setting r from a, b, c
    ref: object               # (*operand bit patterns) -> bits | ANY_NAN | UNSPEC | ONE_OF
    unspecified: str = ""     # what the ISA leaves open
    approx: bool = False      # approximate instruction: compared with a tolerance, not bits
    tol: float = 0.0          # relative tolerance for approx cases
    isa: object = None        # the ISA text's reference where the hardware's (ref) differs

    def kernel(self) -> str:
        params = ", ".join([f"{self.out}* __restrict__ out"] +
                           [f"const {t}* __restrict__ in{i}" for i, t in enumerate(self.ins)] + ["int n"])
        loads = " ".join(f"{t} {'abcd'[i]} = in{i}[i];" for i, t in enumerate(self.ins))
        return (f'extern "C" __global__ void {self.name}({params})\n{{\n'
                f"    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    if (i >= n) return;\n"
                f"    {loads}\n    {self.out} r;\n    {self.body}\n    out[i] = r;\n}}\n")

    def inputs(self, rng, limit=1200, n_random=200):
        return E.make_inputs(self.kinds, [BITS[t] for t in self.ins], rng, limit, n_random)

    def arrays(self, columns):
        return [np.array(col, dtype=f"u{BITS[t] // 8}").view(NP_TYPE[t]) for col, t in zip(columns, self.ins)]

    def expected(self, columns):
        return [self.ref(*vals) for vals in zip(*columns)]

    def isa_expected(self, columns):
        """What the ISA text gives (for the GPU=ISA column and for what it leaves open)."""
        return [(self.isa or self.ref)(*vals) for vals in zip(*columns)]


def asm(text, out, ins, pred_out=False):
    """An asm statement: %0 is r, %1.. are a, b, c. `pred_out`: the text sets predicate p."""
    outs = f'"={CONSTRAINT[out]}"(r)'
    args = ", ".join(f'"{CONSTRAINT[t]}"({"abcd"[i]})' for i, t in enumerate(ins))
    if pred_out:
        text = "{ .reg .pred p; " + text + " selp.u32 %0, 1, 0, p; }"
    return f'asm volatile("{text}" : {outs} : {args});'


CASES: list[Case] = []


def add(ptx, out_t, in_ts, kinds, ref, *, text=None, name=None, pred_out=False, **kw):
    out, ins = C_TYPE[out_t], tuple(C_TYPE[t] for t in in_ts)
    ops = ", ".join(f"%{i}" for i in range(len(in_ts) + 1))
    body = asm(text or f"{ptx} {ops};", out, ins, pred_out)
    name = name or "k_" + ptx.replace(".", "_")
    assert all(c.name != name for c in CASES), name
    CASES.append(Case(name, ptx, out_t, out, ins, tuple(kinds), body, ref, **kw))


# ----------------------------------------------------------------------------- integer helpers

def S(v, w):
    return R.wrap(v, w, True)


def U(v, w):
    return R.ubits(v, w)


def val(v, t):
    """Bit pattern -> value as PTX type t sees it."""
    w = int(t[1:])
    return S(v, w) if t[0] == "s" else v & ((1 << w) - 1)


INT_T = ("s16", "u16", "s32", "u32", "s64", "u64")


def _int_cases():
    for t in INT_T:
        w, k = int(t[1:]), f"i{t[1:]}"
        add(f"add.{t}", t, (t, t), (k, k), lambda a, b, w=w: U(a + b, w))
        add(f"sub.{t}", t, (t, t), (k, k), lambda a, b, w=w: U(a - b, w))
        add(f"mul.lo.{t}", t, (t, t), (k, k), lambda a, b, w=w: U(a * b, w))
        add(f"mul.hi.{t}", t, (t, t), (k, k), lambda a, b, t=t, w=w: U((val(a, t) * val(b, t)) >> w, w))
        add(f"mad.lo.{t}", t, (t, t, t), (k, k, k), lambda a, b, c, w=w: U(a * b + c, w))
        add(f"mad.hi.{t}", t, (t, t, t), (k, k, k),
            lambda a, b, c, t=t, w=w: U(((val(a, t) * val(b, t)) >> w) + c, w))
        add(f"min.{t}", t, (t, t), (k, k), lambda a, b, t=t, w=w: U(min(val(a, t), val(b, t)), w))
        add(f"max.{t}", t, (t, t), (k, k), lambda a, b, t=t, w=w: U(max(val(a, t), val(b, t)), w))
        signed = t[0] == "s"
        add(f"div.{t}", t, (t, t), (k, k), lambda a, b, t=t, w=w: _div(a, b, t, w, False),
            unspecified="division by zero" + ("; MIN / -1 (overflow)" if signed else ""))
        add(f"rem.{t}", t, (t, t), (k, k), lambda a, b, t=t, w=w: _div(a, b, t, w, True),
            unspecified="remainder by zero" + ("; MIN % -1" if signed else ""))
        for cmp in ("eq", "ne", "lt", "le", "gt", "ge") + (("lo", "ls", "hi", "hs") if t[0] == "u" else ()):
            add(f"setp.{cmp}.{t}", "u32", (t, t), (k, k), _setp_int(cmp, t),
                text=f"setp.{cmp}.{t} p, %1, %2;", pred_out=True)
    for t in ("s16", "u16", "s32", "u32"):
        w, k = int(t[1:]), f"i{t[1:]}"
        wt = t[0] + str(2 * w)
        add(f"mul.wide.{t}", wt, (t, t), (k, k), lambda a, b, t=t, w=w: U(val(a, t) * val(b, t), 2 * w))
        add(f"mad.wide.{t}", wt, (t, t, wt), (k, k, f"i{2 * w}"),
            lambda a, b, c, t=t, w=w: U(val(a, t) * val(b, t) + c, 2 * w))
    for t in ("s16", "s32", "s64"):
        w, k = int(t[1:]), f"i{t[1:]}"
        add(f"abs.{t}", t, (t,), (k,), lambda a, w=w: R.UNSPEC if a == 1 << (w - 1) else U(abs(S(a, w)), w),
            unspecified="abs(MIN)")
        add(f"neg.{t}", t, (t,), (k,), lambda a, w=w: U(-a, w))
    add("add.sat.s32", "s32", ("s32", "s32"), ("i32", "i32"), lambda a, b: U(_clamp(S(a, 32) + S(b, 32), 32), 32))
    add("mad.hi.sat.s32", "s32", ("s32", "s32", "s32"), ("i32", "i32", "i32"),
        lambda a, b, c: U(_clamp(((S(a, 32) * S(b, 32)) >> 32) + S(c, 32), 32), 32))
    add("sub.sat.s32", "s32", ("s32", "s32"), ("i32", "i32"), lambda a, b: U(_clamp(S(a, 32) - S(b, 32), 32), 32))
    for t in ("s32", "u32"):
        for h in ("lo", "hi"):
            add(f"mul24.{h}.{t}", t, (t, t), ("i24", "i24"), _mul24(t, h),
                unspecified="operands outside the 24-bit range")
            add(f"mad24.{h}.{t}", t, (t, t, t), ("i24", "i24", "i32"), _mul24(t, h, mad=True),
                unspecified="operands outside the 24-bit range")


def _clamp(v, w):
    return max(-(1 << (w - 1)), min((1 << (w - 1)) - 1, v))


def _div(a, b, t, w, rem):
    x, y = val(a, t), val(b, t)
    if y == 0:
        return R.UNSPEC
    if t[0] == "s" and x == -(1 << (w - 1)) and y == -1:
        return R.UNSPEC
    return U(R.trunc_rem(x, y) if rem else R.trunc_div(x, y), w)


def _setp_int(cmp, t):
    ops = {"eq": lambda x, y: x == y, "ne": lambda x, y: x != y, "lt": lambda x, y: x < y,
           "le": lambda x, y: x <= y, "gt": lambda x, y: x > y, "ge": lambda x, y: x >= y,
           "lo": lambda x, y: x < y, "ls": lambda x, y: x <= y, "hi": lambda x, y: x > y, "hs": lambda x, y: x >= y}
    return lambda a, b: int(ops[cmp](val(a, t), val(b, t)))


def _mul24(t, h, mad=False):
    def ref(a, b, c=0):
        ok = (a < 1 << 24) if t == "u32" else (S(a, 32) == S(a, 24))
        ok &= (b < 1 << 24) if t == "u32" else (S(b, 32) == S(b, 24))
        if not ok:
            return R.UNSPEC
        p = val(a, t) * val(b, t)
        return U((p >> 16 if h == "hi" else p) + c, 32)
    return ref


def _bit_cases():
    for w in (16, 32, 64):
        b, k = f"b{w}", f"i{w}"
        add(f"and.{b}", b, (b, b), (k, k), lambda x, y: x & y)
        add(f"or.{b}", b, (b, b), (k, k), lambda x, y: x | y)
        add(f"xor.{b}", b, (b, b), (k, k), lambda x, y: x ^ y)
        add(f"not.{b}", b, (b,), (k,), lambda x, w=w: x ^ ((1 << w) - 1))
        add(f"cnot.{b}", b, (b,), (k,), lambda x: int(x == 0))
        add(f"shl.{b}", b, (b, "u32"), (k, "sh"), lambda x, s, w=w: U(x << min(s, w), w))
        for t in (f"b{w}", f"u{w}", f"s{w}"):
            add(f"shr.{t}", t, (t, "u32"), (k, "sh"),
                lambda x, s, t=t, w=w: U(val(x, t) >> min(s, w), w) if t[0] == "s" else x >> min(s, w))
    for w in (32, 64):
        b, k = f"b{w}", f"i{w}"
        add(f"popc.{b}", "u32", (b,), (k,), lambda x: bin(x).count("1"))
        add(f"clz.{b}", "u32", (b,), (k,), lambda x, w=w: w - x.bit_length())
        add(f"brev.{b}", b, (b,), (k,), lambda x, w=w: int(format(x, f"0{w}b")[::-1], 2))
        for t in (f"u{w}", f"s{w}"):
            for shift in ("", ".shiftamt"):
                add(f"bfind{shift}.{t}", "u32", (t,), (k,), _bfind(t, w, bool(shift)))
        # The ISA takes position and length from the low 8 bits of their operands. An H100
        # does for .u32/.s32 but uses all 32 bits for .u64/.s64 (bfe.u64 a, 8, 0x100 is
        # a >> 8, not 0): 393, 319 and 498 of 2745 inputs differ from the ISA text, each as
        # this rule says (benchmarks/results/h100_2026-11-22).
        hw = 0xFF if w == 32 else 0xFFFFFFFF
        for t in (f"u{w}", f"s{w}"):
            add(f"bfe.{t}", t, (t, "u32", "u32"), (k, "pos", "pos"), _bfe(t, w, hw), isa=_bfe(t, w))
        add(f"bfi.{b}", b, (b, b, "u32", "u32"), (k, k, "pos", "pos"), _bfi(w, hw), isa=_bfi(w))
    add("prmt.b32", "b32", ("b32", "b32", "b32"), ("i32", "i32", "sel"), _prmt(None))
    for mode in ("f4e", "b4e", "rc8", "ecl", "ecr", "rc16"):
        add(f"prmt.b32.{mode}", "b32", ("b32", "b32", "b32"), ("i32", "i32", "sel"), _prmt(mode))
    for d in ("l", "r"):
        for mode in ("wrap", "clamp"):
            add(f"shf.{d}.{mode}.b32", "b32", ("b32", "b32", "u32"), ("i32", "i32", "sh"), _shf(d, mode))
    for lut in (0x00, 0xFF, 0x96, 0xE8, 0xCA, 0x80, 0xFE, 0x1E, 0x6A, 0x01):
        add(f"lop3.b32.{lut:#04x}", "b32", ("b32", "b32", "b32"), ("i32", "i32", "i32"), _lop3(lut),
            text=f"lop3.b32 %0, %1, %2, %3, {lut:#x};", name=f"k_lop3_{lut:02x}")


def _bfe(t, w, field=0xFF):
    """The ISA's bfe; `field` masks position and length (0xFF in the ISA text)."""
    def ref(a, b, c):
        pos, ln = b & field, c & field
        msb = w - 1
        sbit = 0 if (t[0] == "u" or ln == 0) else (a >> min(pos + ln - 1, msb)) & 1
        d = 0
        for i in range(w):
            bit = (a >> (pos + i)) & 1 if (i < ln and pos + i <= msb) else sbit
            d |= bit << i
        return d
    return ref


def _bfind(t, w, shiftamt):
    def ref(a):
        x = a
        if t[0] == "s" and a >> (w - 1):
            x = a ^ ((1 << w) - 1)          # negative: look for the most significant 0
        if x == 0:
            return 0xFFFFFFFF
        pos = x.bit_length() - 1
        return (w - 1 - pos) if shiftamt else pos
    return ref


def _bfi(w, field=0xFF):
    """The ISA's bfi; `field` masks position and length (0xFF in the ISA text)."""
    def ref(a, b, c, d):
        pos, ln = c & field, d & field
        f = b
        for i in range(min(ln, w)):
            if pos + i > w - 1:
                break
            f = (f & ~(1 << (pos + i))) | (((a >> i) & 1) << (pos + i))
        return f
    return ref


_PRMT_MODES = {"f4e": lambda k, i: (k + i) & 7, "b4e": lambda k, i: (k - i) & 7, "rc8": lambda k, i: k,
               "ecl": lambda k, i: max(i, k), "ecr": lambda k, i: min(i, k), "rc16": lambda k, i: (k & 1) * 2 + (i & 1)}


def _prmt(mode):
    def ref(a, b, c):
        src = a | (b << 32)
        out = 0
        for i in range(4):
            if mode is None:
                s = (c >> (4 * i)) & 0xF
                byte = (src >> (8 * (s & 7))) & 0xFF
                if s & 8:
                    byte = 0xFF if byte & 0x80 else 0
            else:
                byte = (src >> (8 * _PRMT_MODES[mode](c & 3, i))) & 0xFF
            out |= byte << (8 * i)
        return out
    return ref


def _shf(d, mode):
    def ref(a, b, c):
        n = min(c, 32) if mode == "clamp" else c & 31
        wide = a | (b << 32)
        return ((wide << n) >> 32) & 0xFFFFFFFF if d == "l" else (wide >> n) & 0xFFFFFFFF
    return ref


def _lop3(lut):
    def ref(a, b, c):
        out = 0
        for bit in range(32):
            idx = (((a >> bit) & 1) << 2) | (((b >> bit) & 1) << 1) | ((c >> bit) & 1)
            out |= ((lut >> idx) & 1) << bit
        return out
    return ref


def _select_cases():
    for t in ("b16", "b32", "b64", "f32", "f64"):
        k = {"b16": "i16", "b32": "i32", "b64": "i64"}.get(t, t)
        add(f"selp.{t}", t, (t, t, "u32"), (k, k, "i32"), lambda a, b, c: a if c & 1 else b,
            text=f"{{ .reg .pred p; .reg .b32 t; and.b32 t, %3, 1; setp.ne.b32 p, t, 0; selp.{t} %0, %1, %2, p; }}")
    for t in ("b32", "s32", "u32", "f32"):
        k = "i32" if t != "f32" else "f32"
        add(f"slct.{t}.s32", t, (t, t, "s32"), (k, k, "i32"), lambda a, b, c: a if S(c, 32) >= 0 else b)
        add(f"slct.{t}.f32", t, (t, t, "f32"), (k, k, "f32"), _slct_f32)
    # predicate logic: and/or/xor/not on predicates, setp combining and the p|q form
    for op in ("and", "or", "xor"):
        add(f"{op}.pred", "u32", ("u32", "u32"), ("bool", "bool"),
            lambda a, b, op=op: int({"and": a & b, "or": a | b, "xor": a ^ b}[op] & 1),
            text=f"{{ .reg .pred p, q, t; setp.ne.u32 q, %1, 0; setp.ne.u32 t, %2, 0; {op}.pred p, q, t; selp.u32 %0, 1, 0, p; }}")
        add(f"setp.lt.{op}.s32", "u32", ("s32", "s32", "u32"), ("i32", "i32", "bool"),
            lambda a, b, c, op=op: int(_bool(op, S(a, 32) < S(b, 32), c & 1)),
            text=f"{{ .reg .pred p, q; setp.ne.u32 q, %3, 0; setp.lt.{op}.s32 p, %1, %2, q; selp.u32 %0, 1, 0, p; }}")
        add(f"setp.gtu.{op}.f32", "u32", ("f32", "f32", "u32"), ("f32", "f32", "bool"),
            lambda a, b, c, op=op: int(_bool(op, R.f_compare(a, b, "f32", "gtu"), not c & 1)),
            text=f"{{ .reg .pred p, q; setp.ne.u32 q, %3, 0; setp.gtu.{op}.f32 p, %1, %2, !q; selp.u32 %0, 1, 0, p; }}",
            name=f"k_setp_gtu_{op}_not_f32")
    add("not.pred", "u32", ("u32",), ("bool",), lambda a: int(not a & 1),
        text="{ .reg .pred p, q; setp.ne.u32 q, %1, 0; not.pred p, q; selp.u32 %0, 1, 0, p; }")
    add("setp.lt.s32 p|q", "u32", ("s32", "s32"), ("i32", "i32"),
        lambda a, b: (S(a, 32) < S(b, 32)) + 2 * (not S(a, 32) < S(b, 32)), name="k_setp_pq",
        text="{ .reg .pred p, q; setp.lt.s32 p|q, %1, %2; selp.u32 %0, 1, 0, p; @q add.u32 %0, %0, 2; }")
    add("setp.ltu.and.f32 p|q", "u32", ("f32", "f32", "u32"), ("f32", "f32", "bool"),
        lambda a, b, c: _pq(R.f_compare(a, b, "f32", "ltu"), c & 1), name="k_setp_pq_and",
        text="{ .reg .pred p, q, t; setp.ne.u32 t, %3, 0; setp.ltu.and.f32 p|q, %1, %2, t; selp.u32 %0, 1, 0, p; @q add.u32 %0, %0, 2; }")


def _bool(op, x, y):
    return {"and": x and y, "or": x or y, "xor": bool(x) != bool(y)}[op]


def _pq(t, c):
    return int(t and c) + 2 * int((not t) and c)


def _slct_f32(a, b, c):
    v = R.to_value(c, "f32")
    if v == "nan":
        return R.ONE_OF(a, b)
    return a if (v == "+inf" or (v != "-inf" and v >= 0)) else b


def _immediate_cases():
    """Immediate operands (what compiled code mostly uses): constant shifts past the width,
    negative and all-ones literals, constant bit-field positions and prmt selectors."""
    imm = [("shl.b32", "b32", 33, lambda x, k: U(x << min(k, 32), 32)),
           ("shl.b64", "b64", 5, lambda x, k: U(x << k, 64)),
           ("shr.s32", "s32", 31, lambda x, k: U(S(x, 32) >> min(k, 32), 32)),
           ("shr.s32", "s32", 40, lambda x, k: U(S(x, 32) >> min(k, 32), 32)),
           ("shr.u32", "u32", 32, lambda x, k: x >> min(k, 32)),
           ("shr.s64", "s64", 64, lambda x, k: U(S(x, 64) >> min(k, 64), 64)),
           ("shr.u16", "u16", 16, lambda x, k: x >> min(k, 16)),
           ("add.s32", "s32", -5, lambda x, k: U(x + k, 32)),
           ("mul.lo.u64", "u64", 0xFFFFFFFFFFFFFFFF, lambda x, k: U(x * k, 64)),
           ("mul.hi.s32", "s32", -3, lambda x, k: U((S(x, 32) * k) >> 32, 32)),
           ("div.s32", "s32", -7, lambda x, k: U(R.trunc_div(S(x, 32), k), 32)),
           ("rem.u32", "u32", 10, lambda x, k: x % k),
           ("and.b32", "b32", 0xF0F0F0F0, lambda x, k: x & k),
           ("min.s16", "s16", -2, lambda x, k: U(min(S(x, 16), k), 16))]
    for op, t, k, fn in imm:
        w = int(t[1:])
        lit = hex(k) if k >= 0 else str(k)
        add(f"{op} imm {lit}", t, (t,), (f"i{w}",), lambda a, fn=fn, k=k: fn(a, k),
            text=f"{op} %0, %1, {lit};", name=f"k_imm_{op.replace('.', '_')}_{abs(k) % 1000}")
    add("bfe.s32 imm 4, 8", "s32", ("s32",), ("i32",), lambda a: _bfe("s32", 32)(a, 4, 8), text="bfe.s32 %0, %1, 4, 8;",
        name="k_imm_bfe_s32")
    add("bfe.u64 imm 60, 10", "u64", ("u64",), ("i64",), lambda a: _bfe("u64", 64)(a, 60, 10),
        text="bfe.u64 %0, %1, 60, 10;", name="k_imm_bfe_u64")
    add("bfi.b32 imm 28, 8", "b32", ("b32", "b32"), ("i32", "i32"), lambda a, b: _bfi(32)(a, b, 28, 8),
        text="bfi.b32 %0, %1, %2, 28, 8;", name="k_imm_bfi_b32")
    add("prmt.b32 imm 0x5140", "b32", ("b32", "b32"), ("i32", "i32"), lambda a, b: _prmt(None)(a, b, 0x5140),
        text="prmt.b32 %0, %1, %2, 0x5140;", name="k_imm_prmt")
    add("prmt.b32.rc16 imm 1", "b32", ("b32", "b32"), ("i32", "i32"), lambda a, b: _prmt("rc16")(a, b, 1),
        text="prmt.b32.rc16 %0, %1, %2, 1;", name="k_imm_prmt_rc16")
    add("shf.r.wrap.b32 imm 40", "b32", ("b32", "b32"), ("i32", "i32"), lambda a, b: _shf("r", "wrap")(a, b, 40),
        text="shf.r.wrap.b32 %0, %1, %2, 40;", name="k_imm_shf")
    add("mul24.lo.s32 imm -2", "s32", ("s32",), ("i24",), lambda a: _mul24("s32", "lo")(a, 0xFFFFFFFE),
        text="mul24.lo.s32 %0, %1, -2;", name="k_imm_mul24")
    add("setp.hi.u32 imm 0x80000000", "u32", ("u32",), ("i32",), lambda a: int(a > 0x80000000),
        text="setp.hi.u32 p, %1, 0x80000000;", pred_out=True, name="k_imm_setp")
    add("selp.s32 imm -1, 7", "s32", ("u32",), ("bool",), lambda c: U(-1, 32) if c & 1 else 7,
        text="{ .reg .pred p; setp.ne.u32 p, %1, 0; selp.s32 %0, -1, 7, p; }", name="k_imm_selp")


_int_cases()
_bit_cases()
_select_cases()
_immediate_cases()
import ptx_float_cases  # noqa: E402,F401  (float and conversion cases register themselves)


GROUP = 50   # kernels per module: NVRTC is fast, but finding one kernel's signature is O(source)


def modules():
    """[(name, CUDA source, cases)]: the catalog in translation units of GROUP kernels."""
    out = []
    for i in range(0, len(CASES), GROUP):
        chunk = CASES[i:i + GROUP]
        out.append((f"semantics{i // GROUP:02d}.cu", "\n".join(c.kernel() for c in chunk), chunk))
    return out


def source() -> str:
    return "\n".join(c.kernel() for c in CASES)


def by_name():
    return {c.name: c for c in CASES}

"""Every PTX instruction the simulator implements, on edge values, against an independent reference.

The kernels (``ptx_cases``, ``ptx_float_cases``, ``ptx_warp_cases``) use inline PTX so the
instruction under test is exactly the one named; inputs are edge values (signed zeros,
subnormals, ties in every rounding mode, NaN payloads, MIN/-1, shifts >= width...) plus
random ones. References are Python ints and Fractions (``ptx_reference``), never the
simulator's numpy code. Where the PTX ISA leaves a result open (integer division by zero, NaN
bits, abs(MIN), min(+0, -0)...) the reference says UNSPEC/ANY_NAN and nothing is asserted here;
``test_gpu_semantics_replay`` holds the simulator to what an H100 gave on these same inputs
(``benchmarks/gpu_semantics.py``). Where the ISA text and the H100 part (64-bit bfe/bfi,
testp.normal of zero) the reference is the hardware's answer; the case keeps the ISA's.
"""
import math

import numpy as np
import pytest

import course_lib as cl
from course_lib.sim.arith import alu
from course_lib.sim.isa.instructions import BUILDERS, no_effect

import ptx_cases as C
import ptx_reference as R
import ptx_warp_cases as W

MODULES = C.modules()
MODULE_OF = {case.name: fname for fname, _, cases in MODULES for case in cases}


@pytest.fixture(scope="module")
def compiled():
    mods = {fname: cl.RawModule(code=src, options=("-std=c++17",), filename=fname) for fname, src, _ in MODULES}
    for sp in W.SPECIALS:
        mods.setdefault(sp.source, cl.RawModule(code=sp.source, options=("-std=c++17",), filename="special.cu"))
    return mods


def run_case(compiled, case, seed=1234):
    cols = case.inputs(np.random.default_rng(seed))
    n = len(cols[0])
    out = np.full(n, 0x5A, dtype=np.uint8).repeat(np.dtype(C.NP_TYPE[case.out]).itemsize).view(C.NP_TYPE[case.out])
    k = compiled[MODULE_OF[case.name]].get_function(case.name)
    k.simulate(((n + 255) // 256, 1, 1), (256, 1, 1), (out, *case.arrays(cols), np.int32(n)))
    return cols, [int(x) for x in out.view(f"u{out.itemsize}")]


def _show(cols, i):
    return ", ".join(hex(c[i]) for c in cols)


@pytest.mark.parametrize("case", [c for c in C.CASES if not c.approx], ids=lambda c: c.ptx)
def test_instruction_matches_reference(compiled, case):
    cols, got = run_case(compiled, case)
    expected = case.expected(cols)
    bad = [i for i, (e, g) in enumerate(zip(expected, got)) if not R.matches(e, g, case.out_t)]
    msg = "; ".join(f"({_show(cols, i)}) -> {got[i]:#x}, expected {expected[i]!r}" for i in bad[:4])
    assert not bad, f"{case.ptx}: {len(bad)} of {len(got)} wrong: {msg}"


@pytest.mark.parametrize("case", [c for c in C.CASES if c.approx], ids=lambda c: c.ptx)
def test_approximate_instruction_is_close(compiled, case):
    """The ISA bounds the error of .approx instructions; the simulator must stay within it."""
    cols, got = run_case(compiled, case)
    fmt = case.out_t
    for vals, g in zip(zip(*cols), got):
        want = case.ref(*vals)
        if not isinstance(want, int) or R.is_nan_bits(want, fmt):
            continue
        w, v = R.to_value(want, fmt), R.to_value(g, fmt)
        if isinstance(w, str) or abs(w) < 2.0 ** -100:
            continue
        assert not isinstance(v, str), (case.ptx, vals, g)
        err = abs(float(v) - float(w))
        bound = case.tol * (1.0 if any(f in case.ptx for f in ("sin", "cos", "tanh")) else abs(float(w)))
        assert err <= bound, f"{case.ptx}({_show(cols, 0)}...): {float(v)} vs {float(w)}"


@pytest.mark.parametrize("sp", W.SPECIALS, ids=lambda s: s.name)
def test_warp_atomic_and_memory_instructions(compiled, sp):
    args = sp.make_args(np.random.default_rng(7))
    compiled[sp.source].get_function(sp.name).simulate(sp.grid, sp.block, tuple(args))
    bad = sp.check(args)
    assert not bad, f"{sp.ptx}: " + "; ".join(bad)


# ----------------------------------------------------------------------------- readable spot checks

def one(compiled, name, *vals):
    """Run one catalog kernel on one input row; returns the result's bit pattern."""
    case = C.by_name()[name]
    arrays = [np.array([v]).astype(f"u{C.BITS[t] // 8}").view(C.NP_TYPE[t]) for v, t in zip(vals, case.ins)]
    out = np.zeros(1, C.NP_TYPE[case.out])
    compiled[MODULE_OF[name]].get_function(name).simulate((1, 1, 1), (32, 1, 1), (out, *arrays, np.int32(1)))
    return int(out.view(f"u{out.itemsize}")[0])


def f32(x):
    return R.f32_bits(x)


def s32(v):
    return R.wrap(v, 32, True)


def test_integer_division_truncates_toward_zero(compiled):
    assert s32(one(compiled, "k_div_s32", -7 & 0xFFFFFFFF, 2)) == -3
    assert s32(one(compiled, "k_rem_s32", -7 & 0xFFFFFFFF, 2)) == -1        # sign of the dividend
    assert s32(one(compiled, "k_div_s32", 7, -2 & 0xFFFFFFFF)) == -3
    assert s32(one(compiled, "k_rem_s32", 7, -2 & 0xFFFFFFFF)) == 1
    assert one(compiled, "k_div_u32", 0xFFFFFFFF, 2) == 0x7FFFFFFF
    assert s32(one(compiled, "k_div_s32", 5, 0x80000000)) == 0              # divisor INT_MIN


def test_shifts_clamp_and_amounts_are_unsigned(compiled):
    assert one(compiled, "k_shl_b32", 1, 32) == 0
    assert one(compiled, "k_shr_s32", 0x80000000, 40) == 0xFFFFFFFF           # sign fill
    assert one(compiled, "k_shr_u32", 0x80000000, 0xFFFFFFFF) == 0            # "-1" is 2**32-1
    assert one(compiled, "k_shr_s64", 1 << 63, 64) == (1 << 64) - 1
    assert one(compiled, "k_shl_b16", 0xFFFF, 15) == 0x8000


def test_float_to_int_saturates_and_nan_depends_on_types(compiled):
    assert s32(one(compiled, "k_cvt_rzi_s32_f32", f32(3e9))) == 2 ** 31 - 1
    assert s32(one(compiled, "k_cvt_rzi_s32_f32", f32(-math.inf))) == -2 ** 31
    assert one(compiled, "k_cvt_rzi_u32_f32", f32(-1.5)) == 0
    assert one(compiled, "k_cvt_rzi_s32_f32", 0x7FC00000) == 0                 # f32 -> s32: NaN is 0
    assert one(compiled, "k_cvt_rzi_s32_f64", 0x7FF8000000000000) == 1 << 31   # f64 source: MIN
    assert one(compiled, "k_cvt_rzi_u64_f32", 0x7FC00000) == 1 << 63          # 64-bit destination


def test_round_to_integer_ties(compiled):
    rni = lambda x: s32(one(compiled, "k_cvt_rni_s32_f32", f32(x)))
    assert [rni(x) for x in (0.5, 1.5, 2.5, -0.5, -2.5)] == [0, 2, 2, 0, -2]
    assert s32(one(compiled, "k_cvt_rmi_s32_f32", f32(-0.5))) == -1
    assert s32(one(compiled, "k_cvt_rpi_s32_f32", f32(-0.5))) == 0
    assert one(compiled, "k_cvt_rni_f32_f32", f32(-0.5)) == 0x80000000          # -0.0 keeps its sign


def test_directed_rounding_and_fused_multiply_add(compiled):
    third_rz = one(compiled, "k_div_rz_f32", f32(1.0), f32(3.0))
    third_rp = one(compiled, "k_div_rp_f32", f32(1.0), f32(3.0))
    assert third_rp == third_rz + 1
    # 1 + 2**-24 is a tie between 1 and 1 + 2**-23: .rn picks the even one, .rp the upper
    assert one(compiled, "k_add_rn_f32", f32(1.0), f32(2 ** -24)) == f32(1.0)
    assert one(compiled, "k_add_rp_f32", f32(1.0), f32(2 ** -24)) == f32(1.0) + 1
    # x*x - x*x rounded once: fma keeps the product's low bits
    x = 1 + 2 ** -12
    p = float(np.float32(x) * np.float32(x))
    assert one(compiled, "k_fma_rn_f32", f32(x), f32(x), f32(-p)) == f32(2 ** -24)
    assert one(compiled, "k_sub_rm_f32", f32(1.5), f32(1.5)) == 0x80000000      # exact zero in .rm is -0


def test_subnormals_with_and_without_ftz(compiled):
    tiny = 1                                                                      # smallest subnormal
    assert one(compiled, "k_add_rn_f32", tiny, tiny) == 2
    assert one(compiled, "k_add_rn_ftz_f32", tiny, tiny) == 0
    assert one(compiled, "k_mul_rn_ftz_f32", f32(2.0 ** -100), f32(2.0 ** -30)) == 0
    assert one(compiled, "k_mul_rn_f32", f32(2.0 ** -100), f32(2.0 ** -30)) == f32(2.0 ** -130)


def f64(x):
    return R.f64_bits(x)


def test_what_an_h100_gives_where_the_isa_is_open_or_differs(compiled):
    """A few of the hardware's answers that test_gpu_semantics_replay holds the simulator to."""
    assert one(compiled, "k_rem_u32", 7, 0) == 0xFFFFFFFF                       # like the quotient
    assert one(compiled, "k_rem_s64", 7, 0) == (1 << 64) - 1
    assert one(compiled, "k_abs_f32", 0xFFC00000) == 0x7FFFFFFF                 # f32 NaNs: canonical
    assert one(compiled, "k_neg_f16", 0x7E00) == 0x7FFF
    assert one(compiled, "k_add_rn_f64", 0x7FF4000000000000, f64(1.0)) == 0x7FFC000000000000  # payload, quieted
    assert one(compiled, "k_add_rn_f64", 0xFFF8000000000000, 0x7FFFFFFFFFFFFFFF) == 0x7FFFFFFFFFFFFFFF  # b's
    assert one(compiled, "k_div_rz_f64", 0xFFF8000000000000, 0x7FFFFFFFFFFFFFFF) == 0xFFF8000000000000  # a's
    assert one(compiled, "k_mul_rn_f64", 0, 0x7FF0000000000000) == 0xFFF8000000000000      # 0 * inf
    assert one(compiled, "k_neg_f64", 0x7FF4000000000000) == 0x7FFC000000000000             # sign kept
    assert one(compiled, "k_add_rn_sat_f32", 0x80000000, 0x80000000) == 0                    # -0 -> +0
    assert one(compiled, "k_cvt_rn_f32_f64", 0xFFF4000000000000) == 0xFFE00000              # top payload bits
    assert one(compiled, "k_cvt_f32_bf16", 0x7F81) == 0x7F810000                             # a plain shift
    assert one(compiled, "k_cvt_f32_f16", 0x7C01) == 0x7FFFFFFF
    assert one(compiled, "k_testp_normal_f32", 0) == 1                          # the ISA: not normal
    assert one(compiled, "k_bfe_u64", (1 << 64) - 1, 8, 0x100) == (1 << 56) - 1   # ISA: len 0 -> 0
    assert one(compiled, "k_bfe_u32", 0xFFFFFFFF, 8, 0x100) == 0                # 32-bit: as the ISA


def test_every_simulated_opcode_is_in_the_catalog(compiled):
    """Coverage: each ALU opcode and each non-ALU builder is exercised by some kernel here."""
    seen = set()
    for mod in compiled.values():
        for kernel in mod.parsed.kernels.values():
            seen |= {ins.opcode for ins in kernel.instructions}
    missing_alu = set(alu.OPS) - seen
    assert not missing_alu, f"ALU opcodes without a semantics test: {sorted(missing_alu)}"
    untested = {"trap": "ends the simulation with an error (tests/test_core)",
                "ldu": "deprecated; NVRTC does not emit it",
                "call": "printf/assert (tests of calls.py)",
                "barrier": "NVRTC 12.9 spells __syncthreads bar.sync",
                "exit": "NVRTC ends kernels with ret",
                # Hopper's data movement: tests/sim/test_hopper_units.py (each instruction against the H100's
                # answers), test_hopper_gpu_answers.py and test_hopper_sim.py (whole kernels)
                "cp": "cp.async, bulk and TMA copies (test_hopper_*)",
                "mbarrier": "mbarrier.init/arrive/expect_tx/try_wait (test_hopper_*)",
                "ldmatrix": "test_hopper_gpu_answers.py", "stmatrix": "test_hopper_gpu_answers.py",
                "movmatrix": "test_hopper_gpu_answers.py"}
    simulated = {op for op, builder in BUILDERS.items() if builder is not no_effect}   # fences etc. do nothing
    missing = simulated - seen - set(untested)
    assert not missing, f"instructions without a semantics test: {sorted(missing)}"


def _near_tie_triples(rng, n=600):
    """a*b exactly on (or next to) a rounding boundary of f64, nudged by a tiny c."""
    rows = []
    for _ in range(n):
        ka, kb = int(rng.integers(1, 1 << 30)), int(rng.integers(1, 1 << 24))
        a = float(ka | 1) * 2.0 ** -int(rng.integers(0, 29))
        b = float(kb | 1) * 2.0 ** -int(rng.integers(0, 23))
        p = a * b                                        # rounded: the exact product is nearby
        c = float(rng.choice([0.0, 1.0, -1.0])) * 2.0 ** (np.floor(np.log2(abs(p))) - int(rng.integers(53, 120)))
        c = c if rng.random() < 0.7 else -float(np.float64(p)) * float(rng.choice([1.0, 0.5]))
        if rng.random() < 0.5:
            a = -a
        rows.append([R.f64_bits(x) for x in (a, b, c)])
    return [list(col) for col in zip(*rows)]


@pytest.mark.parametrize("mode", ["rn", "rz", "rm", "rp"])
def test_f64_fma_next_to_rounding_boundaries(compiled, mode):
    """The fast error-free path of f64 fma hands these to the exact one; both must be right."""
    case = C.by_name()[f"k_fma_{mode}_f64"]
    cols = _near_tie_triples(np.random.default_rng(3))
    n = len(cols[0])
    out = np.zeros(n, np.float64)
    compiled[MODULE_OF[case.name]].get_function(case.name).simulate(
        ((n + 255) // 256, 1, 1), (256, 1, 1), (out, *case.arrays(cols), np.int32(n)))
    got = [int(x) for x in out.view(np.uint64)]
    bad = [i for i in range(n) if not R.matches(case.ref(*(c[i] for c in cols)), got[i], "f64")]
    assert not bad, f"{len(bad)} wrong, e.g. ({_show(cols, bad[0])}) -> {got[bad[0]]:#x}"

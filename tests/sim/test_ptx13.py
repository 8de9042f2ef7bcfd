"""CUDA 13 PTX (nvcc 13 -ptx, as NVRTC 13 on the GPU machine emits it) simulates like NVRTC 12.9's.

Fixtures in tests/sim/ptx13/ were made by ``python tests/sim/test_ptx13.py --regenerate`` with
``nvcc -ptx -arch=sm_90 -lineinfo -std=c++17``: every course kernel in kernels/ (the
instances in INSTANCES; their sources are copied to tests/sim/ptx13/src so that later edits of
kernels/ do not make the two sides differ), a subset of the instruction-semantics catalog and
the warp/atomic/vector kernels. Each test compiles the fixture's source with CuPy's NVRTC 12.9
and loads the CUDA 13 PTX with ``RawModule.from_ptx``, runs both on identical inputs and
requires identical outputs, metrics (totals and per source line) and races. Both sides count the
PTX: PTX text has no machine code, and ``COURSE_LIB_SASS=0`` keeps the 12.9 side on CuPy's NVRTC
(by default the simulator compiles with NVRTC 13 and counts ptxas's fused accesses, which differ
from the PTX's where ptxas merges or fuses loads, e.g. mov_pack's repeated a[i]).

What differs between the two generations (seen in these fixtures): ``.version 9.0``,
``.visible .entry`` instead of ``.weak .entry`` for template instances, shared memory
addressed through 32-bit registers (``mov.u32 %r, smem; st.shared.f32 [%r]``) and shared
offsets computed with ``shl.b32``/``add.s32`` instead of ``mul.wide``/``add.s64``.
"""
import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

HERE = Path(__file__).resolve().parent
FIX = HERE / "ptx13"
SRC = FIX / "src"
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT))

import course_lib as cl  # noqa: E402
from course_lib import transposes  # noqa: E402

# course kernels: (key, dtype) instances to check; float32 everywhere, other sizes where they matter
INSTANCES = [(k, "float32") for k in ("copy", "copy_shared", "per_row", "naive_row", "naive_col", "tile",
                                      "padded", "rect", "swizzle", "padded_32x8", "unrolled", "vec",
                                      "vec64", "fast", "aos", "warp", "warp_pipe")] + [
    ("packed", "uint8"), ("packed", "uint16"), ("vec", "float64"),
    ("tile", "float64"), ("swizzle", "uint16"), ("warp", "uint8"),
    ("sector", "float32"), ("sector", "float64"), ("sector", "uint16"), ("sector", "uint8")]
SEMANTICS = ["k_div_s32", "k_rem_s64", "k_mul_hi_u64", "k_mad_wide_s32", "k_mul24_hi_s32", "k_shr_s32",
             "k_shl_b64", "k_bfe_s32", "k_bfi_b64", "k_prmt_b32_ecl", "k_shf_l_clamp_b32", "k_lop3_96",
             "k_popc_b64", "k_clz_b32", "k_brev_b32", "k_setp_pq", "k_selp_f64", "k_slct_f32_f32",
             "k_add_rz_f32", "k_fma_rm_f64", "k_div_rn_f64", "k_sqrt_rp_f32", "k_rcp_rn_f64", "k_min_NaN_f32",
             "k_max_f16", "k_add_f16x2", "k_fma_rn_bf16", "k_cvt_rni_s32_f32", "k_cvt_rzi_s64_f64",
             "k_cvt_rn_f16_f32", "k_cvt_rz_bf16_f32", "k_cvt_sat_u8_s32", "k_cvt_s64_s8", "k_cvt_rn_f32_u64",
             "k_cvt_rn_f16x2_f32", "k_testp_subnormal_f32", "k_copysign_f64", "k_ex2_approx_f32"]
SHAPES = [(33, 70), (64, 96), (1, 45)]
MISC_SRC = r'''
extern "C" __global__ void misc(float* out, const float* in, int n)
{
    float local[8];                                   // indexed at run time: a .local depot
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    for (int j = 0; j < 8; ++j) local[j] = in[(i + j * 3) % n];
    int idx = (int)in[i] & 7;
    if (i < 2) printf("thread %d value %f idx %d\n", i, local[idx], idx);   // a call sequence
    __shared__ int counter;
    if (threadIdx.x == 0) counter = 0;
    __syncthreads();
    atomicAdd(&counter, 1);
    __syncthreads();
    out[i] = local[idx] + counter;
}
'''


def manifest():
    path = FIX / "manifest.json"
    return json.loads(path.read_text()) if path.exists() else {"kernels": []}


def _nvcc_ptx(cu: Path, include: Path) -> str:
    cmd = ["nvcc", "-ptx", "-arch=sm_90", "-lineinfo", "-std=c++17", f"-I{include}", "-o", "-", str(cu)]
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout


def _strip_header(ptx: str) -> str:
    """Drop the compiler banner and make .file paths relative (fixtures must not name this machine)."""
    ptx = re.sub(r"^//.*\n", "", ptx, flags=re.M)
    return re.sub(r'(\.file\s+\d+\s+")[^"]*/([^"/]+")', r"\1\2", ptx)


def regenerate():
    """Write tests/sim/ptx13/: CUDA 13 PTX of the course kernels and of the semantics subset."""
    import ptx_cases as C
    import ptx_warp_cases as W
    FIX.mkdir(exist_ok=True)
    version = subprocess.run(["nvcc", "--version"], capture_output=True, text=True).stdout.strip().splitlines()[-1]
    entries, by_file = [], {}
    for key, dt in INSTANCES:
        t = transposes.kernel(key, np.dtype(dt))
        mangled = transposes.module_for(t.spec.file, t.name).compile()._compiled.lowered_names[t.name]
        by_file.setdefault(t.spec.file, []).append(t.name)
        entries.append(dict(key=key, dtype=dt, expr=t.name, entry=mangled, file=t.spec.file))
    kernels_dir = ROOT / "kernels"
    SRC.mkdir(exist_ok=True)
    for f in list(kernels_dir.glob("*.cuh")) + [kernels_dir / f for f in by_file]:
        (SRC / f.name).write_text(f.read_text())
    for file, names in by_file.items():
        wrap = FIX / "_wrap.cu"
        lines = [f'#include "{file}"'] + [
            f"template __global__ void {n}({_ctype(n)}*, const {_ctype(n)}*, int, int);" for n in sorted(set(names))]
        wrap.write_text("\n".join(lines) + "\n")
        (FIX / file.replace(".cu", ".ptx")).write_text(_strip_header(_nvcc_ptx(wrap, SRC)))
        wrap.unlink()
    cases = C.by_name()
    sem_src = "\n".join(cases[n].kernel() for n in SEMANTICS)
    (FIX / "semantics.cu").write_text(sem_src)
    warp_src = "\n".join(dict.fromkeys(sp.source for sp in W.SPECIALS))
    (FIX / "warp.cu").write_text(warp_src)
    (FIX / "misc.cu").write_text(MISC_SRC)
    for name in ("semantics", "warp", "misc"):
        (FIX / f"{name}.ptx").write_text(_strip_header(_nvcc_ptx(FIX / f"{name}.cu", FIX)))
    (FIX / "manifest.json").write_text(json.dumps(dict(nvcc=version, kernels=entries), indent=1) + "\n")


def _ctype(expr):
    return expr.split("<", 1)[1].split(",")[0].split(">")[0].strip()


# ----------------------------------------------------------------------------- tests

def _pair_runs(f12, f13, grid, block, make_args):
    a12, a13 = make_args(), make_args()
    r12 = f12.simulate(grid, block, tuple(a12), echo=False)
    r13 = f13.simulate(grid, block, tuple(a13), echo=False)
    return a12, a13, r12, r13


def _assert_same(a12, a13, r12, r13, what):
    for i, (x, y) in enumerate(zip(a12, a13)):
        if isinstance(x, np.ndarray):
            assert x.tobytes() == y.tobytes(), f"{what}: argument {i} differs between the two PTX generations"
    assert r12.metrics == r13.metrics, f"{what}: metrics differ\n12.9: {r12.metrics}\n13: {r13.metrics}"
    assert r12.by_line == r13.by_line, f"{what}: per-line metrics differ"
    assert [(r.kind, r.lines) for r in r12.races] == [(r.kind, r.lines) for r in r13.races], what


@pytest.fixture(autouse=True, scope="module")
def _ptx_counts_on_both_sides():
    mp = pytest.MonkeyPatch()
    mp.setenv("COURSE_LIB_SASS", "0")
    yield
    mp.undo()


@pytest.mark.slow          # every course kernel compiled again by NVRTC 13 (test_kernels runs them on the default one)
@pytest.mark.parametrize("entry", manifest()["kernels"], ids=lambda e: f"{e['key']}-{e['dtype']}")
def test_course_kernel_cuda13_ptx(entry):
    """Launch geometry from the course's registry; code from the fixture's copy of the source."""
    t = transposes.kernel(entry["key"], np.dtype(entry["dtype"]))
    if t.name != entry["expr"]:
        pytest.skip(f"kernels/ now instantiates {t.name}: run python tests/sim/test_ptx13.py --regenerate")
    source = (SRC / entry["file"]).read_text()
    m12 = cl.RawModule(code=source, options=("-std=c++17", f"--include-path={SRC}"),
                       name_expressions=(entry["expr"],), filename=entry["file"])
    ptx13 = (FIX / entry["file"].replace(".cu", ".ptx")).read_text()
    f13 = cl.RawModule.from_ptx(ptx13, code=source, filename=entry["file"]).get_function(entry["entry"])
    for rows, cols in SHAPES:
        inp = transposes.random_matrix(rows, cols, t.dtype)
        grid, block = t.config(rows, cols)

        def make():
            return list(t.args(transposes.poisoned(t.out_shape(rows, cols), t.dtype), inp))
        a12, a13, r12, r13 = _pair_runs(m12.get_function(entry["expr"]), f13, grid, block, make)
        _assert_same(a12, a13, r12, r13, f"{t.name} {rows}x{cols}")
        expect = inp if t.is_copy else inp.T
        assert a13[0].tobytes() == np.ascontiguousarray(expect).tobytes(), f"{t.name} {rows}x{cols}: wrong result"


@pytest.fixture(scope="module")
def semantics_modules():
    src, ptx = (FIX / "semantics.cu").read_text(), (FIX / "semantics.ptx").read_text()
    wsrc, wptx = (FIX / "warp.cu").read_text(), (FIX / "warp.ptx").read_text()
    return (cl.RawModule(code=src, options=("-std=c++17",), filename="semantics.cu"),
            cl.RawModule.from_ptx(ptx, code=src, filename="semantics.cu"),
            cl.RawModule(code=wsrc, options=("-std=c++17",), filename="warp.cu"),
            cl.RawModule.from_ptx(wptx, code=wsrc, filename="warp.cu"))


@pytest.mark.parametrize("name", SEMANTICS)
def test_semantics_kernel_cuda13_ptx(semantics_modules, name):
    import ptx_cases as C
    case = C.by_name()[name]
    cols = case.inputs(np.random.default_rng(5))
    n = len(cols[0])

    def make():
        return [np.zeros(n, C.NP_TYPE[case.out]), *case.arrays(cols), np.int32(n)]
    m12, m13 = semantics_modules[:2]
    a12, a13, r12, r13 = _pair_runs(m12.get_function(name), m13.get_function(name),
                                    ((n + 127) // 128, 1, 1), (128, 1, 1), make)
    _assert_same(a12, a13, r12, r13, name)


def _specials():
    import ptx_warp_cases as W
    return W.SPECIALS


@pytest.mark.parametrize("sp", _specials(), ids=lambda s: s.name)
def test_warp_kernel_cuda13_ptx(semantics_modules, sp):
    m12, m13 = semantics_modules[2:]
    make = lambda: sp.make_args(np.random.default_rng(11))
    a12, a13, r12, r13 = _pair_runs(m12.get_function(sp.name), m13.get_function(sp.name), sp.grid, sp.block, make)
    _assert_same(a12, a13, r12, r13, sp.name)
    assert not sp.check(a13), sp.name


def test_printf_local_depot_and_shared_atomics_cuda13_ptx():
    src = (FIX / "misc.cu").read_text()
    m12 = cl.RawModule(code=src, options=("-std=c++17",), filename="misc.cu")
    m13 = cl.RawModule.from_ptx((FIX / "misc.ptx").read_text(), code=src, filename="misc.cu")
    inp = (np.arange(64) % 11).astype(np.float32)
    make = lambda: [np.zeros(64, np.float32), inp, np.int32(64)]
    a12, a13, r12, r13 = _pair_runs(m12.get_function("misc"), m13.get_function("misc"), (2, 1, 1), (32, 1, 1), make)
    _assert_same(a12, a13, r12, r13, "misc")
    assert r12.output == r13.output == "thread 0 value 0.000000 idx 0\nthread 1 value 4.000000 idx 1\n"


def test_fixtures_are_cuda13_ptx():
    for ptx in FIX.glob("*.ptx"):
        text = ptx.read_text()
        assert re.search(r"^\.version 9\.\d", text, re.M), f"{ptx.name} is not PTX ISA 9.x (CUDA 13)"
        assert ".target sm_90" in text


if __name__ == "__main__":
    if "--regenerate" in sys.argv:
        sys.path.insert(0, str(HERE))
        regenerate()
        print("wrote", sorted(p.name for p in FIX.iterdir()))

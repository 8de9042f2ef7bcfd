"""Machine-code-aware metrics: the SASS parser, the matcher (which PTX accesses ptxas fused),
the counts that follow, the source view, and what happens without NVRTC 13 or nvdisasm.

Fixtures in tests/compile/sass/ (``python tests/compile/test_sass.py --regenerate`` with NVRTC 13 and nvdisasm
installed): fused.cu, the PTX NVRTC 13.0 made of it for sm_90 (fused.ptx), nvdisasm -c -gp's
listing of the CUBIN (fused.sass) and the template instances' mangled names (manifest.json).
Parser and matcher tests read only these files, so they check the logic whatever toolchain is
installed; the tests that compile need NVRTC 13 and nvdisasm and skip (saying why) without them.

Expected counts. Measured on an H100 (issue 10, ncu): struct_read<4> over 1000 structs, 125
shared-load wavefronts and 0 conflicts (the PTX alone: 500 / 372). Derived with
shared/docs/memory-rules.md for the SASS that NVRTC 13.0 emits (one warp = 32 structs; 31 full
warps and one of 8 lanes), to be confirmed by benchmarks/ncu_compare.py's fused cases on the GPU:
- I = 6, three LDS.64 at lane*24 + 0/8/16: a half-warp's 16 lanes x 2 words hit 32 banks, so
  2 wavefronts per full warp, 1 for the 8-lane warp: 3 x 63 = 189, 0 conflicts (PTX 378 / 186);
- I = 64, sixteen LDS.128 at lane*256 + 16c: a quarter-warp's 8 lanes share 4 banks, 8
  wavefronts per phase, 32 per full warp, 8 for the 8-lane warp: 16 x 1000 = 16000, and
  16 x (1000 - 125) = 14000 conflicts (PTX 64000 / 61952);
- row_read<unsigned short, 34> (4 warps): 15 LDS + 2 LDS.U16 per warp, each conflict-free at a
  pitch of 17 words: 4 x 17 = 68 wavefronts (PTX 128), as ncu's 1088 = 64 x 17 for the warp
  kernel's 2-byte rows before its volatile reads (kernels/warp_tile.cu).
"""
import json
import re
import sys
from pathlib import Path

import numpy as np
import pytest

HERE = Path(__file__).resolve().parent
FIX = HERE / "sass"
sys.path.insert(0, str(HERE.parents[1]))

import course_lib as cl  # noqa: E402
from course_lib.compile import nvrtc, nvrtc_lib as nvrtc13, ptx, sass
from course_lib.errors import Unavailable  # noqa: E402
from course_lib.sim import fusion  # noqa: E402
from course_lib.sim.results.metrics import METRIC_NAMES  # noqa: E402

INSTANCES = ["struct_read<4>", "struct_read<6>", "struct_read<64>", "struct_write<4>", "struct_sum<6>",
             "struct_copy<4>", "row_read<unsigned short, 34>"]
PLAIN = {"load_twice": "_Z10load_twicePfPKfi", "strided_pair": "_Z12strided_pairPfPKfi",
         "sign_of": "_Z7sign_ofPdPKdS1_i"}
SLD_WF, SLD_CF = METRIC_NAMES[("shared", "ld", "wavefronts")], METRIC_NAMES[("shared", "ld", "conflicts")]
SST_WF, SST_CF = METRIC_NAMES[("shared", "st", "wavefronts")], METRIC_NAMES[("shared", "st", "conflicts")]
GLD_REQ = METRIC_NAMES[("global", "ld", "requests")]
MISSING = nvrtc.machine_code_missing()
needs_machine_code = pytest.mark.skipif(bool(MISSING), reason=f"no machine code here: {MISSING}")


def regenerate():
    source = (FIX / "fused.cu").read_text()
    out = nvrtc13.load(13).compile(source, "fused.cu", ["-lineinfo", "--gpu-architecture=sm_90", "-std=c++17"], INSTANCES,
                                   want_cubin=True)
    # NVRTC names the file with the working directory: keep only its name (lines stay put)
    (FIX / "fused.ptx").write_text(re.sub(r'(\.file\s+\d+\s+")[^"]*?([^/"\\]+")', r"\1\2", out.ptx))
    (FIX / "fused.sass").write_text(sass.disassemble(out.cubin))
    entries = dict(out.lowered_names, **PLAIN)
    (FIX / "manifest.json").write_text(json.dumps({"nvrtc": list(nvrtc13.load(13).version), "entries": entries}, indent=1) + "\n")


@pytest.fixture(scope="module")
def fixture():
    manifest = json.loads((FIX / "manifest.json").read_text())
    module = ptx.parse((FIX / "fused.ptx").read_text(), "fused.cu")
    return manifest["entries"], module, sass.parse((FIX / "fused.sass").read_text())


def _plan(fixture, name):
    entries, module, code = fixture
    return fusion.plan(module.kernels[entries[name]], code[entries[name]]), module.kernels[entries[name]]


def _groups(plan, kernel):
    """Fused or merged groups as (SASS opcode, width, [(PTX address base, offset)])."""
    out = []
    for g in plan.fused_groups:
        addrs = []
        for m in g.members:
            ins = kernel.instructions[m]
            op = ins.operands[0] if ins.opcode == "st" else ins.operands[1]
            addrs.append(op.value)
        out.append((g.sass[0].opcode, g.width, sorted(addrs)))
    return sorted(out, key=lambda g: (g[0], g[2]))


# ----------------------------------------------------------------------------- the parser

def test_parser_reads_loads_and_stores(fixture):
    entries, module, code = fixture
    assert set(entries.values()) <= set(code)
    k = code[entries["struct_copy<4>"]]
    lds = [s for s in k if s.access and s.access.space == "shared" and s.access.op == "ld"]
    assert [s.access.width for s in lds] == [4, 16]
    assert lds[1].opcode == "LDS.128" and lds[1].access.offset == 0
    text = (FIX / "fused.ptx").read_text().splitlines()
    for s in lds:    # -gp names the PTX line of a shared load
        assert "ld.shared.f32" in text[s.ptx_line - 1], (s.text, text[s.ptx_line - 1])
    stores = [s for s in code[entries["struct_write<4>"]] if s.access and s.access.op == "st"]
    assert {(s.access.space, s.access.width) for s in stores} >= {("shared", 16), ("global", 4)}
    rows = [s.access.width for s in code[entries["row_read<unsigned short, 34>"]] if s.access and s.access.space == "shared"]
    assert rows.count(2) == 32 + 2 and rows.count(4) == 15     # 32 STS.U16, 2 LDS.U16, 15 LDS


@pytest.mark.parametrize("text, expect", [
    ("LDS.128 R4, [R22]", ("shared", "ld", 16, "R22", 0, "")),
    ("@!P0 STS [R13+-0x200], R14", ("shared", "st", 4, "R13", -512, "")),
    ("STS.U8 [R0+UR4+0x22], R9", ("shared", "st", 1, "R0+UR4", 34, "")),
    ("LDS.S16 R3, [R2+0x6]", ("shared", "ld", 2, "R2", 6, "")),
    ("LDG.E.64 R2, desc[UR4][R2.64+0x10]", ("global", "ld", 8, "R2.64", 16, "")),
    ("LDG.E.CONSTANT R2, desc[UR4][R2.64]", ("global", "ld", 4, "R2.64", 0, "CONSTANT")),
    ("@P1 STG.E.U16 desc[UR4][R4.64+0x2], R2", ("global", "st", 2, "R4.64", 2, "")),
    ("LDG.E.128.STRONG.GPU R4, desc[UR6][R8.64]", ("global", "ld", 16, "R8.64", 0, "")),
    ("LD.E.64 R4, desc[UR4][R2.64]", ("generic", "ld", 8, "R2.64", 0, "")),
    ("ST.E.U8 desc[UR4][R2.64+0x1], R5", ("generic", "st", 1, "R2.64", 1, "")),
    ("LDL R5, [R1+0x4]", ("local", "ld", 4, "R1", 4, "")),
    ("LDS R2, [0x100]", ("shared", "ld", 4, "", 256, "")),
])
def test_access_of_a_memory_instruction(text, expect):
    a = sass.access_of(text)
    assert (a.space, a.op, a.width, a.base, a.offset, a.cached) == expect


@pytest.mark.parametrize("text", ["LDC R1, c[0x0][0x28]", "ULDC.64 UR4, c[0x0][0x208]", "ATOMS.ADD R2, [R3], R4",
                                  "RED.E.ADD.STRONG.GPU desc[UR4][R2.64], R5", "LDSM.16.M88.4 R4, [R2]",
                                  "LDGSTS.E [R2], desc[UR4][R4.64]", "BAR.SYNC.DEFER_BLOCKING 0x0", "EXIT"])
def test_other_instructions_are_not_accesses(text):
    assert sass.access_of(text) is None


# ----------------------------------------------------------------------------- the matcher

def test_struct_read_4_is_one_lds128(fixture):
    plan, k = _plan(fixture, "struct_read<4>")
    assert not plan.problems
    assert _groups(plan, k) == [("LDS.128", 16, [0, 4, 8, 12])]


def test_struct_read_6_is_three_lds64(fixture):
    plan, k = _plan(fixture, "struct_read<6>")
    assert _groups(plan, k) == [("LDS.64", 8, [0, 4]), ("LDS.64", 8, [8, 12]), ("LDS.64", 8, [16, 20])]


def test_struct_read_64_is_sixteen_lds128(fixture):
    plan, k = _plan(fixture, "struct_read<64>")
    assert _groups(plan, k) == [("LDS.128", 16, [o, o + 4, o + 8, o + 12]) for o in range(0, 256, 16)]


def test_fused_stores(fixture):
    plan, k = _plan(fixture, "struct_write<4>")
    assert _groups(plan, k) == [("STS.128", 16, [0, 4, 8, 12])]


def test_field_zero_through_its_own_register_stays_apart(fixture):
    # the example: LDS [R6]; LDS [R7+0x4]; LDS.64 [R7+0x8]; LDS.64 [R7+0x10]
    plan, k = _plan(fixture, "struct_sum<6>")
    assert _groups(plan, k) == [("LDS.64", 8, [8, 12]), ("LDS.64", 8, [16, 20])]
    plain = [g for g in plan.groups if not g.fused and g.sass[0].access.space == "shared" and g.sass[0].access.op == "ld"]
    assert sorted(g.width for g in plain) == [4, 4]


def test_overfetch_window_starts_below_the_first_member(fixture):
    # LDS.128 [R9] carries the loads at +4, +8, +12: ptxas reads 16 bytes from +0
    plan, k = _plan(fixture, "struct_copy<4>")
    assert _groups(plan, k) == [("LDS.128", 16, [4, 8, 12])]
    g = plan.fused_groups[0]
    assert plan.widths[g.leader] == 16 and all(plan.widths[m] == 0 for m in g.members if m != g.leader)


def test_two_byte_row_is_fifteen_words_and_two_halves(fixture):
    plan, k = _plan(fixture, "row_read<unsigned short, 34>")
    assert _groups(plan, k) == [("LDS", 4, [o, o + 2]) for o in range(4, 64, 4)]


def test_a_load_repeated_on_two_lines_is_loaded_once(fixture):
    plan, k = _plan(fixture, "load_twice")
    [g] = plan.fused_groups
    assert g.width == 4 and len({k.instructions[m].line for m in g.members}) == 2


def test_a_narrowed_load_counts_the_bytes_it_reads(fixture):
    plan, k = _plan(fixture, "sign_of")
    assert not plan.problems
    [narrow] = [g for g in plan.groups if g.width < 8 and g.sass[0].access.space == "global"]
    assert narrow.width == 4 and narrow.shift == 4 and plan.shifts[narrow.leader] == 4
    fn = _from_fixture(fixture, "sign_of")
    rng = np.random.default_rng(8)
    a, b = rng.random(100) + 1, rng.random(100) - 0.5
    out = np.full(100, np.nan)
    run = fn.simulate((1,), (128,), (out, a, b, np.int32(100)), echo=False)
    assert out.tobytes() == np.copysign(a, b).tobytes()
    [traced] = [t for t in run.accesses if t["pc"] == narrow.leader]
    lanes = traced["addresses"][traced["addresses"] >= 0]
    assert traced["width"] == 4 and (lanes % 8 == 4).all()        # the high word of each double


def test_runtime_stride_is_not_fused(fixture):
    plan, _ = _plan(fixture, "strided_pair")
    assert not plan.fused_groups and not plan.problems


def test_every_fusion_is_among_the_candidates(fixture):
    """Kernels where no two accesses could share an instruction skip nvdisasm: never one that fuses."""
    entries, module, code = fixture
    for name, entry in entries.items():
        plan = fusion.plan(module.kernels[entry], code[entry])
        assert fusion.could_fuse(module.kernels[entry]) or not plan.fused_groups, name


def test_unmatched_machine_code_keeps_the_ptx_counts_and_says_where(fixture):
    entries, module, code = fixture
    k = module.kernels[entries["struct_read<4>"]]
    lds = next(s for s in code[entries["struct_read<4>"]] if s.opcode == "LDS.128")
    bar = next(i for i in k.instructions if i.opcode == "bar")
    moved = [s if s is not lds else sass.Instruction(s.address, s.text, s.opcode, bar.ptx_line, s.access)
             for s in code[entries["struct_read<4>"]]]
    plan = fusion.plan(k, moved)
    assert not plan.fused_groups
    assert any("LDS.128" in p.message for p in plan.problems)
    orphans = [p for p in plan.problems if "no machine instruction carries" in p.message]
    assert len(orphans) == 4 and {p.line for p in orphans} == {21}
    assert all(plan.widths.get(p.pc) is None for p in orphans)       # counted as the PTX has them


# ----------------------------------------------------------------------------- counting

def _from_fixture(fixture, name):
    """A Function of the fixture's PTX whose machine code is the fixture's SASS."""
    entries, module, code = fixture
    fn = cl.RawModule.from_ptx((FIX / "fused.ptx").read_text(), code=(FIX / "fused.cu").read_text(),
                               filename="fused.cu").get_function(entries[name])
    fn._machine_plan = fusion.plan(fn.kernel, code[entries[name]])   # what sim.machine_plan caches
    return fn


def _structs(fn, I, read=True, rows=1000):
    rng = np.random.default_rng(3)
    aos = rng.random((rows, I)).astype(np.float32) + 1
    inp = aos if read else np.ascontiguousarray(aos.T)
    out = np.full(inp.T.shape, np.nan, np.float32)
    run = fn.simulate((1, -(-rows // 128)), (32, 4), (out, inp, np.int32(rows)), echo=False)
    assert out.tobytes() == np.ascontiguousarray(inp.T).tobytes()
    return run


@pytest.mark.parametrize("I, wavefronts, conflicts", [(4, 125, 0), (6, 189, 0), (64, 16000, 14000)])
def test_struct_read_counts_from_the_fixture(fixture, I, wavefronts, conflicts):
    run = _structs(_from_fixture(fixture, f"struct_read<{I}>"), I)
    assert (run.metrics[SLD_WF], run.metrics[SLD_CF]) == (wavefronts, conflicts)
    assert not [w for w in run.warnings if w.kind == "machine code"]


def test_fused_stores_count_once(fixture):
    run = _structs(_from_fixture(fixture, "struct_write<4>"), 4, read=False)
    assert (run.metrics[SST_WF], run.metrics[SST_CF]) == (125, 0)


def test_overfetch_counts_the_aligned_16_bytes(fixture):
    fn = _from_fixture(fixture, "struct_copy<4>")
    inp = np.random.default_rng(4).random(128).astype(np.float32) + 1
    out = np.full(128, np.nan, np.float32)
    run = fn.simulate((1,), (32,), (out, inp), echo=False)
    assert out.tobytes() == inp.reshape(32, 4).T.tobytes()
    # LDS at lane*16 (4-way: 4 wavefronts) + LDS.128 from lane*16 (4 quarter-warps, 1 each)
    assert (run.metrics[SLD_WF], run.metrics[SLD_CF]) == (8, 3)
    traced = [a for a in run.accesses if a["space"] == "shared" and a["op"] == "ld" and a["width"] == 16]
    assert traced and (traced[0]["addresses"][0] % 16 == 0).all()


def test_merged_load_counts_one_request(fixture):
    fn = _from_fixture(fixture, "load_twice")
    inp = np.random.default_rng(5).random(1000).astype(np.float32) + 1
    out = np.full(1000, np.nan, np.float32)
    run = fn.simulate((8,), (128,), (out, inp, np.int32(1000)), echo=False)
    assert out.tobytes() == (inp * inp).tobytes()
    assert run.metrics[GLD_REQ] == 32


# ----------------------------------------------------------------------------- compiling for real

@needs_machine_code
@pytest.mark.parametrize("I, sass_counts, ptx_counts", [(4, (125, 0), (500, 372)), (6, (189, 0), (378, 186)),
                                                         (64, (16000, 14000), (64000, 61952))])
def test_struct_read_compiled_here(I, sass_counts, ptx_counts, monkeypatch):
    source = (FIX / "fused.cu").read_text()
    run = _structs(cl.RawModule(code=source, options=("-std=c++17",), filename="fused.cu")
                   .get_function(f"struct_read<{I}>"), I)
    assert (run.metrics[SLD_WF], run.metrics[SLD_CF]) == sass_counts
    assert run.by_line[21][SLD_WF] == sass_counts[0]
    assert "LDS" in run.listing(view="sass")
    monkeypatch.setenv("COURSE_LIB_SASS", "0")          # CuPy's NVRTC 12.9, counted per PTX access
    run = _structs(cl.RawModule(code=source, options=("-std=c++17",), filename="fused.cu")
                   .get_function(f"struct_read<{I}>"), I)
    assert (run.metrics[SLD_WF], run.metrics[SLD_CF]) == ptx_counts
    assert any("follow the PTX" in str(w) and "COURSE_LIB_SASS=0" in str(w) for w in run.warnings)


@needs_machine_code
def test_course_kernel_has_no_machine_code_warning():
    t = cl.transposes.kernel("padded_32x8", np.float16)
    inp = cl.transposes.random_matrix(70, 33, t.dtype)
    out = cl.transposes.poisoned(t.out_shape(70, 33), t.dtype)
    grid, block = t.config(70, 33)
    run = t.function.simulate(grid, block, t.args(out, inp), echo=False)
    assert out.tobytes() == np.ascontiguousarray(inp.T).tobytes()
    assert run.machine is not None and not run.machine.note and not run.warnings


@needs_machine_code
def test_disassembly_is_cached_on_disk(tmp_path, monkeypatch):
    out = nvrtc13.load(13).compile((FIX / "fused.cu").read_text(), "fused.cu", ["--gpu-architecture=sm_90", "-lineinfo"],
                                   ["struct_read<4>"], want_cubin=True)
    text = sass.disassemble(out.cubin, tmp_path)
    assert list((tmp_path / "sass").glob("*.sass"))

    def refuse(*a, **k):
        raise AssertionError("nvdisasm ran again")
    monkeypatch.setattr(sass.subprocess, "run", refuse)
    assert sass.disassemble(out.cubin, tmp_path) == text


# ----------------------------------------------------------------------------- without machine code

def _fresh_struct_read(tag):
    """struct_read<4> from a source no earlier test compiled (the tag), so it compiles now."""
    source = (FIX / "fused.cu").read_text() + f"\n// {tag}\n"
    return _structs(cl.RawModule(code=source, options=("-std=c++17",), filename="fused.cu")
                    .get_function("struct_read<4>"), 4)


@pytest.mark.parametrize("missing", ["nvrtc13", "nvdisasm"])
def test_without_the_tools_metrics_follow_the_ptx_and_say_so(missing, monkeypatch):
    if missing == "nvrtc13":
        def unavailable(major):
            if major == 13:
                raise Unavailable("NVRTC 13 was not found: pip install 'nvidia-cuda-nvrtc==13.0.*'")
            return real_load(major)
        real_load = nvrtc13.load
        monkeypatch.setattr(nvrtc13, "load", unavailable)
    else:
        monkeypatch.delenv("COURSE_LIB_NVDISASM", raising=False)
        monkeypatch.setattr(sass, "nvdisasm_path", lambda: None)
    run = _fresh_struct_read(f"without {missing}")
    [w] = [w for w in run.warnings if w.kind == "machine code"]
    assert "follow the PTX" in str(w) and ("NVRTC 13" in str(w) if missing == "nvrtc13" else "nvdisasm" in str(w))
    assert "pip install" in str(w) and "follow the PTX" in run.summary()
    assert (run.metrics[SLD_WF], run.metrics[SLD_CF]) == (500, 372)       # four 4-way loads, as the PTX says
    assert "no machine code" in run.listing(view="sass")


@needs_machine_code
def test_with_the_tools_a_fresh_compile_counts_the_lds128():
    run = _fresh_struct_read("with the tools")
    assert (run.metrics[SLD_WF], run.metrics[SLD_CF]) == (125, 0)
    assert not run.warnings


def test_ptx_text_has_no_machine_code(fixture):
    entries = fixture[0]
    fn = cl.RawModule.from_ptx((FIX / "fused.ptx").read_text(), code=(FIX / "fused.cu").read_text(),
                               filename="fused.cu").get_function(entries["struct_read<4>"])
    run = _structs(fn, 4)
    assert (run.metrics[SLD_WF], run.metrics[SLD_CF]) == (500, 372)
    assert any("built from PTX text" in str(w) for w in run.warnings)


# ----------------------------------------------------------------------------- the source view

def test_listing_views(fixture):
    run = _structs(_from_fixture(fixture, "struct_read<4>"), 4)
    text = run.listing(view="sass")
    assert "LDS.128" in text and "fuses 4 PTX ld.shared.f32" in text and "125 wavefronts" in text
    assert str(run.listing(view="sass", memory_only=True)).count("\n") < text.count("\n")
    ptx_view = run.listing(view="ptx", lines=[21])
    assert ptx_view.count("fused into LDS.128") == 3 and "with 3 more" in ptx_view
    html = run.listing(view="sass")._repr_html_()
    assert html.startswith("<pre") and "LDS.128" in html and "background" in html
    plain = run.listing()
    assert isinstance(plain, str) and "// shared ld: 125 wavefronts" in plain
    with pytest.raises(cl.KernelError, match="not a view"):
        run.listing(view="cubin")


if __name__ == "__main__":
    if "--regenerate" in sys.argv:
        regenerate()

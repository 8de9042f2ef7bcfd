"""Every exercise: its solution file passes its checker, its stub (what notebooks/ holds) fails it
cleanly, and plausible wrong kernels — written as a student who half-understood would write them —
fail with a message that names the problem and a hint. The checker must judge every property on
every shape: kernels that are right on the first shape and wrong (racing, out of bounds, a barrier
some threads skip, uncoalesced) only on the others are here too. Simulator only; nothing timed."""
import re
import shutil

import numpy as np
import pytest

import course_lib as cl
from course_lib.teach import exercises as E
from course_lib.notebook import magic
from course_lib.compile import nvrtc
from course_lib.teach import mutants, solutions, spec, variants
from course_lib.teach.exercise_list import folder
from course_lib.lessons import aos
from course_lib.teach.properties import Shape

SOL = {key: solutions.body(key) for key in solutions.keys()}


def _kernel(source, name):
    return magic.compile_cell("", source)[1][name]


def _mutate(key, pairs):
    src = SOL[key]
    for old, new in zip(pairs[::2], pairs[1::2]):
        assert old in src, f"{key}: {old!r} is not in exercises/{key}/solution.cu"
        src = src.replace(old, new)
    return src


def _raw(key):
    """solution.cu's cell body with its parameters as names (what wrong.toml's replacements apply to)."""
    return solutions._cell(solutions.path(key).read_text())


def test_every_exercise_has_a_solution_file_and_every_file_an_exercise():
    assert set(SOL) == set(E.EXERCISES)
    assert {"00", "01", "02", "03", "04", "05", "06", "07", "08", "09", "10", "11", "12"} == {ex.lesson for ex in E.EXERCISES.values()}


@pytest.mark.slow
@pytest.mark.folder
@pytest.mark.parametrize("key", sorted(SOL))
def test_solution_passes(key):
    ex = E.get(key)
    report = E.check(ex, _kernel(SOL[key], ex.kernel))
    assert report.ok, repr(report)
    assert repr(report).startswith("✓") and "Well done" in repr(report) and f"correct on {len(ex.shapes)}" in repr(report)


@pytest.mark.parametrize("key", sorted(SOL))
def test_stub_compiles_and_fails_cleanly(key):
    ex = E.get(key)
    stub = solutions.stub(key)
    assert not E.has_solution(stub) and E.has_solution(SOL[key]) and "//>" not in stub
    report = E.check(ex, _kernel(stub, ex.kernel))
    assert not report.ok and "hint:" in repr(report) and all(what and hint for what, hint in report.problems)


# Each exercise's wrong kernels live in its folder: exercises/<key>/wrong.toml (instructor-only), replacements in
# solution.cu or whole cells, each with the words its report must hold (course_lib/teach/mutants.py: written).
# Nothing here names a line of an exercise, so an exercise edited in its folder is tested as it now is.
WRITTEN = [(key, m) for key in sorted(SOL) for m in mutants.written(folder(key), E.get(key), _raw(key))]


@pytest.mark.slow
@pytest.mark.folder
@pytest.mark.parametrize("key,m", WRITTEN, ids=[f"{k}: {m.what}" for k, m in WRITTEN])
def test_wrong_kernel_fails_with_a_helpful_message(key, m):
    ex = E.get(key)
    report = E.check(ex, _kernel(m.source, ex.kernel))
    text = repr(report)
    assert not report.ok and text.startswith("✗") and "hint:" in text and "Traceback" not in text
    assert not mutants.missing(m, text, report.problems), f"{m.what}: {mutants.missing(m, text, report.problems)} in\n{text}"


@pytest.mark.skipif(bool(nvrtc.machine_code_missing()), reason="the premise is about the machine code")
def test_aos_struct_stub_fails_for_conflicts_ptxas_cannot_remove():
    """Notebook 08's premise, on NVRTC 13.0's machine code for sm_90: ptxas turns the stub's 40 reads per
    lane into ten LDS.128, still 2-way (8 wavefronts each); Giles's mapping into 40 conflict-free LDS.
    (For I = 6, the exercise's old premise, three LDS.64 made the stub conflict-free.)"""
    ex = E.get("aos_struct")

    def per_warp(src):
        res = cl.Simulator().run(_kernel(src, ex.kernel), block=ex.block, tile=ex.tile, shape=(1024, 40))
        assert res.correct.ok, res.correct
        return aos.shared_code(res.sim, "ld"), aos.shared_code(res.sim, "st")
    assert per_warp(solutions.stub("aos_struct")) == (("10 × LDS.128", 80, 40), ("40 × STS", 40, 0))
    assert per_warp(SOL["aos_struct"]) == (("40 × LDS", 40, 0), ("40 × STS", 40, 0))


# Wrong kernels derived from each exercise's own solution and parameters (course_lib/teach/mutants.py): no
# tile size or type is written here, so an exercise edited in its folder is tested as it now is.
DERIVED = [(key, m) for key in sorted(SOL) for m in mutants.derive(E.get(key), lambda p, k=key: solutions.body(k, p))]


@pytest.mark.slow
@pytest.mark.folder
@pytest.mark.parametrize("key,m", DERIVED, ids=[f"{k}: {m.name}" for k, m in DERIVED])
def test_wrong_kernel_derived_from_the_exercise_fails(key, m):
    ex = E.EXERCISES[key]
    text = repr(E.check(ex, _kernel(m.source, ex.kernel)))
    assert text.startswith("✗") and "hint:" in text and not mutants.missing(m, text), f"{m.what}:\n{text}"


def test_every_exercise_gets_derived_wrong_kernels_and_every_mutation_fits_one():
    assert {k for k, _ in DERIVED} == set(SOL)
    assert {m.name for _, m in DERIVED} == {m.name for m in mutants.MUTATIONS}
    assert all(m.doc for m in mutants.MUTATIONS)


@pytest.mark.parametrize("key", sorted(SOL))
def test_the_mutations_a_folder_names_still_change_its_solution(key):
    """wrong.toml's `mutations`: a mutation that no longer applies (the construct it breaks was edited away)
    is an error naming the file, not a test that silently stopped testing."""
    derived = [m for k, m in DERIVED if k == key]
    assert mutants.stale(folder(key), derived) == []


def test_a_wrong_kernel_or_mutation_that_no_longer_changes_the_solution_is_an_error(tmp_path):
    copy = tmp_path / "tile_32x8"
    shutil.copytree(folder("tile_32x8"), copy)
    raw = solutions._cell((copy / "solution.cu").read_text())
    (copy / "wrong.toml").write_text('mutations = ["drop_barrier", "store_twice"]\n[[wrong]]\nwhat = "gone"\n'
                                     'replace = ["no such text", "x"]\nwords = ["x"]\n')
    with pytest.raises(spec.SpecError, match=r"wrong\[0\] \(gone\): 'no such text' is no longer in solution.cu"):
        mutants.written(copy, E.get("tile_32x8"), raw)
    (copy / "wrong.toml").write_text('[[wrong]]\nwhat = "same"\nreplace = ["__syncthreads();", "__syncthreads();"]\n'
                                     'words = ["x"]\n')
    with pytest.raises(spec.SpecError, match="leave the solution as it is"):
        mutants.written(copy, E.get("tile_32x8"), raw)
    (copy / "wrong.toml").write_text('mutations = ["drop_barrier", "store_twice", "no_such"]\n')
    derived = mutants.derive(E.get("tile_32x8"), lambda p: solutions.body("tile_32x8", p))
    stale = mutants.stale(copy, derived)
    assert any("'store_twice' no longer changes the solution" in x for x in stale)
    assert any("'no_such' is no mutation" in x for x in stale) and len(stale) == 2


def test_a_64x64_padded_tile_needs_only_its_folder(tmp_path):
    """An instructor makes padded_tile a 64x64 tile (64x16 threads, a loop) by editing exercises/padded_tile/
    alone, in a copy: it loads, its solution passes, its stub fails, every derived wrong kernel fails."""
    copy = tmp_path / "padded_tile"
    shutil.copytree(folder("padded_tile"), copy)
    toml = (copy / "exercise.toml").read_text()
    toml = toml.replace("TILE = 32", "TILE = 64\nBY = 16").replace('block = ["TILE", "TILE"]', 'block = ["TILE", "BY"]')
    (copy / "exercise.toml").write_text(toml)
    sol = (copy / "solution.cu").read_text()
    for old, new in (("    if (x < cols && y < rows)\n        tile[threadIdx.y][threadIdx.x] = in[(size_t)y * cols + x];",
                      "    for (int j = 0; j < TILE; j += BY)\n        if (x < cols && y + j < rows)\n"
                      "            tile[threadIdx.y + j][threadIdx.x] = in[(size_t)(y + j) * cols + x];"),
                     ("    if (x < rows && y < cols)\n        out[(size_t)y * rows + x] = tile[threadIdx.x][threadIdx.y];",
                      "    for (int j = 0; j < TILE; j += BY)\n        if (x < rows && y + j < cols)\n"
                      "            out[(size_t)(y + j) * rows + x] = tile[threadIdx.x][threadIdx.y + j];")):
        assert old in sol
        sol = sol.replace(old, new)
    (copy / "solution.cu").write_text(sol)
    ex = spec.load(copy)
    assert (ex.tile, ex.block) == ((64, 64), (64, 16)) and "64x64 tile" in repr(ex)
    body_of = lambda p: spec.render(solutions._cell(sol), p)       # noqa: E731
    assert E.check(ex, _kernel(body_of(dict(ex.params)), ex.kernel)).ok
    assert not E.check(ex, _kernel(E.strip_solutions(body_of(dict(ex.params))), ex.kernel)).ok
    wrong = mutants.derive(ex, body_of)
    assert {"drop_barrier", "no_padding", "swap_store_bounds", "loop_step_one"} <= {m.name for m in wrong}
    for m in wrong:
        text = repr(E.check(ex, _kernel(m.source, ex.kernel)))
        assert text.startswith("✗") and not mutants.missing(m, text), f"{m.what}:\n{text}"


def test_at_least_three_wrong_kernels_per_exercise_and_the_barrier_in_if_where_a_block_barrier_is():
    for key in E.EXERCISES:
        mine = [m for k, m in WRITTEN + DERIVED if k == key]
        assert len(mine) >= 3, (f"exercise {key!r} has {len(mine)} wrong kernels: add [[wrong]] tables to "
                                f"exercises/{key}/wrong.toml until it has three (docs/NOTEBOOK_API.md §7)")
        if "__syncthreads()" in SOL[key]:
            assert any(any("Barrier skipped" in w or "Deadlock" in w for w in m.words) for m in mine), (
                f"exercise {key!r} has a block barrier: exercises/{key}/wrong.toml needs a wrong kernel with the barrier "
                "inside a bounds test (words = [\"Barrier skipped|Deadlock\"])")


def test_a_kernel_right_on_the_first_shape_is_judged_on_every_shape():
    """Out of bounds only on 1xN: the old checker (properties on the first shape) saw nothing."""
    src = _mutate("shared_tile", ("if (x < cols && y < rows)\n        tile", "if (x < cols && (y < rows || rows == 1))\n        tile"))
    text = repr(E.check("shared_tile", _kernel(src, "transpose_tile")))
    assert "on a 1x4097 matrix the simulator stopped the kernel" in text and "Out of bounds" in text


def test_coalescing_allows_what_misaligned_rows_cost_and_no_more():
    on = Shape(1030, 1030, 4)
    assert not on.aligned("ld") and not on.aligned("st") and Shape(64, 64, 4).aligned("st")
    assert not Shape(1000, 1030, 4).aligned("ld") and Shape(1000, 1030, 4).aligned("st")   # 4000-byte rows of out
    assert Shape(1, 4097, 4).aligned("ld") and not Shape(1, 4097, 4).aligned("st")
    assert Shape(4097, 1, 4, copy=True).aligned("st") is False and Shape(64, 8, 4, copy=True).aligned("st")

    class Run:
        def __init__(self, sectors, width=4, requests=10):
            self.instructions = [dict(space="global", op="st", line=7, requests=requests, sectors=sectors,
                                      width=width, bytes=requests * 32 * width)]
    test = E.coalesced("st").test
    assert test(Run(40), Shape(64, 64, 4)) is None and "4 would be coalesced" in test(Run(50), Shape(64, 64, 4))
    assert test(Run(50), on) is None                          # one sector more per warp where rows straddle sectors
    assert "at most 6.0 here" in test(Run(80), on)            # stride 2: 8 per request is not coalesced anywhere
    assert test(Run(176, width=16), on) is None and "at most 24.0" in test(Run(320, width=16), on)


def test_report_names_the_other_shapes_where_a_property_fails():
    src = solutions.body("padded_tile", {**dict(E.EXERCISES["padded_tile"].params), "PAD": 0})   # not padded
    text = repr(E.check("padded_tile", _kernel(src, "transpose_padded")))
    assert re.search(r"on 64x64: .*\(also on 96x160, 1000x1030", text)


def test_checker_answers_instead_of_raising_for_wrong_objects():
    ex = E.get("shared_tile")
    assert "no kernel named transpose_tile" in repr(E.check(ex))
    assert "not a compiled kernel" in repr(E.check(ex, "transpose_tile"))
    wrong_params = _kernel("__global__ void transpose_tile(float* out, const float* in, int n) {}", "transpose_tile")
    assert "does not take" in repr(E.check(ex, wrong_params))
    doubles = _kernel(SOL["shared_tile"].replace("float", "double"), "transpose_tile")
    assert "moves double" in repr(E.check(ex, doubles))
    mixed = _kernel(SOL["shared_tile"].replace("const float* in", "const double* in"), "transpose_tile")
    assert "different types" in repr(E.check(ex, mixed))
    endless = _kernel(SOL["first_copy"].replace("if (x < cols && y < rows) {", "while (x >= 0) {"), "first_copy")
    text = repr(E.check("first_copy", endless))
    assert "stopped the kernel" in text and "also on" not in text       # one shape is enough to say so


def test_reveal_shows_the_course_kernel_only_after_a_pass_and_only_in_self_study(monkeypatch):
    E.PASSED.discard("column_read")
    for asked in (E.reveal("column_read"), E.reveal("column_read", give_up=True)):   # giving up shows nothing
        assert not asked.shown and "stays hidden until your kernel passes" in repr(asked)
        assert "blockIdx" not in repr(asked) and asked._repr_markdown_() is None
    assert not E.check("column_read", _kernel(solutions.stub("column_read"), "transpose_col")).ok
    assert not E.reveal("column_read").shown                              # a failed check reveals nothing
    assert E.check("column_read", _kernel(SOL["column_read"], "transpose_col")).ok
    course = cl.transposes.kernel(E.get("column_read").reveal).source     # naive_col, notebook 03's next listing
    for where in ("checkout", "installed"):                               # the same without solution files
        shown = E.reveal("column_read")
        assert shown.shown and course in repr(shown) and "naive_col" in repr(shown)
        assert "int r = blockIdx.y * 32 + threadIdx.x;" not in repr(shown)    # never the solution file
        assert "SOLUTION" not in repr(shown) and "```cuda" in shown._repr_markdown_()
        monkeypatch.setattr(solutions, "SOLUTIONS_DIR", solutions.SOLUTIONS_DIR / "nowhere")   # an installed wheel
    assert solutions.keys() == [] and solutions.directory() is None
    assert solutions.stub("column_read") == strip_solutions_of("column_read")   # stub.cu stands in
    with pytest.raises(KeyError, match="stay with instructors"):
        solutions.body("column_read")
    monkeypatch.setenv("COURSE_LIB_GRADED", "1")                          # a graded release: never
    graded = E.reveal("column_read")
    assert not graded.shown and "graded release" in repr(graded) and "blockIdx" not in repr(graded)
    with pytest.raises(KeyError, match="no exercise"):
        E.reveal("nope")


def test_reveal_points_at_the_line_that_differs_from_the_earlier_lessons_kernel():
    """04 and 05 reveal the same file (kernels/tile.cu); 05's reveal names and marks the one line PAD
    changes, and says what the student's element size needs."""
    assert E.check("padded_tile", _kernel(SOL["padded_tile"], "transpose_padded")).ok
    shown = E.reveal("padded_tile")
    assert shown.shown and "notebook 04's `tile`" in shown.note and "PAD = 1" in shown.note
    assert "line 28: `__shared__ T t[TILE][TILE + PAD];`" in shown.note and shown.marked == {28}
    assert "`unsigned short`, which need PAD = 2" in shown.note
    marked = [line for line in shown._repr_markdown_().splitlines() if "the line that differs" in line]
    assert marked == ["    __shared__ T t[TILE][TILE + PAD];    // <-- the line that differs"]
    assert E.check("shared_tile", _kernel(SOL["shared_tile"], "transpose_tile")).ok
    assert E.reveal("shared_tile").note == ""                 # the first of the file: nothing to compare


def strip_solutions_of(key):
    return E.strip_solutions(SOL[key])


def test_strip_solutions_convention():
    cell = ("int a;\n    // BEGIN SOLUTION (the instructor's version)\n    //> int x = 0;  // TODO\n"
            "    int x = 42;\n    // END SOLUTION\n  # BEGIN SOLUTION\n  y = 1\n  # END SOLUTION\nint b;\n")
    assert E.strip_solutions(cell) == "int a;\n    int x = 0;  // TODO\n  # TODO: your code here\nint b;\n"
    assert solutions.solved(cell) == "int a;\n    int x = 42;\n  y = 1\nint b;\n"
    for bad in ("// BEGIN SOLUTION\nx\n", "x\n// END SOLUTION\n", "// BEGIN SOLUTION\n// BEGIN SOLUTION\n"):
        with pytest.raises(ValueError):
            E.strip_solutions(bad)
    assert E.strip_solutions("no markers\n") == "no markers\n"


def test_solution_files_are_documented_and_their_bodies_are_cells():
    for key in SOL:
        text = solutions.path(key).read_text()
        assert text.startswith("//! Exercise") and f"'{key}'" in text.splitlines()[0]
        assert not SOL[key].startswith("//!") and not SOL[key].endswith("\n")


def test_exercise_description_says_what_to_write():
    text = repr(E.get("vectorized"))
    assert "transpose_vec4(float* out, const float* in, int rows, int cols)" in text
    assert "blocks of 8x32 threads" in text and "multiples of 4" in text
    assert "checked on every shape" in text and "barriers all threads reach" in text
    assert "grid = (ceil(cols / 32), ceil(rows / 32), batch)" in repr(E.get("batched"))
    assert "out: rows x cols" in repr(E.get("first_copy"))


def test_random_inputs_are_never_zero_and_differ_from_the_poison():
    for dtype in (np.float32, np.float64, np.float16, np.uint8, np.uint16):
        a, _ = E.input_for(E.get("first_copy"), (64, 64), dtype, 0)
        assert (a != 0).all() and not np.isin(a, E.output_for(E.get("first_copy"), a)).any()


# ---------------------------------------------------------------------------- variants per student


VARIANTS = [(key, i) for key in sorted(E.EXERCISES) for i, _ in enumerate(variants.declared(key))]


def _variant(key, i):
    params = {**spec.defaults(spec.read(folder(key))), **variants.declared(key)[i]}
    return params, spec.load(folder(key), params)


def test_the_five_exercises_the_issue_names_have_variants():
    assert {"shared_tile", "padded_tile", "tile_32x8", "aos_struct", "async_tile"} <= {k for k, _ in VARIANTS}


@pytest.mark.slow
@pytest.mark.folder
@pytest.mark.parametrize("key,i", VARIANTS, ids=[f"{k}-{i}" for k, i in VARIANTS])
def test_a_variant_is_solved_by_its_own_solution_and_not_by_the_notebooks_or_a_neighbours(key, i):
    params, ex = _variant(key, i)
    assert ex.variant and f"YOUR VARIANT: {ex.variant}" in repr(ex)
    assert E.check(ex, _kernel(solutions.body(key, params), ex.kernel)).ok
    printed = E.check(ex, _kernel(SOL[key], ex.kernel))           # the default: the notebook's answer
    assert not printed.ok and "hint:" in repr(printed)
    other = variants.declared(key)[(i + 1) % len(variants.declared(key))]
    if other != variants.declared(key)[i]:
        theirs = solutions.body(key, {**spec.defaults(spec.read(folder(key))), **other})
        assert theirs != solutions.body(key, params) and not E.check(ex, _kernel(theirs, ex.kernel)).ok


def test_a_variants_check_stub_and_text_follow_its_parameters(monkeypatch):
    # the holder of a variant key (a student on the hub) gets that key's variant (tests/teach/test_variants.py)
    monkeypatch.setattr(variants, "_explicit", [None])
    for name in (variants.ENV_STUDENT, variants.ENV_HUB_USER):
        monkeypatch.delenv(name, raising=False)
    vkey = next(k for k in (variants.student_key("a class", f"s{n}") for n in range(100))
                if "T = unsigned char" in variants.of_key("padded_tile", k).variant)
    monkeypatch.setenv(variants.ENV_KEY, vkey)
    ex = E.get("padded_tile")
    assert "unsigned char* out" in repr(ex) and ex.dtypes == (np.uint8,)
    assert "unsigned char tile[32][32];" in E.stub("padded_tile")
    report = E.check("padded_tile", _kernel(E.stub("padded_tile"), ex.kernel))
    # the hint speaks of the variant's type and leads to its padding without handing it over (issue 35)
    assert not report.ok and "how many bytes is one unsigned char" in repr(report) and "[32][32 + ?]" in repr(report)
    assert "[32][32 + 4]" not in repr(report)
    assert E.check("padded_tile", _kernel(solutions.body("padded_tile", dict(ex.params)), ex.kernel)).ok
    assert not E.check("padded_tile", _kernel(SOL["padded_tile"], ex.kernel)).ok


@pytest.mark.parametrize("key", sorted(SOL))
def test_stub_file_is_the_solutions_stub(key):
    """exercises/<key>/stub.cu is what a student repository and the wheel have: it must be solution.cu's
    stub (instructor check --sync-stubs writes it), and render to the notebook's cell without solution.cu."""
    assert (folder(key) / spec.STUB).read_text() == solutions.stub_file_text(key)
    assert solutions.stub(key) == E.strip_solutions(SOL[key])

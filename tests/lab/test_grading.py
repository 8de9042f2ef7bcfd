"""The nbgrader export without running nbgrader (the round trip is tests/lab/test_nbgrader.py): the
source layout, the cells' nbgrader metadata, the locked test cells, the seed, the hidden shapes drawn
from it (what hidden.py guarantees, on 50 students' draws; the solution passes them; kernels wrong only
on large or both-off-tile shapes fail them; one exact pair of residues is caught now and then), the course's
stubs put back by the ClearSolutions nbgrader is given, ``exercises.grade``, the grader's reading of
an exercise cell (the %%cuda line's allow-list) and the sandbox's refusal where bubblewrap is missing."""
import contextlib
import dataclasses
import io
import json
import math
import os
import time
from pathlib import Path

import nbformat
import pytest

from course_lib.lab.grader import hidden as H, sandbox, trusted as grader
from course_lib.lab.instructor import assignments as grading, release
from course_lib.notebook import magic
from course_lib.teach import exercises as E
from course_lib.teach import solutions

REPO = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((REPO / "notebooks").glob("[0-9][0-9]_*.ipynb"))


def test_export_writes_one_source_assignment_per_notebook_with_exercises(tmp_path):
    done = grading.export(NOTEBOOKS, tmp_path, points=3, log=lambda *a: None)
    lessons = {ex.lesson for ex in E.EXERCISES.values()}
    assert sorted(done) == sorted(p.stem for p in NOTEBOOKS if p.name[:2] in lessons)
    assert "configure(c)" in (tmp_path / "nbgrader_config.py").read_text()
    seed = H.seed(tmp_path)                                       # written once, kept, only for the instructor
    assert len(seed) >= 32 and oct(os.stat(tmp_path / H.SEED_FILE).st_mode)[-3:] == "600"
    grading.export(NOTEBOOKS[:1], tmp_path, points=3, log=lambda *a: None)
    assert H.seed(tmp_path) == seed and not list((tmp_path / "source").rglob(H.SEED_FILE))
    graded = set()
    for assignment, path in done.items():
        assert path == tmp_path / "source" / assignment / f"{assignment}.ipynb"
        nb, student = nbformat.read(path, 4), nbformat.read(REPO / "notebooks" / path.name, 4)
        meta = {c.metadata["nbgrader"]["grade_id"]: c for c in nb.cells if "nbgrader" in c.metadata}
        for ec in release.exercise_cells(student, path.name):
            kernel, test = meta[f"{ec.key}_kernel"], meta[f"{ec.key}_check"]
            assert kernel.source == f"{ec.magic}\n{solutions.body(ec.key)}"          # markers: the course's stub
            assert kernel.metadata["nbgrader"] == dict(grade=False, grade_id=f"{ec.key}_kernel", locked=False,
                                                       schema_version=3, solution=True, task=False)
            assert test.metadata["nbgrader"]["points"] == 3 and test.metadata["nbgrader"]["locked"]
            assert test.metadata["nbgrader"]["grade"] and not test.metadata["nbgrader"]["solution"]
            assert test.source.endswith(f'\ncl.exercises.grade("{ec.key}")') and "HIDDEN" not in test.source
            graded.add(ec.key)
        assert not any("exercises.reveal(" in c.source for c in nb.cells if c.cell_type == "code")   # none shown
        assert all(c.get("outputs", []) == [] for c in nb.cells) and "widgets" not in nb.metadata
    assert graded == set(E.EXERCISES)


STUDENTS = [f"student{i:02d}" for i in range(50)]


def _walked(d: H.Dim) -> set:
    """The residues a draw must visit in one dimension: all, or (a tile over 32) all modulo 32."""
    every = d.residues()
    return set(every) if len(every) <= H.WALK else {r % H.WALK for r in every}


@pytest.mark.parametrize("key", sorted(E.EXERCISES))
def test_hidden_draws_keep_their_guarantees_for_every_student(key):
    """hidden.py's docstring, checked on 50 students' draws (no kernel runs here)."""
    ex = E.get(key)
    rules = H.rules(ex)
    assert H.hidden_shapes(ex, "term-seed", "alice", "a") == H.hidden_shapes(ex, "term-seed", "alice", "a")
    assert H.hidden_shapes(ex, "term-seed", "alice", "a") != H.hidden_shapes(ex, "term-seed", "bob", "a")
    assert H.hidden_shapes(ex, "term-seed", "alice", "a") != H.hidden_shapes(ex, "next-term", "alice", "a")
    shown = {tuple(s[-2:]) for s in ex.shapes}
    for student in STUDENTS:
        shapes, wide = H.split(H.hidden_shapes(ex, "term-seed", student, "a"))
        assert all(len(s) == len(ex.shapes[0]) and min(s) >= 1 for s in shapes)
        assert not shown & {s[-2:] for s in shapes} and len(set(shapes)) == len(shapes)
        assert all(2 <= s[0] <= 3 for s in shapes) if rules.batch else True
        pairs = [s[-2:] for s in shapes]
        if rules.square:                                         # an in-place transpose: square, large kept ~2048
            assert all(r == c for r, c in pairs) and max(r for r, _ in pairs) >= H._bounds(rules, 2049, 2200)[0]
            assert {r % rules.rows.tile for r, _ in pairs} >= _walked(rules.rows)
            continue
        for d, axis in ((rules.rows, 0), (rules.cols, 1)):
            sizes = {p[axis] for p in pairs}
            if d.fixed is not None:                              # aos_struct's cols: the same in every shape
                assert sizes == {d.fixed}
                continue
            assert all(v % d.step == 0 for v in sizes)           # float4: multiples of 4; 16-bit pairs: even
            assert {v % d.tile for v in sizes} >= set(d.residues()) if len(d.residues()) <= H.WALK else \
                {v % d.tile % H.WALK for v in sizes} >= _walked(d)
            assert max(sizes) >= H.LARGE[0] and max(sizes) <= H.LARGE[1] + 2 * d.period
        # off the tile, or as off as the dimension can be (per_element's rows: a tile of 1 row)
        off = lambda v, d: d.fixed is None and (v % d.tile != 0 or len(d.residues()) == 1)     # noqa: E731
        if rules.rows.fixed is None and rules.cols.fixed is None:
            both = [p for p in pairs if off(p[0], rules.rows) and off(p[1], rules.cols)]
            assert len(both) >= len(pairs) - 7, pairs                   # the walk's all but 2, and the large ones
            assert any(p[0] >= H.LARGE[0] and off(p[1], rules.cols) and p[1] > rules.cols.tile for p in pairs)
            assert any(p[1] >= H.LARGE[0] and off(p[0], rules.rows) and p[0] > rules.rows.tile for p in pairs)
            assert (rules.rows.step, max(p[1] for p in pairs if p[0] == rules.rows.step)) in pairs   # 1 x N
            assert any(p[1] == rules.cols.step and p[0] >= H.LARGE[0] for p in pairs)                # N x 1
            assert any(p[0] % rules.rows.tile == 0 and p[1] % rules.cols.tile == 0 for p in pairs)  # on the tile
            if len(rules.rows.residues()) > 1 and len(rules.cols.residues()) > 1:
                assert any(p[0] % rules.rows.tile == 0 and off(p[1], rules.cols) for p in pairs)
                assert any(p[1] % rules.cols.tile == 0 and off(p[0], rules.rows) for p in pairs)
        if ex.wide:
            assert wide is not None and math.prod(wide) > 2 ** 32 and len(wide) == len(ex.wide)
            assert wide[-2] % rules.rows.tile and wide[-1] % rules.cols.tile
        else:
            assert wide is None


def test_hidden_shapes_keep_the_constraints_exercise_toml_states():
    """[hidden] square (an in-place transpose: every shape rows = cols) and multiple_of, as exercise.toml's
    [hidden] table gives them to an Exercise (an exercise without them keeps what its shapes show)."""
    from types import SimpleNamespace
    base = dict(key="in_place", shapes=((64, 64), (96, 96), (33, 33), (1, 1), (300, 300)), tile=(32, 32), wide=None)
    square = SimpleNamespace(**base, square=True, multiple_of=None)
    for student in STUDENTS[:10]:
        shapes = H.hidden_shapes(square, "term-seed", student, "a")
        assert all(r == c for r, c in shapes) and {r % 32 for r, _ in shapes} == set(range(32))
        assert max(r for r, _ in shapes) > 2048 and not {(64, 64), (96, 96), (33, 33), (300, 300)} & set(shapes)
    fours = SimpleNamespace(**{**base, "shapes": ((64, 64), (96, 160), (100, 132))}, square=False, multiple_of=(4, 8))
    shapes = H.hidden_shapes(fours, "term-seed", "alice", "a")
    assert all(r % 4 == 0 and c % 8 == 0 for r, c in shapes) and max(max(s) for s in shapes) >= H.LARGE[0]


def _solution(key):
    return magic.compile_cell("", solutions.body(key))[1][E.get(key).kernel]


@pytest.mark.slow
@pytest.mark.folder
@pytest.mark.parametrize("key", sorted(E.EXERCISES))
def test_the_solution_passes_its_hidden_shapes(key):
    """One student's whole draw (the wide launch sampled), and the largest shapes of 50 students' draws."""
    ex = E.get(key)
    shapes, wide = H.split(H.hidden_shapes(ex, "term-seed", "alice", "a"))
    everyone = {s for student in STUDENTS for s in H.split(H.hidden_shapes(ex, "term-seed", student, "a"))[0]}
    largest = {max(everyone, key=lambda s: s[-2]), max(everyone, key=lambda s: s[-1]), max(everyone, key=math.prod)}
    fn = _solution(key)
    start = time.perf_counter()
    report = E.check(dataclasses.replace(ex, wide=wide) if wide else ex, fn, shapes=shapes, gpu=False)
    print(f"{key}: {len(shapes)} hidden shapes{' and a wide launch' if wide else ''} checked in "
          f"{time.perf_counter() - start:.1f} s")
    assert report.ok and f"correct on {len(shapes)} shapes" in repr(report), repr(report)
    assert E.check(key, fn, shapes=sorted(largest - set(shapes)) or shapes[:1], gpu=False).ok


def _caught(shapes, wrong) -> bool:
    return any(wrong(s[-2], s[-1]) for s in H.split(shapes)[0])


OWN_32x8 = "\n".join(line.split("//")[0].rstrip()
                     for line in solutions.solved(solutions.body("tile_32x8")).splitlines()) if solutions.keys() else ""
# kernels right on every shape the release shows, wrong only where the hidden shapes must look
WRONG = {"cols over 2048": ("if (cols > 2048 && rows > 1) return;", lambda r, c: c > 2048 and r > 1),
         "rows over 2048": ("if (rows > 2048 && cols > 1) return;", lambda r, c: r > 2048 and c > 1),
         "both residues past half the tile": ("if (rows % 32 > 16 && cols % 32 > 16 && blockIdx.x == gridDim.x - 1 "
                                              "&& blockIdx.y == gridDim.y - 1) return;",
                                              lambda r, c: r % 32 > 16 and c % 32 > 16)}


@pytest.mark.needs_solutions
@pytest.mark.parametrize("name", sorted(WRONG))
def test_a_kernel_wrong_only_on_large_or_both_off_tile_shapes_fails_every_student_s_hidden_shapes(name):
    line, wrong = WRONG[name]
    ex = E.get("tile_32x8")
    src = OWN_32x8.replace("    __shared__", f"    {line}\n    __shared__", 1)
    fn = magic.compile_cell("", src)[1][ex.kernel]
    assert E.check("tile_32x8", fn, gpu=False).ok                         # the release's shapes do not see it
    assert not any(wrong(*s) for s in ex.shapes)
    assert all(_caught(H.hidden_shapes(ex, "term-seed", s, "a"), wrong) for s in STUDENTS)
    hidden = [s for s in H.hidden_shapes(ex, "term-seed", "alice", "a") if wrong(*s)]
    assert not E.check("tile_32x8", fn, shapes=hidden[:2], gpu=False).ok   # and the kernel does fail there


def test_one_exact_pair_of_residues_is_caught_only_now_and_then():
    """What is not guaranteed (hidden.py's docstring): a kernel keyed on one (rows % 32, cols % 32) pair
    escapes most draws; the walk tries 32 of the 1024 pairs per student, different ones for each."""
    ex = E.get("tile_32x8")
    caught = sum(_caught(H.hidden_shapes(ex, "term-seed", f"s{i}", "a"), lambda r, c: (r % 32, c % 32) == (21, 9))
                 for i in range(2000))
    assert 20 < caught < 130, caught                                     # about 2000 / 32 = 62


def test_the_grader_reads_the_exercise_cell_and_allows_only_harmless_cuda_options():
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(f"{E.get('tile_32x8').kernel} = None"),
                nbformat.v4.new_code_cell("%%cuda -DTILE=32 --std=c++17\n" + solutions.stub("tile_32x8"))]
    nb.cells[1].metadata["nbgrader"] = {"grade_id": "tile_32x8_kernel"}
    line, body = grader.split(grader.kernel_cell(nb, "tile_32x8"), "tile_32x8")
    assert line == "-DTILE=32 --std=c++17" and body == solutions.stub("tile_32x8")
    for bad in ("-I/x", "--include-path=/x", "-I /x", "--pre-include=/x", "-DX='\"/x.cu\"'", "-include /x"):
        with pytest.raises(grader.Refused, match="not allowed|does not understand"):
            grader.split(f"%%cuda {bad}\n" + solutions.stub("tile_32x8"), "tile_32x8")
    with pytest.raises(grader.Refused, match="not a %%cuda cell"):
        grader.split(f"{E.get('tile_32x8').kernel} = cl.transposes.kernel('padded_32x8').function", "tile_32x8")
    assert "markers" in grader.copied(solutions.body("tile_32x8"), "tile_32x8")
    assert grader.copied(solutions.stub("tile_32x8"), "tile_32x8") is None


def test_without_bubblewrap_grading_refuses_and_says_how_to_fix_it(monkeypatch):
    monkeypatch.setattr(sandbox.shutil, "which", lambda name: None)
    sandbox.require.cache_clear()
    try:
        with pytest.raises(sandbox.SandboxUnavailable, match="apt install bubblewrap"):
            sandbox.require()
    finally:
        sandbox.require.cache_clear()


def test_grade_prints_the_report_and_fails_unless_every_check_passes():
    ex = E.get("padded_tile")
    good = magic.compile_cell("", solutions.body("padded_tile"))[1][ex.kernel]
    bad = magic.compile_cell("", solutions.stub("padded_tile"))[1][ex.kernel]
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        assert E.grade("padded_tile", good) is None                # no value: nbgrader would read it as a score
        with pytest.raises(AssertionError, match="1 problem"):
            E.grade("padded_tile", bad)
    assert "✓ padded_tile: all checks pass" in out.getvalue() and "bank conflicts" in out.getvalue()
    assert "hint:" in out.getvalue() and err.getvalue() == ""     # nbgrader gives no points to a cell with stderr


def test_the_course_stubs_replace_nbgrader_s_in_cuda_cells_only():
    hooks = pytest.importorskip("course_lib.lab.grader.nbgrader_hooks", reason="nbgrader is in the [instructor] extra")
    clear = hooks.CourseStubs()
    cuda = nbformat.v4.new_code_cell("%%cuda\n" + solutions.body("vectorized"))
    python = nbformat.v4.new_code_cell("x = 1\n### BEGIN SOLUTION\nx = 2\n### END SOLUTION")
    for c in (cuda, python):
        c.metadata["nbgrader"] = dict(solution=True, grade=False, grade_id="x", locked=False, schema_version=3)
        clear.preprocess_cell(c, {"language": "python"}, 0)
    assert cuda.source == "%%cuda\n" + solutions.stub("vectorized")
    assert "raise NotImplementedError()" in python.source and "x = 2" not in python.source
    from traitlets.config import Config
    c = Config()
    hooks.configure(c)
    assert hooks.CourseStubs in c.GenerateAssignment.preprocessors
    assert hooks.SandboxedExecute in c.Autograde.autograde_preprocessors and c.Execute.timeout >= 60


def test_a_notebook_without_a_check_cell_cannot_be_graded():
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("%%cuda\n" + solutions.stub("padded_tile"))]
    with pytest.raises(ValueError, match="nothing to grade"):
        grading.source_notebook(nb, "05_x.ipynb")
    assert json.dumps(nb.cells[0].metadata) == "{}"                 # the notebook given is left as it was


def test_the_sandbox_sees_no_solutions_no_network_no_grader_environment_and_keeps_nothing(tmp_path, monkeypatch):
    try:
        sandbox.require()
    except sandbox.SandboxUnavailable as exc:
        pytest.skip(str(exc))
    monkeypatch.setenv("COURSE_LIB_SOLUTIONS", str(solutions.SOLUTIONS_DIR))
    monkeypatch.setenv("GRADER_SECRET", "tell-no-one")
    (tmp_path / "work").mkdir()
    probe = f"""import glob, os, socket, pathlib
print(sorted(os.environ)); print(open("/proc/1/environ").read()); print(os.readlink("/proc/1/cwd"))
print(glob.glob({str(solutions.SOLUTIONS_DIR)!r} + "/*"), os.listdir({str(REPO)!r}), os.listdir("/proc/1/root/tmp"))
try: socket.create_connection(("pypi.org", 443), timeout=3); print("NETWORK")
except OSError: pass
pathlib.Path.home().joinpath("kept").write_text("x"); pathlib.Path("written").write_text("x")
print(next(l for l in open("/proc/self/status") if l.startswith("CapEff")))"""
    import sys
    r = sandbox.run([sys.executable, "-c", probe], work=tmp_path / "work", timeout=60)
    assert r.returncode == 0, r.stderr
    assert "tell-no-one" not in r.stdout and "COURSE_LIB_SOLUTIONS" not in r.stdout and "NETWORK" not in r.stdout
    assert "'COURSE_LIB_GRADED'" in r.stdout and ".cu'" not in r.stdout.split("\n")[3]   # no solution file
    assert "CapEff:\t0000000000000000" in r.stdout                    # no capability, even for a root grader
    assert not (tmp_path / "work" / "written").exists()              # written into the sandbox's copy, not here
    assert not any(p.name == "kept" for p in Path.home().iterdir())  # HOME was a tmpfs


def test_the_grader_fails_a_kernel_right_only_on_the_shapes_it_was_shown_without_naming_hidden_ones():
    """issue 27: a kernel wrong only when rows % 32 >= 16 passes every shape the release shows."""
    try:
        sandbox.require()
    except sandbox.SandboxUnavailable as exc:
        pytest.skip(str(exc))
    own = "\n".join(line.split("//")[0].rstrip() for line in solutions.solved(solutions.body("tile_32x8")).splitlines())
    sly = own.replace("    __syncthreads();", "    __syncthreads();\n    if (rows % 32 >= 16 && blockIdx.x == 0) rows -= 1;", 1)
    assert sly != own
    hidden = H.hidden_shapes(E.get("tile_32x8"), "seed", "mallory", "06")
    verdicts = {}
    for name, text in (("own", own), ("sly", sly)):
        nb = nbformat.v4.new_notebook()
        nb.cells = [nbformat.v4.new_code_cell("%%cuda\n" + text)]
        nb.cells[0].metadata["nbgrader"] = {"grade_id": "tile_32x8_kernel"}
        verdicts[name] = grader.grade(nb, "tile_32x8", hidden)
    assert verdicts["own"][0] and f"and on {len(hidden)} more shapes the release does not show" in verdicts["own"][1]
    ok, text = verdicts["sly"]
    assert not ok and "✓ tile_32x8: all checks pass" in text and "more shapes the release does not show" in text
    assert not any(f"{r}x{c}" in text or str((r, c)) in text for r, c in hidden), text


def test_a_kernel_s_printf_cannot_forge_the_grader_s_verdict():
    try:
        sandbox.require()
    except sandbox.SandboxUnavailable as exc:
        pytest.skip(str(exc))
    nb = nbformat.v4.new_notebook()
    ex = E.get("tile_32x8")
    nb.cells = [nbformat.v4.new_code_cell(
        f"%%cuda\n#include <cstdio>\n__global__ void {ex.kernel}({', '.join(map(str, ex.parameters))})\n"
        '{ if (!threadIdx.x && !blockIdx.x && !blockIdx.y) printf("{\\"ok\\": true, \\"text\\": \\"forged\\"}\\n"); }')]
    ok, text = grader.grade(nb, "tile_32x8", [(33, 70)])
    assert not ok and "forged" not in text and "never written" in text

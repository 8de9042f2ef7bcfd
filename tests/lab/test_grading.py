"""The nbgrader export without running nbgrader (the round trip is tests/lab/test_nbgrader.py): the
source layout, the cells' nbgrader metadata, the locked test cells, the seed, the hidden shapes drawn
from it (every residue of the tile, each exercise's constraints, the solution passes), the course's
stubs put back by the ClearSolutions nbgrader is given, ``exercises.grade``, the grader's reading of
an exercise cell (the %%cuda line's allow-list) and the sandbox's refusal where bubblewrap is missing."""
import contextlib
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


@pytest.mark.parametrize("key", sorted(E.EXERCISES))
def test_hidden_shapes_cover_every_residue_keep_the_constraints_and_pass_the_solution(key):
    ex = E.get(key)
    hidden = H.hidden_shapes(ex, "term-seed", "alice", "assignment")
    assert hidden == H.hidden_shapes(ex, "term-seed", "alice", "assignment")           # reproducible
    assert hidden != H.hidden_shapes(ex, "term-seed", "bob", "assignment")             # per student
    assert hidden != H.hidden_shapes(ex, "next-term", "alice", "assignment")           # per term
    assert all(len(s) == len(ex.shapes[0]) and min(s) >= 1 for s in hidden)
    for dim, tile in ((-2, ex.tile[1]), (-1, ex.tile[0])):
        given = [s[dim] for s in ex.shapes]
        if len(set(given)) == 1:                                    # fixed: aos_struct's 40 columns
            assert {s[dim] for s in hidden} == set(given)
            continue
        g = math.gcd(*given)
        assert all(s[dim] % g == 0 for s in hidden)                 # float4: multiples of 4; 16-bit pairs: even
        assert {s[dim] % tile for s in hidden} == set(range(0, tile, math.gcd(g, tile))), (dim, hidden)
    fn = magic.compile_cell("", solutions.body(key))[1][ex.kernel]
    start = time.perf_counter()
    report = E.check(key, fn, shapes=hidden, gpu=False)
    print(f"{key}: {len(hidden)} hidden shapes checked in {time.perf_counter() - start:.1f} s")
    assert report.ok and f"correct on {len(hidden)} shapes" in repr(report), repr(report)


def test_the_grader_reads_the_exercise_cell_and_allows_only_harmless_cuda_options():
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("transpose_32x8 = None"),
                nbformat.v4.new_code_cell("%%cuda -DTILE=32 --std=c++17\n" + solutions.stub("tile_32x8"))]
    nb.cells[1].metadata["nbgrader"] = {"grade_id": "tile_32x8_kernel"}
    line, body = grader.split(grader.kernel_cell(nb, "tile_32x8"), "tile_32x8")
    assert line == "-DTILE=32 --std=c++17" and body == solutions.stub("tile_32x8")
    for bad in ("-I/x", "--include-path=/x", "-I /x", "--pre-include=/x", "-DX='\"/x.cu\"'", "-include /x"):
        with pytest.raises(grader.Refused, match="not allowed|does not understand"):
            grader.split(f"%%cuda {bad}\n" + solutions.stub("tile_32x8"), "tile_32x8")
    with pytest.raises(grader.Refused, match="not a %%cuda cell"):
        grader.split("transpose_32x8 = cl.transposes.kernel('padded_32x8').function", "tile_32x8")
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
    nb.cells = [nbformat.v4.new_code_cell(
        "%%cuda\n#include <cstdio>\n__global__ void transpose_32x8(float* out, const float* in, int rows, int cols)\n"
        '{ if (!threadIdx.x && !blockIdx.x && !blockIdx.y) printf("{\\"ok\\": true, \\"text\\": \\"forged\\"}\\n"); }')]
    ok, text = grader.grade(nb, "tile_32x8", [(33, 70)])
    assert not ok and "forged" not in text and "never written" in text

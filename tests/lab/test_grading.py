"""The nbgrader export without running nbgrader (the round trip is tests/lab/test_nbgrader.py): the
source layout, the cells' nbgrader metadata, the locked test cells and their hidden shapes, the
course's stubs put back by the ClearSolutions nbgrader is given, and ``exercises.grade``."""
import contextlib
import io
import json
from pathlib import Path

import nbformat
import pytest

from course_lib.lab import grading, release
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
            assert f'cl.exercises.grade("{ec.key}")' in test.source
            hidden = test.source.split("### BEGIN HIDDEN TESTS\n")[1].split("\n### END HIDDEN TESTS")[0]
            assert hidden == f'cl.exercises.grade("{ec.key}", shapes={grading.HIDDEN_SHAPES[ec.key]})'
            graded.add(ec.key)
        assert not any("exercises.reveal(" in c.source for c in nb.cells if c.cell_type == "code")   # none shown
        assert all(c.get("outputs", []) == [] for c in nb.cells) and "widgets" not in nb.metadata
    # exercises/<key>/CELLS.md: cells written for whoever merges to insert into a notebook another helper edits
    assert graded | {k for k in E.EXERCISES if (REPO / "exercises" / k / "CELLS.md").is_file()} >= set(E.EXERCISES)


@pytest.mark.parametrize("key", sorted(grading.HIDDEN_SHAPES))
def test_hidden_shapes_are_new_keep_the_exercise_s_constraints_and_pass_the_solution(key):
    ex = E.get(key)
    hidden = grading.HIDDEN_SHAPES[key]
    assert len(hidden) >= 2 and not set(hidden) & set(ex.shapes)
    assert all(len(s) == len(ex.shapes[0]) for s in hidden)
    assert any(s[-1] % ex.tile[0] or s[-2] % ex.tile[1] for s in hidden)            # partial tiles
    fn = magic.compile_cell("", solutions.body(key))[1][ex.kernel]
    report = E.check(key, fn, shapes=hidden, gpu=False)
    assert report.ok and f"correct on {len(hidden)} shapes" in repr(report), repr(report)
    stub = magic.compile_cell("", solutions.stub(key))[1][ex.kernel]
    assert not E.check(key, stub, shapes=hidden, gpu=False).ok


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
    hooks = pytest.importorskip("course_lib.lab.nbgrader_hooks", reason="nbgrader is in the [instructor] extra")
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
    assert hooks.GradedExecute in c.Autograde.autograde_preprocessors and c.Execute.timeout >= 60


def test_a_notebook_without_a_check_cell_cannot_be_graded():
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("%%cuda\n" + solutions.stub("padded_tile"))]
    with pytest.raises(ValueError, match="nothing to grade"):
        grading.source_notebook(nb, "05_x.ipynb")
    assert json.dumps(nb.cells[0].metadata) == "{}"                 # the notebook given is left as it was

"""The verdict records in a graded notebook (course_lib.lab.grader.verdicts, verdict_store): signed where the grades
are made, read only from the locked test cells they were signed for, kept per submission, left out of the
feedback; the sanitizer keeps them as data; what a failed hidden check tells the student, per level. The
attacks: a student's own display of the record's type, a record edited after grading, a notebook moved to
another student, another course's key, an unlocked copy of the test cell. No nbgrader run (the round trip is
tests/lab/test_class_report.py)."""
import copy
import json

import nbformat
import pytest

from course_lib.lab.grader import inert, trusted, verdict_store, verdicts
from course_lib.teach import exercises as E
from course_lib.teach.exercise import Report

SECRET, KEY = "course-secret-5eed", "tile_32x8"
PLACE = ("alice", "06_tiles", "06_tiles")


def _record(ok=True, exercise=KEY):
    return {"schema": "course_lib.verdict/1", "exercise": exercise, "ok": ok, "problems": [], "counts": {"sectors": 5}}


def _test_cell(key=KEY, locked=True):
    cell = nbformat.v4.new_code_cell(f'cl.exercises.grade("{key}")')
    cell.metadata["nbgrader"] = {"grade": True, "grade_id": f"{key}_check", "locked": locked, "points": 2,
                                 "solution": False, "schema_version": 3}
    return cell


def _notebook(record=None):
    nb = nbformat.v4.new_notebook()
    student = nbformat.v4.new_code_cell("display(...)")
    student.outputs = [nbformat.v4.new_output("display_data", data={verdicts.MIME: {"record": _record()}})]
    test = _test_cell()
    test.outputs = [nbformat.v4.new_output("stream", name="stdout", text="✓ tile_32x8\n"),
                    verdicts.output(record or _record())]
    nb.cells = [student, test]
    return nb


def _sealed(**kw):
    nb = _notebook(**kw)
    envelopes = verdicts.seal(nb, SECRET, *PLACE, E.EXERCISES, submitted="2026-12-01 10:00:00 UTC", graded="now")
    return nb, envelopes


def test_seal_signs_the_test_cells_record_and_removes_every_other_of_its_type():
    nb, envelopes = _sealed()
    assert len(envelopes) == 1 and envelopes[0]["student"] == "alice" and verdicts.valid(envelopes[0], SECRET)
    assert nb.cells[0].outputs == []                                         # the student's display is gone
    assert "text/plain" in nb.cells[1].outputs[1]["data"]                   # what JupyterLab and formgrader show
    assert verdicts.read(nb, SECRET, *PLACE, E.EXERCISES) == envelopes


@pytest.mark.parametrize("attack", ["edited", "moved", "other_course", "unlocked", "other_exercise", "student_cell"])
def test_a_record_the_grader_did_not_sign_for_that_place_is_not_read(attack):
    nb, _ = _sealed()
    place, secret = PLACE, SECRET
    if attack == "edited":
        nb.cells[1].outputs[1]["data"][verdicts.MIME]["record"]["ok"] = False
    elif attack == "moved":
        place = ("bob", *PLACE[1:])
    elif attack == "other_course":
        secret = "another-course"
    elif attack == "unlocked":
        nb.cells[1].metadata["nbgrader"]["locked"] = False
    elif attack == "other_exercise":
        nb.cells[1].metadata["nbgrader"]["grade_id"] = "column_read_check"
    else:          # a student's cell showing a copy of a valid envelope
        nb.cells[0].outputs = copy.deepcopy(nb.cells[1].outputs)
        nb.cells[1].outputs = []
    assert verdicts.read(nb, secret, *place, E.EXERCISES) == []


def test_a_record_of_another_exercise_in_a_test_cell_is_not_signed():
    nb = _notebook(record=_record(exercise="column_read"))
    assert verdicts.seal(nb, SECRET, *PLACE, E.EXERCISES) == [] and len(nb.cells[1].outputs) == 1


def test_the_sanitizer_keeps_the_record_as_data_and_the_feedback_leaves_it_out():
    nb, envelopes = _sealed()
    clean = inert.inert_notebook(copy.deepcopy(nb))
    assert verdicts.read(clean, SECRET, *PLACE, E.EXERCISES) == envelopes
    for bad in ("<script>x</script>", ["a"], {"x": float("nan")}, {"x": "y" * (verdicts.MAX_BYTES + 1)}):
        data, dropped = inert.inert_bundle({verdicts.MIME: bad})
        assert verdicts.MIME not in data and dropped == [verdicts.MIME], bad
    shown = json.dumps(verdicts.withheld(copy.deepcopy(nb)), ensure_ascii=False)
    assert verdicts.MIME not in shown and "✓ tile_32x8" in shown


def test_each_submission_is_kept_once_and_read_back_only_when_signed(tmp_path):
    nb, first = _sealed()
    verdict_store.keep(tmp_path, "06_tiles", "alice", "06_tiles", "2026-12-01 10:00:00 UTC", first)
    verdict_store.keep(tmp_path, "06_tiles", "alice", "06_tiles", "2026-12-01 10:00:00 UTC", first)   # a regrade
    later = [verdicts.sign({**first[0], "submitted": "2026-12-01 11:00:00 UTC"}, SECRET)]
    verdict_store.keep(tmp_path, "06_tiles", "alice", "06_tiles", "2026-12-01 11:00:00 UTC", later)
    forged = [{**first[0], "student": "mallory", "signature": "0" * 64}]
    verdict_store.keep(tmp_path, "06_tiles", "mallory", "06_tiles", "2026-12-01 09:00:00 UTC", forged)
    (tmp_path / verdict_store.FOLDER / "06_tiles" / "alice" / "junk@x.json").write_text("{not json")
    kept = verdict_store.attempts(tmp_path, SECRET)
    assert [(a[1], a[3]) for a in kept] == [("alice", "2026-12-01 10:00:00 UTC"), ("alice", "2026-12-01 11:00:00 UTC")]
    assert verdict_store.keep(tmp_path, "06_tiles", "alice", "06_tiles", None, []) is None


def test_the_hidden_shapes_feedback_says_what_its_level_allows():
    report = Report(KEY, problems=[("on a 33x70 matrix: 12 of 2310 elements are wrong", "check the bounds"),
                                   ("on a 33x70 matrix: line 9 reads ...", "check the bounds")])
    count = trusted.hidden_text(KEY, report, 8, "count")
    hint = trusted.hidden_text(KEY, report, 8, "hint")
    shape = trusted.hidden_text(KEY, report, 8, "shape")
    assert "2 problem(s) on 8 more shapes" in count and "hint" not in count and "33x70" not in count
    assert hint.count("hint: check the bounds") == 1 and "33x70" not in hint
    assert "33x70" in shape and "check the bounds" in shape
    assert trusted.hidden_text(KEY, report, 8) == hint == trusted.hidden_text(KEY, report, 8, trusted.FEEDBACK_DEFAULT)


def test_the_feedback_level_is_a_trait_of_the_course_preprocessor_per_assignment():
    pytest.importorskip("nbgrader", reason="nbgrader comes with the [instructor] extra")
    from traitlets import TraitError
    from traitlets.config import Config

    from course_lib.lab.grader.nbgrader_hooks import SandboxedExecute
    c = Config()
    c.SandboxedExecute.hidden_feedback = "count"
    c.SandboxedExecute.hidden_feedback_by_assignment = {"practice": "shape"}
    pre = SandboxedExecute(config=c)
    assert (pre.feedback_for("practice"), pre.feedback_for("06_tiles")) == ("shape", "count")
    assert SandboxedExecute().feedback_for("06_tiles") == trusted.FEEDBACK_DEFAULT == "hint"
    with pytest.raises(TraitError):
        SandboxedExecute(hidden_feedback="everything")

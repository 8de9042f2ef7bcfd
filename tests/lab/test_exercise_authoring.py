"""The instructor's tools around an exercise's folder and lesson (issue 33 items 2 and 4, issue 36 item 4):
the question deleted from the notebook comes back as a cell of its own (never merged into the lesson above),
a renamed kernel is followed by --sync-stubs, ``rename-exercise`` renames the folder, its files and the cells
that name it, ``instructor check`` warns of a missing get/reveal cell and of text after an exercise that names
another kernel than its reveal, and ``new-exercise`` answers every bad argument in words. Nothing is executed
but the checker on two stubs."""
import dataclasses
import shutil
from pathlib import Path

import nbformat
import pytest

from course_lib import paths
from course_lib.lab.instructor import check as icheck, cli, exercise_folder, lesson, release
from course_lib.teach import exercises as E
from course_lib.teach import solutions, spec

REPO = Path(__file__).resolve().parents[2]
NB06 = REPO / "notebooks" / "06_more_work_per_thread.ipynb"
pytestmark = pytest.mark.skipif(not NB06.exists() or "tile_32x8" not in solutions.keys(),
                                reason="needs the instructor repository's notebooks and solutions")


def _read():
    return nbformat.read(NB06, 4)


def test_a_deleted_question_cell_is_inserted_again_not_merged_into_the_lesson_above():
    nb = _read()
    assert not lesson.question_problems(nb, NB06.name)
    i = lesson._call(nb, "get", "tile_32x8")
    del nb.cells[i - 1]                                      # the instructor deleted the question's cell
    above = nb.cells[i - 2].source
    (problem,) = lesson.question_problems(nb, NB06.name)
    assert "question of exercise 'tile_32x8' is missing" in problem and "--sync-stubs" in problem
    (done,) = lesson.question_problems(nb, NB06.name, sync=True)
    assert "inserted" in done and nb.cells[i - 2].source == above          # the lesson's cell is as it was
    assert nb.cells[i - 1].source == E.get("tile_32x8").question and nb.cells[i - 1].cell_type == "markdown"
    assert not lesson.question_problems(nb, NB06.name)


def test_an_edited_question_rewrites_only_the_question_part(monkeypatch):
    nb = _read()
    ex = E.EXERCISES["tile_32x8"]
    monkeypatch.setitem(E.EXERCISES, "tile_32x8", dataclasses.replace(ex, question="## Exercise: new words\n\nMore."))
    (problem,) = lesson.question_problems(nb, NB06.name)
    assert "not the `question` of exercises/tile_32x8/exercise.toml" in problem
    i = lesson._call(nb, "get", "tile_32x8") - 1
    before = nb.cells[i].source[:nb.cells[i].source.index("## Exercise")]
    assert lesson.question_problems(nb, NB06.name, sync=True)
    assert nb.cells[i].source == before + "## Exercise: new words\n\nMore."
    assert not lesson.question_problems(nb, NB06.name)


def test_check_warns_of_missing_get_and_reveal_cells_and_of_text_naming_another_kernel(monkeypatch):
    nb = _read()
    assert not lesson.cell_warnings(nb, NB06.name) and not lesson.text_warnings(nb, NB06.name)
    nb.cells = [c for c in nb.cells if 'exercises.reveal("inplace")' not in c.source]
    (missing,) = lesson.cell_warnings(nb, NB06.name)
    assert "'inplace' has no `cl.exercises.reveal(\"inplace\")` cell" in missing
    ex = E.EXERCISES["tile_32x8"]                            # the reveal now launched with 16 rows of threads
    params = dict(ex.reveal_params, BLOCK_ROWS=16)
    monkeypatch.setitem(E.EXERCISES, "tile_32x8", dataclasses.replace(ex, reveal_params=tuple(params.items())))
    (text,) = lesson.text_warnings(nb, NB06.name)
    assert "after exercise 'tile_32x8' names BLOCK_ROWS = 8 (the reveal has BLOCK_ROWS = 16)" in text
    monkeypatch.setitem(E.EXERCISES, "tile_32x8", dataclasses.replace(ex, reveal="swizzle", reveal_params=()))
    assert any("names kernels/tile.cu" in w for w in lesson.text_warnings(nb, NB06.name))


@pytest.fixture
def course_copy(tmp_path, monkeypatch):
    """exercises/ and notebook 06 copied, the course's loaders pointed at the copies."""
    shutil.copytree(paths.EXERCISES, tmp_path / "exercises")
    (tmp_path / "notebooks").mkdir()
    shutil.copy(NB06, tmp_path / "notebooks" / NB06.name)
    for module, name in ((paths, "EXERCISES"), (solutions, "SOLUTIONS_DIR"), (paths, "NOTEBOOKS")):
        monkeypatch.setattr(module, name, tmp_path / ("notebooks" if name == "NOTEBOOKS" else "exercises"))
    monkeypatch.setattr("course_lib.teach.exercise_list.paths.EXERCISES", tmp_path / "exercises")
    return tmp_path


def test_sync_stubs_follows_a_kernel_renamed_in_the_folder(course_copy, monkeypatch):
    folder = course_copy / "exercises" / "tile_32x8"
    for name in ("exercise.toml", "solution.cu"):
        (folder / name).write_text((folder / name).read_text().replace("transpose_32x8", "transpose_tiles"))
    monkeypatch.setitem(E.EXERCISES, "tile_32x8", spec.load(folder))
    nb = nbformat.read(course_copy / "notebooks" / NB06.name, 4)
    ec = next(e for e in release.exercise_cells(nb, NB06.name) if e.key == "tile_32x8")
    assert "transpose_32x8" in nb.cells[ec.index].source and release.cell_state(nb, ec) == "edited"
    changed = icheck.sync_stubs(nb, NB06.name)
    assert any("set to the stub" in c for c in changed) and any("names transpose_tiles" in c for c in changed)
    assert nb.cells[ec.index].source.endswith(solutions.stub("tile_32x8")) and "transpose_tiles(" in nb.cells[ec.index].source
    assert nb.cells[ec.check_index].source == 'cl.exercises.check("tile_32x8", transpose_tiles)'
    assert not icheck.sync_stubs(nb, NB06.name)                            # done: nothing left to write


def test_rename_exercise_moves_the_folder_and_renames_the_kernel_and_the_cells(course_copy, monkeypatch, capsys):
    assert cli.main(["rename-exercise", "tile_32x8", "tile_rows", "--kernel", "transpose_rows"]) == 0
    said = capsys.readouterr().out
    folder = course_copy / "exercises" / "tile_rows"
    assert not (course_copy / "exercises" / "tile_32x8").exists() and "--sync-stubs" in said
    assert (folder / "solution.cu").read_text().startswith("//! Exercise 'tile_rows'")
    ex = spec.load(folder)
    assert ex.kernel == "transpose_rows" and "void transpose_rows(" in (folder / "solution.cu").read_text()
    monkeypatch.delitem(E.EXERCISES, "tile_32x8")
    monkeypatch.setitem(E.EXERCISES, "tile_rows", ex)
    assert (folder / "stub.cu").read_text() == solutions.stub_file_text("tile_rows")
    nb = nbformat.read(course_copy / "notebooks" / NB06.name, 4)
    assert 'cl.exercises.get("tile_rows")' in [c.source for c in nb.cells]
    assert icheck.sync_stubs(nb, NB06.name)
    (ec,) = [e for e in release.exercise_cells(nb, NB06.name) if e.key == "tile_rows"]
    assert release.cell_state(nb, ec) == "stub" and "transpose_rows" in nb.cells[ec.check_index].source
    for bad, words in ((["rename-exercise", "nope", "x"], "no exercise 'nope'"),
                       (["rename-exercise", "tile_rows", "inplace"], "exists already"),
                       (["rename-exercise", "tile_rows", "Bad Key"], "is not a key")):
        assert cli.main(bad) == 1 and words in capsys.readouterr().err


@pytest.mark.parametrize("args,words", [
    (["new-exercise", "x" * 300, "--lesson", "02"], "is not a key"),
    (["new-exercise", "my kernel", "--lesson", "02"], "is not a key"),
    (["new-exercise", "fine", "--lesson", "99"], "no notebook 99_*.ipynb"),
    (["new-exercise", "fine", "--lesson", "０２"], "two ASCII digits"),
    (["new-exercise", "fine", "--lesson", "02", "--kernel", "my kernel()"], "C identifier"),
])
def test_new_exercise_answers_every_bad_argument_in_words(args, words, capsys):
    assert cli.main(args) == 1
    err = capsys.readouterr().err
    assert words in err and "Traceback" not in err and len(err.splitlines()) == 1


def test_new_exercise_where_the_folder_cannot_be_written(tmp_path, monkeypatch, capsys):
    blocked = tmp_path / "a_file"
    blocked.write_text("not a folder")
    monkeypatch.setattr(paths, "EXERCISES", blocked / "exercises")
    assert cli.main(["new-exercise", "fine", "--lesson", "02"]) == 1
    assert "cannot create it" in capsys.readouterr().err
    monkeypatch.setattr(paths, "EXERCISES", tmp_path)
    assert cli.main(["new-exercise", "fine", "--lesson", "02"]) == 0
    assert (tmp_path / "fine" / "wrong.toml").exists() and spec.load(tmp_path / "fine").kernel == "fine"

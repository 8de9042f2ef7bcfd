"""course-lab and the instructor tools from any folder (issue 26): the course's notebooks/ is found from
this course_lib's checkout or from the current folder and those above it, whatever the current folder
is; notebooks given by path need no checkout at all; when nothing is found the message says where it
looked."""
from pathlib import Path

import pytest

from course_lib import paths
from course_lib.lab.student import course_lab as lab
from course_lib.lab.instructor import check as icheck
from course_lib.lab import course

REPO = Path(__file__).resolve().parents[2]


def test_course_lab_finds_the_checkouts_notebooks_from_any_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)                       # cd my-notebooks, cd ~: not the checkout's root
    assert course.notebooks_dir() == REPO / "notebooks"


@pytest.fixture
def wheel(tmp_path, monkeypatch):
    """An installed wheel: this course_lib sits in site-packages, beside no notebooks/."""
    site = tmp_path / "site-packages"
    site.mkdir()
    monkeypatch.setattr(paths, "REPO", site)
    return tmp_path


def test_a_wheel_finds_the_notebooks_of_the_folder_it_runs_in_or_above(wheel, monkeypatch):
    up = wheel / "clone" / "notebooks"
    up.mkdir(parents=True)
    (up / lab.FIRST_NOTEBOOK).write_text("{}")
    (wheel / "clone" / "my-notebooks").mkdir()
    for cwd in (wheel / "clone", wheel / "clone" / "my-notebooks"):
        monkeypatch.chdir(cwd)
        assert course.notebooks_dir() == up


def test_when_nothing_is_found_the_message_says_where_it_looked(wheel, monkeypatch):
    (wheel / "notebooks").mkdir()                     # someone else's notebooks/: not the course's
    monkeypatch.chdir(wheel)
    with pytest.raises(FileNotFoundError) as e:
        course.notebooks_dir()
    msg = str(e.value)
    assert str(paths.REPO / "notebooks") in msg and str(wheel) in msg and "course-lab path/to/notebooks" in msg
    assert "not an editable install" not in msg       # it may well be one


def test_instructor_tools_take_notebooks_by_path_with_no_checkout(wheel, monkeypatch):
    monkeypatch.chdir(wheel)
    nb = REPO / "notebooks" / "04_shared_memory_tiles.ipynb"
    assert icheck.notebook_paths([str(nb)]) == [nb]
    monkeypatch.setenv("HOME", str(REPO.parent))
    assert icheck.notebook_paths([f"~/{REPO.name}/notebooks/{nb.name}"]) == [nb]
    with pytest.raises(FileNotFoundError, match=r"no notebook 99_none\.ipynb.*looked"):
        icheck.notebook_paths(["99_none.ipynb"])


def test_instructor_tools_find_a_named_notebook_in_the_course_from_any_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert icheck.notebook_paths(["04_shared_memory_tiles.ipynb"]) == [REPO / "notebooks" / "04_shared_memory_tiles.ipynb"]
    assert icheck.notebook_paths()[0].parent == REPO / "notebooks"

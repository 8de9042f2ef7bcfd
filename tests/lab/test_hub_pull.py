"""What a hub's pull does to a student's copy of the course: real nbgitpuller, no hub.

A class hub hands the course out with nbgitpuller (deploy/config.yaml's postStart pull, deploy/links.py's
links): the first pull clones the student repository into the student's home, every later one commits
what the student changed and merges the course's update in. Here the student repository is a bare
repository in tmp_path, the instructor commits to a clone of it, and the student's copy is pulled with
nbgitpuller's own GitPuller (what both the links and the `gitpuller` command run); the student edits
notebooks as JupyterLab saves them (nbformat, one-space indent).

No course change and no student edit may be lost, and a pull that could not put both in one file says so.
nbgitpuller merges with `git merge -Xours`, which drops the course's side where the two collide (the same
lines, or lines next to each other: a cell each appended to one notebook); the student repository's
.gitattributes hands the files both sides changed to course_lib.lab.student.keepboth, which git's config defines
as the hub's image does (`python -m course_lib keep-both --install`).
"""
import json
import shutil
import subprocess
from pathlib import Path

import pytest

from course_lib import paths
from course_lib.lab.student import keepboth
from course_lib.notebook import setup

nbformat = pytest.importorskip("nbformat")
pull_module = pytest.importorskip("nbgitpuller.pull", reason="nbgitpuller comes with the [test] and [hub] extras")

REPO = Path(__file__).resolve().parents[2]
NB = "05_bank_conflicts.ipynb"
INSTRUCTOR_CELL = "## A new exercise, added by the instructor"
STUDENT_CELL = "# my own scratch cell"


def git(*args, cwd) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


class Course:
    """The student repository (bare), the instructor's clone and the student's copy on the hub."""

    def __init__(self, root: Path, attributes: bool = True):
        self.bare = root / "transpose-course.git"
        self.instructor, self.student = root / "instructor", root / "home" / "transpose-course"
        git("init", "-q", "--bare", "-b", "main", str(self.bare), cwd=root)
        git("clone", "-q", str(self.bare), str(self.instructor), cwd=root)
        for rel in (f"notebooks/{NB}", "notebooks/04_shared_memory_tiles.ipynb", "kernels/tile.cu") + \
                   ((".gitattributes",) if attributes else ()):
            (self.instructor / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(REPO / rel, self.instructor / rel)
        self.publish("the course")
        self.pull()

    def publish(self, message: str) -> None:
        git("add", "-A", cwd=self.instructor)
        git("commit", "-qm", message, cwd=self.instructor)
        git("push", "-q", "origin", "main", cwd=self.instructor)

    def pull(self) -> str:
        """What a link or the server's start does: nbgitpuller's pull, its output as one text."""
        return "".join(pull_module.GitPuller(str(self.bare), str(self.student), branch="main").pull())

    def files(self, folder: str = "notebooks") -> list[str]:
        return sorted(p.name for p in (self.student / folder).iterdir())

    def holding(self, text: str, folder: str = "notebooks") -> list[str]:
        """The student's files in `folder` that hold `text`."""
        return [p.name for p in sorted((self.student / folder).iterdir()) if p.is_file() and text in p.read_text()]

    def published(self, rel: str) -> bytes:
        return (self.instructor / rel).read_bytes()


@pytest.fixture
def hub_git(tmp_path, monkeypatch):
    """git as on the hub's image: the driver defined (--global here, --system there), no other settings."""
    if not shutil.which("git"):
        pytest.skip("needs git")
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(tmp_path / "gitconfig"))
    for who in ("AUTHOR", "COMMITTER"):
        monkeypatch.setenv(f"GIT_{who}_NAME", "instructor")
        monkeypatch.setenv(f"GIT_{who}_EMAIL", "instructor@example.edu")
    monkeypatch.delenv("NBGITPULLER_DEPTH", raising=False)          # nbgitpuller's default: a shallow clone
    keepboth.install("--global")


@pytest.fixture
def course(tmp_path, hub_git):
    return Course(tmp_path)


def edit(path: Path, change) -> None:
    """Change a notebook and save it as JupyterLab does."""
    nb = nbformat.read(path, as_version=4)
    change(nb)
    nbformat.write(nb, path)


def append_cell(source: str, kind: str = "markdown"):
    new = nbformat.v4.new_markdown_cell if kind == "markdown" else nbformat.v4.new_code_cell
    return lambda nb: nb.cells.append(new(source))


def after_stub_brace(line: str):
    """Add `line` right after the opening brace of notebook 05's exercise stub."""
    def change(nb):
        stub = next(c for c in nb.cells if c.source.startswith("%%cuda\n__global__ void transpose_padded"))
        stub.source = stub.source.replace("{", "{\n    " + line, 1)
    return change


def test_a_cell_each_appended_to_a_notebook_keeps_both_versions_and_says_so(course):
    mine = course.student / "notebooks" / NB
    edit(mine, append_cell(STUDENT_CELL, "code"))
    saved = mine.read_bytes()
    edit(course.instructor / "notebooks" / NB, append_cell(INSTRUCTOR_CELL))
    course.publish("05: a new exercise at the end")
    out = course.pull()
    assert mine.read_bytes() == saved, "the student's notebook is exactly as they saved it"
    [copy] = paths.kept_beside(mine, "course")
    assert copy.name.startswith("05_bank_conflicts.course-") and copy.suffix == ".ipynb"
    assert copy.read_bytes() == course.published(f"notebooks/{NB}"), "beside it: the course's new version"
    said = (f"notebooks/{NB}: you and the course changed the same part: yours is as you left it, "
            f"the course's version is beside it as {copy.name}")
    assert f"{keepboth.DRIVER}: {said}" in out, out
    note = (course.student / "notebooks" / keepboth.NOTE).read_text()
    assert note.startswith(keepboth.HEADER) and said in note
    banner = setup.course_version_beside(session=f"transpose-course/notebooks/{NB}", folder=mine.parent)
    assert banner and copy.name in banner and "this one is yours" in banner
    assert setup.course_version_beside(session="", folder=mine.parent) is None

    assert keepboth.DRIVER not in course.pull(), "a pull with nothing new keeps nothing twice"
    # the merge's base is now the course's last version: a later change the student's copy does not touch
    # merges in (the copy beside keeps the part the student's version lacks)
    edit(course.instructor / "notebooks" / NB, append_cell(INSTRUCTOR_CELL + ", part 2"))
    course.publish("05: part 2")
    assert f"notebooks/{NB}: you and the course changed different parts: it now holds both" in course.pull()
    assert course.holding(", part 2") == [NB] and course.holding(STUDENT_CELL) == [NB]
    assert paths.kept_beside(mine, "course") == [copy]
    # a later change the student's version collides with again: a second copy, the banner names the newest
    edit(mine, append_cell(STUDENT_CELL + ", again", "code"))
    edit(course.instructor / "notebooks" / NB, append_cell(INSTRUCTOR_CELL + ", part 3"))
    course.publish("05: part 3")
    course.pull()
    copies = paths.kept_beside(mine, "course")
    assert len(copies) == 2 and copies[0] == copy and copies[1].read_bytes() == course.published(f"notebooks/{NB}")
    assert f"{copies[1].name} (the newest of 2)" in setup.course_version_beside(session=NB, folder=mine.parent)


def test_the_same_lines_changed_by_both_keep_both_versions(course):
    edit(course.student / "notebooks" / NB, after_stub_brace("// my padded tile, line 1"))
    edit(course.instructor / "notebooks" / NB, after_stub_brace("// the instructor's fix of the stub's comment"))
    for who, line in ((course.student, "// my notes on the tile\n"), (course.instructor, "// the course's header\n")):
        tile = who / "kernels" / "tile.cu"
        tile.write_text(line + tile.read_text())
    course.publish("05's stub and tile.cu: better comments")
    out = course.pull()
    assert course.holding("my padded tile, line 1") == [NB]
    [copy] = paths.kept_beside(course.student / "notebooks" / NB, "course")
    assert course.holding("the instructor's fix") == [copy.name]
    assert course.holding("my notes on the tile", "kernels") == ["tile.cu"]
    [tile] = paths.kept_beside(course.student / "kernels" / "tile.cu", "course")
    assert tile.read_bytes() == course.published("kernels/tile.cu")
    assert "kernels/tile.cu: you and the course changed the same part" in out
    assert tile.name in (course.student / "kernels" / keepboth.NOTE).read_text()


def test_a_file_name_with_spaces_is_kept_both_ways_too(course):
    (course.instructor / "notebooks" / "notes on 05.md").write_text("the course's notes\n")
    course.publish("notes")
    course.pull()
    (course.student / "notebooks" / "notes on 05.md").write_text("my notes\n")
    (course.instructor / "notebooks" / "notes on 05.md").write_text("the course's better notes\n")
    course.publish("notes: better")
    assert "notebooks/notes on 05.md: you and the course changed the same part" in course.pull()
    [notes] = paths.kept_beside(course.student / "notebooks" / "notes on 05.md", "course")
    assert notes.name.startswith("notes on 05.course-") and notes.read_text() == "the course's better notes\n"
    assert (course.student / "notebooks" / "notes on 05.md").read_text() == "my notes\n"


def test_edits_in_different_places_are_merged_into_the_students_file_and_said(course):
    edit(course.student / "notebooks" / NB, lambda nb: setattr(nb.cells[3], "source", STUDENT_CELL))
    edit(course.instructor / "notebooks" / NB, append_cell(INSTRUCTOR_CELL))
    course.publish("05: a new exercise at the end")
    out = course.pull()
    assert course.holding(STUDENT_CELL) == course.holding(INSTRUCTOR_CELL) == [NB]
    nbformat.validate(nbformat.read(course.student / "notebooks" / NB, as_version=4))
    said = f"notebooks/{NB}: you and the course changed different parts: it now holds both"
    assert said in out and said in (course.student / "notebooks" / keepboth.NOTE).read_text()
    assert not paths.kept_beside(course.student / "notebooks" / NB, "course")


def test_a_deleted_notebook_comes_back_as_the_courses_new_version(course):
    (course.student / "notebooks" / NB).unlink()
    edit(course.instructor / "notebooks" / NB, append_cell(INSTRUCTOR_CELL))
    course.publish("05: a new exercise at the end")
    course.pull()
    assert course.holding(INSTRUCTOR_CELL) == [NB]


def test_untouched_files_update_a_students_own_edit_stays_and_new_notebooks_arrive(course):
    edit(course.student / "notebooks" / "04_shared_memory_tiles.ipynb", append_cell(STUDENT_CELL, "code"))
    (course.student / "notebooks" / "13_new.ipynb").write_text("the student's own notebook of that name\n")
    edit(course.instructor / "notebooks" / NB, append_cell(INSTRUCTOR_CELL))
    shutil.copyfile(REPO / "notebooks" / "00_start_here.ipynb", course.instructor / "notebooks" / "13_new.ipynb")
    course.publish("05: a new exercise; 13: new")
    out = course.pull()
    assert course.holding(INSTRUCTOR_CELL) == [NB]
    assert course.holding(STUDENT_CELL) == ["04_shared_memory_tiles.ipynb"]
    assert keepboth.DRIVER not in out and not (course.student / "notebooks" / keepboth.NOTE).exists()
    new = course.student / "notebooks" / "13_new.ipynb"
    assert new.read_bytes() == (REPO / "notebooks" / "00_start_here.ipynb").read_bytes()
    # nbgitpuller moves an untracked file out of an arriving one's way (NAME__<date><time>.ipynb) and says so
    mine = course.holding("the student's own notebook")
    assert len(mine) == 1 and mine[0].startswith("13_new__"), course.files()
    assert "to avoid conflict with upstream" in out
    json.loads(new.read_text())
    assert not git("status", "--porcelain", "--untracked-files=no", cwd=course.student)


def test_a_clone_from_before_the_attributes_keeps_both_once_it_has_them(tmp_path, hub_git):
    """git picks the driver by the .gitattributes in the student's folder: the pull that brings the file
    still merges the old way, so the file goes out in a commit of its own (deploy/README.md)."""
    old = Course(tmp_path, attributes=False)
    shutil.copyfile(REPO / ".gitattributes", old.instructor / ".gitattributes")
    old.publish("the course keeps both sides of a pull")
    assert keepboth.DRIVER not in old.pull() and (old.student / ".gitattributes").exists()
    edit(old.student / "notebooks" / NB, append_cell(STUDENT_CELL, "code"))
    edit(old.instructor / "notebooks" / NB, append_cell(INSTRUCTOR_CELL))
    old.publish("05: a new exercise at the end")
    assert f"{keepboth.DRIVER}: notebooks/{NB}" in old.pull()
    assert old.holding(INSTRUCTOR_CELL) and old.holding(STUDENT_CELL) == [NB]

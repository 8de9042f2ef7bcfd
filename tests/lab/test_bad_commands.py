"""What course-lab and the instructor tools say to a bad command line (issue 26): a course_lib message
with what, where and what to do, never a traceback, and nothing started or written."""
import os
import shutil
from pathlib import Path

import sys

import pytest

from course_lib.lab.student import course_lab as lab
from course_lib.lab.instructor import cli

REPO = Path(__file__).resolve().parents[2]
NB04 = str(REPO / "notebooks" / "04_shared_memory_tiles.ipynb")
as_root = hasattr(os, "geteuid") and os.geteuid() == 0


@pytest.fixture
def a_file(tmp_path):
    f = tmp_path / "notes.txt"
    f.write_text("mine\n")
    return f


@pytest.mark.parametrize("argv", [["--work", "{f}"], ["--write-jupyter-config", "{f}"]])
def test_course_lab_given_a_file_for_a_folder(a_file, capsys, argv):
    argv = [a.format(f=a_file) for a in argv]
    assert lab.main(argv + ["--no-browser"]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and f"{argv[0]} {a_file}" in err and "is a file, not a folder" in err
    assert a_file.read_text() == "mine\n"


@pytest.mark.parametrize("ip", ["999.1.1.1", "no-such-host.invalid"])
def test_course_lab_given_an_address_it_cannot_listen_on(tmp_path, capsys, ip):
    assert lab.main(["--ip", ip, "--no-browser", "--work", str(tmp_path / "w")]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and f"--ip {ip}" in err and "127.0.0.1" in err
    assert not (tmp_path / "w").exists()


@pytest.mark.parametrize("cmd", ["nbgrader", "build"])
def test_instructor_out_given_a_file(a_file, capsys, cmd):
    assert cli.main([cmd, "--out", str(a_file), *(["--no-execute"] if cmd == "build" else []), NB04]) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err and f"--out {a_file} is a file, not a folder" in err
    assert a_file.read_text() == "mine\n"


def test_instructor_tools_in_a_python_without_nbformat_say_which_environment(capsys, monkeypatch):
    """`python -m course_lib instructor check` run by a Python without the lab extras (the system's, a shell
    whose venv is not active) was a raw ModuleNotFoundError traceback."""
    monkeypatch.setitem(sys.modules, "nbformat", None)        # `import nbformat` now fails as if not installed
    assert cli.main(["check", NB04]) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err and "has no nbformat" in err and 'pip install "course-lib[instructor]"' in err


@pytest.fixture
def read_only(tmp_path):
    """A folder this user cannot write into (root writes anywhere but /sys)."""
    if as_root:
        if not Path("/sys/kernel").is_dir():
            pytest.skip("root writes into a read-only folder, and there is no /sys here")
        yield Path("/sys/kernel")
        return
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o555)
    yield ro
    ro.chmod(0o755)


@pytest.mark.parametrize("cmd", ["nbgrader", "build"])
def test_instructor_out_in_a_read_only_folder(read_only, capsys, cmd):
    out = read_only / "course"
    assert cli.main([cmd, "--out", str(out), *(["--no-execute"] if cmd == "build" else []), NB04]) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err and "cannot write" in err and f"--out {out}" in err and not out.exists()


def test_nbgrader_export_keeps_the_instructors_edited_source_notebook(tmp_path, capsys):
    """Before: a second `instructor nbgrader --out` overwrote the edited source notebook, no backup."""
    course = tmp_path / "course"
    assert cli.main(["nbgrader", "--out", str(course), NB04]) == 0
    source = course / "source" / "04_shared_memory_tiles" / "04_shared_memory_tiles.ipynb"
    assert cli.main(["nbgrader", "--out", str(course), NB04]) == 0        # the same again: nothing to keep
    assert sorted(p.name for p in source.parent.iterdir()) == [source.name]
    edited = source.read_text().replace("Shared", "SHARED", 1)
    source.write_text(edited)
    capsys.readouterr()
    assert cli.main(["nbgrader", "--out", str(course), NB04]) == 0
    assert sorted(p.name for p in source.parent.iterdir()) == [source.name]     # kept outside source/
    (kept,) = (course / ".course_lib_backups" / source.parent.name).iterdir()
    assert kept.name.startswith("04_shared_memory_tiles.before-") and kept.suffix == ".ipynb"
    assert kept.read_text() == edited and source.read_text() != edited
    out = capsys.readouterr().out
    assert f"kept your edited {source.relative_to(course)} as {kept.relative_to(course)}" in out


def test_nbgrader_export_moves_a_kept_notebook_an_older_export_left_in_source(tmp_path, capsys):
    """A course folder an older course_lib wrote may hold NAME.before-<date-time>.ipynb in
    source/<assignment>/, where nbgrader releases it: the next export moves it out, and says so."""
    course = tmp_path / "course"
    assert cli.main(["nbgrader", "--out", str(course), NB04]) == 0
    source = course / "source" / "04_shared_memory_tiles" / "04_shared_memory_tiles.ipynb"
    stray = source.with_name("04_shared_memory_tiles.before-20260101-120000.ipynb")
    stray.write_text("the instructor's old notebook\n")
    capsys.readouterr()
    assert cli.main(["nbgrader", "--out", str(course), NB04]) == 0
    moved = course / ".course_lib_backups" / source.parent.name / stray.name
    assert sorted(p.name for p in source.parent.iterdir()) == [source.name]
    assert moved.read_text() == "the instructor's old notebook\n"
    assert f"moved {stray.relative_to(course)} to {moved.relative_to(course)}" in capsys.readouterr().out


@pytest.mark.slow          # nbgrader itself, several times
def test_nbgrader_release_never_holds_the_kept_source_notebook(tmp_path, capsys):
    """Before: the kept NAME.before-<date-time>.ipynb sat in source/<assignment>/, and `nbgrader
    generate_assignment` released it as a second notebook of the assignment: a student would have
    received the instructor's earlier notebook, solutions and all."""
    pytest.importorskip("nbgrader", reason="nbgrader comes with the [instructor] extra (Python >= 3.11)")
    import subprocess
    import sys
    course, home, a = tmp_path / "course", tmp_path / "home", "04_shared_memory_tiles"
    home.mkdir()
    assert cli.main(["nbgrader", "--out", str(course), NB04]) == 0
    source = course / "source" / a / f"{a}.ipynb"
    source.write_text(source.read_text().replace("Shared", "SHARED", 1))
    capsys.readouterr()
    assert cli.main(["nbgrader", "--out", str(course), NB04]) == 0
    out = capsys.readouterr().out
    env = dict(os.environ, HOME=str(home), PYTHONPATH=str(REPO),
               PATH=os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]))   # alembic
    r = subprocess.run([sys.executable, "-m", "nbgrader", "generate_assignment", a], cwd=course, env=env,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and "ERROR" not in r.stderr, r.stderr[-4000:]
    released = sorted(str(p.relative_to(course / "release" / a)) for p in (course / "release" / a).rglob("*"))
    assert released == [source.name]                                  # the assignment's own notebook only
    from nbgrader.api import Gradebook
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:     # what `nbgrader db assignment list` shows
        assert [nb.name for nb in gb.find_assignment(a).notebooks] == [a]
    assert sorted(p.name for p in source.parent.iterdir()) == [source.name]      # nothing beside it in source/
    (kept,) = [p for p in course.rglob("*.before-*") if p.is_file()]
    assert kept.read_text().count("SHARED") == 1 and str(kept.relative_to(course)) in out


# ------------------------------------------------------------------------------ issue 36: clear answers, fast

def _tiny_notebook(path: Path) -> Path:
    import nbformat
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# notes")]), path)
    return path


@pytest.mark.parametrize("text, said", [('{"cells": 1}', "it is JSON, but not a Jupyter notebook: it has no 'nbformat'"),
                                        ("[1, 2]", "it is JSON (a list), not a Jupyter notebook"),
                                        ("{not json", "it is not JSON, so not a Jupyter notebook")])
def test_instructor_check_on_a_file_that_is_not_a_notebook(tmp_path, capsys, text, said):
    bad = tmp_path / "99_notes.ipynb"
    bad.write_text(text)
    good = _tiny_notebook(tmp_path / "98_fine.ipynb")
    assert cli.main(["check", str(bad), str(good)]) == 1
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err and f"{bad}: {said}" in out and "git checkout -- " in out
    assert "\n98_fine.ipynb: " in out, "the other notebooks are still checked"


def test_instructor_check_with_a_stub_cu_that_is_a_folder(tmp_path, capsys, monkeypatch):
    from course_lib import paths
    exercises = tmp_path / "exercises"
    shutil.copytree(paths.EXERCISES, exercises)
    stub = exercises / "shared_tile" / "stub.cu"
    stub.unlink()
    stub.mkdir()
    monkeypatch.setattr(paths, "EXERCISES", exercises)
    assert cli.main(["check", str(_tiny_notebook(tmp_path / "98_fine.ipynb"))]) == 1
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err and "exercises/shared_tile/stub.cu is a folder" in out + err
    assert "--sync-stubs" in out + err and stub.is_dir()

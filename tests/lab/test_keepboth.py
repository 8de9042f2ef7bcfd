"""The hub pull's merge driver (course_lib.lab.student.keepboth) on its own, and where copies kept beside a file
are named (course_lib.paths.beside). What nbgitpuller does with it is tests/lab/test_hub_pull.py."""
import json
import shutil
import subprocess
from pathlib import Path

import pytest

from course_lib import paths
from course_lib.lab.student import keepboth
from course_lib.notebook import setup

REPO = Path(__file__).resolve().parents[2]


def test_copies_beside_a_file_are_never_over_one_and_come_back_oldest_first(tmp_path):
    nb, make = tmp_path / "05_bank_conflicts.ipynb", tmp_path / "Makefile"
    for path in (nb, make):
        for stamp in ("20261127-101200", "20261127-101200", "20261126-090000"):
            paths.beside(path, "course", stamp).write_text(stamp)
    assert [p.name for p in paths.kept_beside(nb, "course")] == [
        "05_bank_conflicts.course-20261126-090000.ipynb", "05_bank_conflicts.course-20261127-101200.ipynb",
        "05_bank_conflicts.course-20261127-101200-2.ipynb"]
    assert [p.name for p in paths.kept_beside(make, "course")] == [
        "Makefile.course-20261126-090000", "Makefile.course-20261127-101200", "Makefile.course-20261127-101200-2"]
    assert paths.kept_beside(nb, "mine") == []


def _sides(tmp_path, base: bytes, mine: bytes, theirs: bytes) -> tuple[Path, Path, Path]:
    files = []
    for name, data in (("O", base), ("A", mine), ("B", theirs)):
        (tmp_path / name).write_bytes(data)
        files.append(tmp_path / name)
    return tuple(files)


@pytest.mark.skipif(not shutil.which("git"), reason="needs git (merge-file)")
@pytest.mark.parametrize("path, base, mine, theirs, kept", [
    ("k.cu", b"a\nb\nc\nd\ne\n", b"A\nb\nc\nd\ne\n", b"a\nb\nc\nd\nE\n", False),     # different places
    ("k.cu", b"a\nb\nc\n", b"a\nmine\nc\n", b"a\ntheirs\nc\n", True),                  # the same line
    ("x.bin", b"\0a\n", b"\0mine\n", b"\0theirs\n", True),                               # not text
    ("x.ipynb", b"a\nb\nc\nd\ne\n", b"A\nb\nc\nd\ne\n", b"a\nb\nc\nd\nE\n", True),     # merges, but no notebook
])
def test_the_driver_merges_what_does_not_collide_and_keeps_the_rest_both_ways(tmp_path, path, base, mine, theirs,
                                                                                 kept):
    top = tmp_path / "clone"
    (top / "notebooks").mkdir(parents=True)
    o, a, b = _sides(tmp_path, base, mine, theirs)
    line = keepboth.resolve(o, a, b, f"notebooks/{path}", top=top)
    copies = paths.kept_beside(top / "notebooks" / path, "course")
    if kept:
        assert a.read_bytes() == mine and [c.read_bytes() for c in copies] == [theirs]
        assert line.endswith(f"the course's version is beside it as {copies[0].name}")
    else:
        assert a.read_bytes() == b"A\nb\nc\nd\nE\n" and copies == []
        assert line.endswith("it now holds both")
    assert (top / "notebooks" / keepboth.NOTE).read_text().endswith(line + "\n")


def test_a_notebook_is_json_whose_cells_are_cells_with_ids_once():
    nb = json.loads((REPO / "notebooks" / "05_bank_conflicts.ipynb").read_text())
    assert keepboth.is_notebook(json.dumps(nb).encode())
    twice = dict(nb, cells=nb["cells"] + nb["cells"][:1])
    assert not keepboth.is_notebook(json.dumps(twice).encode())
    assert not keepboth.is_notebook(json.dumps(dict(nb, cells=[{"source": "x"}])).encode())
    assert not keepboth.is_notebook(b'{"cells": [], "metadata": {}}\n}')
    assert not keepboth.is_notebook(b"[1, 2]")


def test_the_command_git_runs_says_what_it_kept_and_stops_a_pull_it_cannot_keep_both_in(tmp_path, monkeypatch,
                                                                                          capsys):
    monkeypatch.chdir(tmp_path)                          # git runs the driver at the clone's top
    o, a, b = _sides(tmp_path, b"a\n", b"mine\n", b"theirs\n")
    assert keepboth.main([str(o), str(a), str(b), "f.txt"]) == 0
    assert capsys.readouterr().out.startswith(f"{keepboth.DRIVER}: f.txt: you and the course changed the same part")
    assert keepboth.main([str(o), str(a), str(tmp_path / "gone"), "f.txt"]) == 1
    assert "could not keep both" in capsys.readouterr().out and a.read_bytes() == b"mine\n"
    assert keepboth.main(["--help"]) == 0 and "keep-both --install" in capsys.readouterr().out
    assert keepboth.main(["a", "b"]) == 2
    assert keepboth.main(["--install"]) == 2, "where the driver goes is always said: never a developer's by default"


@pytest.mark.skipif(not shutil.which("git"), reason="needs git")
def test_install_defines_the_driver_and_without_it_git_merges_as_it_always_does(tmp_path, monkeypatch):
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(tmp_path / "none"))
    config = tmp_path / "gitconfig"
    keepboth.install(f"--file={config}", python="/opt/venv/bin/python")
    got = subprocess.run(["git", "config", f"--file={config}", f"merge.{keepboth.DRIVER}.driver"],
                         capture_output=True, text=True, check=True).stdout.strip()
    assert got == "/opt/venv/bin/python -m course_lib keep-both %O %A %B %P"
    # a checkout without the driver (an instructor's, Colab): the attribute changes nothing
    repo = tmp_path / "repo"
    git = lambda *a: subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *a], cwd=repo,
                                    capture_output=True, text=True)
    repo.mkdir()
    git("init", "-q", "-b", "main")
    shutil.copyfile(REPO / ".gitattributes", repo / ".gitattributes")
    (repo / "f.txt").write_text("a\nb\nc\n")
    git("add", "-A"), git("commit", "-qm", "1"), git("checkout", "-qb", "other")
    (repo / "f.txt").write_text("a\ntheirs\nc\n")
    git("commit", "-qam", "2"), git("checkout", "-q", "main")
    (repo / "f.txt").write_text("a\nmine\nc\n")
    git("commit", "-qam", "3")
    merge = git("merge", "other")
    assert merge.returncode == 1 and "CONFLICT (content)" in merge.stdout
    assert "<<<<<<<" in (repo / "f.txt").read_text() and not list(repo.glob("f.course-*"))


def test_the_banner_names_the_courses_version_beside_the_notebook_jupyterlab_runs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("JPY_SESSION_NAME", "transpose-course/notebooks/05_bank_conflicts.ipynb")
    assert setup.course_version_beside() is None
    paths.beside(tmp_path / "05_bank_conflicts.ipynb", "course", "20261127-101200").write_text("{}")
    line = setup.course_version_beside()
    assert line.endswith("beside it as 05_bank_conflicts.course-20261127-101200.ipynb")
    monkeypatch.delenv("JPY_SESSION_NAME")                   # nbval, a script, Colab: no notebook path
    assert setup.course_version_beside() is None


@pytest.mark.skipif(not shutil.which("git"), reason="needs git")
def test_install_where_git_cannot_write_its_config_says_where_and_what_to_do(tmp_path, monkeypatch, capsys):
    """Issue 36: a CalledProcessError's traceback before; now the file, git's words and the ways out."""
    monkeypatch.setenv("GIT_CONFIG_SYSTEM", str(tmp_path / "no-such-folder" / "gitconfig"))
    assert keepboth.main(["--install", "--system"]) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err and "could not write git's system config" in err
    assert str(tmp_path / "no-such-folder" / "gitconfig") in err and "GIT_CONFIG_SYSTEM" in err and "--file=" in err
    monkeypatch.setenv("PATH", str(tmp_path))                     # no git at all
    assert keepboth.main(["--install", "--global"]) == 1
    assert "git could not be run" in capsys.readouterr().err

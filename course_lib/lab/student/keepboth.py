"""The hub's pull keeps both sides: the git merge driver for the student repository's files.

    python -m course_lib keep-both --install --system   # once where students' servers run (the hub's image, TLJH),
                                                        # never in a developer's git config
    python -m course_lib keep-both %O %A %B %P          # what git then runs for a file both sides changed

A hub hands the course out with nbgitpuller (its links, and the pull at each server's start), which
commits what the student changed and merges the course's update with ``git merge -Xours``: where both
changed the same lines, or lines next to each other (a cell each appended to the same notebook), the
student's side wins and the course's change is dropped without a word. The student repository's
``.gitattributes`` names this driver for every file (``* merge=course-keep-both``); where git's config
defines it (:func:`install`), git hands it each file that both sides changed, and it

- merges the two as git would without -Xours (``git merge-file``): when no change collides, and a
  notebook is still a notebook, the file holds both sides' changes;
- otherwise leaves the student's file as it is and saves the course's version beside it,
  ``NAME.course-<date-time>.ipynb`` (course_lib.paths.beside, the rule that names ``course-lab
  --update``'s ``NAME.mine-<date-time>.ipynb``); nothing under an open notebook changes;
- says which: a line in the pull's output (shown on the link's page while it pulls) and in
  ``COURSE-UPDATES.md`` in the file's folder; a notebook's banner names a course version kept beside it.

Where the driver is not defined (a checkout, Colab) git merges as it always does: a ``merge`` attribute
naming an undefined driver is git's own text merge. Files only one side changed never reach the driver.
"""
from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path

from ... import paths

DRIVER = "course-keep-both"
NOTE = "COURSE-UPDATES.md"
USAGE = ("usage: python -m course_lib keep-both --install --system|--global|--file=PATH   (define the driver)\n"
         "       python -m course_lib keep-both BASE MINE THEIRS PATH   (what git runs: %O %A %B %P)")
HEADER = ("# Course updates to files you had changed\n\n"
          "Each line is a file that both you and the course had changed, when your copy of the course was\n"
          "updated (a course link, or your server's start). Nothing of yours was replaced.\n\n")


def merged(mine: Path, base: Path, theirs: Path, path: str) -> bytes | None:
    """Both sides' changes in one file (`mine` + what `theirs` changed since `base`), or None when they
    collide, a file is not text, or the result is not a notebook where `path` is one."""
    r = subprocess.run(["git", "merge-file", "-p", "-q", str(mine), str(base), str(theirs)], capture_output=True)
    if r.returncode != 0:                   # the number of collisions; negative (255 here) on an error
        return None
    return r.stdout if not path.endswith(".ipynb") or is_notebook(r.stdout) else None


def is_notebook(data: bytes) -> bool:
    """JSON whose cells are cells, their ids unique: what a text merge of two notebooks must still be."""
    try:
        nb = json.loads(data)
        cells = nb["cells"]
        ok = isinstance(nb.get("metadata"), dict) and isinstance(cells, list) and all(
            isinstance(c, dict) and c.get("cell_type") in ("code", "markdown", "raw") and "source" in c for c in cells)
        ids = [c["id"] for c in cells if "id" in c]
        return ok and len(ids) == len(set(ids))
    except (ValueError, TypeError, KeyError, AttributeError):
        return False


def resolve(base: Path, mine: Path, theirs: Path, path: str, top: Path = Path(".")) -> str:
    """Git's merge driver: `mine` (the student's, git's %A) becomes the result, `path` is where it goes
    (relative to the clone's top, `top`). Returns the line that says what happened, also noted beside the file."""
    both = merged(mine, base, theirs, path)
    if both is not None:
        mine.write_bytes(both)
        line = f"{path}: you and the course changed different parts: it now holds both"
    else:
        copy = paths.beside(top / path, "course", time.strftime("%Y%m%d-%H%M%S"))
        copy.write_bytes(theirs.read_bytes())
        line = (f"{path}: you and the course changed the same part: yours is as you left it, "
                f"the course's version is beside it as {copy.name}")
    note(top / Path(path).parent, line)
    return line


def note(folder: Path, line: str) -> None:
    """Add `line`, dated, to the folder's COURSE-UPDATES.md (made with its header the first time)."""
    target = folder / NOTE
    text = target.read_text(encoding="utf-8") if target.exists() else HEADER
    target.write_text(text + f"- {time.strftime('%Y-%m-%d %H:%M')} {line}\n", encoding="utf-8")


def driver_command(python: str = sys.executable) -> str:
    """The command git's config runs: this Python, so the image's or TLJH's course, not whatever is on PATH."""
    return f"{shlex.quote(python)} -m course_lib keep-both %O %A %B %P"


def install(scope: str, python: str = sys.executable) -> list[list[str]]:
    """Define the driver in git's config (`scope`: --system, --global or --file=PATH); the commands run.
    Only where students' servers pull: in a developer's config it would turn the instructor repository's
    merge conflicts into copies beside the files, which a developer expects to see as conflicts."""
    commands = [["git", "config", scope, f"merge.{DRIVER}.name",
                 "keep the student's file and the course's version (course_lib.lab.student.keepboth)"],
                ["git", "config", scope, f"merge.{DRIVER}.driver", driver_command(python)]]
    for command in commands:
        try:
            r = subprocess.run(command, capture_output=True, text=True)
        except OSError as exc:
            raise InstallError(f"keep-both --install {scope}: git could not be run ({exc.strerror or exc})\n"
                               "hint: install git (the hub's pull needs it too), then run this again") from None
        if r.returncode:
            where = {"--system": "git's system config ($GIT_CONFIG_SYSTEM, else /etc/gitconfig)",
                     "--global": "your git config (~/.gitconfig)"}.get(scope, f"the config file {scope[len('--file='):]}")
            raise InstallError(f"keep-both --install {scope}: git could not write {where}: {r.stderr.strip()[:300]}\n"
                               "hint: run it where that file may be written (as root for --system), set "
                               "GIT_CONFIG_SYSTEM to a file you can write (the hub's image uses its venv's "
                               "etc/gitconfig), or use --file=PATH")
    return commands


class InstallError(RuntimeError):
    """git could not record the driver: the message says where and what to do."""


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["--install"] and len(argv) == 2 and argv[1].startswith(("--system", "--global", "--file=")):
        try:
            for command in install(argv[1]):
                print(shlex.join(command))
        except InstallError as exc:
            print(exc, file=sys.stderr)
            return 1
        return 0
    if len(argv) != 4 or argv[0].startswith("-"):
        asked = argv[:1] in (["-h"], ["--help"])
        print(USAGE, file=sys.stdout if asked else sys.stderr)
        return 0 if asked else 2
    base, mine, theirs, path = argv
    try:
        print(f"{DRIVER}: {resolve(Path(base), Path(mine), Path(theirs), path)}", flush=True)
    except Exception as e:      # a collision for git: the pull stops and says so, rather than drop a side
        print(f"{DRIVER}: {path}: could not keep both ({e}); the pull stops here", flush=True)
        return 1
    return 0

"""The student repository, written from this one: every tracked file except the instructor-only ones.

    python -m course_lib instructor publish --out ../transpose-course      # then commit and push it there

This checkout is the INSTRUCTOR repository (private: it holds the solutions). What students clone,
pull through the hub's links and install on Colab is the STUDENT repository, ``course.COURSE_REPO``,
which :func:`publish` writes: each file ``git ls-files`` lists, except those :data:`INSTRUCTOR_ONLY`
matches (one list of globs: ``**`` spans folders, ``*`` one name). Before writing anything it checks
that no file it would publish shows a solution line (:func:`solution_lines`: a statement only an
exercise's solution has) where the course does not show it anyway (:func:`shown`: a notebook may
run an earlier lesson's answer, never a later one's, nor its own above the exercise; any other file
may repeat only what the notebooks show) and refuses, naming the file and the line, if one does.
It must run where the solutions are (the instructor repository). ``--out`` is an
empty folder or a clone of the student repository: there the files the instructor repository no
longer has are removed, the rest overwritten, and ``.git`` is left alone (commit what changed).

What this module does not do: commit, push, or strip solutions out of notebooks (``instructor build``
and ``instructor check`` keep notebooks/ free of them; the check here only refuses).
"""
from __future__ import annotations

import functools
import json
import re
import shutil
import subprocess
from pathlib import Path

from ... import paths
from ...teach import solutions
from ...teach.exercises import EXERCISES
from .release import _code_part

# files only instructors get: each exercise folder's solution (and hidden tests, should a folder keep
# any); kernels/solutions/ is where solutions lived before exercises/, kept so an old branch stays safe
INSTRUCTOR_ONLY = ("kernels/solutions/**", "exercises/*/solution.cu", "exercises/*/hidden.*",
                   "tests/lab/test_walk.py")     # the instructors' walk: it writes a new exercise's solution
TEXT = (".py", ".cu", ".cuh", ".md", ".ipynb", ".txt", ".toml", ".yaml", ".yml", ".cfg", ".json", ".sh", ".rst")


class PublishError(ValueError):
    pass


def _glob_re(pattern: str) -> re.Pattern:
    """A path glob as a regular expression: ``**`` any folders, ``*`` and ``?`` within one name."""
    out = ""
    for part in re.split(r"(\*\*|\*|\?)", pattern):
        out += {"**": ".*", "*": "[^/]*", "?": "[^/]"}.get(part, re.escape(part))
    return re.compile(out + r"\Z")


def instructor_only(path: str, patterns=INSTRUCTOR_ONLY) -> bool:
    """True for a repository path (posix, relative) that only the instructor repository keeps."""
    return any(_glob_re(p).match(path) for p in patterns)


def tracked_files(repo: Path = paths.REPO) -> list[str]:
    """Every file git tracks in `repo` (relative posix paths)."""
    try:
        r = subprocess.run(["git", "-C", str(repo), "ls-files", "-z"], capture_output=True, text=True, check=True)
    except (OSError, subprocess.CalledProcessError) as exc:
        raise PublishError(f"publish: {repo} is not a git checkout of the course ({exc})\n"
                           "hint: run it in a clone of the instructor repository, where `git ls-files` works") from None
    return sorted(p for p in r.stdout.split("\0") if p)


# ---------------------------------------------------------------------------- what counts as a solution

def code(line: str) -> str:
    """A line's code part (comments dropped), spacing collapsed."""
    return " ".join(_code_part(line).split())


def code_lines(text: str) -> set[str]:
    """Code parts of every line; the line numbers of a listing (``  26  code``) dropped."""
    return {code(re.sub(r"^\s*\d+\s\s", "", line)) for line in text.splitlines()}


@functools.lru_cache(maxsize=None)
def boilerplate() -> frozenset[str]:
    """Lines two or more course kernels share (``__syncthreads();``): no exercise's secret."""
    seen: dict[str, int] = {}
    for p in paths.KERNELS.glob("*.cu*"):
        for line in code_lines(p.read_text()):
            seen[line] = seen.get(line, 0) + 1
    return frozenset(line for line, n in seen.items() if n >= 2)


@functools.lru_cache(maxsize=None)
def solution_lines(key: str) -> frozenset[str]:
    """Statements (8+ characters, ending in ``;``) of exercise `key`'s solution that no stub of its
    lesson or an earlier one shows and that are not boilerplate."""
    lesson = EXERCISES[key].lesson
    stubs = {code(line) for k in solutions.keys() if EXERCISES[k].lesson <= lesson
             for line in solutions.stub(k).splitlines()}
    lines = {code(line) for line in solutions.solved(solutions.body(key)).splitlines()}
    return frozenset(s for s in lines - stubs - boilerplate() if len(s) >= 8 and s.endswith(";"))


def _strings(obj):
    if isinstance(obj, str):
        yield obj
    elif isinstance(obj, dict):
        for v in obj.values():
            yield from _strings(v)
    elif isinstance(obj, list):
        for v in obj:
            yield from _strings(v)


def _text_of_json(text: str) -> str:
    """A notebook's cells and outputs as text, not in their JSON quoting."""
    return "\n".join(_strings(json.loads(text)))


def _lesson(rel: str) -> str | None:
    m = re.fullmatch(r"notebooks/(\d\d)_[^/]*\.ipynb", rel)
    return m[1] if m else None


def _above_exercise(nb_text: str, key: str) -> str:
    """The cells of a notebook (JSON text) above exercise `key`'s cell: what a student reads before it."""
    cells = json.loads(nb_text).get("cells", [])
    defines = re.compile(rf"\bvoid\s+{EXERCISES[key].kernel}\s*\(")
    source = ["".join(c.get("source", "")) for c in cells]
    end = next((i for i, src in enumerate(source) if src.startswith("%%cuda") and defines.search(src)), len(cells))
    return "\n".join(_strings(cells[:end]))


def shown(rel: str, text: str, visible: frozenset = frozenset()) -> list[str]:
    """The solution text file `rel` (its `text`) shows. A notebook of lesson NN: a line of the solution of
    an exercise of a later lesson, or of its own lesson above that exercise (the lessons show earlier
    answers: notebook 05 runs lesson 04's tiled kernel). Any other file: a solution line the notebooks
    do not show anyway (`visible`). Anywhere: the solution files' markers."""
    lesson, found = _lesson(rel), []
    for key in solutions.keys():
        ex_lesson = EXERCISES[key].lesson
        if lesson is None:
            hit = solution_lines(key) & code_lines(text) - visible
        elif ex_lesson > lesson:
            hit = solution_lines(key) & code_lines(_text_of_json(text))
        elif ex_lesson == lesson:
            hit = solution_lines(key) & code_lines(_above_exercise(text, key))
        else:
            continue
        found += [f"{rel}: {s!r}, a line of {key}'s solution" for s in sorted(hit)]
    if rel.endswith((".cu", ".cuh", ".ipynb")) and re.search(r"(^|\")\s*//\s*(BEGIN|END) SOLUTION", text, re.M):
        found.append(f"{rel}: solution markers")
    return found


# ---------------------------------------------------------------------------- publish

def plan(repo: Path = paths.REPO) -> tuple[list[str], list[str]]:
    """(files to publish, problems): the tracked files not instructor-only, and the solution text they show."""
    if solutions.directory() is None:
        raise PublishError("publish: no solutions here, so nothing can be checked for them\n"
                           "hint: run it in the instructor repository (exercises/*/solution.cu), not in a published one")
    files = [f for f in tracked_files(repo) if not instructor_only(f) and (repo / f).is_file()]
    return files, check_files(repo, files)


def check_files(root: Path, files) -> list[str]:
    """The solution text the text files among `files` (paths relative to `root`) show (:func:`shown`)."""
    texts = {f: (Path(root) / f).read_text(errors="replace") for f in files if f.endswith(TEXT)}
    visible = frozenset().union(*(code_lines(_text_of_json(t)) for f, t in texts.items() if _lesson(f)))
    return [x for f, t in texts.items() for x in shown(f, t, visible)]


def _clear(out: Path, keep: set[str]) -> list[str]:
    """In a clone of the student repository, remove tracked files the new release does not have."""
    if not (out / ".git").exists():
        if any(out.iterdir()):
            raise PublishError(f"publish: {out} is neither empty nor a git clone of the student repository\n"
                               "hint: give an empty folder, or a clone of course.COURSE_REPO to update")
        return []
    gone = [f for f in tracked_files(out) if f not in keep]
    for f in gone:
        (out / f).unlink(missing_ok=True)
    return gone


def publish(out, repo: Path = paths.REPO, log=print) -> list[str]:
    """Write the student repository into `out`; the files written. Refuses (PublishError) before
    writing anything if a file to publish shows solution text."""
    repo, out = Path(repo).resolve(), Path(out).resolve()
    if out == repo or repo in out.parents:
        raise PublishError(f"publish: --out {out} is inside the instructor repository\n"
                           "hint: publish next to it, e.g. --out ../transpose-course")
    files, problems = plan(repo)
    if problems:
        raise PublishError("publish: these files would show solution text to students:\n  "
                           + "\n  ".join(problems[:20]) + "\nhint: move them under a path INSTRUCTOR_ONLY "
                           "(course_lib/lab/instructor/publish.py) lists, or take the solution out of them")
    out.mkdir(parents=True, exist_ok=True)
    gone = _clear(out, set(files))
    for f in files:
        (out / f).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(repo / f, out / f)
    left = len(tracked_files(repo)) - len(files)
    log(f"wrote {len(files)} files to {out} ({left} instructor-only left out"
        + (f", {len(gone)} removed" if gone else "") + "); commit and push them to the student repository")
    return files

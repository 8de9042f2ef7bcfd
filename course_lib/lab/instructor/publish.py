"""The student repository, written from this one: every tracked file except the instructor-only ones.

    python -m course_lib instructor publish --out ../transpose-course --dry-run   # what it would add, change, remove
    python -m course_lib instructor publish --out ../transpose-course             # then commit and push it there

This checkout is the INSTRUCTOR repository (private: it holds the solutions). What students clone,
pull through the hub's links and install on Colab is the STUDENT repository, ``course.COURSE_REPO``,
which :func:`publish` writes: each file ``git ls-files`` lists, except those :data:`INSTRUCTOR_ONLY`
matches (one list of globs: ``**`` spans folders, ``*`` one name), its Markdown written for students
(``student_docs``: instructor-only passages left out). Before writing anything it refuses, naming why:
an --out that is neither empty nor a previous publish of this course (``student_repo``: a file, an
unrelated repository, a clone of the instructor repository), a file there it did not write or that was
edited and not committed, a published Markdown file that links to a file students lack or names an
instructor-only path, and solution text anywhere in a published file (``leaks``). It checks --out first,
so a wrong one is refused at once. Then it lists what it adds, changes and removes (``--dry-run`` stops
there) and writes the files and the manifest that lets the next publish recognise its own files.
It must run where the solutions are (the instructor repository).

What this module does not do: commit, push, or strip solutions out of notebooks (``instructor build``
and ``instructor check`` keep notebooks/ free of them; the check here only refuses).
"""
from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

from ... import paths
from ...teach import solutions
from .. import course
from . import leaks, student_docs, student_repo
from .leaks import boilerplate, code, code_lines, shown, solution_lines  # noqa: F401  (this module's API since issue 30)
from .student_repo import MANIFEST, PublishError  # noqa: F401

# files only instructors get: each exercise folder's solution (and hidden tests, should a folder keep
# any); kernels/solutions/ is where solutions lived before exercises/, kept so an old branch stays safe
INSTRUCTOR_ONLY = ("kernels/solutions/**", "exercises/*/solution.cu", "exercises/*/hidden.*",
                   "exercises/*/wrong.toml",     # wrong kernels written from the solution: most of its lines
                   "tests/lab/test_walk.py")     # the instructors' walk: it writes a new exercise's solution
# the guides for instructors, notebook authors and the course's developers (the student README is README.md's
# student text); tests of the instructor tools and of the checkers against the solutions, which need them
INSTRUCTOR_ONLY += ("docs/INSTRUCTORS.md", "docs/NOTEBOOK_API.md", "docs/CONTRIBUTING.md",
                    "tests/lab/test_instructor.py", "tests/lab/test_grading.py", "tests/lab/test_nbgrader.py",
                    "tests/lab/test_no_solutions.py", "tests/lab/test_publish.py", "tests/lab/test_bad_commands.py",
                    "tests/teach/test_exercises.py", "tests/teach/test_checker_holes.py",
                    "tests/teach/test_checker_verdicts.py", "tests/teach/test_pipeline.py", "tests/teach/test_hints.py",
                    # correct kernels in other words than a solution's, and the graders' own tests
                    "tests/teach/honest.py", "tests/teach/dressing.py", "tests/teach/test_origin.py",
                    "tests/lab/test_formgrader.py", "tests/lab/test_inert.py", "tests/lab/test_handed_in.py",
                    # the class report's tests (a class of solutions and mutants), its GPU timing of a solution, and
                    # a class report made: its example lines and screenshot show solution lines
                    "tests/lab/test_class_report.py", "tests/lab/test_report.py", "tests/lab/test_verdicts.py",
                    "tests/teach/test_record.py", "benchmarks/leaderboard_gpu_times.py",
                    "benchmarks/results/*_class_report/**",
                    "tests/lab/test_box.py", "tests/lab/test_parallel_grading.py")


def _glob_re(pattern: str) -> re.Pattern:
    """A path glob as a regular expression: ``**`` any folders, ``*`` and ``?`` within one name."""
    out = ""
    for part in re.split(r"(\*\*|\*|\?)", pattern):
        out += {"**": ".*", "*": "[^/]*", "?": "[^/]"}.get(part, re.escape(part))
    return re.compile(out + r"\Z")


def instructor_only(path: str, patterns=INSTRUCTOR_ONLY) -> bool:
    """True for a repository path (posix, relative) that only the instructor repository keeps."""
    return any(_glob_re(p).match(path) for p in patterns)


def solution_path(path: str) -> bool:
    """True for an instructor-only path under exercises/ or kernels/: where solutions (and what is made from
    them) are kept, so that a published text must not even name one (``exercises/*/solution.cu`` included)."""
    return path.startswith(("exercises/", "kernels/")) and instructor_only(path)


def tracked_files(repo: Path = paths.REPO) -> list[str]:
    """Every file git tracks in `repo` (relative posix paths)."""
    try:
        r = subprocess.run(["git", "-C", str(repo), "ls-files", "-z"], capture_output=True, text=True, check=True)
    except (OSError, subprocess.CalledProcessError) as exc:
        raise PublishError(f"publish: {repo} is not a git checkout of the course ({exc})\n"
                           "hint: run it in a clone of the instructor repository, where `git ls-files` works") from None
    return sorted(p for p in r.stdout.split("\0") if p)


def _commit(repo: Path) -> tuple[str | None, list[str]]:
    """(HEAD's commit, tracked files that differ from it) of the instructor repository."""
    head = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True)
    diff = subprocess.run(["git", "-C", str(repo), "diff", "HEAD", "--name-only", "-z"], capture_output=True, text=True)
    return (head.stdout.strip() or None if head.returncode == 0 else None,
            sorted(filter(None, diff.stdout.split("\0"))) if head.returncode == 0 else [])


# ---------------------------------------------------------------------------- the release

def release(repo: Path = paths.REPO) -> tuple[dict[str, bytes], set[str]]:
    """({path: bytes} the student repository gets, the executable ones): every tracked file not instructor-only,
    its Markdown written for students. PublishError for a marker out of place."""
    files, executable = {}, set()
    for rel in tracked_files(repo):
        p = repo / rel
        if instructor_only(rel) or not p.is_file() or p.is_symlink():
            continue
        data = p.read_bytes()
        if rel.endswith(".md"):
            try:
                data = student_docs.student_text(rel, data.decode("utf-8")).encode("utf-8")
            except (UnicodeDecodeError, student_docs.MarkerError) as exc:
                raise PublishError(f"publish: {exc}\nhint: docs of course_lib/lab/instructor/student_docs.py") from None
        files[rel] = data
        if os.stat(p).st_mode & 0o100:
            executable.add(rel)
    return files, executable


def problems(files: dict[str, bytes], tracked) -> list[str]:
    """What students must not get in `files`: links to files they lack, instructor-only paths, solution text."""
    texts = {rel: t for rel, data in files.items() if (t := leaks.text_of(rel, data)) is not None}
    return (student_docs.doc_problems(texts, set(files), set(tracked), solution_path)
            + leaks.check_texts(texts))


def check_files(root: Path, files) -> list[str]:
    """The solution text the files among `files` (paths relative to `root`) show (:func:`leaks.shown`)."""
    texts = {f: t for f in files if (t := leaks.text_of(f, (Path(root) / f).read_bytes())) is not None}
    return leaks.check_texts(texts)


def plan(repo: Path = paths.REPO) -> tuple[list[str], list[str]]:
    """(files to publish, problems): the tracked files not instructor-only, and what they must not show."""
    _need_solutions()
    files, _ = release(repo)
    return sorted(files), problems(files, tracked_files(repo))


def _need_solutions():
    if solutions.directory() is None:
        raise PublishError("publish: no solutions here, so nothing can be checked for them\n"
                           "hint: run it in the instructor repository (exercises/*/solution.cu), not in a published one")


# ---------------------------------------------------------------------------- publish

def publish(out, repo: Path = paths.REPO, log=print, dry_run: bool = False) -> list[str]:
    """Write the student repository into `out` (see the module's docstring); the files it holds. Refuses
    (PublishError) before writing anything: a wrong --out first, then files it would lose, then leaks."""
    repo, out = Path(repo).resolve(), Path(out).expanduser().resolve()
    if out == repo or repo in out.parents:
        raise PublishError(f"publish: --out {out} is inside the instructor repository\n"
                           "hint: publish next to it, e.g. --out ../transpose-course")
    dest = student_repo.open_out(out, course.COURSE_ID)
    _need_solutions()
    files, executable = release(repo)
    changes = student_repo.changes(dest, files, executable)
    found = problems(files, tracked_files(repo))
    if found:
        raise PublishError("publish: these files would show students what they must not see (nothing written):\n  "
                           + "\n  ".join(found[:20]) + (f"\n  ... and {len(found) - 20} more" if len(found) > 20 else "")
                           + "\nhint: move a file under a path INSTRUCTOR_ONLY (course_lib/lab/instructor/publish.py) "
                           "lists, put a passage between <!-- instructor-only --> and <!-- end instructor-only -->, "
                           "or take the solution out of it")
    for line in student_repo.describe(dest, changes, every=dry_run):
        log(line)
    if dry_run:
        log("--dry-run: nothing written")
        return sorted(files)
    commit, uncommitted = _commit(repo)
    uncommitted = [f for f in uncommitted if f in files]
    student_repo.apply(dest, changes, files, executable, course.COURSE_ID, commit, uncommitted)
    left = len(tracked_files(repo)) - len(files)
    log(f"wrote {len(changes.add) + len(changes.change)} and removed {len(changes.remove)} of the {len(files)} files "
        f"in {out} ({left} instructor-only left out)" + (f"; {len(uncommitted)} of them differ from the commit "
                                                         f"{commit[:12]}" if uncommitted and commit else "")
        + "; commit and push them to the student repository")
    return sorted(files)

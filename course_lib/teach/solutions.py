"""Exercise solutions: where they live, how a notebook's stub is made from them, and `reveal`.

    from course_lib import solutions
    solutions.keys()                      # ['aos_struct', 'batched', ...]; [] where they are not kept
    solutions.stub("shared_tile")         # the exercise cell's body as students get it
    cl.exercises.reveal("shared_tile")    # after check() passed, in self-study: the course's solution

Solutions stay with instructors. Each is one real CUDA file, ``exercises/<exercise key>/solution.cu``,
in the course's repository (the instructor copy) and never in the installed package: the wheel
ships each exercise folder without it, so ``pip install`` (Colab, a hub) gives students the course
without them, and :func:`directory` is None there (``$COURSE_LIB_SOLUTIONS`` may point at a folder
of exercise folders holding them). Its leading ``//!`` lines document the file; the rest is the
instructor's version of the exercise's ``%%cuda`` cell body, with the solution between markers and
the stub that replaces it::

    // BEGIN SOLUTION
    //> int x = /* TODO */ 0;                 <- the stub line the student gets ('//> ' removed)
    int x = blockIdx.x * 32 + threadIdx.x;    <- the solution (removed)
    // END SOLUTION

The student cell is :func:`stub` of the file, character for character (tests and ``instructor
check`` keep them equal); the instructor copy puts :func:`body` back (``instructor build``). The
stub is also a file, ``stub.cu`` beside the solution, so that a student repository and the wheel
have it: :func:`stub_file_text` is what it must hold (``instructor check`` fails when it differs,
``--sync-stubs`` rewrites it). Parameters of the exercise (``[params]`` of exercise.toml, upper-case
names) are replaced by the variant's values (``spec.render``).
:func:`strip_solutions` is the one implementation of the marker convention.

Two modes: self-study (the default) and graded (:func:`graded`: ``COURSE_LIB_GRADED=1``, which the
nbgrader configuration sets for autograding and a hub for a graded class sets for students). In a
graded run nothing reveals a solution and the checker refuses a solution's text. This module
neither runs kernels nor edits notebooks.
"""
from __future__ import annotations

import contextlib
import os
import re
from dataclasses import dataclass
from pathlib import Path

from .. import paths
from ..errors import NotFound
from . import spec

SOLUTIONS_DIR = paths.EXERCISES          # exercises/<key>/solution.cu in a checkout; a wheel has none
ENV_DIR, ENV_GRADED = "COURSE_LIB_SOLUTIONS", "COURSE_LIB_GRADED"
REPO_URL = "https://github.com/transpose-course/transpose-course/blob/main/exercises"
DOC = "//!"
BEGIN, END, STUB = "BEGIN SOLUTION", "END SOLUTION", ">"
_MARK = re.compile(r"^(?P<indent>\s*)(?P<comment>//|#)\s*(?P<what>BEGIN SOLUTION|END SOLUTION)\b.*$")

# ---------------------------------------------------------------------------- the marker convention

def strip_solutions(text: str, todo: str = "TODO: your code here") -> str:
    """The student version of a cell: each BEGIN/END SOLUTION block becomes its stub lines
    (lines in the block starting with '//> ' or '#> ', marker removed) or, if it has none,
    one '// TODO: your code here' comment at the marker's indentation. Raises ValueError for
    unbalanced markers (so a build fails loudly instead of leaking a solution)."""
    out, block, start = [], None, None
    for n, line in enumerate(text.splitlines(keepends=True), 1):
        m = _MARK.match(line.rstrip("\n"))
        if m and m["what"] == BEGIN:
            if block is not None:
                raise ValueError(f"line {n}: BEGIN SOLUTION inside the solution block opened on line {start}")
            block, start, head = [], n, m
        elif m and m["what"] == END:
            if block is None:
                raise ValueError(f"line {n}: END SOLUTION without BEGIN SOLUTION")
            stubs = [s for s in map(_stub_re(head).match, (b.rstrip("\n") for b in block)) if s]
            out += [s[1] + s[2] + "\n" for s in stubs] or [f"{head['indent']}{head['comment']} {todo}\n"]
            block = None
        elif block is not None:
            block.append(line)
        else:
            out.append(line)
    if block is not None:
        raise ValueError(f"line {start}: BEGIN SOLUTION is never closed by END SOLUTION")
    return "".join(out)


def solved(text: str) -> str:
    """The solution alone: marker and stub lines dropped, the solution lines kept."""
    out, head = [], None
    for line in text.splitlines(keepends=True):
        m = _MARK.match(line.rstrip("\n"))
        if m:
            head = m if m["what"] == BEGIN else None
        elif head is None or not _stub_re(head).match(line.rstrip("\n")):
            out.append(line)
    return "".join(out)


def has_solution(text: str) -> bool:
    """True when the text holds a solution block (cells a build must strip).

        [c for c in nb.cells if has_solution(c.source)]
    """
    return any(_MARK.match(line) and BEGIN in line for line in text.splitlines())


def _stub_re(head):
    return re.compile(r"^(\s*)" + re.escape(head["comment"]) + re.escape(STUB) + r" ?(.*)$")


# ---------------------------------------------------------------------------- solution files

def graded() -> bool:
    """True in a graded run (COURSE_LIB_GRADED=1): solutions are never shown, their text never accepted."""
    return os.environ.get(ENV_GRADED, "").strip().lower() in ("1", "true", "yes", "on")


@contextlib.contextmanager
def self_study():
    """Self-study mode within, whatever COURSE_LIB_GRADED says: the instructor's tools run solutions."""
    saved = os.environ.pop(ENV_GRADED, None)
    try:
        yield
    finally:
        if saved is not None:
            os.environ[ENV_GRADED] = saved


def directory() -> Path | None:
    """The folder of exercise folders holding solution.cu files on this machine: $COURSE_LIB_SOLUTIONS,
    or exercises/ of a checkout; None where the course was installed without them (a wheel)."""
    for d in (os.environ.get(ENV_DIR), SOLUTIONS_DIR):
        if d and Path(d).is_dir() and any(Path(d).glob(f"*/{spec.SOLUTION}")):
            return Path(d)
    return None


def keys() -> list[str]:
    """Every exercise with a solution file here ([] where the solutions are not kept)."""
    d = directory()
    return sorted(p.parent.name for p in d.glob(f"*/{spec.SOLUTION}")) if d else []


def path(key: str) -> Path:
    d = directory()
    if d is None:
        raise NotFound(f"no solution of '{key}' here: the solutions stay with instructors",
                       hint="the installed course carries none; they are exercises/*/solution.cu of the course's "
                            f"repository (set ${ENV_DIR} to a folder of exercise folders holding them)")
    p = d / key / spec.SOLUTION
    if not p.exists():
        raise NotFound(f"no solution file for '{key}' in {d}", hint=f"known: {', '.join(keys())}")
    return p


def _cell(text: str) -> str:
    """A .cu file as a cell body: without its leading //! lines and final newline (a cell has none)."""
    lines = text.splitlines(keepends=True)
    while lines and lines[0].startswith(DOC):
        lines.pop(0)
    return "".join(lines).rstrip("\n")


def _params(key: str, params) -> dict:
    if params is not None:
        return dict(params)
    folder = paths.EXERCISES / key
    return spec.defaults(spec.read(folder)) if (folder / spec.TOML).exists() else {}


def body(key: str, params=None) -> str:
    """The instructor's cell body of the variant `params` (default: the exercise's default variant):
    the file without its leading //! lines and final newline, markers kept."""
    return spec.render(_cell(path(key).read_text()), _params(key, params))


def file_text(key: str, params=None) -> str:
    """The solution file as the variant `params` renders it, //! lines included (what a student who
    pasted the file of a checkout would compile)."""
    lines = path(key).read_text().splitlines(keepends=True)
    head = [line for line in lines if line.startswith(DOC)]
    return "".join(head) + spec.render("".join(lines[len(head):]), _params(key, params))


def stub(key: str, params=None) -> str:
    """The student's cell body (what notebooks/ holds): from the solution where it is kept, else stub.cu."""
    if directory() is not None and (directory() / key / spec.SOLUTION).exists():
        return strip_solutions(body(key, params))
    f = paths.EXERCISES / key / spec.STUB
    if not f.exists():
        raise NotFound(f"no stub of '{key}': neither {spec.SOLUTION} nor {spec.STUB} in {f.parent}",
                       hint="python -m course_lib instructor check --sync-stubs writes stub.cu from solution.cu")
    return spec.render(_cell(f.read_text()), _params(key, params))


def stub_file_text(key: str) -> str:
    """What exercises/<key>/stub.cu must hold: solution.cu's markers replaced by their stubs, parameters
    left as names, under a //! line that says where it comes from."""
    head = (f"{DOC} Generated from {spec.SOLUTION} (instructor-only) by `python -m course_lib instructor check "
            f"--sync-stubs`: edit {spec.SOLUTION}, not this file.\n")
    return head + strip_solutions(_cell(path(key).read_text())) + "\n"


def split_cell(source: str) -> tuple[str, str]:
    """(magic line, body) of a %%cuda cell; the magic line keeps its '%%cuda'."""
    line, _, rest = source.partition("\n")
    return line, rest


# ---------------------------------------------------------------------------- reveal

@dataclass
class Revealed:
    """What `reveal` answers: the solution (shown) or why not yet (a message); `note` and `marked`
    (line numbers) point at what differs from an earlier lesson's kernel (``reveal_diff``)."""
    key: str
    text: str
    shown: bool
    title: str = ""
    note: str = ""
    marked: frozenset = frozenset()

    def _lines(self) -> str:
        if not self.marked:
            return self.text
        return "\n".join(line + ("    // <-- the line that differs" if n in self.marked else "")
                         for n, line in enumerate(self.text.splitlines(), 1)) + "\n"

    def __repr__(self):
        head = "\n\n".join(p for p in (self.title, self.note) if p)
        return f"{head}\n\n{self._lines()}" if head else self.text

    def _repr_markdown_(self):
        if not self.shown:
            return None
        note = f"{self.note}\n\n" if self.note else ""
        return f"**{self.title or 'Solution of ' + repr(self.key)}**\n\n{note}```cuda\n{self._lines()}```\n"

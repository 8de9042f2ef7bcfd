"""Whose kernel is it? A checked kernel must be the student's, not the course's own.

    problem = borrowed(transpose_tile)      # None, or (what, hint) for the checker's report

An exercise asks the student to write a kernel the course also has: ``cl.transposes.kernel("tile")``
is shared_tile's answer, and a solution file is every exercise's. :func:`borrowed` refuses a kernel
compiled from the course's sources, whatever the route:

- a course module (``course_lib.transposes`` marks them ``trusted``): ``kernel(...).function``;
- a module whose code is a course file (``RawModule(path="tile")``, ``code=open(...).read()``, the
  file pasted into a ``%%cuda`` cell), comments and spacing aside;
- a source that includes a file of the course's kernels/ folder (``#include "tile.cu"`` with
  ``-i "transpose_tile=tile<float, 32, 32, 0>"``), or holds a function whose body is a course
  kernel's (pasted, renamed; comments and spacing aside);
- a solution file, read from its path or with its ``//!`` header, and — in a graded run
  (``solutions.graded()``: nbgrader's autograder, a graded hub) — a source with the solution's
  markers or a comment only the solution has: text copied from kernels/solutions/.

A student who writes the same algorithm in their own words passes. In self-study and for the
instructor the solution's text is accepted (the instructor copy runs it). This module compiles and
runs nothing.
"""
from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

from ..compile import source
from ..kernel.module import KERNELS_DIR
from . import solutions

HINT = ("the exercise is to write this kernel: complete the exercise's %%cuda cell (its stub) and check the "
        "kernel that cell defines — the checker judges only kernels you wrote")
_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*[<"]([^>"]+)[>"]', re.M)
_FUNCTION = re.compile(r"\b(?:__global__|__device__)\b[^;{}]*?\b(\w+)\s*\([^;{}]*\)\s*(?:const\s*)?\{")
MIN_BODY = 60          # characters of code (spacing dropped) a body needs before it counts as the course's


def normalized(text: str) -> str:
    """Code without comments or any spacing: what a copy keeps whatever its layout."""
    return re.sub(r"\s+", "", source.strip_comments(text))


def bodies(text: str) -> dict[str, str]:
    """{function name: normalized body} of every __global__ / __device__ function defined in `text`."""
    code, out = source.strip_comments(text), {}
    for m in _FUNCTION.finditer(code):
        depth, i = 1, m.end()
        while depth and i < len(code):
            depth += {"{": 1, "}": -1}.get(code[i], 0)
            i += 1
        out.setdefault(m[1], re.sub(r"\s+", "", code[m.end():i - 1]))
    return out


@lru_cache(maxsize=1)
def _course_files() -> dict[str, tuple[str, dict]]:
    """{file name: (normalized text, {kernel name: normalized body})} of kernels/*.cu and *.cuh."""
    out = {}
    for p in sorted(KERNELS_DIR.glob("*.cu*")):
        text = p.read_text()
        kernels = set(source.kernels(text))
        out[p.name] = (normalized(text), {k: b for k, b in bodies(text).items() if k in kernels})
    return out


def _solution_texts() -> dict[str, tuple[str, str, set]]:
    """{key: (the file's first //! line, normalized body, comments only the solution has)} where solutions exist."""
    out = {}
    for key in solutions.keys():
        body = solutions.body(key)
        out[key] = (solutions.path(key).read_text().splitlines()[0], normalized(body), _own_comments(key, body))
    return out


def _comments(text: str) -> set[str]:
    """Every comment's words, spacing normalized."""
    found = re.findall(r"//([^\n]*)|/\*(.*?)\*/", text, re.S)
    return {" ".join(part.split()) for pair in found for part in pair if part.strip()}


def _own_comments(key: str, body: str) -> set[str]:
    """Comments of the solution's lines that its stub does not show, long enough to be its words."""
    solved = solutions.solved(body)
    return {c for c in _comments(solved) - _comments(solutions.stub(key)) if len(c) >= 16}


def borrowed(fn) -> tuple[str, str] | None:
    """(what, hint) when `fn` was compiled from the course's kernels or solutions; None when it is the student's."""
    module = fn.module
    name = fn.name.split("<")[0].strip()
    if getattr(module, "trusted", False):
        return f"{fn.name} is the course's own kernel (course_lib.transposes), not one you wrote", HINT
    code = module.code
    mine = normalized(code)
    for file, (text, kernels) in _course_files().items():
        if mine == text:
            return f"{name} was compiled from the course's file kernels/{file}, not written by you", HINT
    included = [f for f in _INCLUDE.findall(code) if (KERNELS_DIR / Path(f).name).is_file()]
    if included:
        return (f"the cell that defines {name} includes the course's kernels/{Path(included[0]).name}",
                "write the exercise's kernel yourself, without #include of the course's kernels; " + HINT)
    own = bodies(code)
    for file, (_, kernels) in _course_files().items():
        for kernel, body in kernels.items():
            same = [f for f, b in own.items() if b == body and len(b) >= MIN_BODY]
            if same:
                return (f"{same[0]} is the course's kernel '{kernel}' of kernels/{file}, copied (renamed or not)",
                        HINT)
    return _solution_copy(code, mine, name)


def _solution_copy(code: str, mine: str, name: str) -> tuple[str, str] | None:
    graded = solutions.graded()
    if graded and solutions.has_solution(code):
        return f"{name} is a course solution: the instructor's version, BEGIN/END SOLUTION markers and all", HINT
    for key, (header, body, comments) in _solution_texts().items():
        if header in code and mine == body:
            return f"{name} was compiled from the course's solution file kernels/solutions/{key}.cu", HINT
        if not graded:
            continue
        copied = sorted(c for c in _comments(code) if c in comments)
        if copied:
            return (f"{name} carries the course's solution of '{key}': its comment \"{copied[0]}\" is the "
                    "solution's", HINT)
    return None

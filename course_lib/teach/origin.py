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
  kernel's (pasted, renamed; comments and spacing aside) — also with every name of its own
  renamed: bodies are compared as token streams whose identifiers are replaced by $0, $1... in
  order of first use (keywords, types, CUDA's built-ins such as threadIdx and __syncthreads, member
  names after a dot, and literals are kept), from ``MIN_TOKENS`` tokens on;
- any file the kernel was compiled from (the PTX's ``.file`` list: an ``#include`` by any path,
  absolute or through macros) whose content is a course kernel's or a solution's, whatever its name;
- a solution file, read from its path or with its ``//!`` header, and — in a graded run
  (``solutions.graded()``: nbgrader's autograder, a graded hub) — a source with the solution's
  markers or a comment only the solution has: text copied from exercises/<key>/solution.cu;
- whatever its text, a kernel whose compiled code is a course kernel's that answers the exercise
  (``course_code``: the ``reveal`` kernel and every kernel of kernels/ that launches as the exercise
  does, with the exercise's — the student's variant's — parameters and type; compared by a
  fingerprint of the PTX that names, comments, constants written in and the order of independent
  statements do not change, ``codeprint``).

A student who writes the same algorithm in their own words passes. In self-study and for the
instructor the solution's text is accepted (the instructor copy runs it). This module compiles and
runs nothing (``course_code`` compiles the course's kernels it compares with).
"""
from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

from ..compile import source
from ..kernel.module import KERNELS_DIR
from . import course_code, solutions, spec

HINT = ("the exercise is to write this kernel: complete the exercise's %%cuda cell (its stub) and check the "
        "kernel that cell defines — the checker judges only kernels you wrote")
_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*[<"]([^>"]+)[>"]', re.M)
_FUNCTION = re.compile(r"\b(?:__global__|__device__)\b[^;{}]*?\b(\w+)\s*\([^;{}]*\)\s*(?:const\s*)?\{")
MIN_BODY = 60          # characters of code (spacing dropped) a body needs before it counts as the course's
MIN_TOKENS = 40        # tokens a body needs before its renamed form counts as the course's (a copy kernel has ~30)
_TOKEN = re.compile(r"[A-Za-z_]\w*|\d[\w.]*|\.\d[\w.]*|<<=|>>=|->|\+\+|--|<<|>>|<=|>=|==|!=|&&|\|\||::|[-+*/%&|^]=|\S")
KEEP = set("""auto bool break case char const constexpr continue default do double else enum extern float for goto
if inline int long register restrict return short signed sizeof static struct switch typedef typename template
union unsigned void volatile while size_t true false nullptr reinterpret_cast static_cast const_cast
threadIdx blockIdx blockDim gridDim warpSize float2 float4 int2 int4 uint2 uint4 double2 half min max
atomicAdd atomicExch atomicCAS""".split())


def normalized(text: str) -> str:
    """Code without comments or any spacing: what a copy keeps whatever its layout."""
    return _squeezed(source.strip_comments(text))


def _squeezed(code: str) -> str:
    return re.sub(r"\s+", "", code)


def canonical(body: str) -> tuple:
    """The body's tokens with its own names replaced by $0, $1... in order of first use; keywords,
    types, CUDA's built-ins (and any __name), member names after '.' or '->', and literals kept."""
    out, names = [], {}
    tokens = _TOKEN.findall(re.sub(r"^[ \t]*#[^\n]*", "", body, flags=re.M))
    for i, t in enumerate(tokens):
        if (t[0].isalpha() or t[0] == "_") and t not in KEEP and not t.startswith("__") \
                and not (i and tokens[i - 1] in (".", "->")):
            t = names.setdefault(t, f"${len(names)}")
        out.append(t)
    return tuple(out)


def _raw_bodies(code: str) -> dict[str, str]:
    """{function name: body text (spacing kept)} of every kernel or device function in `code`, whose
    comments are already stripped (``compile.source``)."""
    out = {}
    for m in _FUNCTION.finditer(code):
        depth, i = 1, m.end()
        while depth and i < len(code):
            depth += {"{": 1, "}": -1}.get(code[i], 0)
            i += 1
        out.setdefault(m[1], code[m.end():i - 1])
    return out


@lru_cache(maxsize=1)
def _course_files() -> dict[str, tuple[str, dict, dict]]:
    """{file name: (normalized text, {kernel: normalized body}, {kernel: canonical tokens})} of kernels/*.cu*."""
    out = {}
    for p in sorted(KERNELS_DIR.glob("*.cu*")):
        src = source.read(p.read_text())
        raw = {k: b for k, b in _raw_bodies(src.code).items() if k in src.names}
        canon = {k: canonical(b) for k, b in raw.items()}
        out[p.name] = (_squeezed(src.code), {k: _squeezed(b) for k, b in raw.items()},
                       {k: c for k, c in canon.items() if len(c) >= MIN_TOKENS})
    return out


def _solution_texts() -> dict[str, tuple[str, str, set]]:
    """{key: (the file's first //! line, normalized body, comments only the solution has)} where solutions exist."""
    out = {}
    for key in solutions.keys():
        try:
            body = solutions.body(key)
        except spec.SpecError:          # a folder mid-edit: instructor check names it; other checks go on
            continue
        out[key] = (solutions.path(key).read_text().splitlines()[0], normalized(body), _own_comments(key, body))
    return out


def _included(module) -> list[tuple[Path, str]]:
    """(path, text) of every file other than the cell that the PTX says the kernel was compiled from."""
    main = Path(str(getattr(module, "filename", "") or "")).name
    out = []
    for path in dict.fromkeys(getattr(module.parsed, "files", {}).values()):
        p = Path(path)
        if p.name == main or not p.is_file():
            continue
        try:
            out.append((p, p.read_text(errors="replace")))
        except OSError:
            continue
    return out


def _included_content(files, name) -> tuple[str, str] | None:
    """A file compiled into the kernel whose content is a course kernel file's or a solution's."""
    for p, text in files:
        norm = normalized(text)
        for file, (course, _, _) in _course_files().items():
            if norm == course:
                return (f"the cell that defines {name} includes {p}, which holds the course's kernels/{file}",
                        "write the exercise's kernel yourself, without #include of the course's kernels; " + HINT)
        for key, (_, body, _) in _solution_texts().items():
            if norm == body or norm == normalized(solutions.path(key).read_text()):
                return f"the cell that defines {name} includes {p}, which holds the course's solution of '{key}'", HINT
    return None


def _comments(text: str) -> set[str]:
    """Every comment's words, spacing normalized."""
    found = re.findall(r"//([^\n]*)|/\*(.*?)\*/", text, re.S)
    return {" ".join(part.split()) for pair in found for part in pair if part.strip()}


def _own_comments(key: str, body: str) -> set[str]:
    """Comments of the solution's lines that its stub does not show, long enough to be its words."""
    solved = solutions.solved(body)
    return {c for c in _comments(solved) - _comments(solutions.stub(key)) if len(c) >= 16}


def borrowed(fn, ex=None) -> tuple[str, str] | None:
    """(what, hint) when `fn` was compiled from the course's kernels or solutions, or (given the Exercise
    `ex` it is checked for) compiles to the code of a course kernel that answers it; None when it is the
    student's."""
    module = fn.module
    name = fn.name.split("<")[0].strip()
    if getattr(module, "trusted", False):
        return f"{fn.name} is the course's own kernel (course_lib.transposes), not one you wrote", HINT
    code = module.code
    mine = _squeezed(module.source.code)       # read once, when the module was made
    for file, (text, _, _) in _course_files().items():
        if mine == text:
            return f"{name} was compiled from the course's file kernels/{file}, not written by you", HINT
    included = [f for f in _INCLUDE.findall(code) if (KERNELS_DIR / Path(f).name).is_file()]
    if included:
        return (f"the cell that defines {name} includes the course's kernels/{Path(included[0]).name}",
                "write the exercise's kernel yourself, without #include of the course's kernels; " + HINT)
    files = _included(module)
    codes = [module.source.code] + [source.strip_comments(t) for _, t in files]
    return (_included_content(files, name) or _copied_body(codes) or _solution_copy(code, mine, name)
            or (course_code.same_code(fn, ex) if ex is not None else None))


def _copied_body(codes) -> tuple[str, str] | None:
    """A function of `codes` (comments stripped) whose body is a course kernel's: the same text, or
    the same with names changed."""
    own = {}
    for code in codes:
        for f, b in _raw_bodies(code).items():
            own.setdefault(f, b)
    flat = {f: _squeezed(b) for f, b in own.items()}
    canon = {f: canonical(b) for f, b in own.items()}
    for file, (_, kernels, tokens) in _course_files().items():
        for kernel, body in kernels.items():
            same = [f for f, b in flat.items() if b == body and len(b) >= MIN_BODY]
            if same:
                return (f"{same[0]} is the course's kernel '{kernel}' of kernels/{file}, copied (renamed or not)",
                        HINT)
        for kernel, toks in tokens.items():
            same = [f for f, c in canon.items() if c == toks]
            if same:
                return (f"{same[0]} is the course's kernel '{kernel}' of kernels/{file}, its names renamed: "
                        "the same code token for token", HINT)
    return None


def _solution_copy(code: str, mine: str, name: str) -> tuple[str, str] | None:
    graded = solutions.graded()
    if graded and solutions.has_solution(code):
        return f"{name} is a course solution: the instructor's version, BEGIN/END SOLUTION markers and all", HINT
    for key, (header, body, comments) in _solution_texts().items():
        if header in code and mine == body:
            return f"{name} was compiled from the course's solution file exercises/{key}/solution.cu", HINT
        if not graded:
            continue
        copied = sorted(c for c in _comments(code) if c in comments)
        if copied:
            return (f"{name} carries the course's solution of '{key}': its comment \"{copied[0]}\" is the "
                    "solution's", HINT)
    return None

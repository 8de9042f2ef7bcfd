"""Solution text in the files the student repository would get: what ``instructor publish`` refuses.

    solution_lines("shared_tile")            # the statements only that exercise's solution has
    shown("docs/notes.md", text)             # ["docs/notes.md: 'int c = ...;', a line of column_read's solution"]
    check_texts({"README.md": text, ...})    # the same for a whole release, what the notebooks show exempted

A solution line is a statement (code part ending in ``;``, 8+ characters) of an exercise's solution that no
stub of its lesson or an earlier one shows and that is no boilerplate (a line two or more course kernels
share, ``__syncthreads();``: any kernel has it, so it gives nothing away). It is found anywhere in a file, as
a run of C tokens: inside a longer line, a comment, a Python string, a notebook's JSON (its strings decoded,
HTML unescaped), a gzip file's text, with any spacing. Where it may be: a notebook of lesson NN may show a
line of an earlier lesson's answer (notebook 05 runs lesson 04's tile), never a later one's, nor its own
above the exercise; any other file may show only what the notebooks show anyway. The solution files'
markers (``// BEGIN SOLUTION``) are refused in kernels, notebooks and patches.

This module only reads: it neither decides which files are published nor writes any.
"""
from __future__ import annotations

import functools
import gzip
import html
import io
import json
import re

from ... import paths
from ...teach import solutions
from ...teach.exercises import EXERCISES
from .release import _code_part

TOKEN = re.compile(r"\w+|[^\w\s]")
MARKERS = re.compile(r"(^|\")\s*//\s*(BEGIN|END) SOLUTION", re.M)
MARKED = (".cu", ".cuh", ".ipynb", ".patch", ".h")       # where a marker is a leak (.py and .md document them)
BIG = 64 << 20                                          # a gzip file's text is read up to this much


def code(line: str) -> str:
    """A line's code part (comments dropped), spacing collapsed."""
    return " ".join(_code_part(line).split())


def code_lines(text: str) -> set[str]:
    """Code parts of every line; the line numbers of a listing (``  26  code``) dropped."""
    return {code(re.sub(r"^\s*\d+\s\s", "", line)) for line in text.splitlines()}


def tokens(text: str) -> str:
    """`text` as its C tokens, one space apart and one at each end: spacing no longer matters, and a
    statement found in it (``f" {tokens(s).strip()} "``) starts and ends on token boundaries."""
    return " " + " ".join(TOKEN.findall(text)) + " "


@functools.lru_cache(maxsize=None)
def boilerplate() -> frozenset[str]:
    """Lines two or more course kernels share (``__syncthreads();``): no exercise's secret."""
    seen: dict[str, int] = {}
    for p in paths.KERNELS.glob("*.cu*"):
        for line in set(statements(p.read_text())):
            seen[line] = seen.get(line, 0) + 1
    return frozenset(line for line, n in seen.items() if n >= 2)


def statements(text: str) -> list[str]:
    """The code lines of `text`, a statement continued on the next line (after ``,``, ``(`` or an operator)
    joined into one: ``f(a,`` + ``b);`` is ``f(a, b);``, never the fragment ``b);`` alone."""
    out: list[str] = []
    going_on = False
    for line in text.splitlines():
        part = code(line)
        if going_on and out:
            out[-1] += " " + part
        elif part:
            out.append(part)
        going_on = bool(part) and part[-1] in ",(+-*/%=&|^<>?:" or (going_on and not part)
    return out


@functools.lru_cache(maxsize=None)
def solution_lines(key: str) -> frozenset[str]:
    """Statements (8+ characters, ending in ``;``) of exercise `key`'s solution that no stub of its
    lesson or an earlier one shows and that are not boilerplate."""
    lesson = EXERCISES[key].lesson
    stubs = {s for k in solutions.keys() if EXERCISES[k].lesson <= lesson for s in statements(solutions.stub(k))}
    lines = set(statements(solutions.solved(solutions.body(key))))
    return frozenset(s for s in lines - stubs - boilerplate() if len(s) >= 8 and s.endswith(";"))


@functools.lru_cache(maxsize=None)
def _searched(key: str) -> tuple[tuple[str, str], ...]:
    """(line, its tokens) of each solution line of `key`."""
    return tuple((s, tokens(s)) for s in sorted(solution_lines(key)))


def found(key: str, haystack: str) -> set[str]:
    """The solution lines of `key` that `haystack` (as :func:`tokens` made it) holds."""
    return {s for s, t in _searched(key) if t in haystack}


# ---------------------------------------------------------------------------- a file as text

def text_of(rel: str, data: bytes) -> str | None:
    """What a file says, to search: its text (a gzip file's, decompressed), None for a binary file."""
    if rel.endswith(".gz"):
        try:
            data = gzip.GzipFile(fileobj=io.BytesIO(data)).read(BIG)
        except (OSError, EOFError):
            return None
    if b"\0" in data[:8192]:
        return None
    return data.decode("utf-8", errors="replace")


def _strings(obj):
    if isinstance(obj, str):
        yield obj
        if "&" in obj:                       # an HTML output shows `a &lt; b` as `a < b`
            yield html.unescape(obj)
    elif isinstance(obj, dict):
        for v in obj.values():
            yield from _strings(v)
    elif isinstance(obj, list):
        for v in obj:
            yield from _strings(v)


def _json(text: str):
    try:
        return json.loads(text)
    except ValueError:
        return None


def _text_of_json(text: str) -> str:
    """A notebook's (or any JSON file's) strings as text, not in their JSON quoting."""
    obj = _json(text)
    return "\n".join(_strings(obj)) if obj is not None else text


def _lesson(rel: str) -> str | None:
    m = re.fullmatch(r"notebooks/(\d\d)_[^/]*\.ipynb", rel)
    return m[1] if m else None


def _above_exercise(nb_text: str, key: str) -> str:
    """The cells of a notebook (JSON text) above exercise `key`'s cell: what a student reads before it."""
    nb = _json(nb_text)
    cells = nb.get("cells", []) if isinstance(nb, dict) and isinstance(nb.get("cells"), list) else []
    if not cells:
        return nb_text if nb is None else _text_of_json(nb_text)
    defines = re.compile(rf"\bvoid\s+{re.escape(EXERCISES[key].kernel)}\s*\(")
    source = ["".join(c.get("source", "")) if isinstance(c, dict) else "" for c in cells]
    end = next((i for i, src in enumerate(source) if src.startswith("%%cuda") and defines.search(src)), len(cells))
    return "\n".join(_strings(cells[:end]))


def _haystack(rel: str, text: str) -> str:
    """The tokens to search in file `rel`: its text, that text with its \\n and \\t escapes (a string
    literal's) as the spaces they stand for, and for JSON its strings decoded."""
    parts = [text]
    if "\\n" in text or "\\t" in text:
        parts.append(re.sub(r"\\[nt]", " ", text))
    if rel.endswith((".ipynb", ".json")):
        parts.append(_text_of_json(text))
    return tokens("\n".join(parts))


# ---------------------------------------------------------------------------- the check

def shown(rel: str, text: str, visible: frozenset = frozenset()) -> list[str]:
    """The solution text file `rel` (its `text`) shows. A notebook of lesson NN: a line of the solution of
    an exercise of a later lesson, or of its own lesson above that exercise. Any other file: a solution
    line the notebooks do not show anyway (`visible`). Kernels, notebooks, patches: the solution markers."""
    lesson, out = _lesson(rel), []
    haystack = None
    for key in solutions.keys():
        ex_lesson = EXERCISES[key].lesson
        if lesson is None:
            haystack = haystack or _haystack(rel, text)
            hit = found(key, haystack) - visible
        elif ex_lesson > lesson:
            haystack = haystack or _haystack(rel, text)
            hit = found(key, haystack)
        elif ex_lesson == lesson:
            hit = found(key, tokens(_above_exercise(text, key)))
        else:
            continue
        out += [f"{rel}: {s!r}, a line of {key}'s solution" for s in sorted(hit)]
    if rel.endswith(MARKED) and MARKERS.search(text):
        out.append(f"{rel}: solution markers")
    return out


def visible_lines(texts: dict[str, str]) -> frozenset[str]:
    """The solution lines the notebooks among `texts` ({path: text}) show anyway."""
    shows = [tokens(_text_of_json(t)) for rel, t in texts.items() if _lesson(rel)]
    return frozenset(s for key in solutions.keys() for s, t in _searched(key) if any(t in h for h in shows))


def check_texts(texts: dict[str, str]) -> list[str]:
    """The solution text a release ({path: text}) shows (:func:`shown`)."""
    visible = visible_lines(texts)
    return [x for rel, text in texts.items() for x in shown(rel, text, visible)]

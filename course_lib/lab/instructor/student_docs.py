"""The student repository's Markdown: the instructor's files with their instructor-only passages left out.

    student_text("README.md", text)          # the README students get
    doc_problems(texts, published, tracked)  # links to files students lack, instructor-only paths named

One README serves both repositories. In the instructor repository's Markdown a passage only instructors
need sits between two lines,

    <!-- instructor-only -->
    ... (left out of the student repository)
    <!-- end instructor-only -->

and a passage only students get is an HTML comment, so that the instructor repository does not show it:

    <!-- student-only
    ... (the student repository shows this)
    end student-only -->

``instructor publish`` writes each published ``.md`` file through :func:`student_text`, then refuses the
release if one of them links to a file the student repository does not have (an instructor-only guide) or
names the path of a solution file, linked or not: :func:`doc_problems`. A marker out of place is an error
naming the file and line, never a half-stripped README. This module neither reads nor writes files.
"""
from __future__ import annotations

import posixpath
import re

DROP_START = re.compile(r"<!--\s*instructor-only\b.*-->")
DROP_END = re.compile(r"<!--\s*end instructor-only\s*-->")
KEEP_START = re.compile(r"<!--\s*student-only\b(?!.*-->).*")
KEEP_END = re.compile(r"end student-only\s*-->")
LINK = re.compile(r"\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)|^\s*\[[^\]]+\]:\s*(\S+)", re.M)
PATH = re.compile(r"[\w.*-]+(?:/[\w.*-]+)+")


class MarkerError(ValueError):
    """An instructor-only or student-only marker out of place: the message names the file and line."""


def student_text(rel: str, text: str) -> str:
    """`text` of Markdown file `rel` as the student repository gets it: instructor-only passages dropped,
    student-only ones unwrapped (their comment lines removed). Raises MarkerError for a marker out of place."""
    out, state, opened = [], None, 0
    for n, line in enumerate(text.splitlines(keepends=True), 1):
        s = line.strip()
        starts = "drop" if DROP_START.fullmatch(s) else "keep" if KEEP_START.fullmatch(s) else None
        ends = "drop" if DROP_END.fullmatch(s) else "keep" if KEEP_END.fullmatch(s) else None
        if starts and state:
            raise MarkerError(f"{rel} line {n}: {s!r} inside the {_name(state)} passage opened on line {opened}: "
                              f"close that one first ({_end(state)})")
        if ends and ends != state:
            raise MarkerError(f"{rel} line {n}: {s!r} closes no passage" + (
                f" (the {_name(state)} passage of line {opened} ends with {_end(state)})" if state else
                f": open it with {_start(ends)}"))
        if starts:
            state, opened = starts, n
        elif ends:
            state = None
        elif state != "drop":
            out.append(line)
    if state:
        raise MarkerError(f"{rel} line {opened}: the {_name(state)} passage opened here is never closed: "
                          f"end it with a line {_end(state)}")
    return "".join(out)


def _name(state: str) -> str:
    return "instructor-only" if state == "drop" else "student-only"


def _start(state: str) -> str:
    return "<!-- instructor-only -->" if state == "drop" else "<!-- student-only"


def _end(state: str) -> str:
    return "<!-- end instructor-only -->" if state == "drop" else "end student-only -->"


def links(text: str) -> list[str]:
    """The relative link targets of Markdown `text` (no scheme, no bare #anchor), anchors dropped."""
    out = []
    for m in LINK.finditer(text):
        target = (m[1] or m[2]).split("#", 1)[0]
        if target and not re.match(r"[a-zA-Z][\w+.-]*:", target):
            out.append(target)
    return out


def doc_problems(texts: dict[str, str], published: set[str], tracked: set[str], solution_path) -> list[str]:
    """What the published Markdown files among `texts` ({path: student text}) point at that students lack:
    a link to a file (or folder) of the instructor repository (`tracked`) that is not `published`, and any
    path that `solution_path` (a predicate: a solution's file) is true of, linked or not."""
    problems = []
    for rel, text in texts.items():
        if not rel.endswith(".md"):
            continue
        where = f"{rel}: "
        for target in sorted(set(links(text))):
            path = posixpath.normpath(posixpath.join(posixpath.dirname(rel), target)).rstrip("/")
            lost = path in tracked and path not in published
            lost |= any(f.startswith(path + "/") for f in tracked) and not any(f.startswith(path + "/") for f in published)
            if lost:
                problems.append(f"{where}links to {target}, which the student repository does not have")
        for name in sorted(set(PATH.findall(text))):
            if solution_path(name.strip(".")):
                problems.append(f"{where}names {name}, where instructors keep solutions")
    return problems

"""Every graded attempt's signed records, kept beside the course: first try against final.

    verdict_store.keep(course, "06_tiles", "alice", "06_tiles", "2026-11-30 10:00:00", envelopes)
    verdict_store.attempts(course, secret)     # [(assignment, student, notebook, submitted, [envelope])]

nbgrader keeps one submission per student and assignment: ``nbgrader collect`` (or a new file in
``submitted/``) replaces the last one, and ``autograde`` replaces ``autograded/<student>/<assignment>/``
when the submission is newer; the gradebook keeps that submission's timestamp only. The exchange's
inbound folder keeps every submission a student made, but nothing grades them. So each time the course's
grader grades a notebook it also keeps the records here, in
``COURSE/.course_lib_verdicts/<assignment>/<student>/<notebook>@<submitted>.json``: one file per
submission (its ``timestamp.txt``; a regrade of the same submission replaces it), written whole or not
at all. The class report reads the earliest and the latest of them. Records are signed
(``verdicts``): :func:`attempts` returns only those the course's key signed for that place. Keep the
folder as private as the course folder (records name hidden shapes). This module touches no notebook.
"""
from __future__ import annotations

import json
import os
import re
import tempfile
from pathlib import Path

from . import verdicts

FOLDER = ".course_lib_verdicts"
UNTIMED = "untimed"                 # a submission without nbgrader's timestamp.txt
_SAFE = re.compile(r"[^A-Za-z0-9_.+-]")


def _slug(text: str) -> str:
    return _SAFE.sub("_", str(text))[:80] or "_"


def keep(course, assignment: str, student: str, notebook: str, submitted, envelopes) -> Path | None:
    """Write this submission's signed records (replacing a regrade's of the same submission); the file, or None
    when there is nothing to keep."""
    if not envelopes:
        return None
    folder = Path(course) / FOLDER / _slug(assignment) / _slug(student)
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    path = folder / f"{_slug(notebook)}@{_slug(submitted or UNTIMED)}.json"
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".partial-", suffix=".json")
    try:
        with os.fdopen(fd, "w") as f:
            json.dump({"submitted": submitted, "envelopes": list(envelopes)}, f)
        os.replace(tmp, path)                     # a reader sees the whole file or the one before
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def attempts(course, secret: str) -> list[tuple]:
    """Every kept submission: (assignment, student, notebook, submitted, [signed envelopes for that place]),
    sorted by assignment, student, notebook and submission time (nbgrader's timestamps sort as text)."""
    out = []
    for path in sorted((Path(course) / FOLDER).glob("*/*/*@*.json")):
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError):
            continue                              # unreadable: not counted
        envs = [e for e in data.get("envelopes", []) if verdicts.valid(e, secret)] if isinstance(data, dict) else []
        if not envs:
            continue
        first = envs[0]
        place = (first.get("assignment"), first.get("student"), first.get("notebook"))
        envs = [e for e in envs if (e.get("assignment"), e.get("student"), e.get("notebook")) == place]
        out.append((*place, first.get("submitted"), envs))
    return sorted(out, key=lambda a: (str(a[0]), str(a[1]), str(a[2]), str(a[3] or "")))

"""Who got which variant: ``python -m course_lib instructor variants --course DIR [--student ID ...] [--keys]``.

The rows come from the course folder's secret through teach.variants, the function the grader and each
student's session draw with, so what this lists is what a student sees and what they are graded on. The
students: those named, else the gradebook's and those with a folder in submitted/. ``--keys`` adds each
student's variant key, what the hub's spawner hands them (for a class off the hub: give each student
theirs as $COURSE_LIB_VARIANT_KEY). This module reads; it writes nothing.
"""
from __future__ import annotations

import sqlite3
from pathlib import Path

from ...teach import variants
from ...teach.exercise_list import EXERCISES


def students(course) -> list[str]:
    """The class as the course folder knows it: the gradebook's students and submitted/'s folders."""
    course, found = Path(course), set()
    db = course / "gradebook.db"
    if db.is_file():
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as con:
            try:
                found |= {row[0] for row in con.execute("SELECT id FROM student")}
            except sqlite3.DatabaseError:
                pass
    if (course / "submitted").is_dir():
        found |= {p.name for p in (course / "submitted").iterdir() if p.is_dir()}
    return sorted(found)


def listing(course, who=None) -> list[tuple[str, str, str]]:
    """(student, exercise, variant) for every exercise with variants; NotFound for a class without them."""
    secret = variants.secret(course)
    rows = []
    for student in who or students(course):
        key = variants.student_key(secret, student)
        for ex in EXERCISES:
            if variants.declared(ex):
                rows.append((student, ex, variants.of_key(ex, key).variant))
    return rows


def render(course, who=None, keys: bool = False) -> str:
    rows, secret = listing(course, who), variants.secret(course)
    if not rows:
        return (f"{course}: no students yet (none in the gradebook or in submitted/); name some with --student ID "
                "(the hub's user names: nbgrader's student ids)")
    width = max(len(r[0]) for r in rows)
    out, last = [], None
    for student, ex, variant in rows:
        if keys and student != last:
            out.append(f"{student:<{width}}  {variants.ENV_KEY}={variants.student_key(secret, student)}")
        out.append(f"{student:<{width}}  {ex:<16} {variant}")
        last = student
    return "\n".join(out)

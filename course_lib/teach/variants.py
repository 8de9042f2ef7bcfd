"""Variants per student: which version of an exercise a student gets (exercise.toml's [[variants]]).

    variants.declared("padded_tile")            # [{'T': 'double'}, ...] as the folder declares them
    variants.params("padded_tile", "alice")     # the parameters drawn for alice (the default's, overridden)
    variants.student_id()                       # whose variant this notebook checks now (None: the default)
    variants.set_student("alice")               # cl.exercises.student("alice") in a notebook

A student's variant is drawn from a hash of (their id, the exercise key, the course seed,
``$COURSE_LIB_SEED``) among the folder's ``[[variants]]`` — never the default, whose answer the
notebook may print. A class turns variants on by setting ``$COURSE_LIB_SEED`` for the students'
servers and for the autograder alike. The id: nbgrader's student id at grading time
(``$COURSE_LIB_STUDENT``, which the autograder's hook sets; it wins over anything the notebook says),
else an explicit ``cl.exercises.student("id")`` (ignored while nbgrader autogrades), else, in a graded
run, the hub user (``$JUPYTERHUB_USER``). Without a seed or an id a student gets the default variant,
the one the notebook's stub is. This module draws; ``spec`` renders the chosen parameters, ``exercises`` checks.
"""
from __future__ import annotations

import hashlib
import os

from ..errors import ArgumentError
from . import solutions, spec
from .exercise_list import EXERCISES, folder

ENV_SEED, ENV_STUDENT, ENV_HUB_USER = "COURSE_LIB_SEED", "COURSE_LIB_STUDENT", "JUPYTERHUB_USER"
DEFAULT_SEED = "transpose-course"
_explicit: list[str | None] = [None]        # cl.exercises.student("id"), for this Python session


def set_student(student: str | None) -> str | None:
    """Check this session's exercises as `student`'s variants (None: back to the default)."""
    _explicit[0] = None if student is None else str(student).strip() or None
    return _explicit[0]


def student_id(explicit: str | None = None) -> str | None:
    """Whose variants apply: `explicit`; else, where the class set a seed ($COURSE_LIB_SEED), the
    autograder's student id; else cl.exercises.student(...) (never while nbgrader autogrades: a
    submission does not choose its variant); else, seeded and graded, the hub user. None: the default."""
    seeded, autograding = bool(os.environ.get(ENV_SEED)), bool(os.environ.get("NBGRADER_EXECUTION"))
    for sid in (explicit, os.environ.get(ENV_STUDENT) if seeded else None,
                None if autograding else _explicit[0],
                os.environ.get(ENV_HUB_USER) if seeded and solutions.graded() and not autograding else None):
        if sid and str(sid).strip():
            return str(sid).strip()
    return None


def graded_student(student: str | None) -> str | None:
    """The id whose variants the autograder checks for nbgrader's `student`: that id where the class set a
    seed ($COURSE_LIB_SEED), else None (every student gets the default, as without variants)."""
    if not student or not os.environ.get(ENV_SEED):
        return None
    return str(student).strip() or None


def class_seed() -> str:
    """$COURSE_LIB_SEED (else the course's default), or ArgumentError naming it when it is not UTF-8 text (the
    students' servers and the grader must draw the same variants from it, as text)."""
    seed = os.environ.get(ENV_SEED, DEFAULT_SEED)
    try:
        seed.encode("utf-8")
    except UnicodeEncodeError:
        raise ArgumentError(f"${ENV_SEED} holds bytes that are not UTF-8 text ({seed.encode('utf-8', 'surrogateescape')!r})",
                            hint=f"set it to plain text on the students' servers and the grader alike, e.g. "
                                 f"export {ENV_SEED}=$(python3 -c 'import secrets; print(secrets.token_hex(16))')") from None
    return seed


def declared(key: str) -> list[dict]:
    """The [[variants]] of exercise `key` ([] for an exercise without a folder or without variants)."""
    f = folder(key)
    return [dict(v) for v in spec.read(f).get("variants", [])] if (f / spec.TOML).exists() else []


def params(key: str, student: str | None) -> dict | None:
    """The parameters of `student`'s variant of `key` (None: the default variant)."""
    choices = declared(key)
    if student is None or not choices:
        return None
    digest = hashlib.sha256(f"{class_seed()}\0{student}\0{key}".encode()).digest()
    base = spec.defaults(spec.read(folder(key)))
    return {**base, **choices[int.from_bytes(digest[:8], "big") % len(choices)]}


def exercise(key: str, student: str | None = None):
    """The concrete Exercise `student` (or, when None, whoever student_id() names) is asked for."""
    ex = EXERCISES[key]
    chosen = params(key, student_id(student))
    if chosen is None:
        return ex
    return spec.load(folder(key), chosen)

"""Variants per student: which version of an exercise a student gets (exercise.toml's [[variants]]).

    variants.declared("padded_tile")            # [{'T': 'double'}, ...] as the folder declares them
    variants.params("padded_tile", "alice")     # the parameters drawn for alice (the default's, overridden)
    variants.student_id()                       # whose variant this notebook checks now (None: the default)
    variants.set_student("alice")               # cl.exercises.student("alice") in a notebook

A student's variant is drawn from a hash of (their id, the exercise key, the course seed,
``$COURSE_LIB_SEED``) among the folder's ``[[variants]]`` — never the default, whose answer the
notebook may print. The id: nbgrader's student id at grading time (``$COURSE_LIB_STUDENT``, which the
autograder sets, wins over anything the notebook says), else an explicit
``cl.exercises.student("id")``, else, in a graded run, the hub user (``$JUPYTERHUB_USER``). In
self-study without an explicit id a student gets the default variant, the one the notebook's stub
is. This module draws; ``spec`` renders the chosen parameters, ``exercises`` checks.
"""
from __future__ import annotations

import hashlib
import os

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
    """Whose variants apply: `explicit`, the grader's student id, cl.exercises.student(...), or the hub
    user in a graded run; None (the default variant) otherwise."""
    for sid in (explicit, os.environ.get(ENV_STUDENT), _explicit[0],
                os.environ.get(ENV_HUB_USER) if solutions.graded() else None):
        if sid and str(sid).strip():
            return str(sid).strip()
    return None


def declared(key: str) -> list[dict]:
    """The [[variants]] of exercise `key` ([] for an exercise without a folder or without variants)."""
    f = folder(key)
    return [dict(v) for v in spec.read(f).get("variants", [])] if (f / spec.TOML).exists() else []


def params(key: str, student: str | None) -> dict | None:
    """The parameters of `student`'s variant of `key` (None: the default variant)."""
    choices = declared(key)
    if student is None or not choices:
        return None
    seed = os.environ.get(ENV_SEED, DEFAULT_SEED)
    digest = hashlib.sha256(f"{seed}\0{student}\0{key}".encode()).digest()
    base = spec.defaults(spec.read(folder(key)))
    return {**base, **choices[int.from_bytes(digest[:8], "big") % len(choices)]}


def exercise(key: str, student: str | None = None):
    """The concrete Exercise `student` (or, when None, whoever student_id() names) is asked for."""
    ex = EXERCISES[key]
    chosen = params(key, student_id(student))
    if chosen is None:
        return ex
    return spec.load(folder(key), chosen)

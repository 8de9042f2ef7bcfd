"""Variants per student: which version of an exercise a student gets (exercise.toml's [[variants]]).

    variants.declared("padded_tile")                      # [{'T': 'double'}, ...] as the folder declares them
    variants.exercise("padded_tile")                      # this session's student's variant (the default without one)
    variants.exercise("padded_tile", "alice", course=DIR)   # alice's, from the course folder's secret (instructors)
    variants.student_key(secret, "alice")                 # alice's own variant key: what the hub hands her
    variants.choose("padded_tile", key)                   # the draw: the one place a variant is chosen

One truth: a class's variants come from its secret, the course folder's ``.course_lib_seed`` (written once
by ``instructor nbgrader``, read by the grader and the instructor's tools), in a class that has them
(``instructor nbgrader --variants`` writes ``.course_lib_variants`` beside it). A student's *variant key* is
HMAC-SHA256(secret, their id); their variant of an exercise is HMAC-SHA256(variant key, the exercise's key)
among the folder's ``[[variants]]`` — never the default, whose answer the notebook may print. The hub's
spawner holds the secret and hands each student only their own key (``$COURSE_LIB_VARIANT_KEY``,
deploy/config.yaml), so a student sees their variant, cannot compute a classmate's (HMAC: knowing one's own
keys and variants tells nothing of the secret), and the grader, which computes the same key from the
secret and nbgrader's student id, grades the same variant. The sandboxed run of a submission for its
feedback gets that one student's key. Without a secret or a key there are no variants: every student gets
the default, and asking for a named student's variant says so (no built-in seed draws one).

Whose variant a session shows: its own key's (``$COURSE_LIB_VARIANT_KEY``; its owner is ``$COURSE_LIB_STUDENT``,
the autograder's id, else ``$JUPYTERHUB_USER``); a named student's only with the course folder (``course=``).
This module draws; ``spec`` renders the chosen parameters, ``exercises`` checks.
"""
from __future__ import annotations

import hashlib
import hmac
import os
import re
import warnings
from pathlib import Path

from ..errors import ArgumentError, NotFound
from . import spec
from .exercise_list import EXERCISES, folder

ENV_KEY, ENV_STUDENT, ENV_HUB_USER = "COURSE_LIB_VARIANT_KEY", "COURSE_LIB_STUDENT", "JUPYTERHUB_USER"
ENV_OLD_SEED = "COURSE_LIB_SEED"        # before issue 32 a class seed in every student's environment: not read
SECRET_FILE = ".course_lib_seed"        # in the course folder, beside nbgrader_config.py (grader/hidden.py too)
VARIANTS_FILE = ".course_lib_variants"  # beside it: this class has variants (instructor nbgrader --variants)
_explicit: list[str | None] = [None]    # cl.exercises.student("id"), for this Python session
_warned: list[bool] = [False]


def set_student(student: str | None) -> str | None:
    """Check this session's exercises as `student`'s variants (None: back to this session's own)."""
    _explicit[0] = None if student is None else str(student).strip() or None
    return _explicit[0]


def own_id() -> str | None:
    """Whose key this session holds: the autograder's student id, else the hub user."""
    for sid in (os.environ.get(ENV_STUDENT), os.environ.get(ENV_HUB_USER)):
        if sid and sid.strip():
            return sid.strip()
    return None


def own_key() -> str | None:
    """This session's own variant key ($COURSE_LIB_VARIANT_KEY, from the hub or the autograder), else None."""
    if os.environ.get(ENV_OLD_SEED) and not _warned[0]:
        _warned[0] = True
        warnings.warn(f"${ENV_OLD_SEED} is no longer read: a class seed in students' environments let anyone compute "
                      f"a classmate's variant. Variants come from the course folder's {SECRET_FILE}; the hub hands each "
                      f"student their own ${ENV_KEY} (deploy/config.yaml, docs/INSTRUCTORS.md section 5)", stacklevel=3)
    key = (os.environ.get(ENV_KEY) or "").strip()
    if key and not re.fullmatch(r"[0-9a-f]{64}", key):     # bytes that are no text, a truncated paste
        shown = key.encode("utf-8", "surrogateescape")[:80]
        raise ArgumentError(f"${ENV_KEY} is not a variant key (64 hex digits): {shown!r}",
                            hint=f"the hub sets it for you; off the hub, your instructor gives you yours "
                                 f"(`python -m course_lib instructor variants --keys`); unset it for the default")
    return key or None


def student_id(explicit: str | None = None) -> str | None:
    """Whose variants apply: `explicit`; else cl.exercises.student(...) (never while nbgrader autogrades: a
    submission does not choose its variant); else whoever holds this session's key. None: the default."""
    autograding = bool(os.environ.get("NBGRADER_EXECUTION"))
    for sid in (explicit, None if autograding else _explicit[0], own_id() if own_key() else None):
        if sid and str(sid).strip():
            return str(sid).strip()
    return None


def enabled(course) -> bool:
    """Whether the class of course folder `course` has variants (instructor nbgrader --variants said so)."""
    return (Path(course).expanduser() / VARIANTS_FILE).is_file()


def secret(course) -> str:
    """The class's secret for its variants: the course folder's .course_lib_seed; NotFound, saying so, for a
    course folder without one or a class without variants."""
    path = Path(course).expanduser() / SECRET_FILE
    if not path.is_file():
        raise NotFound(f"{path}: no class secret, so no variants to show",
                       hint=f"`python -m course_lib instructor nbgrader --variants --out {Path(course)}` writes one; "
                            "pass the course folder that holds nbgrader_config.py")
    if not enabled(course):
        raise NotFound(f"no variants in this class: {Path(course)} was exported without --variants, so every student "
                       "gets (and is graded on) the default",
                       hint=f"`python -m course_lib instructor nbgrader --variants --out {Path(course)}` turns them on "
                            "(then give students their keys: docs/INSTRUCTORS.md section 5)")
    return path.read_text().strip()


def course_key(course, student: str) -> str | None:
    """The grader's view: `student`'s variant key in the class of `course`, None where it has no variants."""
    return student_key(secret(course), student) if student and enabled(course) else None


def student_key(secret_text: str, student: str) -> str:
    """`student`'s own variant key under the class secret (HMAC-SHA256, hex): all the hub hands them.
    deploy/config.yaml's spawner hook computes the same with the standard library alone."""
    return hmac.new(secret_text.strip().encode(), b"variants\0" + str(student).strip().encode(),
                    hashlib.sha256).hexdigest()


def declared(key: str) -> list[dict]:
    """The [[variants]] of exercise `key` ([] for an exercise without a folder or without variants)."""
    f = folder(key)
    return [dict(v) for v in spec.read(f).get("variants", [])] if (f / spec.TOML).exists() else []


def choose(key: str, variant_key: str | None) -> dict | None:
    """The draw, the only one: the parameters of exercise `key` for the holder of `variant_key` (None: the
    default variant, for a class without variants or an exercise without them)."""
    choices = declared(key)
    if not variant_key or not choices:
        return None
    digest = hmac.new(variant_key.encode(), key.encode(), hashlib.sha256).digest()
    base = spec.defaults(spec.read(folder(key)))
    return {**base, **choices[int.from_bytes(digest[:8], "big") % len(choices)]}


def of_key(key: str, variant_key: str | None):
    """The concrete Exercise `key` for the holder of `variant_key` (the default without one)."""
    chosen = choose(key, variant_key)
    return EXERCISES[key] if chosen is None else spec.load(folder(key), chosen)


def variant_key(student: str | None, course=None) -> str | None:
    """The variant key of `student` (None: this session's own): from the course folder's secret where `course`
    is given, else this session's own key if it is theirs. Asking for a classmate's, or for anyone's in a
    class without variants, raises NotFound saying so: nothing is drawn from a built-in seed."""
    if course is not None:
        if not student:
            raise NotFound("whose variant? a course folder gives every student's: name one",
                           hint="cl.exercises.variant('padded_tile', 'alice', course='~/course')")
        return student_key(secret(course), student)
    own = own_key()
    if student is None or (own and student == own_id()):
        return own
    if own:
        raise NotFound(f"{student}'s variant is not yours to see: this session holds only your own variant key "
                       f"(${ENV_KEY}, from the hub), never a classmate's",
                       hint="cl.exercises.get(KEY) shows your own variant")
    raise NotFound(f"no variants in this class: this session has no class secret and no variant key, so every "
                   f"student gets the default and {student} has no variant of their own",
                   hint="an instructor passes the course folder (cl.exercises.variant(KEY, 'alice', course='~/course'), "
                        "or `python -m course_lib instructor variants --course DIR --student alice`); a student on the "
                        f"hub gets ${ENV_KEY} from it")


def exercise(key: str, student: str | None = None, course=None):
    """The concrete Exercise `student` (or, when None, whoever student_id() names) is asked for."""
    return of_key(key, variant_key(student_id(student), course))

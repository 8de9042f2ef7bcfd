"""The course's exercises, read from their folders: ``exercises/<key>/exercise.toml`` (course_lib.paths).

    EXERCISES["padded_tile"]      # the Exercise of exercises/padded_tile/ (its default variant)
    folder("padded_tile")         # Path of that folder
    define(Exercise(...))         # an exercise made in Python (a notebook's own challenge)
    BROKEN["my_exercise"]         # the SpecError of a folder that cannot be read (file, key, fix)

Each folder holds one exercise whole (``spec`` reads it): the question, kernel, launch, shapes,
properties by name, hints, points, variants; ``solution.cu`` (instructor-only, not in the wheel) and
``stub.cu`` (generated from it). A folder that cannot be read does not stop the others: its error waits
in ``BROKEN`` until someone asks for that exercise (``exercises.get``, ``instructor check``). Every
exercise has wrong kernels, derived from its own solution and written in its ``wrong.toml``, that its
checker must reject (tests/teach/test_exercises.py). This module only reads; nothing runs.
"""
from dataclasses import replace
from pathlib import Path

from .. import paths
from . import spec
from .exercise import Exercise

EXERCISES: dict[str, Exercise] = {}
BROKEN: dict[str, spec.SpecError] = {}


def define(ex: Exercise) -> Exercise:
    """Add an exercise. One launched with a block per tile (no custom grid) must, once correct, have
    each block move its own tile and every element moved once (``Exercise.own_tiles``)."""
    if ex.grid is None:
        ex = replace(ex, own_tiles=True)
    EXERCISES[ex.key] = ex
    return ex


def folders(root: Path | None = None) -> list[Path]:
    """Every exercise folder under `root` (default: the course's exercises/), sorted by name."""
    root = Path(root) if root else paths.EXERCISES
    return sorted(p.parent for p in root.glob(f"*/{spec.TOML}")) if root.is_dir() else []


def folder(key: str) -> Path:
    return paths.EXERCISES / key


def _load_all():
    found = []
    for f in folders():
        try:
            found.append(spec.load(f))
        except spec.SpecError as exc:
            BROKEN[f.name] = exc
    for ex in sorted(found, key=lambda e: (e.lesson, e.key)):   # in course order
        EXERCISES[ex.key] = ex


_load_all()

"""Where the course's files are, in a checkout and in an installed wheel.

    paths.KERNELS     # kernels/: every course kernel as a .cu file (course_lib/kernels in a wheel)
    paths.NOTEBOOKS   # notebooks/: the student notebooks (a checkout, or the folder course-lab runs in)
    paths.EXERCISES   # exercises/: one folder per exercise (exercise.toml, stub.cu; solution.cu in a checkout
                      # only); course_lib/exercise_files in a wheel, without solution.cu
    paths.RESULTS     # benchmarks/results/: what GPU runs measured, which notebooks quote (in a wheel:
                      # course_lib/results, holding only the files they quote; pyproject.toml lists them)
    paths.REPO        # the checkout's root (the folder above course_lib)
    paths.beside(Path("n/05.ipynb"), "course", "20261127-101200")   # n/05.course-20261127-101200.ipynb

A second version of a file is kept beside it under one naming rule, :func:`beside`: ``course-lab
--update`` keeps the student's old copy as ``NAME.mine-<date-time>.ipynb``, the hub's pull the
course's new version as ``NAME.course-<date-time>.ipynb`` (course_lib.lab.student.keepboth), and a notebook's
banner finds the latter with :func:`kept_beside`.

A module that reads one of these folders asks here, so a layout change is one edit. Nothing is
created or read at import.
"""
from __future__ import annotations

import glob
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent
REPO = PACKAGE.parent


def _first_dir(*candidates: Path) -> Path:
    return next((c for c in candidates if c.is_dir()), candidates[0])


KERNELS = _first_dir(REPO / "kernels", PACKAGE / "kernels")
EXERCISES = _first_dir(REPO / "exercises", PACKAGE / "exercise_files")
NOTEBOOKS = _first_dir(REPO / "notebooks", Path.cwd() / "notebooks")
RESULTS = _first_dir(REPO / "benchmarks" / "results", PACKAGE / "results")


def beside(path: Path, whose: str, stamp: str) -> Path:
    """Where a second version of `path` is kept next to it: NAME.<whose>-<stamp><suffix>, never a file that
    is there (a -2, -3 ... is added)."""
    path = Path(path)
    candidate, n = path.with_name(f"{path.stem}.{whose}-{stamp}{path.suffix}"), 2
    while candidate.exists():
        candidate, n = path.with_name(f"{path.stem}.{whose}-{stamp}-{n}{path.suffix}"), n + 1
    return candidate


def kept_beside(path: Path, whose: str) -> list[Path]:
    """The versions of `path` kept beside it by :func:`beside` for `whose`, oldest first."""
    path = Path(path)
    found = path.parent.glob(f"{glob.escape(path.stem)}.{whose}-*{glob.escape(path.suffix)}")
    return sorted(found, key=lambda p: p.name[:len(p.name) - len(path.suffix)])     # NAME.x-T before NAME.x-T-2

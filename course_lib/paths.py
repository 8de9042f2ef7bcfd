"""Where the course's files are, in a checkout and in an installed wheel.

    paths.KERNELS     # kernels/: every course kernel as a .cu file (course_lib/kernels in a wheel)
    paths.NOTEBOOKS   # notebooks/: the student notebooks (a checkout, or the folder course-lab runs in)
    paths.EXERCISES   # exercises/: one folder per exercise (exercise.toml, stub.cu; solution.cu in a checkout
                      # only); course_lib/exercise_files in a wheel, without solution.cu
    paths.RESULTS     # benchmarks/results/: what GPU runs measured, which notebooks quote (in a wheel:
                      # course_lib/results, holding only the files they quote; pyproject.toml lists them)
    paths.REPO        # the checkout's root (the folder above course_lib)

A module that reads one of these folders asks here, so a layout change is one edit. Nothing is
created or read at import.
"""
from __future__ import annotations

from pathlib import Path

PACKAGE = Path(__file__).resolve().parent
REPO = PACKAGE.parent


def _first_dir(*candidates: Path) -> Path:
    return next((c for c in candidates if c.is_dir()), candidates[0])


KERNELS = _first_dir(REPO / "kernels", PACKAGE / "kernels")
EXERCISES = _first_dir(REPO / "exercises", PACKAGE / "exercise_files")
NOTEBOOKS = _first_dir(REPO / "notebooks", Path.cwd() / "notebooks")
RESULTS = _first_dir(REPO / "benchmarks" / "results", PACKAGE / "results")

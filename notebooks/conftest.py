"""nbval compares the outputs stored from the CPU simulator; run the notebooks on it here too,
even on a GPU machine (to run them on the GPU: COURSE_LIB_BACKEND=gpu pytest --nbval-lax notebooks)."""
import os
from pathlib import Path

import pytest

os.environ.setdefault("COURSE_LIB_BACKEND", "sim")
# the stored outputs hold no progress bar; on a loaded machine a simulation may pass the bar's 2 s delay
os.environ.setdefault("COURSE_LIB_PROGRESS", "0")

# `python -m pytest -m student` (the student repository's README test command) runs these notebooks, with
# tests/conftest.py's STUDENT_TESTS: the first notebook, and the first with a %%cuda exercise and its checker
STUDENT_NOTEBOOKS = ("00_start_here.ipynb", "04_shared_memory_tiles.ipynb")
HERE = Path(__file__).resolve().parent


def pytest_ignore_collect(collection_path, config):
    """With exactly `-m student`, the other notebooks are not even read."""
    if config.option.markexpr == "student" and collection_path.parent == HERE and collection_path.suffix == ".ipynb":
        return True if collection_path.name not in STUDENT_NOTEBOOKS else None
    return None


def pytest_collection_modifyitems(config, items):
    for item in items:
        if item.path.parent == HERE and item.path.name in STUDENT_NOTEBOOKS:
            item.add_marker(pytest.mark.student)

"""A synthetic class for grading: an nbgrader course of one-exercise notebooks and submissions drawn from the
exercise's solution (each student's own variant), its mutants (course_lib/teach/mutants.py: the mistakes
students make), the notebook's default answer and the untouched stub. Used by benchmarks/grading_throughput.py
and tests/lab/test_parallel_grading.py.

    course = grading_class.course(tmp, {"04_tiles": ("04_shared_memory_tiles", "shared_tile")})
    grading_class.submit(course, "alice", "04_tiles", source)        # source: the exercise cell, None: untouched
    students = grading_class.synthetic(course, "04_tiles", "shared_tile", 100)   # {student: (what, points)}

A submission is one notebook: the setup cell, ``cl.exercises.get(key)`` (the student's variant, shown in the
feedback), the %%cuda exercise cell and the locked test cell nbgrader grades.
"""
from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import nbformat

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from course_lib.lab.instructor import assignments, release  # noqa: E402
from course_lib.teach import mutants, solutions, variants  # noqa: E402


def _uncommented(text: str) -> str:
    return "%%cuda\n" + "\n".join(line.split("//")[0].rstrip() for line in text.splitlines())


def own(key: str, params: dict | None = None) -> str:
    """The solution of `key` (for a variant's `params`) as a student would write it: no markers, no comment."""
    return _uncommented(solutions.solved(solutions.body(key, params)))


def mini(folder: Path, assignment: str, notebook: str, key: str) -> Path:
    """A notebook with one exercise of a course notebook: setup, get, the %%cuda stub, its check cell."""
    nb = nbformat.read(REPO / "notebooks" / f"{notebook}.ipynb", 4)
    ec = next(e for e in release.exercise_cells(nb, f"{notebook}.ipynb") if e.key == key)
    out = nbformat.v4.new_notebook(metadata=nb.metadata)
    out.cells = [nbformat.v4.new_markdown_cell(f"# {assignment}"),
                 nbformat.v4.new_code_cell("import numpy as np\nimport course_lib as cl\nbackend = cl.setup()"),
                 nbformat.v4.new_code_cell(f'cl.exercises.get("{key}")'),
                 nb.cells[ec.index], nb.cells[ec.check_index]]
    path = folder / f"{assignment}.ipynb"
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(out, path)
    return path


def nbgrader(course: Path, *args, timeout=3600) -> subprocess.CompletedProcess:
    env = {**os.environ, "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]),
           "PYTHONPATH": str(REPO)}
    r = subprocess.run([sys.executable, "-m", "nbgrader", *args], cwd=course, capture_output=True, text=True,
                       timeout=timeout, env=env)
    if r.returncode != 0:
        raise RuntimeError(f"nbgrader {' '.join(args)}:\n{r.stderr[-4000:]}")
    return r


def course(tmp: Path, wanted: dict, with_variants: bool = True) -> Path:
    """An nbgrader course in tmp/course with one assignment per {assignment: (course notebook, key)}, generated."""
    paths = [mini(tmp / "notebooks", a, nb, key) for a, (nb, key) in wanted.items()]
    out = tmp / "course"
    assignments.export(paths, out, log=lambda *a: None, variants=with_variants)
    for a in wanted:
        nbgrader(out, "generate_assignment", a)
    return out


def params_of(course_dir: Path, key: str, student: str) -> dict | None:
    """`student`'s variant parameters of `key` in this course (None: the default)."""
    vkey = variants.course_key(course_dir, student)
    return variants.choose(key, vkey)


def submit(course_dir: Path, student: str, assignment: str, source: str | None, extra=()) -> Path:
    nb = json.loads((course_dir / "release" / assignment / f"{assignment}.ipynb").read_text())
    i = next(i for i, c in enumerate(nb["cells"]) if c["metadata"].get("nbgrader", {}).get("solution"))
    if source is not None:
        nb["cells"][i]["source"] = source
    nb["cells"][i + 1:i + 1] = [nbformat.v4.new_code_cell(x) for x in extra]
    target = course_dir / "submitted" / student / assignment / f"{assignment}.ipynb"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(nb))
    return target


def synthetic(course_dir: Path, assignment: str, key: str, n: int, seed: int = 0) -> dict:
    """`n` submissions: {student: (what it is, the points it must get)}. About half right (the student's own
    variant's solution), the rest a mutant of their variant, the notebook's default answer, or the stub."""
    from course_lib.teach.exercises import EXERCISES
    rng, out = random.Random(seed), {}
    for i in range(n):
        student = f"s{i:03d}"
        params = params_of(course_dir, key, student) or dict(EXERCISES[key].params)
        wrong = mutants.derive(variants.of_key(key, variants.course_key(course_dir, student)),
                               lambda p: solutions.solved(solutions.body(key, p)))
        pick = rng.random()
        if pick < 0.5:
            what, source, points = "solution", own(key, params), 2
        elif pick < 0.8 and wrong:
            m = rng.choice(wrong)
            what, source, points = f"mutant {m.name}", _uncommented(m.source), 0
        elif pick < 0.9 and params_of(course_dir, key, student):
            what, source, points = "the default's answer", own(key), 0
        else:
            what, source, points = "untouched", None, 0
        submit(course_dir, student, assignment, source)
        out[student] = (what, points)
    return out


def scores(course_dir: Path) -> dict:
    """{(student, assignment): score} of every submission in the course's gradebook (the scores ``nbgrader
    export`` writes to grades.csv, read in this process instead of starting nbgrader for it)."""
    from nbgrader.api import Gradebook
    with Gradebook(f"sqlite:///{Path(course_dir).resolve() / 'gradebook.db'}") as gb:
        return {(s.student_id, a.name): float(s.score) for a in gb.assignments for s in gb.assignment_submissions(a.name)}

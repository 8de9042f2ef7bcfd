"""One submission's grading as a pure function of its inputs: the Job, its key, and its Result.

    job = submission.job(nb, submission.files(folder), "alice", "06_tiles", "06_tiles", course, settings)
    result = nbgrader_hooks.grade_job(job)        # any worker: the sandboxed run and the checker's verdicts
    result.apply(nb)                              # nbgrader's autograde: the outputs into its notebook

A Job holds everything the grade depends on and nothing more: the notebook's cells as they run (type,
source, tags, nbgrader's grade_id; the course's test cells emptied: they never run in the sandbox), its
kernel's name, each course test cell's exercise and hidden shapes, the student's variant key (never the
class's secret: a worker needs none), the folder's other files, the grader's settings (timeouts, bounds)
and, in its key, a fingerprint of the grading code (course_lib, exercises/, kernels/): a new checker is a
new key. The same Job gives the same Result wherever it runs, so a Result computed by a worker can be put
in the notebook nbgrader autogrades (results.Store keeps them by the Job's key). Outputs, metadata and
cell ids, which a submission's run overwrites or nbgrader's sanitizing changes, are not part of it.
This module describes; nbgrader_hooks runs (grade_job), results stores, batch plans and fans out.
"""
from __future__ import annotations

import fnmatch
import functools
import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from ... import paths
from ...teach import variants
from ...teach.exercises import EXERCISES
from . import hidden, trusted

INSTRUCTOR_ONLY = ("solution.cu", "wrong.toml")


@dataclass(frozen=True)
class Job:
    """What one submission-notebook's grade depends on (see the module's docstring)."""
    student: str
    assignment: str
    notebook: str
    cells: tuple                   # ((cell_type, source, tags, grade_id), ...), test cells' source ""
    kernel: str
    tests: tuple                   # ((cell index, exercise key, hidden shapes, [refusal, its record] or None), ...)
    variant_key: str | None
    files: dict = field(default_factory=dict)       # {relative path: bytes}, notebooks left out
    settings: dict = field(default_factory=dict)    # SandboxedExecute's configured values

    @functools.cached_property
    def key(self) -> str:
        described = {**{k: getattr(self, k) for k in ("student", "assignment", "notebook", "cells", "kernel",
                                                      "tests", "variant_key", "settings")},
                     "files": {p: hashlib.sha256(b).hexdigest() for p, b in sorted(self.files.items())},
                     "grader": fingerprint()}
        return hashlib.sha256(json.dumps(described, sort_keys=True, default=list).encode()).hexdigest()

    def notebook_to_run(self):
        """The notebook the sandbox runs and the checker reads: these cells, this kernel, nothing else."""
        nb = nbformat.v4.new_notebook(metadata={"kernelspec": {"name": self.kernel, "display_name": self.kernel,
                                                               "language": "python"}})
        for kind, source, tags, grade_id in self.cells:
            meta = {**({"tags": list(tags)} if tags else {}),
                    **({"nbgrader": {"grade_id": grade_id}} if grade_id else {})}
            make = {"code": nbformat.v4.new_code_cell, "markdown": nbformat.v4.new_markdown_cell}.get(
                kind, nbformat.v4.new_raw_cell)
            nb.cells.append(make(source, metadata=meta))
        return nb

    def write_files(self, folder) -> None:
        for rel, data in self.files.items():
            target = Path(folder) / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)


@dataclass
class Result:
    """The graded notebook's code cells: {cell index: (outputs, execution count)}; `seconds` it took."""
    cells: dict
    seconds: float = 0.0
    grader: str = ""

    @classmethod
    def of(cls, nb, seconds: float = 0.0) -> "Result":
        return cls({i: (json.loads(json.dumps(c.get("outputs", []))), c.get("execution_count"))
                    for i, c in enumerate(nb.cells) if c.cell_type == "code"}, seconds, fingerprint())

    def apply(self, nb) -> None:
        for i, (outputs, count) in self.cells.items():
            nb.cells[i].outputs = [nbformat.from_dict(o) for o in outputs]
            nb.cells[i].execution_count = count

    def to_json(self) -> str:
        return json.dumps({"cells": [[i, o, n] for i, (o, n) in sorted(self.cells.items())],
                           "seconds": self.seconds, "grader": self.grader})

    @classmethod
    def from_json(cls, text: str) -> "Result":
        d = json.loads(text)
        return cls({int(i): (o, n) for i, o, n in d["cells"]}, d.get("seconds", 0.0), d.get("grader", ""))


def exercise_test(cell) -> str | None:
    """The exercise key of a course test cell (grade_id '<key>_check', a grade cell), else None."""
    meta = cell.get("metadata", {}).get("nbgrader", {})
    key = str(meta.get("grade_id", "")).removesuffix("_check")
    return key if cell.get("cell_type") == "code" and meta.get("grade") and key in EXERCISES else None


def job(nb, files: dict, student: str, assignment: str, notebook: str, course, settings: dict) -> Job:
    """The Job of submitted notebook `nb` of `student`, graded with the secret of the `course` folder (which
    stays here: the Job holds the student's variant key and the hidden shapes drawn from it)."""
    secret, vkey = hidden.seed(course), variants.course_key(course, student)
    tests, cells = [], []
    for i, c in enumerate(nb.cells):
        key = exercise_test(c)
        if key:
            shapes = hidden.hidden_shapes(variants.of_key(key, vkey), secret, student, assignment)
            refused = trusted.refusal(nb, key, vkey)
            tests.append((i, key, [list(s) for s in shapes], [refused[1], refused.record] if refused else None))
        meta = c.get("metadata", {})
        cells.append((c.get("cell_type", "code"), "" if key else c.get("source", ""),
                      tuple(str(t) for t in meta.get("tags", []) or ()),
                      str(meta.get("nbgrader", {}).get("grade_id", "") or "")))
    kernel = str(nb.get("metadata", {}).get("kernelspec", {}).get("name", "python3"))
    return Job(str(student), str(assignment), str(notebook), tuple(cells), kernel, tuple(tests), vkey, files,
               dict(sorted(settings.items())))


def files(folder, ignore=()) -> dict[str, bytes]:
    """A submission folder's files but its notebooks (each notebook is a Job of its own) and those matching a
    glob of `ignore` (nbgrader's CourseDirectory.ignore), symlinks not followed (left out: followed they could
    bring in what the grader can read)."""
    out, root = {}, Path(folder)
    skip = lambda name: any(fnmatch.fnmatch(name, g) for g in ignore)      # noqa: E731
    for dirpath, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if not os.path.islink(os.path.join(dirpath, d)) and not skip(d)]
        for name in names:
            p = Path(dirpath) / name
            if p.suffix != ".ipynb" and not skip(name) and not p.is_symlink() and p.is_file():
                out[p.relative_to(root).as_posix()] = p.read_bytes()
    return out


@functools.lru_cache(maxsize=1)
def fingerprint() -> str:
    """A digest of the grading code and the exercises (course_lib's Python, exercises/, kernels/): a Result
    stored by another version of them is not this grader's. The instructor-only files (solutions, wrong
    kernels) are left out: a worker need not have them (the Job carries what they decide: its refusals)."""
    h = hashlib.sha256()
    for root in (paths.PACKAGE, paths.EXERCISES, paths.KERNELS):
        for p in sorted(Path(root).rglob("*")):
            if p.is_file() and not {"__pycache__", "solutions"} & set(p.relative_to(root).parts) and p.suffix not in (".pyc", ".so") \
                    and p.name not in INSTRUCTOR_ONLY:
                h.update(p.relative_to(root).as_posix().encode() + b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest()[:16]

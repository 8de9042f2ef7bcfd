"""The results store: each graded submission's Result, kept by its Job's key in the course folder.

    store = results.Store(course)                 # course/.course_lib_results/
    store.put(job, result); store.get(job)        # None: not graded yet (or by another grader version)

A parallel run (batch) puts each Result here as its worker hands it back, then one ``nbgrader autograde``
reads them (nbgrader_hooks), so nbgrader alone writes the gradebook. A Result is written whole or not at
all (a temporary file renamed into place): a run stopped at any moment leaves only complete Results, and
the next run grades only what is missing. The key covers every input of the grade (submission.Job), so a
resubmission, a new secret, new settings or a new grader version miss and are graded afresh. Results hold
what autograded/ holds (a student's outputs, the verdicts), nothing of the secret: keep the folder as
private as the course folder. Delete it to grade everything again.
"""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

from .submission import Job, Result

FOLDER = ".course_lib_results"


class Store:
    """Results by Job key, as files course/.course_lib_results/<2 hex>/<key>.json."""

    def __init__(self, course):
        self.root = Path(course) / FOLDER

    def _path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    def get(self, job: Job) -> Result | None:
        try:
            return Result.from_json(self._path(job.key).read_text())
        except (OSError, ValueError, KeyError, TypeError):      # absent, or unreadable: graded again
            return None

    def has(self, job: Job) -> bool:
        return self._path(job.key).is_file()

    def put(self, job: Job, result: Result) -> Path:
        path = self._path(job.key)
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".partial-", suffix=".json")
        try:
            with os.fdopen(fd, "w") as f:
                f.write(result.to_json())
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, path)                 # atomic: a reader sees the whole Result or none
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        return path

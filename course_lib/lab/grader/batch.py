"""Grading a batch in parallel: a class's submissions of one assignment fanned out over an Engine, then one
``nbgrader autograde`` that applies what they computed, so that nbgrader alone writes the gradebook.

    batch.grade(course, "06_tiles", engine.local(4))      # python -m course_lib instructor grade 06_tiles --workers 4

1. plan: each submitted notebook nbgrader would autograde (submitted/<student>/<assignment>/, not yet in
   autograded/ unless `force`) becomes a submission.Job, as nbgrader_hooks would make it (the course's
   nbgrader_config.py read the way nbgrader reads it; no other file: a run has the notebooks only);
2. fan out: the Jobs whose Result the store (results.Store) lacks go to the engine's workers, each running
   nbgrader_hooks.grade_job, the path nbgrader's own autograde takes; each Result is stored whole as it comes
   back, with a progress line and an estimate of the time left. Stopped here (Ctrl-C, a lost machine), a
   run keeps what it stored and the next one grades only the rest;
3. apply: one ``nbgrader autograde ASSIGNMENT`` in the course folder finds every Result by its Job's key and
   applies it without running anything, and grades in place whatever the plan missed (a notebook it could
   not read, a Job a worker failed). Its progress is counted from its log.

The secret stays here: a Job holds one student's variant key and hidden shapes. This module plans and
reports; engine fans out, nbgrader_hooks grades, results stores.
"""
from __future__ import annotations

import contextlib
import re
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from . import results, submission
from .engine import Engine


@dataclass
class Progress:
    """Progress lines for `total` steps of one kind, with the time left estimated from this run's pace."""
    total: int
    what: str
    say: callable = print
    done: int = 0
    failed: int = 0
    start: float = field(default_factory=time.perf_counter)

    def step(self, name: str, note: str = "") -> None:
        self.done += 1
        elapsed = time.perf_counter() - self.start
        left = elapsed / self.done * (self.total - self.done)
        self.say(f"[{self.what} {self.done}/{self.total}] {name}{note} · {_clock(elapsed)} so far, "
                 f"~{_clock(left)} left" + (f" · {self.failed} left to nbgrader" if self.failed else ""))


def _clock(seconds: float) -> str:
    s = int(round(seconds))
    return f"{s // 3600} h {s % 3600 // 60:02d} min" if s >= 3600 else f"{s // 60} min {s % 60:02d} s"


def nbgrader_settings(course) -> tuple[dict, list]:
    """(SandboxedExecute's settings, CourseDirectory.ignore) as `nbgrader autograde` in `course` has them."""
    from nbgrader.apps import NbGraderApp
    from nbgrader.coursedir import CourseDirectory

    from .nbgrader_hooks import SandboxedExecute
    with contextlib.chdir(course):
        app = NbGraderApp()
        app.load_config_file()
        return SandboxedExecute(config=app.config).settings(), list(CourseDirectory(config=app.config).ignore)


def plan(course, assignment: str, force: bool = False) -> list[submission.Job]:
    """The Jobs of `assignment`'s submissions that nbgrader autograde would grade now."""
    course = Path(course)
    settings, _ = nbgrader_settings(course)
    names = sorted(p.stem for p in (course / "source" / assignment).glob("*.ipynb"))
    jobs = []
    for folder in sorted((course / "submitted").glob(f"*/{assignment}")):
        student = folder.parent.name
        if (course / "autograded" / student / assignment).exists() and not force:
            continue                                                # nbgrader skips it: graded before
        files = {}          # a submission's run has its notebooks only (handed_in.keep_notebooks_only), as in place
        for name in names:
            try:
                nb = nbformat.read(folder / f"{name}.ipynb", as_version=4)
            except (OSError, ValueError, KeyError, AttributeError):  # missing or unreadable: nbgrader says so
                continue
            jobs.append(submission.job(nb, files, student, assignment, name, course, settings))
    return jobs


def fan_out(jobs, engine: Engine, store: results.Store, say=print) -> int:
    """Grade the Jobs `store` lacks on `engine`, storing each Result as it comes; how many were graded."""
    from .nbgrader_hooks import grade_job
    todo = [j for j in jobs if not store.has(j)]
    say(f"{len(jobs)} submission-notebook(s): {len(jobs) - len(todo)} graded before (stored), {len(todo)} to grade "
        f"on {engine.describe}")
    progress = Progress(len(todo), "graded", say)
    mine = submission.fingerprint()
    for job, outcome in engine.map(grade_job, todo):
        note = f" in {outcome.seconds:.1f} s" if isinstance(outcome, submission.Result) else ""
        if not isinstance(outcome, submission.Result):
            progress.failed += 1
            note = f": {type(outcome).__name__}: {str(outcome)[:200]} (nbgrader grades it in place)"
        elif outcome.grader != mine:
            progress.failed += 1
            note = (f": its worker runs another course_lib ({outcome.grader}, here {mine}): not kept; install the "
                    "same course_lib on the workers")
        else:
            store.put(job, outcome)
        progress.step(f"{job.student}/{job.notebook}", note)
    return progress.done - progress.failed


def apply(course, assignment: str, expected: int, force: bool = False, say=print) -> int:
    """`nbgrader autograde` in the course folder, its progress counted from its log; its exit status."""
    cmd = [sys.executable, "-m", "nbgrader", "autograde", assignment, *(["--force"] if force else [])]
    progress, applied = Progress(max(expected, 1), "nbgrader", say), 0
    with subprocess.Popen(cmd, cwd=course, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) as proc:
        for line in proc.stdout:
            if "applied the result" in line:
                applied += 1
            elif m := re.search(r"Autograding .*?autograded[/\\]([^/\\]+)[/\\][^/\\]+[/\\]([^/\\]+)\.ipynb", line):
                progress.total = max(progress.total, progress.done + 1)
                progress.step(f"{m[1]}/{m[2]}")
            elif "ERROR" in line or "WARNING" in line:
                say(line.rstrip())
    say(f"nbgrader autograde applied {applied} stored result(s) and graded {progress.done - applied} in place "
        f"(exit {proc.returncode})")
    return proc.returncode


def grade(course, assignment: str, engine: Engine, force: bool = False, say=print) -> int:
    """Plan, fan out on `engine`, apply with nbgrader: the exit status of nbgrader autograde."""
    start = time.perf_counter()
    jobs = plan(course, assignment, force)
    graded = fan_out(jobs, engine, results.Store(course), say)
    engine.close()                                          # the workers are not needed by nbgrader
    say(f"{graded} graded on {engine.describe} in {_clock(time.perf_counter() - start)}; now nbgrader autograde "
        f"{assignment} writes them into the gradebook")
    return apply(course, assignment, len(jobs), force, say)

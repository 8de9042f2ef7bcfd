"""What nbgrader needs to grade this course: the course's stubs, sandboxed autograding, time per cell.

    # nbgrader_config.py (written by `python -m course_lib instructor nbgrader`)
    from course_lib.lab.grader.nbgrader_hooks import configure
    configure(c)

nbgrader replaces a solution region with one stub per language (Python's is ``raise
NotImplementedError()``), which in a ``%%cuda`` cell does not compile. :class:`CourseStubs`, put
in place of nbgrader's ClearSolutions for ``generate_assignment``, gives a ``%%cuda`` cell with the
course's markers its own stub (``solutions.strip_solutions``: the ``//>`` lines, exactly the cell
of notebooks/) and leaves every other cell to nbgrader. :class:`SandboxedExecute`, in place of
nbgrader's Execute for ``autograde``, never runs a student's code as the instructor: the notebook runs
in course_lib.lab.grader.sandbox (its test cells emptied, in a throw-away copy of its folder), in a box
(course_lib.lab.grader.box: time for the whole notebook, memory with files, files, processes, output; its
traits below set them), and each test cell of a course exercise shows the verdict of course_lib.lab.grader.trusted
on the exercise cell's text, with hidden shapes from the course's seed (hidden.hidden_shapes), and beside it the
checker's record, signed for that cell (verdicts) and kept per submission (verdict_store) for the class report;
what a failed hidden check tells the student is ``SandboxedExecute.hidden_feedback`` (per assignment:
``hidden_feedback_by_assignment``). A notebook that passes a bound is stopped and each of its test cells says
which bound, with no points. Without a working bubblewrap it refuses. Files a student handed in beside the
notebooks are removed from autograded/ first (handed_in: formgrader serves that folder's files as the
instructor). Last, course_lib.lab.grader.inert makes the autograded notebook inert (formgrader, the feedback and
the notebook itself show nothing a student made that runs or loads), and the feedback's input too, whose
records :class:`WithheldVerdicts` removes (they name hidden shapes).
Importing this module needs nbgrader (the ``[instructor]`` extra).
"""
from __future__ import annotations

import datetime
import json
import logging
import shutil
import tempfile
import time
from pathlib import Path

import nbformat
from nbgrader.coursedir import CourseDirectory
from nbconvert.preprocessors import Preprocessor
from nbgrader.preprocessors import ClearSolutions, Execute
from traitlets import Dict, Enum, Float, Integer, Unicode, default

from ...teach.exercises import EXERCISES
from ...teach import variants
from ...teach.solutions import has_solution, strip_solutions
from . import box, handed_in, hidden, kernel, results, sandbox, submission, trusted, verdict_store, verdicts
from .inert import InertNotebook

CELL_TIMEOUT_S = 300        # a notebook cell on the simulator takes seconds; a checker at most ~10


class CourseStubs(ClearSolutions):
    """nbgrader's ClearSolutions, except that a %%cuda cell gets the course's own stub."""

    def _replace_solution_region(self, cell, language) -> bool:
        if cell.cell_type == "code" and cell.source.lstrip().startswith("%%cuda") and has_solution(cell.source):
            cell.source = strip_solutions(cell.source)
            return True
        return super()._replace_solution_region(cell, language)


_BOUNDS = box.Bounds()


class SandboxedExecute(Execute):
    """nbgrader's Execute for autograde: the student's notebook runs in the sandbox, in a box (a copy of its folder,
    no network, no solutions, no course folder, bounds on the whole of it), its test cells not at all; each test cell
    of a course exercise gets the trusted grader's verdict as its output (an error output when it fails) and its
    record, signed with the course's key (``verdicts``) and kept for the class report (``verdict_store``).
    What a failed check on the hidden shapes tells the student is the instructor's choice (``feedback``)."""
    time_limit = Float(_BOUNDS.time_s, help="seconds the whole notebook may run, every cell together").tag(config=True)
    memory_limit = Integer(_BOUNDS.memory, help="bytes of memory: processes and files together").tag(config=True)
    space_limit = Integer(_BOUNDS.space, help="bytes of files in the folder, /tmp and HOME together").tag(config=True)
    shm_limit = Integer(_BOUNDS.shm, help="bytes of files in /dev/shm").tag(config=True)
    process_limit = Integer(_BOUNDS.processes, help="processes and threads at once").tag(config=True)
    output_limit = Integer(_BOUNDS.output, help="bytes of output, every cell together").tag(config=True)
    box_mode = Enum(["auto", "cgroup2", "cgroup1", "systemd", "watchdog"], "auto",
                    help="how memory and processes are bounded (course_lib/lab/grader/cgroups.py)").tag(config=True)
    cgroup = Unicode("", help="a delegated cgroup v2 folder to make each submission's cgroup in").tag(config=True)
    _told = False

    hidden_feedback = Enum(list(trusted.FEEDBACK), default_value=trusted.FEEDBACK_DEFAULT, help=(
        "What a failed check on the hidden shapes tells the student: 'count' (how many problems), 'hint' (and "
        "their hints: the default; no shape, so they stay hidden across resubmissions) or 'shape' (each problem "
        "with the hidden shape it was found on: for practice rounds)")).tag(config=True)
    hidden_feedback_by_assignment = Dict(value_trait=Enum(list(trusted.FEEDBACK)), default_value={}, help=(
        "hidden_feedback for some assignments: {assignment: 'count' | 'hint' | 'shape'}")).tag(config=True)

    def feedback_for(self, assignment: str) -> str:
        return self.hidden_feedback_by_assignment.get(assignment, self.hidden_feedback)

    def preprocess(self, nb, resources, *args, **kwargs):
        sandbox.require()                               # no sandbox: refuse, never grade unsandboxed
        info = resources.get("nbgrader", {})
        student, assignment = str(info.get("student", "")), str(info.get("assignment", ""))
        course = CourseDirectory(config=self.config)
        term = hidden.seed(course.root)
        # before anything runs: autograded/ keeps the notebooks only, since formgrader serves its files as the instructor
        handed_in.keep_notebooks_only(course.format_path(course.autograded_directory, student, assignment))
        job = self.job(nb, resources, course.root)
        result = results.Store(course.root).get(job)
        if result is None:
            result = self.grade(job)
        else:
            self.log.info("course_lib: %s of %s: applied the result its parallel run stored", job.notebook, student)
        result.apply(nb)
        _seal(nb, course, term, student, assignment, str(info.get("notebook", "")))
        return nb, resources

    def settings(self) -> dict:
        """This preprocessor's configured values that a worker needs to grade as it would (JSON's kinds)."""
        out = {}
        for name in sorted(self.traits(config=True)):
            value = getattr(self, name)
            if isinstance(value, (str, int, float, bool, type(None), list, dict)):
                try:
                    out[name] = json.loads(json.dumps(value))
                except (TypeError, ValueError):
                    continue
        return out

    def job(self, nb, resources, course) -> submission.Job:
        """The Job of the notebook nbgrader hands over (its folder: resources' path) in the `course` folder."""
        info = resources.get("nbgrader", {})
        folder = resources.get("metadata", {}).get("path") or "."
        return submission.job(nb, submission.files(folder), str(info.get("student", "")),
                              str(info.get("assignment", "")), str(info.get("notebook", "")), course, self.settings())

    def grade(self, job: submission.Job) -> submission.Result:
        """The per-submission grading path, here or on any worker (grade_job): the Job's notebook run in the
        sandbox, in a box, with that student's variant key, then the checker's verdict in each course test cell."""
        start = time.perf_counter()
        nb = job.notebook_to_run()
        tests = {i for i, *_ in job.tests}
        env = {variants.ENV_STUDENT: job.student, **({variants.ENV_KEY: job.variant_key} if job.variant_key else {})}
        with tempfile.TemporaryDirectory(prefix="course_lib_submission_") as folder:
            job.write_files(folder)
            stopped = self._run_isolated(nb, {"metadata": {"path": folder}}, tests, env)
        for i, key, shapes, refused in job.tests:
            if stopped:
                ok, text, record = False, (f"✗ {key}: {stopped}. The grader stops a notebook that passes one of its "
                                           "bounds, and gives it no points: make it smaller, or ask your instructor"), None
            else:
                graded = trusted.grade(nb, key, [tuple(s) for s in shapes], variant_key=job.variant_key,
                                       feedback=self.feedback_for(job.assignment),
                                       refused=trusted.Verdict(False, *refused) if refused else None)
                (ok, text), record = graded, graded.record
            nb.cells[i].outputs, nb.cells[i].execution_count = verdict(key, ok, text, record), None
        return submission.Result.of(nb, time.perf_counter() - start)

    def _box(self) -> box.Box:
        bounds = box.Bounds(self.time_limit, self.memory_limit, self.space_limit, self.shm_limit, self.process_limit,
                            self.output_limit)
        b = box.Box(bounds, self.box_mode, self.cgroup)
        if not SandboxedExecute._told:
            SandboxedExecute._told = True
            self.log.info("course_lib: each notebook runs boxed (%s): %s", b.mode, b.describe())
        return b

    def _run_isolated(self, nb, resources, tests, env=None) -> str | None:
        """Execute a copy of `nb` (test cells emptied) with its kernel in the sandbox, in a box; nbgrader's Execute
        does the rest (timeouts, errors kept). Its outputs go to `nb`'s other cells. What stopped it, if a bound did.
        `env`: what the student's own kernel may know (their id and variant key: the feedback shows their variant)."""
        copy = nbformat.from_dict(json.loads(json.dumps(nb)))
        for i in tests:
            copy.cells[i].source = ""
        folder = resources.get("metadata", {}).get("path") or "."
        b, self._running = self._box(), None
        told = _Stopped(b)                  # nbclient's "Kernel died" is the box's doing, said once below
        self.log.addFilter(told)
        try:
            with tempfile.TemporaryDirectory(prefix="course_lib_autograde_") as runtime:   # its connection file
                # a copy of the folder, as the sandbox's mount table names a bound folder's path (the course's, here);
                # symlinks stay links: followed here they would copy what the instructor can read into the sandbox
                shutil.copytree(folder, work := Path(runtime) / "work", symlinks=True)
                self.kernel_manager_class = kernel.manager_class(b, str(work), runtime, env)
                try:
                    super().preprocess(copy, {**resources, "metadata": {**resources.get("metadata", {}),
                                                                        "path": runtime}})
                except Exception:
                    if not b.stopped:
                        raise
        finally:
            b.close()
            self.log.removeFilter(told)
            (self.log.warning if b.stopped else self.log.info)("course_lib: %s used %s", folder, b.summary())
        if b.stopped and self._running is not None:
            copy.cells[self._running].outputs.append(nbformat.v4.new_output(
                "error", ename="Stopped", evalue=b.says, traceback=[f"Stopped by the grader: {b.says}"]))
        for i, (cell, done) in enumerate(zip(nb.cells, copy.cells)):
            if cell.cell_type == "code" and i not in tests:
                cell.outputs, cell.execution_count = done.get("outputs", []), done.get("execution_count")
        return b.says

    def preprocess_cell(self, cell, resources, index):
        if cell.cell_type == "code" and cell.source.strip():
            self._running = index                       # the cell a stop is shown in
        done = super().preprocess_cell(cell, resources, index)
        self.kernel_manager_class.box.check()           # a cell that just filled a tmpfs, before the kernel ends
        return done


def grade_job(job: submission.Job) -> submission.Result:
    """What a worker runs (batch): one submission graded as nbgrader's autograde would, by its settings."""
    sandbox.require()
    return SandboxedExecute(**job.settings).grade(job)


class _Stopped(logging.Filter):
    """Drops nbclient's errors about a dead kernel once the box has stopped it (it says why, as a warning)."""

    def __init__(self, b: box.Box):
        super().__init__()
        self.box = b

    def filter(self, record) -> bool:
        return not (self.box.stopped and record.levelno >= logging.ERROR and "Kernel died" in record.getMessage())


def verdict(key: str, ok: bool, text: str, record: dict | None = None) -> list:
    """The test cell's outputs: the verdict, its record (unsigned: _seal signs it), and an error when it
    failed (nbgrader then gives no points)."""
    out = [nbformat.v4.new_output("stream", name="stdout", text=text + "\n")]
    if record:
        out.append(verdicts.output(record))
    if not ok:
        out.append(nbformat.v4.new_output("error", ename="AssertionError", evalue=f"{key}: not passed",
                                          traceback=[f"AssertionError: {key}: not passed (the report is above)"]))
    return out


def _seal(nb, course, secret, student, assignment, notebook) -> None:
    """Sign the records of `nb`'s course test cells for this submission (any other of their type goes) and keep
    them with the submission's time (nbgrader's timestamp.txt) for first try against final."""
    stamp = Path(course.format_path(course.submitted_directory, student, assignment)) / "timestamp.txt"
    try:
        submitted = stamp.read_text().strip() or None
    except OSError:
        submitted = None
    graded = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    sealed = verdicts.seal(nb, secret, student, assignment, notebook, EXERCISES, submitted, graded)
    verdict_store.keep(course.root, assignment, student, notebook, submitted, sealed)


class WithheldVerdicts(Preprocessor):
    """generate_feedback's: the records leave the student's feedback (they name the hidden shapes)."""

    @default("enabled")
    def _enabled_default(self):
        return True

    def preprocess(self, nb, resources):
        return verdicts.withheld(nb), resources


def _swap(app, trait, old, new) -> list:
    """nbgrader's default list of preprocessors for `app`.`trait`, with `old` replaced by `new`."""
    classes = app.class_traits()[trait].default()
    if old not in classes:
        raise RuntimeError(f"nbgrader's {app.__name__}.{trait} has no {old.__name__}: this nbgrader is not 0.9")
    return [new if cls is old else cls for cls in classes]


def configure(c) -> None:
    """Set nbgrader's configuration `c` for the course (its preprocessor lists are read from nbgrader)."""
    from nbgrader.converters import Autograde, GenerateAssignment, GenerateFeedback
    c.GenerateAssignment.preprocessors = _swap(GenerateAssignment, "preprocessors", ClearSolutions, CourseStubs)
    # inert last, once the grades are saved: autograded/ is what formgrader, the feedback and an instructor open
    c.Autograde.autograde_preprocessors = [*_swap(Autograde, "autograde_preprocessors", Execute, SandboxedExecute),
                                           InertNotebook]
    # and first for the feedback, so that a notebook autograded before this step existed gets no script into it
    c.GenerateFeedback.preprocessors = [InertNotebook, WithheldVerdicts,
                                        *GenerateFeedback.class_traits()["preprocessors"].default()]
    c.Execute.timeout = CELL_TIMEOUT_S

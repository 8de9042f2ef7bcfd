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
in course_lib.lab.grader.sandbox (its test cells emptied, in a throw-away copy of its folder), and each test
cell of a course exercise shows the verdict of course_lib.lab.grader.trusted on the exercise cell's text, with
hidden shapes from the course's seed (hidden.hidden_shapes). Without a working bubblewrap it refuses.
Files a student handed in beside the notebooks are removed from autograded/ first (handed_in:
formgrader serves that folder's files as the instructor). Last, course_lib.lab.grader.inert makes the autograded notebook inert (formgrader, the feedback and the
notebook itself show nothing a student made that runs or loads), and the feedback's input too.
Importing this module needs nbgrader (the ``[instructor]`` extra).
"""
from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import nbformat
from jupyter_client.manager import AsyncKernelManager
from nbgrader.coursedir import CourseDirectory
from nbgrader.preprocessors import ClearSolutions, Execute

from ...teach import variants
from ...teach.solutions import has_solution, strip_solutions
from . import handed_in, results, sandbox, submission, trusted
from .inert import InertNotebook

CELL_TIMEOUT_S = 300        # a notebook cell on the simulator takes seconds; a checker at most ~10


class CourseStubs(ClearSolutions):
    """nbgrader's ClearSolutions, except that a %%cuda cell gets the course's own stub."""

    def _replace_solution_region(self, cell, language) -> bool:
        if cell.cell_type == "code" and cell.source.lstrip().startswith("%%cuda") and has_solution(cell.source):
            cell.source = strip_solutions(cell.source)
            return True
        return super()._replace_solution_region(cell, language)


class SandboxedExecute(Execute):
    """nbgrader's Execute for autograde: the student's notebook runs in the sandbox (a throw-away copy of its
    folder, no network, no solutions, no course folder), its test cells not at all; each test cell of a
    course exercise gets the trusted grader's verdict as its output (an error output when it fails). A
    Result a parallel run stored for this very submission (results.Store, by the Job's key) is applied
    instead of grading again; anything else is graded here, by the same `grade`."""

    def preprocess(self, nb, resources, *args, **kwargs):
        sandbox.require()                               # no sandbox: refuse, never grade unsandboxed
        info = resources.get("nbgrader", {})
        course = CourseDirectory(config=self.config)
        # before anything runs: autograded/ keeps the notebooks only, since formgrader serves its files as the instructor
        handed_in.keep_notebooks_only(course.format_path(course.autograded_directory, str(info.get("student", "")),
                                                         str(info.get("assignment", ""))))
        job = self.job(nb, resources, course.root)
        result = results.Store(course.root).get(job)
        if result is None:
            result = self.grade(job)
        else:
            self.log.info("course_lib: %s of %s: applied the result its parallel run stored", job.notebook, job.student)
        result.apply(nb)
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
        sandbox with that student's variant key, then the checker's verdict in each course test cell."""
        start = time.perf_counter()
        nb = job.notebook_to_run()
        tests = {i for i, *_ in job.tests}
        with tempfile.TemporaryDirectory(prefix="course_lib_submission_") as folder:
            job.write_files(folder)
            env = {variants.ENV_STUDENT: job.student, **({variants.ENV_KEY: job.variant_key} if job.variant_key else {})}
            self._run_isolated(nb, {"metadata": {"path": folder}}, tests, env)
        for i, key, shapes, refused in job.tests:
            ok, text = trusted.grade(nb, key, [tuple(s) for s in shapes], variant_key=job.variant_key, refused=refused)
            nb.cells[i].outputs, nb.cells[i].execution_count = verdict(key, ok, text), None
        return submission.Result.of(nb, time.perf_counter() - start)

    def _run_isolated(self, nb, resources, tests, env=None) -> None:
        """Execute a copy of `nb` (test cells emptied) with its kernel in the sandbox, in a copy of its folder;
        nbgrader's Execute does the rest (timeouts, errors kept). Its outputs go to `nb`'s other cells. `env`:
        what the student's own kernel may know (their id and variant key: the feedback shows their variant)."""
        with tempfile.TemporaryDirectory(prefix="course_lib_autograde_") as tmp:
            work, sockets = Path(tmp) / "work", Path(tmp) / "sockets"
            # symlinks stay links: followed here they would copy what the instructor can read into the sandbox
            shutil.copytree(resources.get("metadata", {}).get("path") or ".", work, symlinks=True)
            sockets.mkdir(mode=0o700)
            copy = nbformat.from_dict(json.loads(json.dumps(nb)))
            for i in tests:
                copy.cells[i].source = ""
            self.kernel_manager_class = type("SandboxedKernel", (SandboxedKernelManager,),
                                             {"work": str(work), "sockets": str(sockets), "env": dict(env or {})})
            ran, _ = super().preprocess(copy, {**resources, "metadata": {**resources.get("metadata", {}),
                                                                          "path": str(work)}})
        for i, (cell, done) in enumerate(zip(nb.cells, ran.cells)):
            if cell.cell_type == "code" and i not in tests:
                cell.outputs, cell.execution_count = done.get("outputs", []), done.get("execution_count")


def grade_job(job: submission.Job) -> submission.Result:
    """What a worker runs (batch): one submission graded as nbgrader's autograde would, by its settings."""
    sandbox.require()
    return SandboxedExecute(**job.settings).grade(job)


class SandboxedKernelManager(AsyncKernelManager):
    """A kernel started inside the sandbox: ipc sockets in `sockets` (bound into it; the sandbox has no
    network), `work` as its cwd, an empty environment for bwrap, the sandbox's limits; `env` added to the
    sandbox's own environment (the student's id and variant key)."""
    work, sockets, env = "", "", {}

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.transport, self.ip = "ipc", f"{self.sockets}/kernel"
        self.connection_file = f"{self.sockets}/kernel.json"

    async def _async_launch_kernel(self, kernel_cmd, **kw):
        # bwrap gets an empty environment (its /proc/1/environ is the sandbox's to read); the kernel's chatter is
        # not the grader's log
        kw.update(env={}, cwd=self.work, preexec_fn=sandbox.limits(), stdout=subprocess.DEVNULL,
                  stderr=subprocess.DEVNULL)
        return await super()._async_launch_kernel(sandbox.command(kernel_cmd, self.work, [self.sockets], self.env),
                                                  **kw)


def verdict(key: str, ok: bool, text: str) -> list:
    """The test cell's outputs: the verdict, and an error when it failed (nbgrader then gives no points)."""
    out = [nbformat.v4.new_output("stream", name="stdout", text=text + "\n")]
    if not ok:
        out.append(nbformat.v4.new_output("error", ename="AssertionError", evalue=f"{key}: not passed",
                                          traceback=[f"AssertionError: {key}: not passed (the report is above)"]))
    return out


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
    c.GenerateFeedback.preprocessors = [InertNotebook, *GenerateFeedback.class_traits()["preprocessors"].default()]
    c.Execute.timeout = CELL_TIMEOUT_S

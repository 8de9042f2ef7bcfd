import gc
import os
import re
from pathlib import Path

import pytest

import live_progress

# Tests run the simulator even on a machine with a GPU unless asked otherwise.
os.environ.setdefault("COURSE_LIB_BACKEND", "sim")

# The student repository (`python -m course_lib instructor publish`) has no exercises/*/solution.cu: a test that
# needs a solution file skips there, saying so, instead of failing (course_lib.lab.instructor.publish).
NO_SOLUTIONS = ("needs the exercises' solutions, which only the course's instructor repository has (nothing is wrong "
                "with your install)")
# modules that test the exercises against their solutions (the checkers, the instructor tools, nbgrader's
# export): there every test skips; elsewhere a test is marked needs_solutions, or skips when it asks
# solutions.path() for a file that is not there (or, at import, the module does). Publish leaves most of
# them out of the student repository (INSTRUCTOR_ONLY, course_lib/lab/instructor/publish.py).
NEEDS_SOLUTIONS = ("teach/test_exercises.py", "teach/test_checker_holes.py", "lab/test_instructor.py",
                   "lab/test_grading.py", "lab/test_nbgrader.py")
# `python -m pytest -m student`, the student repository's README test command: these modules (marked
# `student`) and notebooks/conftest.py's notebooks; with exactly `-m student` nothing else is even collected
STUDENT_TESTS = ("test_your_install.py",)
HERE = Path(__file__).resolve().parent


def pytest_xdist_auto_num_workers(config):
    """`-n auto` (pyproject's addopts): one worker more than the cores. The full run's slowest tests spend much
    of their time waiting (pip installing fresh environments, a JupyterHub and a browser starting, nbgrader's
    subprocesses): on CI's 2 cores a third worker cut the run from 18:47 to 15:49 (same machine, same load)."""
    return (os.cpu_count() or 1) + 1


def _no_solutions() -> bool:
    from course_lib.teach import solutions
    return solutions.directory() is None


def _needs_solutions(item) -> bool:
    return bool(item.get_closest_marker("needs_solutions")) or item.path.as_posix().endswith(NEEDS_SOLUTIONS)


def pytest_configure(config):
    if not hasattr(config, "workerinput"):         # the controlling process: long tests say what they do
        live_progress.start(config)


def pytest_unconfigure(config):
    live_progress.stop()


def pytest_ignore_collect(collection_path, config):
    """With exactly `-m student`, collect only the student's modules (importing every test module would take
    longer than running the student's tests)."""
    if config.option.markexpr != "student" or collection_path == HERE or not collection_path.is_relative_to(HERE):
        return None
    rel = collection_path.relative_to(HERE).as_posix()
    if collection_path.is_dir():
        return None if any(s.startswith(rel + "/") for s in STUDENT_TESTS) else True
    return True if collection_path.name.startswith("test_") and rel not in STUDENT_TESTS else None


def pytest_collection_modifyitems(config, items):
    if any(map(_needs_solutions, items)) and _no_solutions():
        for item in filter(_needs_solutions, items):
            item.add_marker(pytest.mark.skip(reason=NO_SOLUTIONS))
    if _no_solutions():           # a parametrization over solutions.keys(): pytest's reason names no cause
        for item in items:
            for i, mark in enumerate(item.own_markers):
                if mark.name == "skip" and "got empty parameter set" in str(mark.kwargs.get("reason", "")):
                    item.own_markers[i] = pytest.mark.skip(reason=NO_SOLUTIONS).mark


def pytest_collection_finish(session):
    """What the run imported and collected lives as long as the run: moved out of the garbage collector's sight
    (gc.freeze), each full collection walks only what the tests made since. A worker that collected the suite
    holds 420,000 objects, and a full collection came to about a second as tests added theirs: replaying the H100
    runs, 7 of them took 6.5 s, and 11 took 3.0 s with the collected objects frozen (issue 36)."""
    gc.collect()               # garbage of the collection itself goes now, not never
    gc.freeze()


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    """A module that reaches for a solution file as it is imported skips, saying why, where there is none."""
    outcome = yield
    report = outcome.get_result()
    if report.failed and isinstance(collector, pytest.Module) and _no_solutions():
        if "solutions stay with instructors" in str(report.longrepr):
            report.outcome, report.longrepr = "skipped", (str(collector.path), 0, f"Skipped: {NO_SOLUTIONS}")


def pytest_terminal_summary(terminalreporter):
    """The skips, one line per reason with its count (addopts' -rfE lists failures and errors below)."""
    reasons: dict[str, int] = {}
    for report in terminalreporter.stats.get("skipped", []):
        longrepr = report.longrepr
        text = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
        text = re.sub(r"^Skipped: ", "", text)
        text = re.sub(r"got empty parameter set .*", "got an empty parameter set", text)
        reasons[text] = reasons.get(text, 0) + 1
    if reasons:
        terminalreporter.section("skipped, by reason", sep="-")
        for text, n in sorted(reasons.items(), key=lambda kv: -kv[1])[:12]:
            terminalreporter.write_line(f"{n:5d}  {text[:160]}")
        if len(reasons) > 12:
            terminalreporter.write_line(f"       ... and {len(reasons) - 12} other reasons (-rs lists every skip)")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """A test that reached for a solution file where there is none (solutions.path's NotFound) skips."""
    outcome = yield
    report = outcome.get_result()
    if report.failed and call.excinfo is not None and _no_solutions():
        from course_lib.errors import NotFound
        if isinstance(call.excinfo.value, NotFound) and "solutions stay with instructors" in str(call.excinfo.value):
            report.outcome, report.longrepr = "skipped", (str(item.path), item.location[1] or 0, f"Skipped: {NO_SOLUTIONS}")

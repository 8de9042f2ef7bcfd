import os

import pytest

# Tests run the simulator even on a machine with a GPU unless asked otherwise.
os.environ.setdefault("COURSE_LIB_BACKEND", "sim")

# The student repository (`python -m course_lib instructor publish`) has no exercises/*/solution.cu: a test that
# needs a solution file skips there, saying so, instead of failing (course_lib.lab.instructor.publish).
NO_SOLUTIONS = "the student repository has no solutions; run this in the instructor repository"
# modules that test the exercises against their solutions (the checkers, the instructor tools, nbgrader's
# export): there every test skips; elsewhere a test is marked needs_solutions, or skips when it asks
# solutions.path() for a file that is not there
NEEDS_SOLUTIONS = ("teach/test_exercises.py", "teach/test_checker_holes.py", "lab/test_instructor.py",
                   "lab/test_grading.py", "lab/test_nbgrader.py")


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


def pytest_collection_modifyitems(config, items):
    if any(map(_needs_solutions, items)) and _no_solutions():
        for item in filter(_needs_solutions, items):
            item.add_marker(pytest.mark.skip(reason=NO_SOLUTIONS))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """A test that reached for a solution file where there is none (solutions.path's NotFound) skips."""
    outcome = yield
    report = outcome.get_result()
    if report.failed and call.excinfo is not None and _no_solutions():
        from course_lib.errors import NotFound
        if isinstance(call.excinfo.value, NotFound) and "solutions stay with instructors" in str(call.excinfo.value):
            report.outcome, report.longrepr = "skipped", (str(item.path), item.location[1] or 0, f"Skipped: {NO_SOLUTIONS}")

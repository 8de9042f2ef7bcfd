"""Fixtures that tests/lab's modules share: what a test session builds once for all of them (fresh_env.py)."""
import pytest

import fresh_env


@pytest.fixture(scope="session")
def course_build(tmp_path_factory):
    """(a clean clone of HEAD, the course's wheel built from it), once per session on every xdist worker."""
    return fresh_env.course_build(tmp_path_factory)


@pytest.fixture
def bubblewrap():
    """Skip, saying why, where the grading sandbox cannot run (no bwrap, or one that cannot start here):
    autograding refuses without it, and the tests that use it are about what it holds."""
    from course_lib.lab.grader import sandbox
    try:
        sandbox.require()
    except sandbox.SandboxUnavailable as exc:
        pytest.skip(str(exc))

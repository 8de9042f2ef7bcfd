"""Fixtures that tests/lab's modules share: what a test session builds once for all of them (fresh_env.py)."""
import pytest

import fresh_env


@pytest.fixture(scope="session")
def course_build(tmp_path_factory):
    """(a clean clone of HEAD, the course's wheel built from it), once per session on every xdist worker."""
    return fresh_env.course_build(tmp_path_factory)

"""The sandbox's /tmp and /home are links into its sized tmpfs, and bwrap cannot make a mount point under a link:
a Python that lives under /tmp (a throw-away image's venv, as tests/lab/test_hub.py builds one) must still run
in it, read-only (course_lib.lab.grader.sandbox._through_links)."""
import subprocess
import sys
import venv

import pytest

from course_lib.lab.grader import sandbox

pytestmark = pytest.mark.usefixtures("bubblewrap")   # tests/lab/conftest.py: skip without the sandbox


def test_a_python_under_tmp_runs_in_the_sandbox_and_stays_read_only(tmp_path):
    assert str(tmp_path).startswith("/tmp/"), "pytest's tmp_path is under /tmp here: the case this test is about"
    env = tmp_path / "venv"
    venv.EnvBuilder(with_pip=False, symlinks=True).create(env)
    binds = sandbox._ro(env) + sandbox._ro(sys.base_prefix)
    cmd = [sandbox.require(), *sandbox._isolation(), *sandbox._system(), *sandbox._through_links(binds),
           *sandbox._read_only(), "--", str(env / "bin" / "python"), "-c",
           "import sys, pathlib; print(sys.prefix); pathlib.Path('/tmp/mine').write_text('x'); "
           f"pathlib.Path({str(env / 'planted')!r}).write_text('x')"]
    r = subprocess.run(cmd, capture_output=True, text=True, env={}, timeout=60)
    assert r.stdout.splitlines()[:1] == [str(env)], r.stderr       # the venv ran, from its own path
    assert "Read-only file system" in r.stderr and not (env / "planted").exists()


def test_only_destinations_under_the_linked_folders_move():
    moved = sandbox._through_links(["--ro-bind", "/tmp/a", "/tmp/a", "--ro-bind", "/usr/x", "/usr/x",
                                    "--size", "4096", "--tmpfs", "/home/u/s", "--remount-ro", "/home/u/s"])
    assert moved == ["--ro-bind", "/tmp/a", f"{sandbox.BOX}/tmp/a", "--ro-bind", "/usr/x", "/usr/x",
                     "--size", "4096", "--tmpfs", f"{sandbox.BOX}/home/u/s", "--remount-ro", f"{sandbox.BOX}/home/u/s"]

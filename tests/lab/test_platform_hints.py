"""Every hint that names an install command names the one that works where the course runs.

A Colab student gets a ``%pip`` line for a cell (never ``pip install -e ".[lab]"``: there is no
checkout on Colab), a hub's student is sent to the instructor (the image is theirs), a container
user is told to rebuild it, a checkout the editable reinstall in its folder, a plain install this
interpreter's pip. Checked on course_lib.compile.platforms, then end to end: a kernel whose NVRTC
cannot be loaded, in a Python that believes it is on Colab or on a hub, raises a CompileError
whose hint is that place's.
"""
import os
import subprocess
import sys

import pytest

from course_lib import paths
from course_lib.compile import platforms

NVRTC = platforms.NVRTC_WHEELS


@pytest.mark.parametrize("env, modules, where", [
    ({"COLAB_RELEASE_TAG": "release-colab_2026"}, {}, "colab"),
    ({}, {"google.colab": object()}, "colab"),
    ({"JUPYTERHUB_USER": "s1", "JUPYTERHUB_API_URL": "http://127.0.0.1:8081/hub/api"}, {}, "hub"),
    ({"COURSE_LAB_IN_CONTAINER": "1"}, {}, "container"),
    ({}, {}, "checkout"),           # these tests run from the checkout's editable install
])
def test_the_place_is_recognised(env, modules, where):
    assert platforms.place(env, modules) == where


def test_each_place_gets_its_own_command():
    colab = platforms.install_hint(NVRTC, "colab")
    assert "`%pip install -q nvidia-cuda-nvrtc-cu12 'nvidia-cuda-nvrtc==13.0.*'`" in colab and "-e" not in colab
    hub = platforms.install_hint(NVRTC, "hub")
    assert "instructor" in hub and "deploy/Dockerfile" in hub and "%pip install --user" in hub
    assert "--rebuild" in platforms.install_hint(NVRTC, "container")
    checkout = platforms.install_hint(NVRTC, "checkout")
    assert 'pip install -e ".[lab]"' in checkout and str(paths.REPO) in checkout
    terminal = platforms.install_hint(NVRTC, "installed", in_notebook=False)
    assert terminal.startswith(f"`{sys.executable} -m pip install ") and "%pip" not in terminal
    assert "%pip install" in platforms.install_hint(NVRTC, "installed", in_notebook=True)


def test_only_the_checkouts_hint_asks_for_an_editable_install():
    for where in platforms.PLACES:
        _, hint = platforms.compiler_missing("libnvrtc.so.12: cannot open", "linux", "x86_64", where=where)
        assert ('pip install -e ".[lab]"' in hint) == (where == "checkout"), (where, hint)
    _, mac = platforms.compiler_missing("no NVRTC", "darwin", "arm64", where="checkout")
    assert "course-lab --container" in mac and "pip install" not in mac


NO_NVRTC = ("import sys\n"
            "import course_lib.compile.nvrtc_lib as n\n"
            "n._candidates = lambda major: iter(())\n"
            "import course_lib as cl\n"
            "try:\n    cl.Simulator().run('tile', shape=(32, 32))\n"
            "except cl.CompileError as e:\n    print(e)\n")


@pytest.mark.parametrize("env, expected, not_expected", [
    ({"COLAB_RELEASE_TAG": "release-colab_2026"}, "%pip install -q nvidia-cuda-nvrtc-cu12", 'pip install -e'),
    ({"JUPYTERHUB_USER": "s1"}, "tell your instructor", 'pip install -e'),
])
def test_a_kernel_without_nvrtc_gets_the_hint_of_its_place(env, expected, not_expected, tmp_path):
    r = subprocess.run([sys.executable, "-c", NO_NVRTC], capture_output=True, text=True, timeout=120,
                       env=dict(os.environ, COURSE_LIB_CACHE=str(tmp_path / "cache"), **env))
    assert r.returncode == 0 and "hint:" in r.stdout, r.stdout + r.stderr
    assert expected in r.stdout and not_expected not in r.stdout, r.stdout

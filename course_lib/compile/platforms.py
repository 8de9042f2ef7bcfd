"""Which machines can compile the course's CUDA C++, and what to tell someone whose machine cannot.

    platforms.has_cuda_wheels()                 # True on Linux x86_64/aarch64 and Windows x64
    message, hint = platforms.compiler_missing("libnvrtc.so.12: cannot open shared object file")

NVIDIA publishes NVRTC (the ``nvidia-cuda-nvrtc`` wheels: CUDA C++ -> PTX, in-process, no toolkit)
and CuPy only for Linux x86_64/aarch64 and Windows x64. ``pyproject.toml`` installs them there
under one environment marker (``CUDA_WHEEL_MARKER``; tests/lab/test_install.py checks that it is true
exactly on :data:`CUDA_WHEEL_PLATFORMS`, and that no CUDA wheel is asked for anywhere else), so
``pip install -e .`` also works on macOS. There
nothing compiles, and the course runs in a Linux container instead (``course-lab --container``,
course_lib/container.py), on Colab or on a JupyterHub.

Where the course runs decides how a missing piece is installed, so every hint that names a
command asks :func:`install_hint`: on Colab a ``%pip`` line in a cell, on a JupyterHub the
instructor (the hub's image is theirs), in the course's container a rebuild, in a checkout the
editable reinstall, in a plain pip install this interpreter's pip. :func:`place` says which.

This module only answers and words things: it loads no library and starts nothing.
"""
from __future__ import annotations

import os
import platform
import shlex
import sys

from .. import paths

# (sys.platform, platform.machine()) pairs NVIDIA builds the NVRTC and CuPy wheels for
CUDA_WHEEL_PLATFORMS = frozenset({("linux", "x86_64"), ("linux", "aarch64"), ("win32", "AMD64")})
CUDA_WHEEL_MARKER = ('(sys_platform == "linux" and (platform_machine == "x86_64" or platform_machine == "aarch64"))'
                     ' or (sys_platform == "win32" and platform_machine == "AMD64")')
NAMES = {"darwin": "macOS", "linux": "Linux", "win32": "Windows"}
# what compiling needs, as pyproject.toml asks for it (NVRTC 13 makes the H100's machine code too)
NVRTC_WHEELS = ("nvidia-cuda-nvrtc-cu12", "nvidia-cuda-nvrtc==13.0.*")
PLACES = ("colab", "hub", "container", "checkout", "installed")


def has_cuda_wheels(sys_platform: str | None = None, machine: str | None = None) -> bool:
    """Whether pip installs NVRTC and CuPy on this (or the named) machine."""
    return (sys_platform or sys.platform, machine or platform.machine()) in CUDA_WHEEL_PLATFORMS


def describe(sys_platform: str | None = None, machine: str | None = None) -> str:
    """'macOS (arm64)', 'Linux (x86_64)'..."""
    sys_platform, machine = sys_platform or sys.platform, machine or platform.machine()
    return f"{NAMES.get(sys_platform, sys_platform)} ({machine})"


def place(env=None, modules=None) -> str:
    """Where this Python runs the course, one of PLACES: 'colab' (a Colab runtime), 'hub' (a server a
    JupyterHub started), 'container' (``course-lab --container``), 'checkout' (an editable install of
    a clone) or 'installed' (pip installed it anywhere else)."""
    env = os.environ if env is None else env
    modules = sys.modules if modules is None else modules
    if "google.colab" in modules or env.get("COLAB_RELEASE_TAG"):
        return "colab"
    if env.get("JUPYTERHUB_USER") or env.get("JUPYTERHUB_API_URL"):      # a hub's server passes these on
        return "hub"
    if env.get("COURSE_LAB_IN_CONTAINER"):                               # set by course_lib.lab.student.container
        return "container"
    if (paths.REPO / "pyproject.toml").is_file():
        return "checkout"
    return "installed"


def install_hint(wheels, where: str | None = None, in_notebook: bool | None = None) -> str:
    """How to install the pip packages `wheels` where the course runs (:func:`place`), as one
    sentence with the command that works there. `in_notebook`: whether the student types into a
    notebook (``%pip`` in a cell) or a terminal; default, whether this Python is a Jupyter kernel."""
    where = where or place()
    names = " ".join(shlex.quote(w) for w in wheels)
    if in_notebook is None:
        in_notebook = "ipykernel" in sys.modules
    if where == "colab":
        return f"run `%pip install -q {names}` in a cell (the notebook's first cell installs them with the course)"
    if where == "hub":
        return (f"this hub's image lacks {', '.join(wheels)}: tell your instructor (the course's deploy/Dockerfile "
                f"installs them). Until then, `%pip install --user {names}` in a cell, then restart the kernel")
    if where == "container":
        return ("the course's image lacks them: rebuild it, `course-lab --container --rebuild` on your own machine "
                "(outside the container)")
    if where == "checkout":
        return (f"reinstall the course in its folder, `pip install -e \".[lab]\"` in {paths.REPO}: it brings "
                f"{', '.join(wheels)} as wheels; no CUDA toolkit is needed")
    if in_notebook:
        return f"run `%pip install {names}` in a cell, then restart the kernel"
    return f"`{shlex.quote(sys.executable)} -m pip install {names}`"


def compiler_missing(reason: str, sys_platform: str | None = None, machine: str | None = None,
                     where: str | None = None) -> tuple[str, str]:
    """(message, hint) for a CompileError when NVRTC cannot be loaded, for `reason` (what failed),
    worded for where the course runs (:func:`place`, or `where`)."""
    if not has_cuda_wheels(sys_platform, machine):
        return (f"This machine cannot compile CUDA C++: NVIDIA builds its compiler library (NVRTC) for Linux "
                f"and Windows only, not for {describe(sys_platform, machine)}.",
                "run the course in its Linux container: `course-lab --container` in the course folder (needs "
                "Docker Desktop, Colima or Podman), or open the notebook on Colab (the badge at its top). "
                "README, section 'Where it runs'.")
    return (f"NVRTC, the CUDA compiler library, could not be loaded: {reason}.",
            install_hint(NVRTC_WHEELS, where))

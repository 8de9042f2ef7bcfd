"""Which machines can compile the course's CUDA C++, and what to tell someone whose machine cannot.

    platforms.has_cuda_wheels()                 # True on Linux x86_64/aarch64 and Windows x64
    message, hint = platforms.compiler_missing("libnvrtc.so.12: cannot open shared object file")

NVIDIA publishes NVRTC (the ``nvidia-cuda-nvrtc`` wheels: CUDA C++ -> PTX, in-process, no toolkit)
and CuPy only for Linux x86_64/aarch64 and Windows x64. ``pyproject.toml`` installs them there
under one environment marker (``CUDA_WHEEL_MARKER``; tests/test_install.py checks that it is true
exactly on :data:`CUDA_WHEEL_PLATFORMS`, and that no CUDA wheel is asked for anywhere else), so
``pip install -e .`` also works on macOS. There
nothing compiles, and the course runs in a Linux container instead (``course-lab --container``,
course_lib/container.py), on Colab or on a JupyterHub.

This module only answers and words things: it loads no library and starts nothing.
"""
from __future__ import annotations

import platform
import sys

# (sys.platform, platform.machine()) pairs NVIDIA builds the NVRTC and CuPy wheels for
CUDA_WHEEL_PLATFORMS = frozenset({("linux", "x86_64"), ("linux", "aarch64"), ("win32", "AMD64")})
CUDA_WHEEL_MARKER = ('(sys_platform == "linux" and (platform_machine == "x86_64" or platform_machine == "aarch64"))'
                     ' or (sys_platform == "win32" and platform_machine == "AMD64")')
NAMES = {"darwin": "macOS", "linux": "Linux", "win32": "Windows"}


def has_cuda_wheels(sys_platform: str | None = None, machine: str | None = None) -> bool:
    """Whether pip installs NVRTC and CuPy on this (or the named) machine."""
    return (sys_platform or sys.platform, machine or platform.machine()) in CUDA_WHEEL_PLATFORMS


def describe(sys_platform: str | None = None, machine: str | None = None) -> str:
    """'macOS (arm64)', 'Linux (x86_64)'..."""
    sys_platform, machine = sys_platform or sys.platform, machine or platform.machine()
    return f"{NAMES.get(sys_platform, sys_platform)} ({machine})"


def compiler_missing(reason: str, sys_platform: str | None = None, machine: str | None = None) -> tuple[str, str]:
    """(message, hint) for a CompileError when NVRTC cannot be loaded, for `reason` (what failed)."""
    if not has_cuda_wheels(sys_platform, machine):
        return (f"This machine cannot compile CUDA C++: NVIDIA builds its compiler library (NVRTC) for Linux "
                f"and Windows only, not for {describe(sys_platform, machine)}.",
                "run the course in its Linux container: `course-lab --container` in the course folder (needs "
                "Docker Desktop, Colima or Podman), or open the notebook on Colab (the badge at its top). "
                "README, section 'Where it runs'.")
    return (f"NVRTC, the CUDA compiler library, could not be loaded: {reason}.",
            "reinstall the course in its folder, `pip install -e \".[lab]\"`: it brings NVRTC and CuPy as "
            "wheels (nvidia-cuda-nvrtc-cu12, cupy-cuda12x); no CUDA toolkit is needed.")

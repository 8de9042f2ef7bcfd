"""A small ctypes binding to NVRTC, CUDA's compiler library, as pip installs it.

Why ctypes and not CuPy's bindings: compiling must work wherever the course is installed, with
or without a GPU, whatever CuPy is there. CuPy 13 (Colab's) looks for NVRTC only in a CUDA
toolkit, not in pip's ``nvidia-cuda-nvrtc`` wheels, so a Colab student's first ``%%cuda`` cell
failed. This binding loads the wheels' libraries itself:

- NVRTC 13 (``nvidia-cuda-nvrtc``: ``nvidia/cu13/lib/libnvrtc.so.13``): the compiler the H100 the
  simulator is checked against uses; its CUBINs are the ones CUDA 13's ``nvdisasm`` reads;
- NVRTC 12 (``nvidia-cuda-nvrtc-cu12``: ``nvidia/cuda_nvrtc/lib/libnvrtc.so.12``): what a GPU whose
  driver predates CUDA 13 can load code from;

then a toolkit under ``CUDA_HOME``/``CUDA_PATH`` or ``/usr/local/cuda``. :func:`load` gives one major version,
:func:`newest` the newest one at or below a limit (a driver's CUDA version).

What it does not do: cache, choose options, or turn the log into a readable error
(``nvrtc.py`` and ``diagnostics.py`` do).
"""
from __future__ import annotations

import ctypes
import functools
import hashlib
import importlib.util
import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path

from ..errors import Unavailable

MAJORS = (13, 12)                         # newest first
_WHEEL_FOLDER = {13: "cu13", 12: "cuda_nvrtc"}
SYNTAX_ONLY = "-fdevice-syntax-only"      # NVRTC >= 12.4: stop after the front end (no PTX made)


COMPILATION = 6                           # NVRTC_ERROR_COMPILATION: the source's fault, the same every time


class Failed(RuntimeError):
    """NVRTC refused the source; ``log`` is its log, ``status`` NVRTC's code (``COMPILATION``: the source's fault)."""

    def __init__(self, log: str, status: int | None = None):
        self.log, self.status = log, status
        super().__init__(log)


@dataclass
class Output:
    ptx: str
    cubin: bytes | None
    lowered_names: dict
    log: str


def _candidates(major):
    """(library, builtins libraries) where NVRTC `major` may be, best first."""
    spec = importlib.util.find_spec("nvidia")
    roots = [Path(p) / _WHEEL_FOLDER[major] for p in (spec.submodule_search_locations or [])] if spec else []
    roots += [Path(os.environ[v]) for v in ("CUDA_HOME", "CUDA_PATH") if os.environ.get(v)]
    roots += [Path(f"/usr/local/cuda-{major}"), Path("/usr/local/cuda")] if sys.platform != "win32" else []
    for root in roots:
        if sys.platform == "win32":
            for d in (root / "bin" / "x86_64", root / "bin"):
                yield d / f"nvrtc64_{major}0_0.dll", sorted(d.glob(f"nvrtc-builtins64_{major}*.dll"))
        else:
            for d in (root / "lib", root / "lib64"):
                yield d / f"libnvrtc.so.{major}", sorted(d.glob(f"libnvrtc-builtins.so.{major}*"))


class Library:
    """One loaded NVRTC: ``version`` (major, minor), ``path``, and :meth:`compile`."""

    def __init__(self, handle, version, path):
        self.handle, self.version, self.path = handle, version, path
        self._parsed = set()          # hashes of (source, file name, options) that got through the front end

    def __repr__(self):
        return f"<NVRTC {self.version[0]}.{self.version[1]} at {self.path}>"

    def compile(self, source: str, filename: str, options, name_expressions=(), want_cubin=False) -> Output:
        """PTX (and, when ``options`` name a real ``sm_XY`` and ``want_cubin``, a CUBIN).

        With name expressions, the source is first checked alone by the front end: NVRTC 12.9 and 13.0
        kill the process (SIGSEGV inside nvrtcCompileProgram) when a name expression instantiates a
        template whose parameter list does not parse (``template <typname T>`` with ``k<float>``).
        A source that passes alone parses cleanly, so its name expressions are safe to add; one that
        fails is reported from that check's log, which names only the student's own lines."""
        if name_expressions:
            self._front_end_check(source, filename, options)
        return self._compile(source, filename, options, name_expressions, want_cubin)

    def _front_end_check(self, source, filename, options):
        """Raise Failed when the source alone does not get through NVRTC's front end. The check leaves the
        name expressions out, so its answer holds for any of them: a source that passed is not checked
        again in this process (a course kernel's float, half, double and byte instances ask the same
        question; the check costs as much as the compilation, the front end being most of both)."""
        asked = hashlib.sha256(json.dumps([source, filename, list(options)]).encode()).digest()
        if asked in self._parsed:
            return
        try:
            self._compile(source, filename, [*options, SYNTAX_ONLY], (), False, want_ptx=False)
        except Failed as exc:
            if SYNTAX_ONLY not in exc.log:
                raise
            # an NVRTC too old for the flag (before 12.4): the whole compilation is the check
            self._compile(source, filename, options, (), False, want_ptx=False)
        self._parsed.add(asked)

    def _compile(self, source, filename, options, name_expressions, want_cubin, want_ptx=True) -> Output:
        lib = self.handle
        prog = ctypes.c_void_p()
        _check(lib, lib.nvrtcCreateProgram(ctypes.byref(prog), source.encode(), program_name(filename).encode(),
                                           0, None, None))
        try:
            for n in name_expressions:
                _check(lib, lib.nvrtcAddNameExpression(prog, n.encode()))
            opts = [o.encode() for o in options]
            status = lib.nvrtcCompileProgram(prog, len(opts), (ctypes.c_char_p * len(opts))(*opts))
            log = _text(_blob(lib, prog, "ProgramLog"))
            if status != 0:
                raise Failed(log or lib.nvrtcGetErrorString(status).decode(), status)
            lowered = {}
            for n in name_expressions:
                out = ctypes.c_char_p()
                _check(lib, lib.nvrtcGetLoweredName(prog, n.encode(), ctypes.byref(out)))
                lowered[n] = out.value.decode()
            cubin = _blob(lib, prog, "CUBIN") if want_cubin else None
            return Output(_text(_blob(lib, prog, "PTX")) if want_ptx else "", cubin, lowered, log)
        finally:
            lib.nvrtcDestroyProgram(ctypes.byref(prog))

    def supported_archs(self) -> tuple[int, ...]:
        n = ctypes.c_int()
        if self.handle.nvrtcGetNumSupportedArchs(ctypes.byref(n)) != 0:
            return ()
        archs = (ctypes.c_int * n.value)()
        self.handle.nvrtcGetSupportedArchs(archs)
        return tuple(archs)


@functools.lru_cache(maxsize=None)
def load(major: int) -> Library:
    """NVRTC `major` (12 or 13); raises Unavailable saying where it looked and what to install."""
    tried = []
    for lib, builtins in _candidates(major):
        if not lib.exists():
            continue
        try:
            if hasattr(os, "add_dll_directory"):       # Windows: let nvrtc64 find its builtins DLL
                os.add_dll_directory(str(lib.parent))
            # libnvrtc opens its builtins library by name: load it first so it is found
            for b in builtins[:1]:
                ctypes.CDLL(str(b), mode=getattr(ctypes, "RTLD_GLOBAL", 0))
            handle = ctypes.CDLL(str(lib))
        except OSError as exc:
            tried.append(f"{lib}: {exc}")
            continue
        _declare(handle)
        v_major, v_minor = ctypes.c_int(), ctypes.c_int()
        handle.nvrtcVersion(ctypes.byref(v_major), ctypes.byref(v_minor))
        if v_major.value != major:
            tried.append(f"{lib}: version {v_major.value}.{v_minor.value}")
            continue
        return Library(handle, (v_major.value, v_minor.value), str(lib))
    # which wheel, not a command: how to install it depends on where the course runs (platforms.install_hint)
    wheel = "nvidia-cuda-nvrtc==13.0.*" if major == 13 else "nvidia-cuda-nvrtc-cu12"
    raise Unavailable(f"NVRTC {major} was not found" + (f" ({'; '.join(tried)})" if tried else "")
                      + f"; it comes in the {wheel} wheel")


def newest(at_most: int | None = None) -> Library:
    """The newest NVRTC installed whose major version is at most `at_most` (default: any)."""
    reasons = []
    for major in MAJORS:
        if at_most is not None and major > at_most:
            continue
        try:
            return load(major)
        except Unavailable as exc:
            reasons.append(str(exc))
    raise Unavailable("; ".join(reasons) or f"no NVRTC for CUDA {at_most} or older is known to the course")


def program_name(filename: str) -> str:
    """The name NVRTC gets for the source. NVRTC reads a name that starts with '-' as a command-line
    option ("%%cuda --name --use_fast_math" named a cell '--use_fast_math.cu': "invalid option"),
    so the dashes go; errors still show the caller's filename (``diagnostics``)."""
    return filename.lstrip("-") or "kernel.cu"


def _declare(lib):
    p, size = ctypes.c_void_p, ctypes.c_size_t
    lib.nvrtcCreateProgram.argtypes = [ctypes.POINTER(p), ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int,
                                       ctypes.POINTER(ctypes.c_char_p), ctypes.POINTER(ctypes.c_char_p)]
    lib.nvrtcDestroyProgram.argtypes = [ctypes.POINTER(p)]
    lib.nvrtcCompileProgram.argtypes = [p, ctypes.c_int, ctypes.POINTER(ctypes.c_char_p)]
    lib.nvrtcAddNameExpression.argtypes = [p, ctypes.c_char_p]
    lib.nvrtcGetLoweredName.argtypes = [p, ctypes.c_char_p, ctypes.POINTER(ctypes.c_char_p)]
    for what in ("ProgramLog", "PTX", "CUBIN"):
        getattr(lib, f"nvrtcGet{what}Size").argtypes = [p, ctypes.POINTER(size)]
        getattr(lib, f"nvrtcGet{what}").argtypes = [p, ctypes.c_char_p]
    lib.nvrtcGetErrorString.restype = ctypes.c_char_p


def _blob(lib, prog, what) -> bytes:
    n = ctypes.c_size_t()
    _check(lib, getattr(lib, f"nvrtcGet{what}Size")(prog, ctypes.byref(n)))
    buf = ctypes.create_string_buffer(n.value)
    if n.value:
        _check(lib, getattr(lib, f"nvrtcGet{what}")(prog, buf))
    return buf.raw


def _text(raw: bytes) -> str:
    return raw.rstrip(b"\x00").decode(errors="replace")


def _check(lib, status):
    if status != 0:
        raise Failed(f"NVRTC: {lib.nvrtcGetErrorString(status).decode()}", status)

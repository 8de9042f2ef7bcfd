"""A small ctypes binding to NVRTC 13 (the ``nvidia-cuda-nvrtc`` wheel), for machine code.

Why a second NVRTC: the simulator promises what Nsight Compute counts on the GPU, and the GPU
runs ptxas's machine code (SASS), which may fuse neighbouring narrow accesses into one wider
one. Reading that code needs a CUBIN that CUDA 13's ``nvdisasm`` (the only one on PyPI) accepts,
and it rejects the CUBINs of the NVRTC 12 that CuPy uses. NVRTC 13.0 is also what the H100 the
simulator is checked against compiles with, so one call gives the very PTX and SASS it runs.

What it does: find and load ``libnvrtc.so.13`` / ``nvrtc64_130_0.dll`` (the wheel's ``nvidia/cu13``
folder, then ``CUDA_HOME``/``CUDA_PATH``), compile one source to PTX and a CUBIN, and hand back
NVRTC's log when compiling fails. What it does not do: cache, choose options, or turn the log
into a readable error — ``nvrtc.py`` does that for both NVRTCs.
"""
from __future__ import annotations

import ctypes
import functools
import importlib.util
import os
import sys
from dataclasses import dataclass
from pathlib import Path


class Unavailable(RuntimeError):
    """NVRTC 13 is not installed here (or cannot be loaded)."""


class Failed(RuntimeError):
    """NVRTC 13 refused the source; ``log`` is its log."""

    def __init__(self, log: str):
        self.log = log
        super().__init__(log)


@dataclass
class Output:
    ptx: str
    cubin: bytes
    lowered_names: dict
    log: str


def _candidates():
    """Where the library may be, best first: the pip wheel, then a CUDA 13 toolkit."""
    spec = importlib.util.find_spec("nvidia")
    roots = [Path(p) / "cu13" for p in (spec.submodule_search_locations or [])] if spec else []
    for var in ("CUDA_HOME", "CUDA_PATH"):
        if os.environ.get(var):
            roots.append(Path(os.environ[var]))
    for root in roots:
        if sys.platform == "win32":
            for d in (root / "bin" / "x86_64", root / "bin"):
                yield d / "nvrtc64_130_0.dll", sorted(d.glob("nvrtc-builtins64_130*.dll"))
        else:
            for d in (root / "lib", root / "lib64"):
                yield d / "libnvrtc.so.13", sorted(d.glob("libnvrtc-builtins.so.13*"))


@functools.lru_cache(maxsize=1)
def _library():
    tried = []
    for lib, builtins in _candidates():
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
        major, minor = ctypes.c_int(), ctypes.c_int()
        handle.nvrtcVersion(ctypes.byref(major), ctypes.byref(minor))
        if major.value != 13:
            tried.append(f"{lib}: version {major.value}.{minor.value}")
            continue
        return handle, (major.value, minor.value), str(lib)
    raise Unavailable("NVRTC 13 was not found" + (f" ({'; '.join(tried)})" if tried else "")
                      + ": pip install 'nvidia-cuda-nvrtc==13.0.*'")


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


def available() -> bool:
    try:
        _library()
        return True
    except Unavailable:
        return False


def version() -> tuple[int, int]:
    return _library()[1]


def location() -> str:
    return _library()[2]


def compile(source: str, filename: str, options, name_expressions=()) -> Output:
    """Compile ``source`` with ``options`` (which must name a real ``sm_XY`` to get a CUBIN)."""
    lib = _library()[0]
    prog = ctypes.c_void_p()
    _check(lib, lib.nvrtcCreateProgram(ctypes.byref(prog), source.encode(), filename.encode(), 0, None, None))
    try:
        for n in name_expressions:
            _check(lib, lib.nvrtcAddNameExpression(prog, n.encode()))
        opts = [o.encode() for o in options]
        status = lib.nvrtcCompileProgram(prog, len(opts), (ctypes.c_char_p * len(opts))(*opts))
        log = _text(_blob(lib, prog, "ProgramLog"))
        if status != 0:
            raise Failed(log or lib.nvrtcGetErrorString(status).decode())
        lowered = {}
        for n in name_expressions:
            out = ctypes.c_char_p()
            _check(lib, lib.nvrtcGetLoweredName(prog, n.encode(), ctypes.byref(out)))
            lowered[n] = out.value.decode()
        return Output(_text(_blob(lib, prog, "PTX")), _blob(lib, prog, "CUBIN"), lowered, log)
    finally:
        lib.nvrtcDestroyProgram(ctypes.byref(prog))


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
        raise Failed(f"NVRTC 13: {lib.nvrtcGetErrorString(status).decode()}")

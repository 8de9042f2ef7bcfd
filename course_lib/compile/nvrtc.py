"""Compile CUDA C++ with NVRTC: PTX (and machine code) for the simulator, CUBINs for a GPU.

    c = nvrtc.compile_source(src, options=("-std=c++17",), filename="cell.cu")   # for the simulator
    c.ptx, c.cubin, c.machine          # "NVRTC 13.0, sm_90" when the machine code is there to read
    c = nvrtc.compile_source(src, arch=80, want_cubin=True, max_major=12)         # for an sm_80 GPU

For the simulator: when NVRTC 13 and nvdisasm are installed, one NVRTC 13 compilation for the
H100 (sm_90) gives the PTX the simulator runs *and* the CUBIN whose machine code it reads to count
what the GPU counts (``sim/fusion.py``); otherwise the PTX of the NVRTC there is (12 first, as a
GPU of that generation would get it), and ``Compiled.machine_note`` says why there is no machine
code (``COURSE_LIB_SASS=0`` chooses this). For a GPU: a CUBIN for that exact ``sm_XY`` from the
newest NVRTC its driver can load, so the driver never has to JIT PTX newer than itself (the usual
reason CUDA notebooks break on Colab). Every compilation adds ``-lineinfo`` so PTX maps back to
source lines, and is cached (``cache.py``) by source, options, names, target and compiler version; so is
NVRTC's refusal of a source (its log: the same error again, without the compiler), but not a failure of
NVRTC itself (out of memory), which may not happen twice.

Compiling never touches CuPy: the libraries are loaded by ``nvrtc_lib``. Errors become one
:class:`~course_lib.errors.CompileError` (``diagnostics.py``). This module does not launch, check
arguments or simulate.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

from ..errors import CompileError, Unavailable, caret_excerpt
from . import cache, cache_lock, headers, nvrtc_lib, platforms, sass
from .diagnostics import compile_error

# The simulator models Volta..Hopper memory rules and is validated on an H100: without a GPU it
# asks for that machine's PTX, and reads the machine code ptxas makes for it.
SIMULATED_ARCH = 90
MACHINE_ARCH = 90


@dataclass
class Compiled:
    """What one NVRTC compilation produced."""
    ptx: str
    cubin: bytes | None
    lowered_names: dict[str, str]
    log: str
    arch: int
    entries: list[str] = field(default_factory=list)
    machine: str = ""        # for the simulator: who made ``cubin`` ("NVRTC 13.0, sm_90"), "" if none
    machine_note: str = ""   # why the simulator has no machine code for this source


def compiler(at_most: int | None = None, prefer: tuple = (12, 13)) -> nvrtc_lib.Library:
    """An installed NVRTC (``prefer`` order), or a CompileError that says what to install here."""
    for major in prefer:
        if at_most is None or major <= at_most:
            try:
                return nvrtc_lib.load(major)
            except Unavailable:
                continue
    try:
        return nvrtc_lib.newest(at_most)
    except Unavailable as exc:
        message, hint = platforms.compiler_missing(str(exc))
        raise CompileError(message, hint=hint) from None


def nvrtc_version() -> tuple[int, int]:
    """The version of the NVRTC that makes the simulator's PTX when there is no machine code."""
    return compiler().version


def compile_source(source: str, *, options=(), name_expressions=(), filename="kernel.cu",
                   arch: int | None = None, want_cubin: bool = False, max_major: int | None = None) -> Compiled:
    """Compile with NVRTC. Without ``arch``: for the simulator (PTX, and machine code when it can be
    read). With ``arch`` and ``want_cubin``: a CUBIN for that GPU, from an NVRTC no newer than
    ``max_major`` (the CUDA major version the GPU's driver supports)."""
    _check_text(source, options, name_expressions, filename)
    note = ""
    if arch is None and not want_cubin:
        note = machine_code_missing()
        if not note:
            try:
                return _compile_with_machine_code(source, options, name_expressions, filename)
            except nvrtc_lib.Failed as exc:
                # a genuine error fails below too, with the usual readable message
                first = next((ln for ln in exc.log.splitlines() if "error" in ln), exc.log.strip()[:200])
                note = f"NVRTC 13 could not compile this source ({first.strip()})"
    if want_cubin and arch is None:
        raise CompileError("a CUBIN needs the GPU's architecture", hint="compile_source(src, arch=90, want_cubin=True)")
    lib = compiler(max_major, prefer=(12, 13) if not want_cubin else (13, 12))
    arch = arch if arch is not None else SIMULATED_ARCH
    opts = [o for o in options if not o.startswith(("--gpu-architecture", "-arch"))]
    opts += ["-lineinfo", f"--gpu-architecture={'sm' if want_cubin else 'compute'}_{arch}"]
    opts += headers.include_options(lib.version[0])
    made_by = "NVRTC {}.{}".format(*lib.version)
    key = cache.key(source, opts, name_expressions, arch, want_cubin, made_by) + "-" + _safe(filename)
    hit = cache.get(key, Compiled)
    if hit is None:
        with cache_lock.making(key):           # another process making it: wait, then read it
            hit = cache.get(key, Compiled)
            if hit is None:
                refused = cache.get_failure(key, filename)
                if refused is not None:         # NVRTC's refusal of this very source, kept like a compilation
                    raise compile_error(source, refused, filename, lib.version[0])
                hit = _compile_now(lib, source, opts, name_expressions, filename, arch, want_cubin, key)
                cache.put(key, hit)
    hit.machine_note = note
    return hit


_UNREADABLE = re.compile("[\x00\ud800-\udfff]")


def _check_text(source, options, names, filename):
    """NVRTC takes C strings of UTF-8: a NUL ends one there (the rest of a source would silently
    vanish: a file saved as UTF-16 is full of them) and half a surrogate pair is no UTF-8 at all
    (a raw UnicodeEncodeError before). Either is refused with where it is."""
    m = _UNREADABLE.search(source)
    if m:
        i = m.start()
        line, col = source.count("\n", 0, i) + 1, i - source.rfind("\n", 0, i)
        raise CompileError(f"the source has a character NVRTC cannot read, {m[0]!r}  ({filename}, line {line}, "
                           f"column {col})\n"     # shown as '?': the message itself must print
                           + caret_excerpt(_UNREADABLE.sub("?", source), line, col, os.path.basename(filename)),
                           filename=filename, hint=_UNREADABLE_HINT)
    for what, items in (("option", options), ("name expression", names), ("filename", [filename])):
        bad = next((x for x in items if isinstance(x, str) and _UNREADABLE.search(x)), None)
        if bad is not None:
            raise CompileError(f"the {what} {bad!r} has a character NVRTC cannot read, "
                               f"{_UNREADABLE.search(bad)[0]!r}", filename=filename, hint=_UNREADABLE_HINT)


_UNREADABLE_HINT = ("a NUL ('\\x00') or half of a UTF-16 pair: a file saved as UTF-16 (Notepad's 'Unicode') "
                    "is full of NULs, so save it as UTF-8; otherwise delete the character and type it again.")


def machine_code_missing() -> str:
    """Why the simulator cannot read machine code here ("" when it can)."""
    if os.environ.get("COURSE_LIB_SASS", "").lower() in ("0", "off", "no", "false"):
        return "COURSE_LIB_SASS=0 turns machine code off"
    try:
        nvrtc_lib.load(13)
        path = sass.nvdisasm_path()
        if path is None:
            return "nvdisasm was not found; it comes in the nvidia-cuda-nvdisasm wheel"
        sass.nvdisasm_version(path)
    except Unavailable as exc:
        return str(exc)
    return ""


def _compile_with_machine_code(source, options, names, filename) -> Compiled:
    """PTX and an sm_90 CUBIN from one NVRTC 13 compilation (cached like the PTX). It is the very compilation
    ``compile_source(arch=90, want_cubin=True)`` makes with NVRTC 13 (an H100's code, the capability table's
    sm_90 column), and is kept under the same key: one NVRTC call for both."""
    lib = nvrtc_lib.load(13)
    opts = [o for o in options if not o.startswith(("--gpu-architecture", "-arch"))]
    opts += ["-lineinfo", f"--gpu-architecture=sm_{MACHINE_ARCH}"] + headers.include_options(13)
    made_by = "NVRTC {}.{}, sm_{}".format(*lib.version, MACHINE_ARCH)
    key = cache.key(source, opts, names, MACHINE_ARCH, True, "NVRTC {}.{}".format(*lib.version)) + "-" + _safe(filename)
    hit = cache.get(key, Compiled)
    if hit is None or hit.cubin is None:
        with cache_lock.making(key):           # another process making it: wait, then read it
            hit = cache.get(key, Compiled)
            if hit is None or hit.cubin is None:
                hit = _make_with_machine_code(lib, source, filename, opts, names, key, made_by)
    hit.machine = made_by
    return hit


def _make_with_machine_code(lib, source, filename, opts, names, key, made_by) -> Compiled:
    refused = cache.get_failure(key, filename)
    if refused is not None:
        raise nvrtc_lib.Failed(refused, nvrtc_lib.COMPILATION)
    try:
        out = lib.compile(source, filename, opts, names, want_cubin=True)
    except nvrtc_lib.Failed as exc:
        if exc.status == nvrtc_lib.COMPILATION:
            cache.put_failure(key, filename, exc.log)
        raise
    hit = Compiled(ptx=out.ptx, cubin=out.cubin, lowered_names=out.lowered_names, log=out.log,
                   arch=MACHINE_ARCH, entries=entries_of(out.ptx), machine=made_by)
    cache.put(key, hit)
    return hit


def machine_code(c: Compiled) -> dict:
    """Kernel name -> its SASS instructions (``sass.Instruction``) for a compilation made for the
    simulator; raises ``Unavailable`` when there is none (``c.machine_note`` says why)."""
    if not c.machine or c.cubin is None:
        raise Unavailable(c.machine_note or "this module was built from PTX text, so there is no machine code")
    return sass.kernels(c.cubin, cache.private_dir())


def entries_of(ptx: str) -> list[str]:
    """The kernels (``.entry``) a PTX text defines, in order."""
    return re.findall(r"\.entry\s+([\w$]+)\s*\(", ptx)


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", os.path.basename(name))[:40]


def _compile_now(lib, source, opts, names, filename, arch, want_cubin, key) -> Compiled:
    try:
        out = lib.compile(source, filename, opts, names, want_cubin=want_cubin)
    except nvrtc_lib.Failed as exc:
        if exc.status == nvrtc_lib.COMPILATION:      # the source's fault: the same answer next time
            cache.put_failure(key, filename, exc.log)
        raise compile_error(source, exc.log, filename, lib.version[0]) from None
    return Compiled(ptx=out.ptx, cubin=out.cubin, lowered_names=out.lowered_names, log=out.log, arch=arch,
                    entries=entries_of(out.ptx), machine="")

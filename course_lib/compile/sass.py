"""Machine code (SASS): disassemble a CUBIN with nvdisasm and parse what the simulator needs.

What it does:
- finds ``nvdisasm`` (the ``nvidia-cuda-nvdisasm`` wheel's ``nvidia/cu13/bin``, then ``PATH``,
  then ``CUDA_HOME``/``CUDA_PATH``/``/usr/local/cuda``) and runs ``nvdisasm -c -gp``, which names
  for every SASS instruction the line of the PTX text it was compiled from;
- caches each disassembly on disk, keyed by the CUBIN's hash and nvdisasm's version, with the
  listing's own hash in its first line: an entry that does not match it (truncated, empty, other
  bytes) is rebuilt with a one-line warning, never read as a shorter listing (which would move the
  kernel's metrics to PTX counts, silently);
- parses the listing into :class:`Instruction` per kernel, and the memory instructions'
  space (shared, global, generic, local), direction, width in bytes and address
  (base registers + immediate offset).

What it does not do: compile (``nvrtc.py``), or decide which PTX accesses an instruction
stands for (``sim/fusion.py``). Constant, parameter, texture, atomic and asynchronous-copy
instructions are not memory accesses here: the simulator's metrics count loads and stores.
"""
from __future__ import annotations

import functools
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ..errors import Unavailable
from . import cache


@dataclass(frozen=True)
class Access:
    space: str        # shared | global | generic | local
    op: str           # ld | st
    width: int        # bytes per thread
    base: str         # address registers, e.g. 'R22' or 'R2.64+UR4' ('' for an absolute address)
    offset: int       # the immediate added to them
    cached: str = ""  # 'CONSTANT' for LDG.E.CONSTANT (ld.global.nc)


@dataclass(frozen=True)
class Instruction:
    address: int      # byte offset in the kernel's code
    text: str         # as nvdisasm prints it, without the trailing ';'
    opcode: str       # e.g. 'LDS.128'
    ptx_line: int     # line of the PTX text it came from (0: nvdisasm gave none)
    access: Access | None


_OPS = {"LDS": ("shared", "ld"), "STS": ("shared", "st"), "LDG": ("global", "ld"), "STG": ("global", "st"),
        "LD": ("generic", "ld"), "ST": ("generic", "st"), "LDL": ("local", "ld"), "STL": ("local", "st")}
_WIDTHS = {"U8": 1, "S8": 1, "U16": 2, "S16": 2, "32": 4, "64": 8, "128": 16}
_SECTION = re.compile(r"^//-+ \.text\.(\S+)\s+-+\s*$")
_PTX_LINE = re.compile(r'^\s*//## File "\.nv_debug_ptx_txt", line (\d+)')
_CODE = re.compile(r"^\s*/\*([0-9a-f]+)\*/\s+(.*?)\s*;\s*(?:/\*.*)?$")


# ----------------------------------------------------------------------------- finding nvdisasm

def _exe(name):
    return name + (".exe" if sys.platform == "win32" else "")


def nvdisasm_path() -> str | None:
    """The nvdisasm to use, or None. ``COURSE_LIB_NVDISASM`` overrides the search."""
    if os.environ.get("COURSE_LIB_NVDISASM"):
        return os.environ["COURSE_LIB_NVDISASM"]
    import importlib.util
    spec = importlib.util.find_spec("nvidia")
    for root in (spec.submodule_search_locations or []) if spec else []:
        p = Path(root) / "cu13" / "bin" / _exe("nvdisasm")
        if p.exists():
            return str(p)
    found = shutil.which("nvdisasm")
    if found:
        return found
    for var in ("CUDA_HOME", "CUDA_PATH"):
        p = Path(os.environ.get(var, "/usr/local/cuda")) / "bin" / _exe("nvdisasm")
        if p.exists():
            return str(p)
    return None


@functools.lru_cache(maxsize=4)
def nvdisasm_version(path: str) -> str:
    try:
        out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError) as exc:
        raise Unavailable(f"nvdisasm at {path} does not run ({exc})") from None
    m = re.search(r"release (\d+\.\d+), V([\d.]+)", out)
    if not m:
        raise Unavailable(f"{path} does not look like nvdisasm: {out.strip()[:80]!r}")
    if int(m[1].split(".")[0]) < 13:
        raise Unavailable(f"nvdisasm {m[2]} at {path} is older than CUDA 13 and cannot read NVRTC 13's CUBINs")
    return m[2]


# ----------------------------------------------------------------------------- disassembling

def disassemble(cubin: bytes, cache_dir: Path | None = None) -> str:
    """nvdisasm's listing of ``cubin`` with PTX line numbers; raises :class:`Unavailable`."""
    path = nvdisasm_path()
    if path is None:
        raise Unavailable("nvdisasm was not found; it comes in the nvidia-cuda-nvdisasm wheel")
    key = f"{hashlib.sha256(cubin).hexdigest()[:32]}-{nvdisasm_version(path)}"
    # '.v2': entries before the hash line are left alone, not reported as damaged
    cached = Path(cache_dir) / "sass" / f"{key}.v2.sass" if cache_dir else None
    listing = _cached(cached) if cached is not None else None
    if listing is not None:
        return listing
    with tempfile.TemporaryDirectory() as tmp:     # nvdisasm reads a file, not stdin
        f = Path(tmp) / "kernel.cubin"
        f.write_bytes(cubin)
        try:
            done = subprocess.run([path, "-c", "-gp", str(f)], capture_output=True, text=True, timeout=120)
        except (OSError, subprocess.SubprocessError) as exc:
            raise Unavailable(f"nvdisasm failed to run ({exc})") from None
    if done.returncode != 0:
        raise Unavailable(f"nvdisasm could not read the CUBIN: {(done.stderr or done.stdout).strip()[:200]}")
    if cached is not None:
        try:
            cached.parent.mkdir(parents=True, exist_ok=True)
            body = done.stdout.encode()
            cache.write_private(cached, _HEADER + hashlib.sha256(body).hexdigest().encode() + b"\n" + body)
        except OSError:
            pass   # a read-only cache only costs time
    return done.stdout


_HEADER = b"// course_lib sha256 "


def _cached(entry: Path) -> str | None:
    """The listing stored in `entry`, or None: none there, or a damaged one (deleted, said in a line)."""
    cache.clean_stale(entry.parent)
    try:
        data = entry.read_bytes()
    except OSError:
        return None
    head, _, body = data.partition(b"\n")
    if head.startswith(_HEADER) and head[len(_HEADER):] == hashlib.sha256(body).hexdigest().encode():
        try:
            return body.decode()
        except UnicodeDecodeError:      # hashed as written: only a different nvdisasm could get here
            pass
    cache.damaged(entry, "empty" if not data else "its hash does not match its listing")
    try:
        entry.unlink()
    except OSError:
        pass
    return None


@functools.lru_cache(maxsize=32)
def kernels(cubin: bytes, cache_dir: Path | None = None) -> dict[str, list[Instruction]]:
    """:func:`parse` of :func:`disassemble`, remembered for the session."""
    return parse(disassemble(cubin, cache_dir))


# ----------------------------------------------------------------------------- parsing

def parse(listing: str) -> dict[str, list[Instruction]]:
    """Kernel (mangled) name -> its instructions in code order."""
    kernels: dict[str, list[Instruction]] = {}
    current, ptx_line = None, 0
    for raw in listing.splitlines():
        m = _SECTION.match(raw)
        if m:
            current, ptx_line = kernels.setdefault(m[1], []), 0
            continue
        if current is None:
            continue
        m = _PTX_LINE.match(raw)
        if m:
            ptx_line = int(m[1])
            continue
        m = _CODE.match(raw)
        if m:
            text = " ".join(m[2].split())
            current.append(Instruction(int(m[1], 16), text, _opcode(text), ptx_line, access_of(text)))
    return kernels


def _opcode(text: str) -> str:
    words = text.split()
    return words[1] if words[0].startswith("@") and len(words) > 1 else words[0]


def access_of(text: str) -> Access | None:
    """The load or store one SASS instruction makes, or None for anything else."""
    words = text.split(None, 2 if text.startswith("@") else 1)
    if text.startswith("@"):
        words = words[1:]
    opcode, operands = words[0], (words[1] if len(words) > 1 else "")
    name, *mods = opcode.split(".")
    if name not in _OPS:
        return None
    space, op = _OPS[name]
    width = next((_WIDTHS[m] for m in mods if m in _WIDTHS), 4)
    brackets = re.findall(r"\[([^\]]*)\]", operands)
    if not brackets:
        return None
    base, offset = _address(brackets[-1])     # desc[URx][address]: the address is the last one
    return Access(space, op, width, base, offset, "CONSTANT" if "CONSTANT" in mods else "")


def _address(inside: str) -> tuple[str, int]:
    regs, offset = [], 0
    for term in inside.replace(" ", "").replace("+-", "+~").split("+"):
        if not term:
            continue
        neg = term.startswith(("~", "-"))
        t = term.lstrip("~-")
        if re.fullmatch(r"0x[0-9a-fA-F]+|\d+", t):
            offset += -int(t, 0) if neg else int(t, 0)
        else:
            regs.append(t)
    return "+".join(regs), offset

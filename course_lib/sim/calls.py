"""Calls the simulator understands: ``printf`` (vprintf) and ``assert`` (__assertfail).

NVRTC inlines every ordinary device function, so the only calls left in a kernel's PTX are
to these system functions. ``printf`` output is formatted here with C's rules and printed in
thread order (block by block, x fastest) — a GPU prints in no fixed order. Output is capped
so a printf in a large grid cannot flood the notebook. Other calls (``__noinline__``
functions, device-side malloc) are reported as unsupported.
"""
from __future__ import annotations

import re
import struct

import numpy as np

from ..errors import KernelError, UnsupportedInstruction
from .memory import LOCAL_WINDOW

PRINTF_LIMIT = 2000
_SPEC = re.compile(r"%([-+ #0]*)(\d+|\*)?(?:\.(\d+|\*))?(hh|h|ll|l|z|j|t|L)?([diouxXeEfFgGaAcspn%])")


def build_call(ins, program):
    text = ins.operands[0].value if ins.operands else ""
    m = re.match(r"\((.*?)\)\s*,\s*([\w$]+)\s*,\s*\((.*?)\)", text or "", re.S)
    if not m:
        m2 = re.match(r"\s*\(?\s*\)?\s*,?\s*([\w$]+)", text or "")
        target = m2[1] if m2 else "?"
        params = []
    else:
        target, params = m[2], [p.strip() for p in m[3].split(",") if p.strip()]
    if target == "vprintf":
        return _printf(ins, program, params)
    if target == "__assertfail":
        return _assert(ins, program, params)

    def run(b, mask):
        raise UnsupportedInstruction(
            f"the kernel calls '{target}', which the simulator cannot run", line=ins.line or None,
            hint="mark helper functions __forceinline__, or run this kernel on a GPU")
    return run


def _param_u64(b, name):
    return b.callparams.get(name, {}).get(0, np.zeros(b.n, np.uint64)).astype(np.uint64)


def _printf(ins, program, params):
    def run(b, mask):
        fmt_addr = _param_u64(b, params[0])
        arg_addr = _param_u64(b, params[1]) if len(params) > 1 else np.zeros(b.n, np.uint64)
        slots = np.arange(b.n) if mask is None else np.flatnonzero(mask)
        fmt_cache = {}
        for s in slots:
            if program.printed_lines >= PRINTF_LIMIT:
                program.printf_dropped += 1
                continue
            fa = int(fmt_addr[s])
            if fa not in fmt_cache:
                fmt_cache[fa] = program.read_c_string(fa)
            buf = b""
            if b.local is not None and int(arg_addr[s]) >= LOCAL_WINDOW:
                buf = bytes(b.local.data[s][int(arg_addr[s]) - LOCAL_WINDOW:])
            program.emit(format_c(fmt_cache[fa], buf, program))
    return run


def format_c(fmt: str, args: bytes, program=None) -> str:
    """printf formatting over the packed argument buffer (each argument aligned to its size)."""
    out, pos, last = [], 0, 0
    for m in _SPEC.finditer(fmt):
        out.append(fmt[last:m.start()])
        last = m.end()
        flags, width, prec, length, conv = m.groups()
        if conv == "%":
            out.append("%")
            continue
        size = 8 if (length in ("l", "ll", "z", "j", "t") or conv in "eEfFgGaAsp") else 4
        pos = (pos + size - 1) // size * size
        raw = args[pos:pos + size].ljust(size, b"\0")
        pos += size
        spec = "%" + (flags or "") + (width or "") + (("." + prec) if prec else "")
        if conv in "di":
            v = int.from_bytes(raw, "little", signed=True)
            if length == "hh":
                v = (v + 128) % 256 - 128
            elif length == "h":
                v = (v + 32768) % 65536 - 32768
            out.append((spec + "d") % v)
        elif conv in "ouxX":
            v = int.from_bytes(raw, "little")
            out.append((spec + conv) % v)
        elif conv in "eEfFgGaA":
            v = struct.unpack("<d", raw)[0]
            out.append((spec + (conv if conv not in "aA" else "e")) % v)
        elif conv == "c":
            out.append((spec + "c") % chr(raw[0]))
        elif conv == "s":
            addr = int.from_bytes(raw, "little")
            out.append((spec + "s") % (program.read_c_string(addr) if program else "?"))
        elif conv == "p":
            out.append("0x%x" % int.from_bytes(raw, "little"))
    out.append(fmt[last:])
    return "".join(out)


def _assert(ins, program, params):
    def run(b, mask):
        slots = np.arange(b.n) if mask is None else np.flatnonzero(mask)
        s = int(slots[0])
        msg = program.read_c_string(int(_param_u64(b, params[0])[s])) if params else "assertion"
        raise KernelError(f"assert({msg}) failed in the kernel", line=ins.line or None,
                          source_line=program.source_line(ins.line), filename=program.filename,
                          thread=program.thread_of(b, s), block=program.block_of(b, s),
                          hint=f"{len(slots)} thread(s) failed this assertion in this step")
    return run

"""Calls the simulator understands — ``printf`` (vprintf) and ``assert`` (__assertfail) — and ``trap``.

NVRTC inlines every ordinary device function, so the only calls left in a kernel's PTX are
to these system functions. ``printf`` output is formatted here with C's rules and printed in
thread order (block by block, x fastest) — a GPU prints in no fixed order. Output is capped
so a printf in a large grid cannot flood the notebook. A failed ``assert`` is
:class:`AssertionFailed` with the line CUDA prints; ``trap`` (``__trap()``, or the trap NVRTC
compiles in for a line that always dereferences null) is :class:`KernelTrap`. Other calls
(recursive or ``__noinline__`` functions, device-side malloc) are reported as unsupported,
naming the function (and, for a recursive one, the line where it calls itself: ``recursion``).
"""
from __future__ import annotations

import re
import struct

import numpy as np

from ...errors import AssertionFailed, KernelTrap, UnsupportedInstruction
from ..checks import recursion
from ..spaces.memory import LOCAL_WINDOW

PRINTF_LIMIT = 2000
_SPEC = re.compile(r"%([-+ #0]*)(\d+|\*)?(?:\.(\d+|\*))?(hh|h|ll|l|z|j|t|L)?([diouxXeEfFgGaAcspn%])")


def call_target(ins):
    """(function name, [param names]) of a ``call`` instruction. PTX writes it
    ``call.uni (retval0), vprintf, (param0, param1);`` or, with no return value,
    ``call.uni __assertfail, (param0, ...);``: read it from the instruction's text."""
    m = re.match(r"call(?:\.\w+)*\s+(?:\([^)]*\)\s*,\s*)?([\w$]+)\s*(?:,\s*\(([^)]*)\))?", ins.text or "", re.S)
    if not m:
        return "?", []
    return m[1], [p.strip() for p in (m[2] or "").split(",") if p.strip()]


def build_call(ins, program):
    target, params = call_target(ins)
    if target == "vprintf":
        return _printf(ins, program, params)
    if target == "__assertfail":
        return _assert(ins, program, params)
    what, hint = _unsupported_call(target, program)

    def run(b, mask):
        raise UnsupportedInstruction(what, line=ins.line or None, hint=hint)
    return run


def _unsupported_call(target, program):
    """What to say about a call the simulator cannot follow, by what the callee is."""
    if target in ("malloc", "free", "__cxa_vec_new", "_Znwm", "_Znam", "_ZdlPv", "_ZdaPv"):
        return (f"the kernel allocates memory on the device ({target}: malloc/free/new/delete in a kernel), "
                "which the simulator does not model",
                "allocate the buffer on the host (np.empty) and pass it as an argument, or a __shared__ array "
                "per block; or run this kernel on a GPU")
    name = demangled(target)
    rec = recursion.named(program.source, name)
    if rec is not None:
        return (f"the kernel calls the device function {name}() as a real call: {name}() is recursive (it calls "
                f"itself at line {rec.calls[0]}) and NVRTC could not turn the recursion into a loop, so every "
                "call would take a frame of the thread's stack, which the simulator cannot run. On a GPU that "
                "stack is 1 KiB per thread by default: a recursion more than some tens of calls deep overflows "
                "it and the kernel fails",
                f"turn the recursion in {name}() into a loop (keep the running value in a variable); or run this "
                "kernel on a GPU")
    return (f"the kernel calls the device function {name}() as a real call (NVRTC did not "
            "inline it: it is recursive, or marked __noinline__), which the simulator cannot run",
            "mark helper functions __forceinline__ and turn recursion into a loop; or run this kernel on a GPU")


def demangled(symbol: str) -> str:
    """'_Z3fibi' -> 'fib' (the name as written); other symbols unchanged."""
    m = re.match(r"_Z(?:N\d*)?(\d+)(\w+)", symbol)
    if m and len(m[2]) >= int(m[1]):
        return m[2][:int(m[1])]
    return symbol


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
    """__assertfail(message, file, line, function, char size): NVRTC calls it only when the
    condition is false, so a passing assert costs one compare and branch, as on the GPU."""
    def run(b, mask):
        slots = np.arange(b.n) if mask is None else np.flatnonzero(mask)
        s = int(slots[0])
        text = lambda i: program.read_c_string(int(_param_u64(b, params[i])[s])) if len(params) > i else "?"
        message, file, function = text(0), text(1), text(3)   # the strings the GPU's message is made of
        line = ins.line or (int(b.callparams[params[2]][0][s]) if len(params) > 2 and params[2] in b.callparams else 0)
        thread, block = program.thread_of(b, s), program.block_of(b, s)
        others = f" ({slots.size} threads failed it together; the first is named below)" if slots.size > 1 else ""
        cuda = (f"{file if file != '?' else program.filename}:{line}: {function}: block: [{','.join(map(str, block))}], "
                f"thread: [{','.join(map(str, thread))}] Assertion `{message}` failed.")
        raise AssertionFailed(
            f"Assertion `{message}` failed{others}. On a GPU this thread prints\n    {cuda}\n"
            "and the kernel stops; every later CUDA call in the process then fails with "
            "'device-side assert triggered' (restart the Python kernel to recover).",
            line=line or None, source_line=program.source_line(line), filename=program.filename,
            thread=thread, block=block,
            hint=f"`{message}` is false for this thread: print what it tests for this thread (printf, or "
                 "blocks=[...] to simulate just this block), and check the launch (grid, block, sizes) "
                 "against what the kernel assumes")
    return run


def _pipeline_copy_size(line):
    """The literal byte count of a __pipeline_memcpy_async(dst, src, bytes) on `line`, or None."""
    m = re.search(r"__pipeline_memcpy_async\s*\(.*?,.*?,\s*(\d+)\s*[,)]", line or "")
    return int(m[1]) if m else None


def build_trap(ins, program):
    """``trap``: a __trap() the student wrote, or one NVRTC put in place of code whose behaviour is
    always undefined (it compiles ``*(float*)0 = x`` or a load through nullptr to a trap)."""
    written = bool(re.search(r"\b__trap\s*\(|\btrap\b", program.source_line(ins.line) or ""))

    def run(b, mask):
        s = int(np.flatnonzero(mask)[0]) if mask is not None else 0
        where = dict(line=ins.line or None, source_line=program.source_line(ins.line), filename=program.filename,
                     thread=program.thread_of(b, s), block=program.block_of(b, s))
        if written:
            raise KernelTrap("The kernel called __trap(): on a GPU the launch fails at once and the CUDA "
                             "context is lost (every later CUDA call in the process fails).", **where,
                             hint="__trap() is an emergency stop; to report a problem from a kernel use "
                                  "assert(condition), or printf and return")
        size = _pipeline_copy_size(where["source_line"])
        if size is not None and size not in (4, 8, 16):
            raise KernelTrap(
                f"Line {ins.line} calls __pipeline_memcpy_async with {size} bytes, a size it cannot copy, so NVRTC compiled the "
                "call to a trap (a deliberate crash): it copies 4, 8 or 16 bytes per thread (cp.async), nothing "
                "else. On a GPU the launch fails and the CUDA context is lost.", **where,
                hint="copy 4, 8 or 16 bytes per call (a 12-byte element: three 4-byte copies, or pad it to 16), "
                     "from and to addresses aligned to that size")
        raise KernelTrap(
            f"Line {ins.line} always does something undefined, so NVRTC compiled it to a trap (a deliberate "
            "crash): most often a load or store through a null pointer (nullptr, (T*)0, or a pointer never "
            "set). On a GPU the launch fails and the CUDA context is lost.", **where,
            hint="check every pointer used on this line: each must point into an array (a kernel argument, a "
                 "__shared__ array or a local one) before it is read or written")
    return run

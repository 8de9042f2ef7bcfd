"""NVRTC's log, worded for a student: the first error with its line, column and a caret, and a hint.

    raise diagnostics.compile_error(source, log, "cell.cu")     # a CompileError

NVRTC prints ``file(line): error: message``, echoes the line and puts a caret under the column.
:func:`compile_error` keeps the first error (later ones are often consequences), names how many
more there are, shows the line before when a ';' is missing at the end of it, and adds a hint
for the messages students meet most (a misspelt name: "did you mean"; a write through a const
pointer; a vector type built from a scalar; a header NVRTC cannot find: which wheel has it, ``headers.py``),
and a general one for the rest. A name expression that does not compile (``k<flot, 3>``; NVRTC
reports it in a file of its own, ``__nv_name_map``) is shown as itself, with the template's parameters.

This module only words things; it does not compile.
"""
from __future__ import annotations

import difflib
import os
import re

from ..errors import CompileError, caret_excerpt
from . import headers

_DIAG = re.compile(r"^(?P<file>.*?)\((?P<line>\d+)\): (?P<kind>error|warning|catastrophic error)\s*(?P<code>#\w+-\w)?:?\s*(?P<msg>.*)$")


def compile_error(source: str, log: str, filename: str, major: int = 13) -> CompileError:
    """Turn NVRTC's log into one readable error: the first error with its caret, then a count.
    ``major`` is the NVRTC version that wrote the log (which header wheels it searches)."""
    diags, names = _parse(log or "", source.splitlines())
    if not diags and names:
        return _name_error(source, log, filename, names)
    if not diags:
        return CompileError(f"NVRTC could not compile {filename}:\n{log.strip()}", log=log,
                            hint=_log_hint(log))
    line, col, msg = diags[0]
    where = f"{filename}, line {line}" + (f", column {col}" if col else "")
    short = os.path.basename(filename)
    text = [f"{msg}  ({where})"]
    if 'expected a ";"' in msg:
        text.append(_line_before(source, line, col, short))
    text.append(caret_excerpt(source, line, col, short))
    if len(diags) > 1:
        more = "; ".join(f"line {ln}: {m}" for ln, _, m in diags[1:4])
        text.append(f"  {len(diags) - 1} more error(s) — {more}")
    src_lines = source.splitlines()
    return CompileError("\n".join(t for t in text if t), diagnostics=diags, log=log,
                        hint=_pasted(source, line, col) or _hint_for(msg, source, major) or GENERAL_HINT,
                        filename=filename, line=None,
                        source_line=src_lines[line - 1] if 0 < line <= len(src_lines) else None)


GENERAL_HINT = ("fix the first error first: later ones are often its consequences. Look at the caret, then at "
                "the end of the line before it (a missing ';', ')' or '}').")
_NAME_MAP = "__nv_name_map"          # the file NVRTC compiles a program's name expressions in
_PARSING = "Error in parsing name expression"


def _parse(log, source_lines):
    """(the source's errors as (line, column, message), the name expressions' errors as
    (expression, column in it, message)). NVRTC compiles name expressions as lines of its own
    file, ``__nv_name_map``, whose line numbers are not the source's."""
    lines = log.splitlines()
    diags, names = [], []
    for i, text in enumerate(lines):
        m = _DIAG.match(text)
        if not m or m["kind"] == "warning":
            continue
        col = None
        # NVRTC echoes the source line indented by two spaces, then a caret line.
        if i + 2 < len(lines) and lines[i + 2].strip() == "^":
            col = lines[i + 2].index("^") - 1
        if m["file"] != _NAME_MAP:
            diags.append((int(m["line"]), _char_column(source_lines, int(m["line"]), col), m["msg"].strip()))
            continue
        echo = lines[i + 1][2:] if i + 1 < len(lines) else ""
        expr = echo.split("nv_mangled_name", 1)[-1].strip()
        offset = echo.find(expr) if expr else -1
        names.append((expr, col - offset if col and offset >= 0 and col > offset else None, m["msg"].strip()))
    useful = [n for n in names if not n[2].startswith(_PARSING)]
    return diags, useful or names


def _char_column(source_lines, line, col):
    """NVRTC counts columns in bytes of UTF-8 (its caret sat 3 places right of 'zz' after "/*µµµ*/");
    the caret excerpt counts characters."""
    if col is None or not 1 <= line <= len(source_lines):
        return col
    raw = source_lines[line - 1].encode("utf-8", "replace")
    return len(raw[:col - 1].decode("utf-8", "ignore")) + 1


def _pasted(source, line, col) -> str | None:
    """A hint for a character C++ does not have (a curly quote, a dash or a no-break space pasted
    from a document or slides), naming it."""
    lines = source.splitlines()
    if col is None or not 1 <= line <= len(lines) or col > len(lines[line - 1]):
        return None
    ch = lines[line - 1][col - 1]
    if ord(ch) < 128:
        return None
    return (f"the character '{ch}' (U+{ord(ch):04X}) is not C++: text copied from a document or slides often "
            "brings curly quotes, long dashes or no-break spaces; type it again as plain ASCII (\" ' - or a space).")


def _name_error(source, log, filename, names) -> CompileError:
    """A name expression (``name_expressions=``, ``-i`` in %%cuda, ``get_function("k<...>")``) that
    does not compile, shown on the expression itself rather than on a line of the source."""
    expr, col, msg = names[0]
    text = [f"the kernel name '{expr}' does not compile: {msg}", f"  name | {expr}"]
    if col:
        text.append(" " * (len("  name | ") + col - 1) + "^")
    base = expr.split("<")[0].strip()
    params = _template_params(source, base)
    if "is undefined" in msg and f'"{base}"' in msg:
        guess = _did_you_mean(base, source)
        hint = (f"this source has no kernel named '{base}'" + (f"; did you mean '{guess}'?" if guess else ".")
                + " A name expression names a __global__ template and its arguments, e.g. 'tile<float, 32>'.")
    else:
        ident = re.search(r'"([^"]+)"', msg) if "is undefined" in msg else None
        guess = _did_you_mean(ident[1], source) if ident else None
        hint = (f"did you mean '{guess}'? " if guess else "") + (
            f"'{base}' takes template <{params}>: give one C++ type or constant per parameter, in order"
            if params is not None else
            "a name expression is a __global__ template with its arguments, e.g. 'tile<float, 32>'") + "."
    return CompileError("\n".join(text), log=log, hint=hint, filename=filename)


def _template_params(source, name) -> str | None:
    m = re.search(rf"template\s*<([^{{}};]*?)>\s*(?:__\w+__\s+|static\s+|inline\s+)*void\s+{re.escape(name)}\s*\(",
                  source or "")
    return " ".join(m[1].split()) if m else None


def _log_hint(log) -> str:
    """A hint for a log without a source line: an option NVRTC does not take, most often."""
    low = (log or "").lower()
    if "macro definition" in low:
        return "a -D option needs a name, as in -DTILE=32 (or -DDEBUG for 1)."
    if "option" in low or "command-line error" in low or "nvrtc: error" in low:
        return ("NVRTC did not accept an option: check its spelling and value, e.g. -std=c++17, -DNAME=VALUE, "
                "--use_fast_math, -lineinfo (nvcc-only flags such as -O3 or -arch do not apply).")
    return GENERAL_HINT


def _line_before(source, line, col, filename) -> str:
    """When NVRTC's caret is at the start of a statement, the ';' is missing at the end of the
    previous line: show that line with a caret after it."""
    lines = source.splitlines()
    if not 1 <= line <= len(lines) or col is None:
        return ""
    text = lines[line - 1].expandtabs(4)
    if col - 1 > len(text) - len(text.lstrip()):
        return ""
    k = line - 1
    while k >= 1 and not lines[k - 1].strip():
        k -= 1
    prev = lines[k - 1].expandtabs(4).rstrip() if k >= 1 else ""
    if not prev or prev.endswith((";", "{", "}", ":", ",")) or prev.lstrip().startswith(("#", "//")):
        return ""
    head = f"  {filename}:{k} | "
    return f"{head}{prev}\n{' ' * (len(head) + len(prev))}^ the ';' is probably missing here"


CUDA_NAMES = ("threadIdx blockIdx blockDim gridDim warpSize __syncthreads __syncwarp __shfl_sync "
              "__shfl_down_sync __shfl_xor_sync __shfl_up_sync __ldg atomicAdd atomicSub atomicMax atomicMin "
              "atomicCAS atomicExch float2 float4 int2 int4 double2 make_float2 make_float4 make_int2 "
              "__float2half __half2float size_t printf min max fminf fmaxf sqrtf expf __restrict__ "
              "__shared__ __global__ __device__ __constant__ __forceinline__ unsigned "
              # C++'s own words: a misspelt keyword is read as an undefined name (template <typname T>)
              "typename template class struct const constexpr static_cast reinterpret_cast return "
              "sizeof int float double char short long bool void auto for while if else").split()


def _did_you_mean(name: str, source: str) -> str | None:
    words = set(re.findall(r"[A-Za-z_]\w*", re.sub(r"//[^\n]*|/\*.*?\*/", "", source or "", flags=re.S)))
    cands = sorted((words | set(CUDA_NAMES)) - {name})
    lower = {c.lower(): c for c in cands}
    if name.lower() in lower:
        return lower[name.lower()]
    close = difflib.get_close_matches(name.lower(), list(lower), n=1, cutoff=0.75)
    return lower[close[0]] if close else None


def _hint_for(msg: str, source: str | None = None, major: int = 13) -> str | None:
    m = msg.lower()
    if "expected a \";\"" in m:
        return "a statement is missing its ';' — often at the end of the line before the caret."
    if "is undefined" in m:
        name = re.search(r'"([^"]+)"', msg)
        guess = _did_you_mean(name[1], source) if name else None
        return ((f"did you mean '{guess}'? " if guess else "") +
                "check the spelling (C++ is case-sensitive), and that the name is declared before this line "
                "and in this scope.")
    if "modifiable lvalue" in m:
        return ("this assigns to something read-only: an element of a const pointer (the input array?) or a "
                "const variable. Did you mean to write to the output array?")
    if "cannot be used to initialize an entity of type" in m and "const" in m.split("cannot")[0]:
        return ("this drops 'const': the value points to read-only data (a const input), so the new pointer "
                "must be const too, e.g. const float* p = in;")
    if "no suitable" in m and "convert" in m:
        if re.search(r"(float|int|double|char|short|long)[1-4]\b", m):
            return ("a vector type (float4, int2, ...) is not built from one scalar: to load 4 floats at once "
                    "cast the pointer, reinterpret_cast<const float4*>(in)[i], or build one with make_float4(...)")
        return "the two types do not convert into each other; check the declared types and add an explicit cast."
    if "cannot be assigned to an entity of type" in m or "argument of type" in m:
        return "the types do not match; check pointer types (float* vs double*) and casts."
    if "too few arguments" in m or "too many arguments" in m:
        return "the call does not match the function's parameter list; count the arguments."
    if "host functions are not allowed in jit mode" in m:
        return ("a helper function the kernel calls needs __device__ in front (__host__ __device__ to use it from "
                "Python's side too): NVRTC compiles only device code.")
    if "host variables are not allowed in jit mode" in m:
        return ("a variable outside the kernel needs __device__ or __constant__ (or a constexpr constant), or "
                "move it into the kernel: NVRTC compiles only device code.")
    if m.endswith("is not a template"):
        guess = _did_you_mean(msg.split()[0], "template")
        return (f"did you mean '{guess}'? " if guess else "") + "a template starts: template <typename T, int N>"
    if "has already been declared" in m or "has already been defined" in m:
        return "the same name is declared twice in one scope: rename one, or drop the second declaration."
    if m.startswith("expected a declaration"):
        return ("outside a function only declarations may stand: look for a '}' that closes the function too "
                "early, or a statement before the function's '{'.")
    if "missing closing quote" in m or "unrecognized token" in m:
        return "a stray character or an unclosed quote: CUDA code has no '\\', '#' or quote outside strings."
    if "cannot open source file" in m:
        name = re.search(r'"([^"]+)"', msg)
        return headers.missing_hint(name[1] if name else "this header", major)
    return None

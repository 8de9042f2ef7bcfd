"""Which ``__device__`` functions of a kernel's source call themselves, and on which lines.

NVRTC turns a recursion it can (``return 1 + depth(n - 1);``) into a loop and leaves the others
as real calls. Either way the PTX no longer says "recursion", so the simulator's messages look
it up in the source: a loop that does not end inside a recursive function is a recursion that
has not reached its base case, and a real call to one is a recursion the simulator cannot run.

The source is read line by line, as written: a definition ``__device__ ... name(...) {`` up to
its closing brace, and the lines in it that name ``name(`` again. Limits: mutual recursion (f
calls g calls f) and a definition whose name is on another line than ``__device__`` are not
recognised; a macro that expands to a call is not seen.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

_DEFINITION = re.compile(r"__device__\b[^;{}()=]*?\b([A-Za-z_]\w*)\s*\(")
_NOT_NAMES = {"if", "for", "while", "switch", "return", "sizeof", "__launch_bounds__", "alignas", "decltype"}


@dataclass
class Recursion:
    name: str            # the function as written
    first: int           # its first line (1-based)
    last: int            # the line of its closing brace
    calls: list          # lines where it calls itself

    def holds(self, first, last) -> bool:
        return self.first <= first and last <= self.last


def recursive_functions(source: str) -> list[Recursion]:
    lines = source.splitlines()
    found = []
    for number, text in enumerate(lines, 1):
        m = _DEFINITION.search(text.split("//")[0])
        if not m or m[1] in _NOT_NAMES:
            continue
        last = _closing_line(lines, number, m.end())
        if last is None:
            continue                            # a declaration, not a definition
        body = [text[m.end():]] + lines[number:last]
        call = re.compile(rf"\b{re.escape(m[1])}\s*\(")
        calls = [number + k for k, line in enumerate(body) if call.search(_strip_parameters(line, k))]
        if calls:
            found.append(Recursion(m[1], number, last, calls))
    return found


def enclosing(source: str, first: int, last: int) -> Recursion | None:
    """The recursive function whose definition holds lines first..last, if any."""
    return next((r for r in recursive_functions(source) if r.holds(first, last)), None)


def named(source: str, name: str) -> Recursion | None:
    return next((r for r in recursive_functions(source) if r.name == name), None)


def _closing_line(lines, start, column):
    """The line of the brace that closes the body opened after `column` of line `start`, or None
    when a ';' ends the declaration first."""
    depth, opened = 0, False
    for number in range(start, len(lines) + 1):
        text = lines[number - 1].split("//")[0][column if number == start else 0:]
        for ch in text:
            if ch == ";" and not opened:
                return None
            if ch == "{":
                depth, opened = depth + 1, True
            elif ch == "}":
                depth -= 1
                if opened and depth == 0:
                    return number
    return None


def _strip_parameters(line, k):
    """The definition's own line without its parameter list (the name there is not a call)."""
    if k:
        return line.split("//")[0]
    return line.split("{", 1)[1] if "{" in line else ""

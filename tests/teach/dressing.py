"""Cosmetic copies of a course kernel, as a student who hands one in would dress it (issue 32).

    dressed("tile", "tile<float, 32, 8, 1>", "transpose_32x8")             # every edit at once
    dressed("tile", "tile<float, 32, 8, 1>", "transpose_32x8", "renamed")  # one edit

The kernel's file from kernels/ (its course headers pasted in, so no ``#include`` of the course's
files gives it away), the kernel renamed to the exercise's, and the edits: ``constants`` (the
template's parameters written in as the instance's values: a plain kernel), ``comments`` (dropped),
``semicolons`` (an extra ``;`` after every statement of the kernel), ``renamed`` (every local
variable and parameter of the kernel), ``reordered`` (two adjacent independent statements of the
kernel swapped). Each edit leaves what NVRTC makes of the kernel as it is. Test helper only.
"""
from __future__ import annotations

import re

from course_lib import paths, transposes
from course_lib.compile import source

EDITS = ("constants", "comments", "semicolons", "renamed", "reordered")
_TYPES = r"(?:const\s+)?(?:unsigned\s+(?:short|char|int|long)|int|unsigned|size_t|float|double|bool|auto|char|short|" \
         r"long|float2|float4|uint2|uint4|int2|int4|T|W|V|Word|C)"
_DECLARED = re.compile(_TYPES + r"\s*[*&]?\s*(?:__restrict__\s+)?([a-z_]\w*)\s*(?=[=;\[,)])")
_KEYWORDS = set("int unsigned short char long float double bool auto const size_t sizeof return if else for while "
                "threadIdx blockIdx blockDim gridDim".split())
_MANY = re.compile(r",\s*[A-Za-z_]\w*\s*=")          # int a = 1, b = 2; declares two
_SIMPLE = re.compile(r"^\s*(?:" + _TYPES + r"\s+)?([A-Za-z_]\w*)\s*=[^;{}]*;\s*(?://.*)?$")


def _pasted(text: str) -> str:
    """`text` with each #include "x" of a course header replaced by the header's text (recursively)."""
    def paste(m):
        p = paths.KERNELS / m[1]
        return _pasted(p.read_text()) if p.is_file() else m[0]
    return re.sub(r'^[ \t]*#[ \t]*include[ \t]*"([^"]+)"[^\n]*$', paste, text, flags=re.M)


def _args(instance: str) -> list[str]:
    inner = instance[instance.index("<") + 1:instance.rindex(">")]
    out, depth, cur = [], 0, ""
    for ch in inner:
        depth += ch == "<"
        depth -= ch == ">"
        if ch == "," and not depth:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    return out + [cur.strip()]


_KERNEL = r"template\s*<([^{;]*?)>\s*__global__\s+void\s+(?:__launch_bounds__\s*\([^)]*\)\s*)?"


def _others_dropped(text: str, name: str) -> str:
    """`text` without its template kernels other than `name` (a student pastes the one they need)."""
    for other in re.findall(_KERNEL + r"(\w+)\s*\(", text):
        if other[1] != name:
            start, _, end = _kernel_span(text, other[1])
            text = text[:start] + text[end:]
    return text


def _kernel_span(text: str, name: str) -> tuple[int, int, int]:
    """(start of its `template <...>` line, start of `__global__`, end of its body) of kernel `name`."""
    m = re.search(_KERNEL + name + r"\s*\(", text)
    assert m, f"no template kernel {name}"
    i = text.index("{", m.end())
    depth, j = 1, i + 1
    while depth:
        depth += {"{": 1, "}": -1}.get(text[j], 0)
        j += 1
    return m.start(), text.index("__global__", m.start()), j


def _tokens_replaced(code: str, names: dict) -> str:
    """`code` with each identifier in `names` (not a member after '.' or '->') replaced."""
    return re.sub(r"(?<![.\w])(?<!->)\b([A-Za-z_]\w*)\b", lambda m: names.get(m[1], m[1]), code)


def _independent(a: str, line_a: str, b: str, line_b: str) -> bool:
    """Two single assignments (`a = ...;` and `b = ...;`) that neither reads the other's variable."""
    if a == b or _MANY.search(line_a) or _MANY.search(line_b) or "(" in line_a.split("=")[0] + line_b.split("=")[0]:
        return False
    return not re.search(rf"\b{a}\b", line_b.split("=", 1)[1]) and not re.search(rf"\b{b}\b", line_a.split("=", 1)[1])


def _body_edit(kernel: str, edit: str) -> str:
    head, brace, body = kernel.partition("{")
    if edit == "semicolons":          # not before an `else`: `if (c) a;; else b;` does not compile
        lines = body.split("\n")
        nxt = [next((m.strip() for m in lines[i + 1:] if m.strip()), "") for i in range(len(lines))]
        body = "\n".join(re.sub(r";([ \t]*(?://.*)?)$", r";;\1", line) if not nxt[i].startswith("else") else line
                         for i, line in enumerate(lines))
        return head + brace + ";" + body
    if edit == "renamed":
        sig = head[head.index("("):]
        names = set(_DECLARED.findall(sig)) | set(_DECLARED.findall(body))
        names -= _KEYWORDS
        new = {n: f"my_{n}_" for n in names}
        return _tokens_replaced(head[:head.index("(")], {}) + _tokens_replaced(sig, new) + brace \
            + _tokens_replaced(body, new)
    if edit == "reordered":
        lines = body.split("\n")
        for i in range(len(lines) - 1):
            a, b = _SIMPLE.match(lines[i]), _SIMPLE.match(lines[i + 1])
            if a and b and _independent(a[1], lines[i], b[1], lines[i + 1]):
                lines[i], lines[i + 1] = lines[i + 1], lines[i]
                return head + brace + "\n".join(lines)
        raise AssertionError("no two adjacent independent statements to swap")
    return kernel


def dressed(key: str, instance: str, name: str, *edits: str) -> str:
    """The %%cuda cell's text: course kernel `key`'s file with `instance` as kernel `name`, edited."""
    edits = edits or EDITS
    spec = transposes.SPECS.get(key) or transposes.DEMOS[key]
    base = instance[:instance.index("<")]
    text = _others_dropped(_pasted((paths.KERNELS / spec.file).read_text()), base)
    if "comments" in edits:
        text = source.strip_comments(text)
    start, glob, end = _kernel_span(text, base)
    template = re.match(r"template\s*<([^{;]*?)>", text[start:glob], re.S)[1]
    params = [p.split()[-1] for p in template.split(",")]
    kernel = re.sub(rf"\b{base}\s*\(", f"{name}(", text[glob:end], count=1)
    if "constants" in edits:
        kernel = _tokens_replaced(kernel, dict(zip(params, _args(instance))))
        before = text[:start]
    else:
        before = text[:glob]
    for edit in ("reordered", "renamed", "semicolons"):
        if edit in edits:
            kernel = _body_edit(kernel, edit)
    cell = before + kernel + text[end:]
    if "constants" not in edits:            # the template instance the exercise's kernel is
        return f"%%cuda -i \"{name}={name}<{', '.join(_args(instance))}>\"\n" + cell
    return "%%cuda\n" + cell

"""Notebooks 07, 10 and 11: the course's fastest kernels read a few lines at a time, each memory
line annotated with what the simulator counted for it.

    from course_lib.lessons import walkthrough
    run = sim.run("vec64")
    walkthrough.excerpt(run, "Phase 1: all loads first", "__syncthreads();")   # those lines of fast.cu
    walkthrough.memory_lines(run)          # every memory line of the launch: width, requests, cost
    walkthrough.file_excerpt("pack.cuh", "void transpose4x4_b8", "}")   # a header's lines, as written

An excerpt is found by the text of its first and last line, not by line numbers, so a notebook
keeps pointing at the right lines when a kernel file changes; a marker that is missing, or that
matches more than one line, is an error that names it. This module only selects and tabulates:
the counts are the simulator's (``SimRun.instructions``), the annotated source is
``course_lib.draw.listing``.
"""
from __future__ import annotations

import html

from .. import paths
from ..notebook.draw import HTMLText, listing
from .measured import _table

KERNELS = paths.KERNELS


def _sim(run):
    return getattr(run, "sim", run)          # a backend Result or a SimRun


def find(run, text: str, after: int = 1) -> int:
    """The one line (1-based) at or after line `after` of the kernel's file that contains `text`."""
    src = _sim(run).source_lines
    hits = [n for n in range(after, len(src) + 1) if text in src[n - 1]]
    if not hits:
        raise ValueError(f"no line containing {text!r} (from line {after} on) in the kernel's source")
    if len(hits) > 1 and after == 1:
        raise ValueError(f"{text!r} is on {len(hits)} lines ({', '.join(map(str, hits[:6]))}); "
                         "give a longer marker, or the line to search from (after=)")
    return hits[0]


def excerpt(run, first: str, last: str | None = None, *, after: str | None = None) -> HTMLText:
    """The kernel's lines from the one containing `first` to the next one containing `last`
    (just that line when `last` is None), with the simulator's annotation on each memory line.
    `after`: look for `first` only past the line containing this (for text that repeats)."""
    a = find(run, first, after=find(run, after) + 1) if after else find(run, first)
    b = a if last is None else find(run, last, after=a)
    return listing(_sim(run), lines=(a, b))


def memory_rows(run) -> list[dict]:
    """The launch's memory instructions grouped by source line, space, op and width: dicts with
    line, code, space, op, width (bytes), n (PTX instructions), requests, sectors, wavefronts,
    conflicts — summed over the whole launch, so they add up to its metrics."""
    sim = _sim(run)
    groups: dict = {}
    for ins in sim.instructions:
        key = (ins["line"], ins["space"], ins["op"], ins["width"])
        g = groups.setdefault(key, dict(n=0, requests=0, sectors=0, wavefronts=0, conflicts=0))
        g["n"] += 1
        for k in ("requests", "sectors", "wavefronts", "conflicts"):
            g[k] += ins[k]
    src = sim.source_lines
    return [dict(line=line, code=src[line - 1].strip() if 0 < line <= len(src) else "?", space=space, op=op,
                 width=width, **g) for (line, space, op, width), g in sorted(groups.items())]


def memory_lines(run) -> HTMLText:
    """One row per source line that accesses memory: space, op, access width in bytes, PTX
    instructions, requests, and the cost per request (sectors for global, wavefronts and bank
    conflicts for shared) — the numbers the listing's annotations summarise."""
    cols = ["line", "source", "access", "PTX instr.", "requests", "cost per request"]
    body = []
    for r in memory_rows(run):
        req = max(r["requests"], 1)
        cost = (f"{r['sectors'] / req:.1f} sectors" if r["space"] == "global" else
                f"{r['wavefronts'] / req:.1f} wavefronts, {r['conflicts'] / req:.1f} conflicts")
        code = r["code"][:60] + ("…" if len(r["code"]) > 60 else "")
        body.append([str(r["line"]), code, f"{r['space']} {r['op']} {r['width']} B", str(r["n"]),
                     str(r["requests"]), cost])
    name = getattr(run, "name", None)
    return _table(f"every memory line of {name}" if name else "every memory line", cols, body).sourced(
        "simulated (H100 rules)")


def file_excerpt(name: str, first: str, last: str | None = None) -> HTMLText:
    """Lines of a file in kernels/ (e.g. a header the kernel includes, whose lines the simulator
    does not annotate) from the one containing `first` to the next one containing `last`."""
    src = (KERNELS / name).read_text().splitlines()
    starts = [n for n, line in enumerate(src, 1) if first in line]
    if len(starts) != 1:
        raise ValueError(f"{first!r} is on {len(starts)} lines of kernels/{name}; it must be on exactly one")
    a = starts[0]
    b = a if last is None else next((n for n in range(a, len(src) + 1) if last in src[n - 1]), None)
    if b is None:
        raise ValueError(f"no line containing {last!r} after line {a} of kernels/{name}")
    rows = [f"{n:4d}  {src[n - 1].rstrip()}" for n in range(a, b + 1)]
    text = f"kernels/{name}\n" + "\n".join(rows)
    return HTMLText(f"<p><code>kernels/{html.escape(name)}</code></p><pre style='font-size:12px;line-height:1.35'>"
                    + html.escape("\n".join(rows)) + "</pre>", text)

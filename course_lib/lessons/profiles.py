"""Notebooks 03-11: the profiler commands a student types on a GPU, and what they printed on an H100.

    from course_lib.lessons import profiles
    profiles.show("03")                 # every command of notebook 03 with the relevant H100 output
    profiles.show("04", "racecheck")    # only the sections whose description contains "racecheck"
    profiles.sections("10")             # the parsed sections: notebook, what, command, output, exit code

The commands and their raw output come from ``benchmarks/profile_lessons.py``, run on an H100,
which writes one file with one section per command::

    ### <notebook> | <what it shows>
    $ <the command>
    <its output>
    (exit N)

This module reads that file (``RESULTS``); it runs no profiler. It keeps the lines a student
needs — the program's own line, the kernel Nsight Compute profiled, its metric table,
compute-sanitizer's findings — drops ``==PROF==`` progress chatter, and adds what the course
reads off the counters: sectors per request where requests and sectors are both there, and the
effective bandwidth 2 x bytes / time where the launch's time is. A notebook whose commands are not
in the file (or an installation without the file) shows "H100 output: not recorded yet".
"""
from __future__ import annotations

import html
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .. import paths
from ..notebook.draw import HTMLText

RESULTS = paths.RESULTS / "h100_2026-11-24" / "lesson_profiles.txt"
DEVICE = "NVIDIA H100 80GB HBM3"
_ITEMSIZE = {"float32": 4, "float64": 8, "float16": 2, "uint8": 1}


@dataclass(frozen=True)
class Section:
    notebook: str
    what: str
    command: str
    output: str
    exit: int | None


def sections(notebook: str | None = None, path: Path = RESULTS) -> list[Section]:
    """The file's sections, in order; only those of `notebook` ("03") when given."""
    if not Path(path).exists():
        return []
    found = []
    for chunk in re.split(r"^### ", Path(path).read_text(), flags=re.M)[1:]:
        head, _, rest = chunk.partition("\n")
        nb, _, what = head.partition("|")
        lines = rest.rstrip("\n").split("\n")
        command = lines[0][2:] if lines and lines[0].startswith("$ ") else ""
        body = lines[1:] if command else lines
        code = None
        if body and re.fullmatch(r"\(exit -?\d+\)", body[-1].strip()):
            code = int(body[-1].strip()[6:-1])
            body = body[:-1]
        found.append(Section(nb.strip(), what.strip(), command, "\n".join(body).rstrip(), code))
    return [s for s in found if notebook is None or s.notebook == notebook]


def _metrics(output: str) -> dict:
    """{metric name: (value, unit)} from Nsight Compute's metric table."""
    out = {}
    for line in output.splitlines():
        m = re.match(r"\s+([a-z0-9_]+__[a-z0-9_.]+)\s+(.*?)\s*([\d,]+(?:\.\d+)?)\s*$", line)
        if m:
            out[m.group(1)] = (float(m.group(3).replace(",", "")), m.group(2).strip())
    return out


def derived(section: Section) -> list[str]:
    """What the course reads off the counters: sectors per request, and effective GB/s."""
    m, lines = _metrics(section.output), []
    for op in ("ld", "st"):
        req = m.get(f"l1tex__t_requests_pipe_lsu_mem_global_op_{op}.sum")
        sec = m.get(f"l1tex__t_sectors_pipe_lsu_mem_global_op_{op}.sum")
        if req and sec and req[0]:
            lines.append(f"global {'loads' if op == 'ld' else 'stores'}: {sec[0] / req[0]:.2f} sectors per request")
    run = re.search(r"^\S+ (float32|float64|float16|uint8) (\d+)x(\d+):", section.output, flags=re.M)
    t = m.get("gpu__time_duration.sum")
    if run and t and t[0]:
        seconds = t[0] * {"s": 1, "ms": 1e-3, "us": 1e-6, "usecond": 1e-6, "ns": 1e-9}.get(t[1], np.nan)
        nbytes = int(run.group(2)) * int(run.group(3)) * _ITEMSIZE[run.group(1)]
        lines.append(f"effective bandwidth: 2 x {nbytes / 1e6:.1f} MB / {t[0]:g} {t[1]} = {2 * nbytes / seconds / 1e9:.0f} GB/s")
    return lines


def _relevant(output: str) -> str:
    keep = [ln for ln in output.splitlines()
            if not ln.startswith("==PROF==") and not re.match(r"\[\d+\] \S+@", ln) and ln.strip() != "========="]
    return "\n".join(keep)


def show(notebook: str, what: str | None = None, path: Path = RESULTS) -> HTMLText:
    """Each command of `notebook` as typed, then the relevant lines of what it printed on the H100
    and the numbers the course reads off them (`what`: only sections whose description contains it)."""
    picked = [s for s in sections(notebook, path) if what is None or what in s.what]
    if not picked:
        msg = f"H100 output: not recorded yet (no section for notebook {notebook} in benchmarks/results/" \
              f"{Path(path).parent.name}/{Path(path).name})"
        return HTMLText(f"<p><i>{html.escape(msg)}</i></p>", msg)
    source = f"benchmarks/results/{Path(path).parent.name}/{Path(path).name}"
    texts, blocks = [], []
    for s in picked:
        extra = derived(s)
        text = (f"# {s.what}\n$ {s.command}\n\n{DEVICE} output ({source}):\n{_relevant(s.output)}"
                + ("".join(f"\n=> {x}" for x in extra)))
        texts.append(text)
        blocks.append(f"<p><b>{html.escape(s.what)}</b></p><pre style='font-size:11px;white-space:pre-wrap'>"
                      f"$ {html.escape(s.command)}</pre><p style='margin:0'>{html.escape(DEVICE)} output "
                      f"(<code>{html.escape(source)}</code>):</p><pre style='font-size:11px'>"
                      f"{html.escape(_relevant(s.output))}</pre>"
                      + "".join(f"<p style='margin:0'><b>&rArr; {html.escape(x)}</b></p>" for x in extra))
    return HTMLText("".join(blocks), "\n\n".join(texts))

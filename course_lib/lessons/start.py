"""Notebook 00 (start here): why the simulator's counts can be trusted.

    from course_lib.lessons import start
    start.ncu_summary()                  # how many launches agreed with Nsight Compute on an H100
    start.against_ncu(sim, ["naive_row", "tile", "padded"])   # the same launches re-simulated now

The comparison file is the latest full run of benchmarks/ncu_compare.py on an H100 that the README
quotes (benchmarks/results/h100_2026-11-26_final/c_ncu.md: eight memory metrics per launch, Nsight Compute
vs the simulator; the README's results section tells the history of the runs). This module reads it
and re-runs a few of its launches in the simulator; it runs nothing on a GPU.
"""
from __future__ import annotations

import html
from pathlib import Path

from .. import paths
from ..notebook.draw import HTMLText
from ..sim.results.metrics import METRIC_NAMES

RESULTS = paths.RESULTS / "h100_2026-11-26_final" / "c_ncu.md"
COLUMNS = ["gld.req", "gst.req", "gld.sect", "gst.sect", "sld.wf", "sst.wf", "sld.conf", "sst.conf"]
KEYS = [("global", "ld", "requests"), ("global", "st", "requests"), ("global", "ld", "sectors"),
        ("global", "st", "sectors"), ("shared", "ld", "wavefronts"), ("shared", "st", "wavefronts"),
        ("shared", "ld", "conflicts"), ("shared", "st", "conflicts")]


def ncu_rows(path: Path = RESULTS) -> dict:
    """{launch name: (8 ints as Nsight Compute measured them, 'yes'/'no')} from the results file
    (a cell where the two disagree reads '**sim vs ncu**': the ncu side is kept)."""
    rows = {}
    if not path.exists():
        return rows
    for line in path.read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 10 and cells[1].isdigit():
            rows[cells[0]] = (tuple(int(c.strip("*").split(" vs ")[-1]) for c in cells[1:9]), cells[9].lower())
    return rows


def ncu_summary(path: Path = RESULTS) -> str:
    rows = ncu_rows(path)
    if not rows:
        return (f"The comparison file (benchmarks/results/{path.parent.name}/{path.name}) is not in this "
                "installation; it lives in the course repository.")
    agree = sum(ok == "yes" for _, ok in rows.values())
    probes = sum(name.startswith(("global_", "shared_")) for name in rows)
    fused = sum(name.startswith("fused ") for name in rows)
    kernels = len(rows) - probes - fused
    extra = f", {fused} launches whose accesses ptxas fuses" if fused else ""
    timing = [name for name, (_, ok) in rows.items() if ok.startswith("timing")]
    others = [name for name, (_, ok) in rows.items() if ok not in ("yes",) and name not in timing]
    differ = (f" {', '.join(timing)}: ncu counts more shared wavefronts where TMA stores meet other blocks' "
              "shared accesses on the same SM, a number that varies launch to launch; the simulator's result "
              "notes it." if timing else "") + (f" Differ: {', '.join(others)}." if others else "")
    return (f"Nsight Compute on an NVIDIA H100 vs the simulator: {agree} of {len(rows)} launches agree on all "
            f"{len(COLUMNS)} memory metrics ({kernels} course-kernel launches, {probes} access-pattern probes"
            f"{extra}; benchmarks/results/{path.parent.name}/{path.name}).{differ}")


def against_ncu(sim, keys=("copy", "naive_row", "tile", "padded"), shape=(256, 256), path: Path = RESULTS) -> HTMLText:
    """Re-simulate course-kernel launches from the comparison file and show both rows of numbers."""
    rows = ncu_rows(path)
    head = ["launch", "source", *COLUMNS]
    table = []
    for key in keys:
        name = f"{key} float32 {shape[0]}x{shape[1]}"
        m = sim.run(key, shape=shape).sim.metrics
        mine = tuple(m[METRIC_NAMES[k]] for k in KEYS)
        if name in rows:
            table.append([name, "Nsight Compute (H100)", *map(str, rows[name][0])])
        table.append([name if name not in rows else "", "simulator, just now", *map(str, mine)])
        if name in rows:
            table.append(["", "same?", *("yes" if a == b else "NO" for a, b in zip(rows[name][0], mine))])
    widths = [max(len(h), *(len(r[i]) for r in table)) for i, h in enumerate(head)]
    text = "\n".join("  ".join(v.ljust(w) if i < 2 else v.rjust(w) for i, (v, w) in enumerate(zip(r, widths)))
                     for r in [head] + table)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(v)}</td>" for v in r) + "</tr>" for r in table)
    return HTMLText("<table><thead><tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in head)
                    + f"</tr></thead><tbody>{body}</tbody></table>", text).sourced(
        f"Nsight Compute's rows measured on an H100 ({path.name}); the simulator's rows simulated (H100 rules) just now")

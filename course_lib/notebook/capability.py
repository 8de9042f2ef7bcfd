"""What the capability table says, for README and the banner: which GPU runs which notebook.

    capability.stored()            # the table `python -m course_lib capability --write` stored
    capability.markdown()          # README's "Which GPU runs what"
    capability.banner_line(75)     # 'sm_75 (Turing: T4, RTX 20): notebooks 00-11 run entirely on this GPU; ...'

The table is measured by course_lib.lessons.capability (every course kernel and ``%%cuda`` cell
compiled for every architecture) and held to the compiler by tests/lessons/test_capability.py.
This module only reads and words it.
"""
from __future__ import annotations

import json
from pathlib import Path

from ..compile import archs

STORED = Path(__file__).with_name("capability.json")


def stored() -> dict:
    return json.loads(STORED.read_text())


def markdown(table: dict | None = None) -> str:
    """README's table: each notebook, the oldest GPU that runs all of it, and what newer GPUs add."""
    table = table or stored()
    lines = ["| notebook | the oldest GPU that runs all of it | what needs a newer one |", "|---|---|---|"]
    for stem, row in table["notebooks"].items():
        newer = "; ".join(f"`{k}` (sm_{table['kernels'][k]['sm'] if k in table['kernels'] else '?'})"
                          for k in row["needs_newer"] if not k.startswith("cell")) or "—"
        cells = [k for k in row["needs_newer"] if k.startswith("cell")]
        if cells:
            newer = (newer + "; " if newer != "—" else "") + f"{len(cells)} `%%cuda` cell(s)"
        lines.append(f"| {stem[:2]} | {archs.describe(row['sm'])} | {newer} |")
    return "\n".join(lines)


def banner_line(sm: int, table: dict | None = None) -> str:
    """What this GPU runs: the notebooks it runs entirely, and which need a newer one (the simulator runs those cells)."""
    table = table or stored()
    here = [s[:2] for s, r in table["notebooks"].items() if r["sm"] <= sm]
    newer = {s[:2]: r for s, r in table["notebooks"].items() if r["sm"] > sm}
    text = f"{archs.describe(sm)}: notebooks {_ranges(here)} run entirely on this GPU"
    if newer:
        text += "; in " + ", ".join(f"{n} (sm_{r['sm']})" for n, r in newer.items()) + \
            " the cells that need a newer GPU run on the simulator, and say so"
    return text


def _ranges(numbers) -> str:
    nums, out = sorted(int(n) for n in numbers), []
    for n in nums:
        if out and n == out[-1][1] + 1:
            out[-1][1] = n
        else:
            out.append([n, n])
    return ", ".join(f"{a:02d}" if a == b else f"{a:02d}-{b:02d}" for a, b in out) or "none"

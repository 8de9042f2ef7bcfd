"""What the five-round GPU runs measured, and the rule for calling one kernel faster than another.

    from course_lib.lessons import rounds
    run = rounds.load()                                    # h100_2026-11-26/rounds_prose.json
    rounds.value(run, "float32", (8192, 8192), "padded")   # Spread(median, low, high) of a copy
    rounds.verdict(run, "float64", (8192, 8192), "padded_32x16", "warp")   # "faster" / "slower" / "within noise"
    rounds.table(run, ["copy", "padded"], dtypes=["float32"], sizes=[(8192, 8192)])   # median [min-max]
    rounds.leaders(run)                                    # capstone: best course kernel against the libraries
    rounds.latency_table()                                 # h100_2026-11-26/latency.json
    rounds.blocks_table()                                  # h100_2026-11-26/rounds_blocks.json

benchmarks/rounds.py measures every case several times (ROUNDS), each time as a fraction of that
round's ``cudaMemcpy`` of the same bytes, and keeps median, min and max; benchmarks/latency.py does
the same for pointer-chase latencies. Kernels a percent apart trade places between runs, so the
course says one is faster only when the gap between the medians is larger than either one's spread
(max - min over the rounds), and "within noise" otherwise (:func:`verdict`). Every table names its
run: GPU, date, command and file. A missing file gives a table that says so, never an error (an
installed wheel has no benchmarks/). This module reads files; it times nothing.
"""
from __future__ import annotations

import html
import json
import re
from dataclasses import dataclass

from .. import paths
from ..notebook.draw import HTMLText
from .measured import _table

PROSE = "h100_2026-11-26/rounds_prose.json"
BLOCKS = "h100_2026-11-26/rounds_blocks.json"
LATENCY = "h100_2026-11-26/latency.json"
SMALL = "h100_2026-11-27_small/rounds_small_final.json"   # 1000 x 1030 bytes and halves: pieces against torch.compile


@dataclass(frozen=True)
class Spread:
    median: float
    low: float
    high: float

    @property
    def width(self) -> float:
        return self.high - self.low

    def __str__(self):
        return f"{self.median:.3f} [{self.low:.3f}-{self.high:.3f}]"


def load(name: str = PROSE) -> dict:
    """A JSON file of benchmarks/rounds.py or latency.py, by its path under benchmarks/results, with
    ``path``; ``missing`` when this installation does not have it."""
    try:
        data = json.loads((paths.RESULTS / name).read_text())
    except (OSError, ValueError):
        return {"meta": {}, "cases": [], "path": f"benchmarks/results/{name}", "missing": True}
    data["path"] = f"benchmarks/results/{name}"
    return data


def named(run: dict) -> str:
    """The run in words: GPU, date, the command (its --out folder as DIR), rounds and file."""
    meta = run.get("meta", {})
    command = re.sub(r"--out \S+", "--out DIR", meta.get("command", "?"))
    rounds = f", {meta['rounds']} rounds" if "rounds" in meta else ""
    return f"measured on {meta.get('device', '?')}, {meta.get('date', '?')[:10]}, `{command}`{rounds} ({run['path']})"


def _missing(run: dict) -> HTMLText:
    msg = f"no measurements found ({run['path']} is missing in this installation)"
    return HTMLText(f"<p><i>{html.escape(msg)}</i></p>", msg)


def case(run: dict, dtype: str, size) -> dict | None:
    rows, cols = size
    return next((c for c in run.get("cases", []) if c["dtype"] == dtype and (c["rows"], c["cols"]) == (rows, cols)),
                None)


def value(run: dict, dtype: str, size, name: str, unit: str = "ratio") -> Spread | None:
    """A contestant's median and range over the rounds (`unit`: ratio, gbps or ms); None if not run."""
    c = case(run, dtype, size)
    r = next((r for r in c["results"] if r["name"] == name and "skipped" not in r), None) if c else None
    if r is None:
        return None
    s = r[unit]
    return Spread(s["median"], s["min"], s["max"])


def compare(a: Spread, b: Spread) -> str:
    """'faster' (a ahead of b), 'slower', or 'within noise': ahead only when the gap between the
    medians exceeds both spreads."""
    gap = a.median - b.median
    if abs(gap) <= max(a.width, b.width):
        return "within noise"
    return "faster" if gap > 0 else "slower"


def verdict(run: dict, dtype: str, size, a: str, b: str) -> str:
    """:func:`compare` of two contestants of one case, by their fraction of the round's memcpy."""
    va, vb = value(run, dtype, size, a), value(run, dtype, size, b)
    if va is None or vb is None:
        raise KeyError(f"{a if va is None else b} was not measured for {dtype} {size[0]}x{size[1]} in {run['path']}")
    return compare(va, vb)


def table(run: dict, kernels, dtypes=None, sizes=None, unit: str = "ratio") -> HTMLText:
    """Median [min-max] per kernel (rows) and dtype x size (columns); unit "gbps" shows effective GB/s,
    where "memcpy" (what every ratio divides by) can be a row like any kernel."""
    if unit not in ("ratio", "gbps"):
        raise ValueError(f"unit is 'ratio' or 'gbps', not {unit!r}")
    if run.get("missing"):
        return _missing(run)
    cases = [c for c in run["cases"] if (dtypes is None or c["dtype"] in dtypes)
             and (sizes is None or (c["rows"], c["cols"]) in [tuple(s) for s in sizes])]
    body = []
    for k in kernels:
        cells = []
        for c in cases:
            s = value(run, c["dtype"], (c["rows"], c["cols"]), k, unit)
            cells.append("-" if s is None else str(s) if unit == "ratio" else f"{s.median:.0f} [{s.low:.0f}-{s.high:.0f}]")
        body.append([k] + cells)
    what = "fraction of the same round's cudaMemcpy" if unit == "ratio" else "effective GB/s (2 x bytes / time)"
    return _table(f"{what}, median [min-max]: {named(run)}", ["kernel"] + [f"{c['dtype']} {c['rows']}x{c['cols']}"
                                                                          for c in cases], body)


def _ranked(c: dict, kind: str) -> list:
    ok = [r for r in c["results"] if r.get("kind") == kind and "skipped" not in r and r.get("correct")]
    return sorted(ok, key=lambda r: r["ratio"]["median"], reverse=True)


def leader_rows(run: dict, sizes=None, kernels=None) -> list[list[str]]:
    """Per dtype and size: [dtype, size, the best course kernel (and those within noise of it), its
    median [min-max] of a copy, the best library, its median [min-max], the verdict beyond the noise].
    `kernels`: only these course kernels take part (default: every transposing one)."""
    body = []
    for c in run["cases"]:
        if sizes is not None and (c["rows"], c["cols"]) not in [tuple(s) for s in sizes]:
            continue
        course, peers = [r for r in _ranked(c, "course") if kernels is None or r["name"] in kernels], _ranked(c, "peer")
        if not course or not peers:
            continue
        spread = [Spread(r["ratio"]["median"], r["ratio"]["min"], r["ratio"]["max"]) for r in (course[0], peers[0])]
        level = [r["name"] for r in course[1:] if compare(spread[0], Spread(r["ratio"]["median"], r["ratio"]["min"],
                                                                             r["ratio"]["max"])) == "within noise"]
        word = {"faster": "course ahead", "slower": "library ahead", "within noise": "within noise"}
        body.append([c["dtype"], f"{c['rows']}x{c['cols']}",
                     course[0]["name"] + (f" (= {', '.join(level[:3])}{', ...' if len(level) > 3 else ''})" if level else ""),
                     str(spread[0]), peers[0]["name"], str(spread[1]), word[compare(*spread)]])
    return body


def tally(rows) -> str:
    counts = {w: sum(row[-1] == w for row in rows) for w in ("course ahead", "within noise", "library ahead")}
    return (f"{len(rows)} cases: course ahead in {counts['course ahead']}, within noise in "
            f"{counts['within noise']}, library ahead in {counts['library ahead']}")


LEADER_COLUMNS = ["dtype", "size", "best course kernel", "/copy", "best library", "/copy", "verdict"]


def leaders(run: dict, sizes=None, kernels=None) -> HTMLText:
    """The capstone's table: :func:`leader_rows` with the run named, and the tally."""
    if run.get("missing"):
        return _missing(run)
    body = leader_rows(run, sizes, kernels)
    among = "" if kernels is None else f" (course kernels: {', '.join(kernels)})"
    t = _table(f"best course kernel{among} against the best library, fraction of a copy, median [min-max]; "
               f"(= ...): course kernels within noise of the best: {named(run)}", LEADER_COLUMNS, body)
    summary = tally(body)
    return HTMLText(t.html + f"<p>{html.escape(summary)}</p>", t.text + "\n" + summary)


def leaders_markdown(run: dict) -> str:
    """The same table in markdown, for the README (tests/lessons/test_readme_figures.py keeps them equal)."""
    rows = leader_rows(run)
    lines = ["| " + " | ".join(LEADER_COLUMNS) + " |", "|" + "---|" * len(LEADER_COLUMNS)]
    lines += ["| " + " | ".join(r[:2] + [f"`{r[2].split(' (')[0]}`" + (" (" + r[2].split(" (", 1)[1] if " (" in r[2] else "")]
                                + r[3:]) + " |" for r in rows]
    return "\n".join(lines) + "\n\n" + tally(rows) + "\n"


def latency_table(name: str = LATENCY) -> HTMLText:
    """benchmarks/latency.py's run: one load's latency idle and under each background kernel, the
    background's bandwidth, and the bytes it keeps in flight per SM (Little's law)."""
    run = load(name)
    if run.get("missing"):
        return _missing(run)
    body = [[f"idle, {k}", f"{u['median']:.0f} [{u['min']:.0f}-{u['max']:.0f}]", "-", "-"]
            for k, u in run["unloaded"].items()]
    for k, x in run["loaded"].items():
        f, ns = x["in_flight_kib_per_sm"], x["ns"]
        body.append([f"under {k}", f"{ns['median']:.0f} [{ns['min']:.0f}-{ns['max']:.0f}]",
                     f"{x['effective_gbps']:.0f}", f"{f['median']:.1f} [{f['min']:.1f}-{f['max']:.1f}]"])
    size = run["meta"].get("size", "?")
    return _table(f"one load's latency (ns, median [min-max]), background kernel on {size}x{size} floats: "
                  f"{named(run)}", ["chase", "ns per load", "background GB/s", "KiB in flight per SM"], body)


def in_flight(name: str = LATENCY) -> dict:
    """{background kernel: Spread of KiB in flight per SM} from benchmarks/latency.py's run."""
    run = load(name)
    return {k: Spread(x["in_flight_kib_per_sm"]["median"], x["in_flight_kib_per_sm"]["min"],
                      x["in_flight_kib_per_sm"]["max"]) for k, x in run.get("loaded", {}).items()}


BLOCK_SHAPES = [(32, 32), (32, 16), (32, 8), (16, 16), (16, 8), (8, 8)]


def blocks_table(size=(8192, 8192), name: str = BLOCKS) -> HTMLText:
    """CUDA_Freshman's block-size experiment, measured: `rect` (one element per thread, remapped
    read-out) with PAD 0, 1, 2 and `unrolled` (two tiles per block, PAD 2) for each block shape."""
    run = load(name)
    if run.get("missing"):
        return _missing(run)
    labels = {"rect PAD=0": "rect[BX={};BY={};PAD=0]", "rect PAD=1": "rect[BX={};BY={};PAD=1]",
              "rect PAD=2": "rect[BX={};BY={};PAD=2]", "unrolled PAD=2": "unrolled[BX={};BY={};UNROLL=2;PAD=2]"}
    body = []
    for bx, by in BLOCK_SHAPES:
        cells = [value(run, "float32", size, lab.format(bx, by)) for lab in labels.values()]
        body.append([f"{bx}x{by}", str(bx * by)] + ["-" if s is None else str(s) for s in cells])
    return _table(f"float32 {size[0]}x{size[1]}, fraction of a copy, median [min-max]: {named(run)}",
                  ["block", "threads"] + list(labels), body)


def block_rows_table(size=(8192, 8192), name: str = BLOCKS) -> HTMLText:
    """The padded tile (PAD 1) for every BLOCK_ROWS, TILE 32 and 16: notebook 06's sweep, measured."""
    run = load(name)
    if run.get("missing"):
        return _missing(run)
    body = []
    for rows in (1, 2, 4, 8, 16, 32):
        cells = [value(run, "float32", size, f"tile[TILE={t};BLOCK_ROWS={rows};PAD=1]") for t in (32, 16)]
        body.append([str(rows)] + ["-" if s is None else str(s) for s in cells])
    return _table(f"padded tile, float32 {size[0]}x{size[1]}, fraction of a copy, median [min-max]: {named(run)}",
                  ["BLOCK_ROWS", "TILE 32", "TILE 16"], body)


def bars(run: dict, kernels, dtype: str = "float32", size=(8192, 8192)):
    """The medians of `kernels` in GB/s as bars, against the run's memcpy of the same case."""
    from ..notebook import draw
    got = {k: value(run, dtype, size, k, "gbps") for k in kernels}
    memcpy = value(run, dtype, size, "memcpy", "gbps")
    meta = run.get("meta", {})
    return draw.bandwidth({k: s.median for k, s in got.items() if s is not None}, measured=True,
                          ceiling=memcpy.median if memcpy else None, device=meta.get("device"),
                          title=f"{dtype} {size[0]}x{size[1]}: median of {meta.get('rounds', '?')} rounds, GB/s<br>"
                                f"<sup>measured on {meta.get('device', '?')}, {meta.get('date', '?')[:10]} "
                                f"({run['path']})</sup>")

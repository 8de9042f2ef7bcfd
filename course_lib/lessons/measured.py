"""What GPU runs measured, read from benchmarks/results/ (notebooks 06-11 quote it, never retype it).

    from course_lib.lessons import measured
    first = measured.first_bench()          # bench_h100_first.txt: {(kernel, dtype): Row}
    first[("padded_32x8", "float32")].vs_copy       # 0.94
    measured.table(first, ["padded", "padded_32x8"], "float32")   # text/HTML table with the source
    runs = measured.transpose_runs()         # every transpose.json benchmarks/transpose.py wrote
    run = measured.load("h100_2026-11-23/transpose.json")     # one run of benchmarks/transpose.py
    measured.ratio_table(run, ["padded_32x8", "warp"], dtypes=["float64"], sizes=[(8191, 8193)])
    measured.ratio_table(run, ["memcpy", "copy", "vec64"], unit="gbps")   # the ceiling in GB/s

Files are looked up in ``paths.RESULTS``: the checkout's ``benchmarks/results``, or the copy of
the quoted files an installed wheel ships (``course_lib/results``); a missing file gives empty
results, never an error. This module does not time anything (``course_lib.gpu`` does).
"""
from __future__ import annotations

import html
import json
import re
from dataclasses import dataclass
from pathlib import Path

from .. import paths
from ..notebook.draw import HTMLText

RESULTS = paths.RESULTS
FIRST = "bench_h100_first.txt"
FIRST_DATE = "2026-11-22"     # when the lead ran it (the file itself carries no date)


@dataclass(frozen=True)
class Row:
    kernel: str
    dtype: str
    ms: float
    gbps: float
    vs_copy: float
    vs_peak: float
    correct: bool


@dataclass(frozen=True)
class Bench:
    device: str
    shape: str
    date: str
    source: str
    rows: dict            # (kernel, dtype) -> Row

    def __getitem__(self, key):
        return self.rows[key]

    def __contains__(self, key):
        return key in self.rows

    def get(self, key, default=None):
        return self.rows.get(key, default)


def first_bench(path: Path | None = None) -> Bench:
    """The first H100 run (``python -m course_lib bench``), one row per kernel x dtype."""
    path = Path(path) if path else RESULTS / FIRST
    if not path.exists():
        return Bench("", "", "", str(path), {})
    text = path.read_text()
    head = re.search(r"GPU:\s*(.+?)\s*\(sm_", text)
    shape = re.search(r"(\d+x\d+),", text)
    rows = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 7 and parts[6] in ("correct", "WRONG"):
            try:
                ms, gbps, vc, vp = (float(x) for x in parts[2:6])
            except ValueError:
                continue
            rows[(parts[0], parts[1])] = Row(parts[0], parts[1], ms, gbps, vc, vp, parts[6] == "correct")
    return Bench(head.group(1) if head else "", shape.group(1) if shape else "", FIRST_DATE,
                 f"benchmarks/results/{path.name}", rows)


def table(bench: Bench, kernels, dtype: str = "float32", extra: dict | None = None) -> HTMLText:
    """Selected rows of a bench as a small table, with the device, size and file named.
    `extra`: {column title: {kernel: text}} appended on the right."""
    if not bench.rows:
        msg = f"no measurements found ({bench.source} is missing in this installation)"
        return HTMLText(f"<p><i>{html.escape(msg)}</i></p>", msg)
    cols = ["kernel", "ms", "GB/s", "vs copy", "vs peak"] + list(extra or {})
    body = []
    for k in kernels:
        r = bench.get((k, dtype))
        if r is None:
            continue
        body.append([k, f"{r.ms:.3f}", f"{r.gbps:.0f}", f"{r.vs_copy:.2f}", f"{r.vs_peak:.2f}"]
                    + [str(v.get(k, "")) for v in (extra or {}).values()])
    title = f"measured on {bench.device}, {bench.shape} {dtype}, {bench.date} ({bench.source})"
    return _table(title, cols, body)


def _table(title, cols, body) -> HTMLText:
    widths = [max(len(c), *(len(r[i]) for r in body)) if body else len(c) for i, c in enumerate(cols)]
    text = "\n".join([title] + ["  ".join(v.rjust(w) if i else v.ljust(w) for i, (v, w) in enumerate(zip(r, widths)))
                                for r in [cols] + body])
    head = "".join(f"<th>{html.escape(c)}</th>" for c in cols)
    rows = "".join("<tr>" + "".join(f"<td>{html.escape(v)}</td>" for v in r) + "</tr>" for r in body)
    return HTMLText(f"<p><b>{html.escape(title)}</b></p><table><thead><tr>{head}</tr></thead>"
                    f"<tbody>{rows}</tbody></table>", text)


def transpose_runs(root: Path | None = None) -> list[dict]:
    """Every ``transpose.json`` under benchmarks/results (benchmarks/transpose.py --out DIR),
    newest first; each is the script's JSON plus ``path``."""
    root = Path(root) if root else RESULTS
    runs = []
    for p in sorted(root.glob("**/transpose.json")) if root.exists() else []:
        try:
            data = json.loads(p.read_text())
        except (OSError, ValueError):
            continue
        # named as in the checkout, wherever an installed wheel keeps the file
        data["path"] = f"benchmarks/results/{p.relative_to(root).as_posix()}" if root == RESULTS else str(p)
        runs.append(data)
    return sorted(runs, key=lambda d: d.get("meta", {}).get("date", ""), reverse=True)


def load(name: str) -> dict:
    """One JSON file benchmarks/transpose.py wrote, by its path under benchmarks/results
    (an empty run when the file is missing in this installation)."""
    p = RESULTS / name
    try:
        data = json.loads(p.read_text())
    except (OSError, ValueError):
        return {"meta": {}, "cases": [], "path": f"benchmarks/results/{name}", "missing": True}
    data["path"] = f"benchmarks/results/{name}"
    return data


def ratio_table(run: dict, kernels, dtypes=None, sizes=None, unit: str = "ratio") -> HTMLText:
    """Fraction of the same-run memcpy for each kernel (rows) and dtype x size (columns) of a
    benchmarks/transpose.py run; kernels may be labels with parameters ("warp[WX=1;WY=8]"),
    sizes (rows, cols) pairs. unit="gbps" shows effective GB/s instead, and then "memcpy" (the
    ceiling every ratio divides by) can be a row like any kernel."""
    if unit not in ("ratio", "gbps"):
        raise ValueError(f"unit is 'ratio' or 'gbps', not {unit!r}")
    if run.get("missing"):
        msg = f"no measurements found ({run['path']} is missing in this installation)"
        return HTMLText(f"<p><i>{html.escape(msg)}</i></p>", msg)
    cases = [c for c in run["cases"] if (dtypes is None or c["dtype"] in dtypes)
             and (sizes is None or (c["rows"], c["cols"]) in [tuple(s) for s in sizes])]
    cols = ["kernel"] + [f"{c['dtype']} {c['rows']}x{c['cols']}" for c in cases]
    body = []
    for k in kernels:
        cells = []
        for c in cases:
            r = next((r for r in c["results"] if r["name"] == k and "skipped" not in r), None)
            value = "-" if r is None else f"{r['ratio']:.2f}" if unit == "ratio" else f"{r['gbps']:.0f}"
            cells.append(value + ("" if r is None or r["correct"] else " WRONG"))
        body.append([k] + cells)
    meta = run.get("meta", {})
    what = "fraction of a same-run device copy" if unit == "ratio" else "effective GB/s (2 x bytes / time)"
    title = f"{what}, measured on {meta.get('device', '?')}, {meta.get('date', '?')[:10]} ({run['path']})"
    return _table(title, cols, body)


def best_vs_peers(run: dict, sizes=None) -> HTMLText:
    """benchmarks/transpose.py's summary: per dtype and size, the best course kernel and each
    library, as fractions of the same-run memcpy (`sizes`: only these (rows, cols) pairs)."""
    cases = [c for c in run.get("cases", []) if sizes is None or (c["rows"], c["cols"]) in [tuple(s) for s in sizes]]
    peers = sorted({r["name"] for c in cases for r in c["results"] if r.get("kind") == "peer" and "skipped" not in r})
    cols = ["dtype", "size", "best course kernel", "/copy"] + peers
    body = []
    for c in cases:
        ok = [r for r in c["results"] if r.get("kind") == "course" and "skipped" not in r and r.get("correct")]
        if not ok:
            continue
        best = max(ok, key=lambda r: r["ratio"])
        peer = {r["name"]: r for r in c["results"] if r.get("kind") == "peer" and "skipped" not in r}
        body.append([c["dtype"], f"{c['rows']}x{c['cols']}", best["name"], f"{best['ratio']:.2f}"]
                    + [f"{peer[n]['ratio']:.2f}" if n in peer else "-" for n in peers])
    meta = run.get("meta", {})
    title = f"measured on {meta.get('device', '?')}, {meta.get('date', '?')} ({run.get('path', '')})"
    return _table(title, cols, body)


def by_dtype(bench: Bench, kernels, dtypes=("float32", "float64", "float16", "uint8")) -> HTMLText:
    """Fraction of the same-run device copy, one row per kernel, one column per dtype."""
    if not bench.rows:
        msg = f"no measurements found ({bench.source} is missing in this installation)"
        return HTMLText(f"<p><i>{html.escape(msg)}</i></p>", msg)
    body = [[k] + [f"{bench[(k, d)].vs_copy:.2f}" if (k, d) in bench else "-" for d in dtypes] for k in kernels]
    return _table(f"fraction of a device copy, measured on {bench.device}, {bench.shape}, {bench.date} "
                  f"({bench.source})", ["kernel", *dtypes], body)


def probe_table(name: str = "h100_2026-11-24/misaligned_probe.json", dtype: str = "f32",
                tile: str = "32x32/32x8", shape=(8191, 8193)) -> HTMLText:
    """benchmarks/misaligned_probe.py's experiment: one tiled kernel (and the copies) with the rows
    of `in` and of `out` aligned (A: padded to a multiple of 32 elements) or misaligned (M: the real
    matrix), as fractions of a same-run device copy."""
    p = RESULTS / name
    try:
        data = json.loads(p.read_text())
    except (OSError, ValueError):
        msg = f"no measurements found (benchmarks/results/{name} is missing in this installation)"
        return HTMLText(f"<p><i>{html.escape(msg)}</i></p>", msg)
    words = {"M": "misaligned", "A": "aligned"}
    what = {0: "transpose", 1: "copy through the tile", 2: "plain copy"}
    body = []
    for r in data["results"]:
        if r["dtype"] != dtype or tuple(r["shape"]) != tuple(shape) or f" {tile} " not in r["label"] + " ":
            continue
        body.append([what[r["cfg"][5]], words[r["pitches"][0]], words[r["pitches"][1]], f"{r['frac_copy']:.2f}"])
    meta = data["meta"]
    title = (f"{dtype} {shape[0]}x{shape[1]}, {tile} tile and block, fraction of a same-run device copy, measured on "
             f"{meta['device']}, {meta['date'][:10]} (benchmarks/results/{name})")
    return _table(title, ["kernel", "rows of in", "rows of out", "/copy"], body)

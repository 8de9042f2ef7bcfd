"""The notebooks' prose against the GPU runs it quotes (helper of test_prose_figures.py).

    registry = load_registry()                          # prose_figures.toml
    problems = check(notebook_cells, registry, "06")    # [] when every figure is current

prose_figures.toml has one ``[[cell]]`` table per markdown cell that quotes a GPU run: the notebook,
a piece of text only that cell holds (``cell``), the results file (``source``, under
benchmarks/results) and its ``figures``, each ``[as the prose writes it, where in the file]`` (a
third element overrides the source). The check finds each figure in the cell, reads the value from
the file, rounds it to the figure's decimals and compares: a result that changes leaves a stale
sentence, and the test fails naming both. The cell must name the run's date. It also parses every
cell with a registered figure, and every cell that names a run's date, for figure-like numbers
(decimals, grouped thousands, numbers with a unit: ns, µs, GB/s, KiB, %) that no entry explains, so
a new or retyped number cannot slip in unchecked; numbers that are not from a GPU run (a seed's
figure, a count of the simulator's, arithmetic) are listed in the table's ``not_measured``.

Where in the file:

- benchmarks/rounds.py and benchmarks/transpose.py JSON (they have ``cases``):
  ``"float32 8192x8192 padded"`` (the median fraction of the round's memcpy; a one-run file's ratio),
  optionally followed by a field and a statistic: ``"... padded gbps"``, ``"... padded ratio.max"``;
- any other JSON: a path of keys and list selectors, ``"loaded.copy.in_flight_kib_per_sm.median"``,
  ``"results[label=f32 tr 32x32/32x8 AM 8191x8193].frac_copy"``;
- lesson_profiles.txt: ``"06 | 32 x 8 threads | gpu__time_duration.sum"`` (notebook, a piece of the
  section's title, Nsight Compute's metric, or ``/a regular expression/`` whose first group is read
  from the printed text);
- any text file (a run's README): ``"/a regular expression/"``, its first group;
- any of those, or numbers, combined left to right with `` / ``, `` * `` and `` - ``.
"""
from __future__ import annotations

import json
import re
import sys
from functools import lru_cache
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

REPO = Path(__file__).resolve().parents[2]
RESULTS = REPO / "benchmarks" / "results"
REGISTRY = Path(__file__).with_name("prose_figures.toml")
UNIT = r"(?:\s?(?:ns|µs|us|ms|GB/s|KiB|KB|MB|%))"
FIGURE_LIKE = re.compile(r"(?<![\w./])(\d{1,3}(?:[ \u202f]\d{3})+|\d+\.\d+|\d+(?=" + UNIT + r"))(?![\w])")
RUN_DATE = re.compile(r"2026-\d\d-\d\d")
QUOTES_A_RUN = re.compile(r"2026-\d\d-\d\d|H100|[Mm]easured|Nsight Compute|of (?:a|the) (?:device )?copy")


def load_registry(path: Path = REGISTRY) -> list[dict]:
    """The [[cell]] tables of prose_figures.toml, each figure as a dict (text, value, source)."""
    with open(path, "rb") as f:
        cells = tomllib.load(f).get("cell", [])
    for c in cells:
        c["figures"] = [dict(text=f[0], value=f[1], source=f[2] if len(f) > 2 else c["source"])
                        for f in c.get("figures", [])]
    return cells


def number(text: str) -> tuple[float, int]:
    """'16 864 200' -> (16864200.0, 0); '0.55' -> (0.55, 2)."""
    plain = re.sub(r"[ \u202f,]", "", text)
    return float(plain), len(plain.partition(".")[2])


def matches(text: str, value: float) -> bool:
    """Does the figure as written equal `value` rounded to the figure's decimals?"""
    written, decimals = number(text)
    return f"{value:.{decimals}f}" == f"{written:.{decimals}f}"


# ---------------------------------------------------------------------------------- the sources

@lru_cache(maxsize=None)
def _json(source: str):
    return json.loads((RESULTS / source).read_text())


def _case_value(data: dict, query: str) -> float:
    m = re.fullmatch(r"(\w+) (\d+)x(\d+) (\S+)(?: (\w+)(?:\.(\w+))?)?", query)
    if not m:
        raise ValueError(f"cannot read {query!r}: expected 'DTYPE ROWSxCOLS NAME [FIELD[.STAT]]'")
    dtype, rows, cols, name, field, stat = m.groups()
    case = next((c for c in data["cases"] if c["dtype"] == dtype and (c["rows"], c["cols"]) == (int(rows), int(cols))),
                None)
    if case is None:
        raise KeyError(f"no case {dtype} {rows}x{cols}")
    res = next((r for r in case["results"] if r["name"] == name and "skipped" not in r), None)
    if res is None:
        raise KeyError(f"{name} was not measured for {dtype} {rows}x{cols}")
    v = res[field or "ratio"]
    return v[stat or "median"] if isinstance(v, dict) else v


def _path_value(data, query: str) -> float:
    for key, sel in re.findall(r"([^.\[\]]+)(?:\[([^\]]*)\])?", query):
        data = data[key]
        if sel:
            want = dict(part.split("=", 1) for part in sel.split(","))
            data = next(x for x in data if all(str(x.get(k)) == v for k, v in want.items()))
    return float(data)


def _profile_value(source: str, query: str) -> float:
    nb, what, metric = (part.strip() for part in query.split("|"))
    sys.path.insert(0, str(REPO))
    from course_lib.lessons import profiles
    picked = [s for s in profiles.sections(nb, RESULTS / source) if what in s.what]
    if len(picked) != 1:
        raise KeyError(f"{len(picked)} sections of notebook {nb} match {what!r} in {source}")
    if metric.startswith("/") and metric.endswith("/"):          # a number in the printed text
        return float(re.search(metric[1:-1], picked[0].output).group(1).replace(",", ""))
    return profiles._metrics(picked[0].output)[metric][0]


def _one(source: str, query: str) -> float:
    if re.fullmatch(r"-?\d+(\.\d+)?", query):
        return float(query)
    if query.startswith("/") and query.endswith("/"):            # a number in a text file (a run's README)
        found = re.search(query[1:-1], (RESULTS / source).read_text())
        if not found:
            raise KeyError(f"{query} matches nothing")
        return float(found.group(1).replace(",", ""))
    if source.endswith(".txt"):
        return _profile_value(source, query)
    data = _json(source)
    return _case_value(data, query) if "cases" in data and re.match(r"\w+ \d+x\d+ ", query) else _path_value(data, query)


def lookup(source: str, value: str) -> float:
    """The value an entry's `value` names in `source`, combining parts left to right."""
    parts = re.split(r" ([/*\-]) ", value)
    result = _one(source, parts[0])
    for op, part in zip(parts[1::2], parts[2::2]):
        x = _one(source, part)
        result = result / x if op == "/" else result * x if op == "*" else result - x
    return result


def run_date(source: str) -> str | None:
    """The date a results file names for its run (its meta, or its folder's name)."""
    try:
        return _json(source)["meta"]["date"][:10] if source.endswith(".json") else None
    except (KeyError, OSError, ValueError):
        return None


# ---------------------------------------------------------------------------------- the check

def _cell(cells, anchor: str):
    hits = [i for i, c in enumerate(cells) if c["cell_type"] == "markdown" and anchor in "".join(c["source"])]
    return hits


def check(cells, registry: list[dict], notebook: str) -> list[str]:
    """Every problem of one notebook's prose against the results it quotes (cells: nbformat dicts)."""
    problems, explained = [], {}
    for entry in [e for e in registry if e["notebook"] == notebook]:
        hits = _cell(cells, entry["cell"])
        if len(hits) != 1:
            problems.append(f"{notebook}: {len(hits)} markdown cells contain {entry['cell']!r} (need exactly one)")
            continue
        text = "".join(cells[hits[0]]["source"])
        explained.setdefault(hits[0], set()).update(number(t)[0] for t in entry.get("not_measured", []))
        for f in entry["figures"]:
            explained[hits[0]].add(number(f["text"])[0])
            problems += _figure_problems(f, text, f"{notebook}, cell {hits[0]} ({entry['cell']!r}), figure {f['text']!r}")
    scanned = set(explained) | {i for i, c in enumerate(cells)
                                if c["cell_type"] == "markdown" and QUOTES_A_RUN.search("".join(c["source"]))}
    for i in sorted(scanned):
        text = "".join(cells[i]["source"])
        for m in FIGURE_LIKE.finditer(text):
            if number(m.group(1))[0] not in explained.get(i, set()):
                problems.append(f"{notebook}, cell {i}: {m.group(1)!r} (in {text[max(0, m.start() - 30):m.end() + 20]!r}) "
                                "is neither a registered figure nor listed as not_measured in prose_figures.toml")
    return problems


def _figure_problems(f: dict, text: str, where: str) -> list[str]:
    if not re.search(r"(?<![\w.])" + re.escape(f["text"]) + r"(?![\w]|\.\d)", text):
        return [f"{where}: the cell does not say {f['text']!r} (edit the prose or prose_figures.toml)"]
    try:
        value = lookup(f["source"], f["value"])
    except (KeyError, ValueError, OSError, StopIteration) as err:
        return [f"{where}: cannot read {f['value']!r} from {f['source']}: {err!r}"]
    problems = []
    if not matches(f["text"], value):
        problems.append(f"{where}: stale — {f['source']} says {value:.6g} for {f['value']!r}")
    date = run_date(f["source"]) or next(iter(RUN_DATE.findall(f["source"])), None)
    if date and date not in text:
        problems.append(f"{where}: the cell quotes the {date} run ({f['source']}) without naming its date")
    return problems

"""``instructor report``: what a graded class got wrong, at a glance, from what grading stored.

    python -m course_lib instructor report --course COURSE [ASSIGNMENT...] [--out DIR] [--names pseudonyms]
    report.write(Path("course"), ["06_tiles"])        # {name: path} of what it wrote

Reads the verdict records nbgrader's autograde stored with each graded notebook (classbook) and writes,
in ``COURSE/reports/class_report/`` unless told otherwise: ``index.html`` (the page: report_page; open it
from JupyterLab's file browser in a new browser tab), ``plotly.min.js`` beside it (the page's charts, no
network needed), and the same numbers as CSV: ``exercises.csv`` (per exercise: students, passed, passed
at the first try, resubmitted, the variant that did worse), ``problems.csv`` (the problems ranked, with the
course's hint and an example line), ``counts.csv`` (each final submission's key counts, no names),
``variants.csv`` and ``leaderboard.csv`` (leaderboard: the exercises that rank, by exact counts). It runs
no kernel and needs no GPU; it writes only into its output folder.
"""
from __future__ import annotations

import csv
from pathlib import Path

from .. import folders
from . import class_summary, gpu_times, leaderboard, report_page
from .classbook import read

OUT = Path("reports") / "class_report"
FILES = ("exercises.csv", "problems.csv", "counts.csv", "variants.csv", "leaderboard.csv")


def _rows(summaries, boards) -> dict:
    """Each CSV's header and rows (the page's numbers, flat)."""
    ex = [["assignment", "exercise", "students", "passed", "passed_first_try", "resubmitted", "worse_variant"]]
    pr = [["assignment", "exercise", "rank", "problem", "kind", "hidden_shapes", "students", "students_first_try",
           "hint", "example_line", "example"]]
    co = [["assignment", "exercise", "count", "value", "passed"]]
    va = [["assignment", "exercise", "variant", "students", "passed"]]
    for s in summaries:
        ex.append([s.assignment, s.exercise, s.students, s.passed, s.passed_first, s.resubmitted, s.worse or ""])
        pr += [[s.assignment, s.exercise, i, p.label, p.kind, p.hidden, p.students, p.first, p.hint,
                p.line if p.line else "", p.example or ""] for i, p in enumerate(s.problems, 1)]
        for name, values in s.counts.items():     # sorted: no row order that follows a student
            co += [[s.assignment, s.exercise, name, v, ok] for v, ok in sorted(zip(values, s.counts_passed[name]))]
        va += [[s.assignment, s.exercise, v, n, ok] for v, n, ok in s.variants]
    lb = [["assignment", "exercise", "variant", "rank", "name", "sectors", "wavefronts", "instructions", "tile_elements",
           "sectors_per_1024", "wavefronts_per_1024", "instructions_per_1024", "submitted", "tied_on_counts",
           "gpu_time"]]
    for b in boards:
        for r in b.rows:
            per = r.per()
            lb.append([b.assignment, b.exercise, b.variant, r.rank, r.name, r.spend.sectors, r.spend.wavefronts,
                       r.spend.instructions, r.elements, per.get("sectors", ""), per.get("wavefronts", ""),
                       per.get("instructions", ""), r.submitted or "", r.tied, r.gpu])
    return dict(zip(FILES, (ex, pr, co, va, lb)))


def _plotly_js(target: Path) -> None:
    """plotly.js beside the page, once per plotly version (it is a few MB)."""
    import plotly
    from plotly.offline import get_plotlyjs
    stamp = target.with_suffix(".version")
    if target.exists() and stamp.exists() and stamp.read_text() == plotly.__version__:
        return
    target.write_text(get_plotlyjs(), encoding="utf-8")
    stamp.write_text(plotly.__version__)


def write(course, assignments=(), out=None, names: str = "pseudonyms", gpu_times_file=None,
          log=print) -> dict[str, Path]:
    """Write the report of `course`'s graded `assignments` (all when empty) into `out`; {file name: path}.
    FileNotFoundError for a folder that is no graded course, ValueError for bad options."""
    course = Path(course)
    book = read(course, assignments)
    missing = sorted(set(assignments) - set(book.assignments()))
    if missing:
        raise FileNotFoundError(f"{course / 'autograded'}: no graded notebook of {', '.join(missing)} holds the "
                                f"course's records (graded: {', '.join(book.assignments()) or 'none'})")
    out = Path(out) if out else course / OUT
    folders.writable("--out", out)
    out.mkdir(parents=True, exist_ok=True)
    summaries = class_summary.summaries(book)
    boards = leaderboard.boards(book, names, gpu_times.read(gpu_times_file))
    written = {}
    for name, rows in _rows(summaries, boards).items():
        with open(out / name, "w", newline="", encoding="utf-8") as f:
            csv.writer(f).writerows(rows)
        written[name] = out / name
    _plotly_js(out / "plotly.min.js")
    title = f"Class report: {', '.join(book.assignments()) or 'no graded assignment'}"
    (out / "index.html").write_text(report_page.page(book, summaries, boards, title, FILES), encoding="utf-8")
    written["index.html"] = out / "index.html"
    for s in summaries:
        top = s.problems[0].label if s.problems else "no problem"
        log(f"{s.assignment} / {s.exercise}: {s.passed} of {s.students} passed ({s.passed_first} at the first try); "
            f"most common problem: {top}")
    for b in boards:
        lead = f"{b.rows[0].name} ({b.rows[0].spend})" if b.rows else "nobody yet"
        log(f"leaderboard {b.exercise}{' ' + b.variant if b.variant else ''}: {len(b.rows)} ranked, first {lead}")
    log(f"wrote {out / 'index.html'} (open it in a new browser tab from JupyterLab's file browser) and "
        f"{', '.join(FILES)}")
    return written

"""The class report as one HTML page: per assignment and exercise, passes, problems, counts, variants;
then the leaderboards.

    report_page.page(book, summaries, boards, title)     # the page's HTML text

The page loads ``plotly.min.js`` from its own folder (the command writes it there: no network needed, as
on a hub without one) and holds everything else: tables with captions and column headers for every
number, each chart followed by its text alternative. Opened from JupyterLab's file browser ("Open in New
Browser Tab") the charts are drawn; in JupyterLab's own HTML viewer, which runs no script until trusted,
the tables and the charts' text alternatives show all the same. This module renders; it reads and writes
nothing.
"""
from __future__ import annotations

import html
import re

from . import report_figures
from .class_summary import DEFAULT_VARIANT

STYLE = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 1.5rem auto; max-width: 72rem;
       padding: 0 1rem; color: #1a1a1a; line-height: 1.45; }
h1 { font-size: 1.6rem; } h2 { font-size: 1.35rem; margin-top: 2.2rem; border-bottom: 2px solid #0072B2; }
h3 { font-size: 1.15rem; margin-top: 1.6rem; }
table { border-collapse: collapse; margin: 0.6rem 0 1rem; font-size: 0.92rem; }
caption { text-align: left; font-weight: 600; padding-bottom: 0.3rem; }
th, td { border: 1px solid #c8c8c8; padding: 0.3rem 0.55rem; vertical-align: top; text-align: left; }
th { background: #eef3f8; } td.n { text-align: right; font-variant-numeric: tabular-nums; }
code { font-family: ui-monospace, "SFMono-Regular", Menlo, monospace; font-size: 0.88rem; background: #f4f4f4;
       padding: 0 0.2rem; }
.note { color: #444; font-size: 0.92rem; } .ok { color: #00704f; } .bad { color: #a33f00; }
details.course-figure-text { margin: 0.3rem 0 1.2rem; font-size: 0.9rem; }
nav ul { columns: 2; }
"""


def _e(v) -> str:
    return html.escape(str(v), quote=True)


def _id(*parts) -> str:
    return re.sub(r"[^A-Za-z0-9_-]", "-", "-".join(map(str, parts)))


def _table(caption: str, header: list, rows: list, numeric=()) -> str:
    head = "".join(f'<th scope="col">{_e(h)}</th>' for h in header)
    body = "".join("<tr>" + "".join(f'<td class="n">{_e(v)}</td>' if i in numeric else f"<td>{v}</td>"
                                    for i, v in enumerate(r)) + "</tr>" for r in rows)
    return f"<table><caption>{_e(caption)}</caption><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _share(n: int, of: int) -> str:
    return f"{n} of {of} ({n / of:.0%})" if of else "0"


def _exercise(s) -> str:
    parts = [f'<h3 id="{_id(s.assignment, s.exercise)}">{_e(s.exercise)}</h3>',
             _table(f"{s.exercise}: final submissions and first tries", ["students", "passed (final)",
                    "passed at the first try", "resubmitted"],
                    [[s.students, _share(s.passed, s.students), _share(s.passed_first, s.students), s.resubmitted]],
                    numeric=(0, 1, 2, 3))]
    if s.problems:
        rows = [[i, _e(p.label), p.students, p.first, _e(p.hint),
                 (f"<code>{_e(p.example)}</code>" + (f" (line {p.line})" if p.line else "")) if p.example else "—"]
                for i, p in enumerate(s.problems, 1)]
        parts.append(_table(f"{s.exercise}: the problems that fired, most students first", ["#", "problem",
                            "students (final)", "students (first try)", "the course's hint",
                            "an example line (no name, no comment)"], rows, numeric=(0, 2, 3)))
    else:
        parts.append('<p class="ok">No problem fired in any final submission or first try.</p>')
    fig = report_figures.counts_figure(s)
    if fig is not None:
        parts.append(report_figures.html(fig, _id("counts", s.assignment, s.exercise)))
    if len(s.variants) > 1 or (s.variants and s.variants[0][0] != DEFAULT_VARIANT):
        rows = [[_e(v), n, _share(ok, n)] for v, n, ok in s.variants]
        worse = (f'<p>Did worse: <strong class="bad">{_e(s.worse)}</strong> (the lowest share passed).</p>'
                 if s.worse else '<p class="note">The variants passed in the same share.</p>')
        parts.append(_table(f"{s.exercise}: the variants", ["variant", "students", "passed"], rows, (1, 2)) + worse)
    return "\n".join(parts)


def _board(b) -> str:
    title = f"Leaderboard: {b.exercise} ({b.assignment})" + (f", variant {b.variant}" if b.variant else "")
    head = [f'<h3 id="{_id("board", b.assignment, b.exercise, b.variant)}">{_e(title)}</h3>',
            f'<p class="note">Ranked by what each passing kernel spends on the exercise\'s own shapes, counted '
            f"by the simulator (exact: the same on every machine and every run). The rule: {_e(b.rule)}. GPU "
            "times, where a class has them, only stand beside the rank.</p>"]
    if not b.rows:
        return "\n".join(head + [f"<p>No passing submission yet ({b.unranked} not passing).</p>"])
    timed = any(r.gpu for r in b.rows)
    header = ["rank", "name", "sectors", "wavefronts", "instructions", "per 1024 elements of the tiles the grid "
              "covers (sectors, wavefronts, instructions: as the budget)", "submitted"] + (
                  ["GPU time (not ranked)"] if timed else [])
    rows = []
    for r in b.rows:
        per = r.per()
        cells = [f"{r.rank}" + (" (the counts above it: submitted later)" if r.tied else ""), _e(r.name),
                 f"{r.spend.sectors:,}",
                 f"{r.spend.wavefronts:,}", f"{r.spend.instructions:,}",
                 ", ".join(f"{per[k]:g}" for k in ("sectors", "wavefronts", "instructions")) if per else "—",
                 _e(r.submitted or "—")] + ([_e(r.gpu or "not timed")] if timed else [])
        rows.append(cells)
    foot = f'<p class="note">{b.unranked} final submission(s) did not pass and are not ranked.</p>' if b.unranked else ""
    return "\n".join(head + [_table(title, header, rows, numeric=(2, 3, 4)), foot])


def _read_note(book) -> str:
    bits = [f"{book.notebooks} autograded notebook(s) read, {len(book.final)} exercise verdict(s) with records"]
    if book.refused:
        bits.append(f"{book.refused} record(s) left out: not signed by this course's key for the place they were "
                    "found (a student's display of the record type, or a notebook moved)")
    if book.unrecorded:
        bits.append(f"{book.unrecorded} notebook(s) without records (graded before records were kept: autograde "
                    "them again with --force to count them)")
    return '<p class="note">' + "; ".join(_e(b) for b in bits) + ".</p>"


def page(book, summaries, boards, title: str, files=()) -> str:
    """The whole page (see the module's docstring); `files`: the CSV files written beside it, linked."""
    nav = ["<nav><ul>"] + [f'<li><a href="#{_id(s.assignment, s.exercise)}">{_e(s.assignment)}: {_e(s.exercise)}'
                           "</a></li>" for s in summaries]
    nav += [f'<li><a href="#{_id("board", b.assignment, b.exercise, b.variant)}">leaderboard: {_e(b.exercise)}</a>'
            "</li>" for b in boards] + ["</ul></nav>"]
    body, current = [], None
    for s in summaries:
        if s.assignment != current:
            current = s.assignment
            body.append(f"<h2>{_e(current)}</h2>")
        body.append(_exercise(s))
    if boards:
        body.append("<h2>Leaderboards</h2>")
        body += [_board(b) for b in boards]
    links = " · ".join(f'<a href="{_e(f)}">{_e(f)}</a>' for f in files)
    return "\n".join([
        "<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">', f"<title>{_e(title)}</title>",
        f"<style>{STYLE}</style>", '<script src="plotly.min.js"></script>', "</head><body>",
        f"<h1>{_e(title)}</h1>", _read_note(book),
        '<p class="note">Every number counts students: one final submission each (what autograded/ holds), and '
        "its first try where the course kept earlier submissions. Problems are the checker's own diagnoses, "
        f"with the hint the course gave.{(' The same as CSV: ' + links) if links else ''}</p>",
        *nav, *body, "</body></html>"])

"""Text alternatives for the course's plotly figures: a one-line summary and the numbers as a table.

Every figure the course displays is followed, in the same cell, by a second output: an HTML
``<details class="course-figure-text">`` whose ``<summary>`` first says what to notice (one
sentence of the lesson's point, :func:`noticed`), then what the figure shows and where its numbers
come from ("measured on <GPU>", "simulated (H100 rules)", "modelled for <GPU>", "computed from
..."), and whose ``<table>`` holds the figure's numbers for a screen reader: the compact tables
the figure's maker stored with the sentence (a bank map: one row per wavefront, not one per mark),
else one row per mark, captioned by the trace's name or its axes; a text/plain twin says the same
for nbval and terminals. JupyterLab renders only
one mime type of an output, so the text cannot ride in the figure's own output (plotly's renderer
would hide it); a second output is what every front end shows and stores deterministically.

    alt.noticed(fig, "Every lane needs its own sector.", tables)   # what to notice, compact tables
    alt.describe(fig)        # dict(notice, summary, source, tables=[(caption, header, rows)])
    alt.bundle(fig)          # {'text/html': ..., 'text/plain': ...}
    alt.source_of(text)      # the provenance phrase in a title, or None
    alt.sourced(fig, "simulated (H100 rules)")   # adds it as the title's last line (also draw.sourced)
    alt.sig(0.0021), alt.spans([0, 1, 2, 16])   # '0.0021' (two significant figures at least), '0-2, 16'

:class:`TextRenderer` is the plotly renderer ``course_text`` that draw.configure() adds after the
figure's own renderer; explorers (widgets.View) add the same bundle themselves. This module reads
figures; it does not draw them or decide their colours (palette).
"""
from __future__ import annotations

import html
import re

import numpy as np
from plotly.io._base_renderers import ExternalRenderer

PROVENANCE = re.compile(r"\b(measured on \S|simulated|modelled|computed from)", re.I)
SIMULATED = "simulated (H100 rules)"
MAX_ROWS = 300          # a figure's table stops here (the bank maps and sector pictures stay under it)


def plain(text) -> str:
    """A title's text without markup: line breaks become ' — '."""
    text = re.sub(r"<br\s*/?>", " — ", str(text or ""))
    return html.unescape(re.sub(r"<[^>]+>", "", text)).strip(" —")


def source_of(text) -> str | None:
    """The provenance phrase of a title (to its line's end), or None."""
    for line in re.split(r"<br\s*/?>| — ", str(text or "")):
        if PROVENANCE.search(plain(line)):
            return plain(line)
    return None


def sourced(fig, source: str | None):
    """`fig` (a plotly Figure) with `source`, where its numbers come from, as the title's last line,
    unless the title already says it. Returns `fig`.

        draw.sourced(fig, "measured on NVIDIA H100 80GB HBM3")
    """
    text = fig.layout.title.text or ""
    if source and not source_of(text):
        fig.layout.title.text = f"{text}<br><sup>{source}</sup>" if text else f"<sup>{source}</sup>"
    return fig


def noticed(fig, sentence: str, tables=None):
    """`fig` with `sentence` — what to notice, the lesson's point in one sentence — leading its text
    alternative, and, when given, `tables` ([(caption, header, rows)], rows of strings) standing in
    for the trace-by-trace tables. Both ride in ``layout.meta``, so a stored figure keeps them.
    Returns `fig`.

        alt.noticed(fig, "A 32-way conflict: every lane reads bank 0.", [("wavefronts", [...], rows)])
    """
    meta = dict(fig.layout.meta) if isinstance(fig.layout.meta, dict) else {}
    meta["notice"] = str(sentence)
    if tables is not None:
        meta["tables"] = [[str(c), [str(h) for h in head], [[str(v) for v in r] for r in rows]]
                          for c, head, rows in tables]
    fig.layout.meta = meta
    return fig


def sig(v, digits: int = 2) -> str:
    """A number with at least `digits` significant figures and no more decimals than that needs:
    2672 -> '2672', 4.04 -> '4.0', 0.85 -> '0.85', 0.0021 -> '0.0021', 0 -> '0'."""
    v = float(v)
    if v == 0 or not np.isfinite(v):
        return f"{v:g}"
    decimals = max(0, digits - 1 - int(np.floor(np.log10(abs(v)))))
    return f"{v:.{decimals}f}"


def spans(values) -> str:
    """Integers as runs: [0, 1, 2, 3, 16] -> '0-3, 16' (an empty list: 'none')."""
    vs = sorted({int(v) for v in values})
    runs, out = [], []
    for v in vs:
        if runs and v == runs[-1][1] + 1:
            runs[-1][1] = v
        else:
            runs.append([v, v])
    for a, b in runs:
        out.append(str(a) if a == b else f"{a}-{b}" if b > a + 1 else f"{a}, {b}")
    return ", ".join(out) or "none"


def _dict(fig) -> dict:
    return fig if isinstance(fig, dict) else fig.to_dict()


def _title(obj) -> str:
    t = (obj or {}).get("title")
    return plain(t.get("text") if isinstance(t, dict) else t)


def _axis(layout, ref: str | None, letter: str) -> str:
    """The title of a trace's axis; in stacked subplots only the bottom axis has one, so any axis of
    that letter with a title stands in."""
    key = f"{letter}axis{(ref or letter)[1:]}"
    others = (_title(v) for k, v in sorted(layout.items()) if re.fullmatch(f"{letter}axis\\d*", k))
    return _title(layout.get(key)) or next((t for t in others if t), letter)


def _fmt(v) -> str:
    if isinstance(v, (float, np.floating)):
        return f"{v:.4g}"
    return plain(v) if isinstance(v, str) else str(v)


def _seq(v, n: int) -> list:
    if v is None or isinstance(v, (str, int, float)):
        return [v] * n
    return list(np.asarray(v, dtype=object).ravel())


def _decode(v):
    """plotly >= 6 may hold arrays as {'dtype', 'bdata'}: back to numbers."""
    if isinstance(v, dict) and "bdata" in v:
        import base64
        a = np.frombuffer(base64.b64decode(v["bdata"]), dtype=np.dtype(v["dtype"]))
        shape = v.get("shape")
        return a.reshape([int(n) for n in str(shape).split(",")]) if shape else a
    return v


def _trace_table(t: dict, layout: dict) -> tuple[list, list]:
    x, y = _decode(t.get("x")), _decode(t.get("y"))
    xt, yt = _axis(layout, t.get("xaxis"), "x"), _axis(layout, t.get("yaxis"), "y")
    n = max((len(np.asarray(v, dtype=object).ravel()) for v in (x, y) if v is not None and not np.isscalar(v)),
            default=0)
    if t.get("type") == "bar" and t.get("base") is not None:     # a span (a timeline): where it starts and ends
        base = _seq(_decode(t.get("base")), n)
        cols = [_seq(y, n), base, [b + v for b, v in zip(base, _seq(x, n))]]
        header = [yt, f"{xt} from", f"{xt} to"]
    elif t.get("orientation") == "h":
        cols, header = [_seq(y, n), _seq(x, n)], [yt, xt]
    else:
        cols, header = [_seq(x, n), _seq(y, n)], [xt, yt]
    text = t.get("text")
    if text is not None and not (isinstance(text, str) and not text):
        cols.append(_seq(text, n))
        header.append(t["meta"] if isinstance(t.get("meta"), str) else "label")
    return header, [[_fmt(c[i]) for c in cols] for i in range(n) if any(c[i] is not None for c in cols)]


def _heatmap(t: dict, layout: dict) -> tuple[list, list]:
    z = np.asarray(_decode(t.get("z")), dtype=object)
    xs = _seq(_decode(t.get("x")), z.shape[1]) if t.get("x") is not None else list(range(z.shape[1]))
    ys = _seq(_decode(t.get("y")), z.shape[0]) if t.get("y") is not None else list(range(z.shape[0]))
    head = f"{_axis(layout, t.get('yaxis'), 'y')} \\ {_axis(layout, t.get('xaxis'), 'x')}"
    return [head, *map(_fmt, xs)], [[_fmt(ys[r]), *map(_fmt, z[r])] for r in range(z.shape[0])]


def _caption(t: dict, header: list, layout: dict) -> str:
    """A trace's name, or what its axes say it shows: never 'series 1'."""
    if plain(t.get("name")):
        return plain(t.get("name"))
    if t.get("type") == "heatmap":
        bar = _title((t.get("colorbar") or {})) or "value"
        return f"{bar} for each {_axis(layout, t.get('yaxis'), 'y')} and {_axis(layout, t.get('xaxis'), 'x')}"
    return f"{header[1]} against {header[0]}" if len(header) > 1 else header[0]


def describe(fig) -> dict:
    """dict(notice, summary, source, tables): what to notice (``noticed``, or None), the figure's
    title as one line, its provenance phrase, and (caption, header, rows) tables: the ones stored
    with the notice, else one per trace with the numbers it draws."""
    d = _dict(fig)
    layout = d.get("layout", {})
    title = (layout.get("title") or {}).get("text") if isinstance(layout.get("title"), dict) else layout.get("title")
    meta = layout.get("meta") if isinstance(layout.get("meta"), dict) else {}
    tables = [(c, list(h), [list(r) for r in rows]) for c, h, rows in meta.get("tables") or []]
    given = bool(tables)           # the maker's tables say everything: no rectangles or notes after them
    for t in [] if given else d.get("data", []):
        header, rows = (_heatmap if t.get("type") == "heatmap" else _trace_table)(t, layout)
        if rows:
            tables.append((_caption(t, header, layout), header, rows))
    for s in [] if given else layout.get("shapes", []) or []:     # drawn rectangles (tiles over a matrix)
        if s.get("type") == "rect":
            if not tables or tables[-1][0] != "rectangles":
                tables.append(("rectangles", ["x from", "x to", "y from", "y to"], []))
            tables[-1][2].append([_fmt(s.get(k)) for k in ("x0", "x1", "y0", "y1")])
    for a in [] if given else layout.get("annotations", []) or []:
        if a.get("text"):
            if not tables or tables[-1][0] != "notes":
                tables.append(("notes", ["note"], []))
            tables[-1][2].append([plain(a["text"])])
    source = source_of(title)
    summary = plain(title)
    if summary == source:        # no title but its source line: the subplot titles say what it shows
        notes = [plain(a.get("text")) for a in layout.get("annotations", []) or [] if a.get("text")]
        summary = " — ".join(notes + [source])
    summary = summary or ("a chart of " + " and ".join(_title(layout.get(k)) for k in ("yaxis", "xaxis")))
    return dict(notice=meta.get("notice") or None, summary=summary, source=source, tables=tables)


def _limit(tables) -> tuple[list, int]:
    left, out, cut = MAX_ROWS, [], 0
    for caption, header, rows in tables:
        out.append((caption, header, rows[:max(left, 0)]))
        cut += max(0, len(rows) - max(left, 0))
        left -= len(rows)
    return out, cut


def bundle(fig) -> dict:
    """The text alternative's mime bundle: text/html (details, summary, tables) and text/plain."""
    d = describe(fig)
    tables, cut = _limit(d["tables"])
    source = d["source"] or "source not stated"
    esc = html.escape
    what = d["summary"] + ("" if d["source"] else f" ({source})")
    if d["notice"]:        # the lesson's point first, then what the chart is
        parts = [f'<details class="course-figure-text"><summary>Figure as text: {esc(d["notice"])} '
                 f'<i>Chart: {esc(what)}</i></summary>']
        lines = [f"Figure as text: {d['notice']}", f"  Chart: {what}"]
    else:
        parts = [f'<details class="course-figure-text"><summary>Figure as text: {esc(what)}</summary>']
        lines = [f"Figure as text: {what}"]
    for caption, header, rows in tables:
        parts.append(f"<table><caption>{esc(caption)}</caption><thead><tr>"
                     + "".join(f'<th scope="col">{esc(h)}</th>' for h in header) + "</tr></thead><tbody>"
                     + "".join("<tr>" + "".join(f"<td>{esc(v)}</td>" for v in r) + "</tr>" for r in rows)
                     + "</tbody></table>")
        lines.append(f"{caption}: " + " | ".join(header))
        lines += ["  " + " | ".join(r) for r in rows]
    if cut:
        parts.append(f"<p>{cut} more rows not listed</p>")
        lines.append(f"({cut} more rows not listed)")
    parts.append("</details>")
    return {"text/html": "".join(parts), "text/plain": "\n".join(lines)}


class TextRenderer(ExternalRenderer):
    """plotly renderer 'course_text': displays the figure's text alternative after the figure."""

    def render(self, fig_dict):
        from IPython.display import display
        display(bundle(fig_dict), raw=True)

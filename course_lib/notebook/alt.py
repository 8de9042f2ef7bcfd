"""Text alternatives for the course's plotly figures: a one-line summary and the numbers as a table.

Every figure the course displays is followed, in the same cell, by a second output: an HTML
``<details class="course-figure-text">`` whose ``<summary>`` says what the figure shows and where
its numbers come from ("measured on <GPU>", "simulated (H100 rules)", "modelled for <GPU>",
"computed from ..."), and whose ``<table>`` holds the figure's numbers (one row per mark) for a
screen reader; a text/plain twin says the same for nbval and terminals. JupyterLab renders only
one mime type of an output, so the text cannot ride in the figure's own output (plotly's renderer
would hide it); a second output is what every front end shows and stores deterministically.

    alt.describe(fig)        # dict(summary, source, tables=[(caption, header, rows)])
    alt.bundle(fig)          # {'text/html': ..., 'text/plain': ...}
    alt.source_of(text)      # the provenance phrase in a title, or None
    alt.sourced(fig, "simulated (H100 rules)")   # adds it as the title's last line (also draw.sourced)

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


def describe(fig) -> dict:
    """dict(summary, source, tables): the figure's title as one line, its provenance phrase, and per
    trace (caption, header, rows) with the numbers it draws."""
    d = _dict(fig)
    layout = d.get("layout", {})
    title = (layout.get("title") or {}).get("text") if isinstance(layout.get("title"), dict) else layout.get("title")
    tables = []
    for i, t in enumerate(d.get("data", [])):
        header, rows = (_heatmap if t.get("type") == "heatmap" else _trace_table)(t, layout)
        if rows:
            tables.append((plain(t.get("name")) or f"series {i + 1}", header, rows))
    for s in layout.get("shapes", []) or []:     # drawn rectangles (tiles over a matrix) as one table
        if s.get("type") == "rect":
            if not tables or tables[-1][0] != "rectangles":
                tables.append(("rectangles", ["x from", "x to", "y from", "y to"], []))
            tables[-1][2].append([_fmt(s.get(k)) for k in ("x0", "x1", "y0", "y1")])
    for a in layout.get("annotations", []) or []:
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
    return dict(summary=summary, source=source, tables=tables)


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
    parts = [f'<details class="course-figure-text"><summary>Figure as text: {esc(d["summary"])}'
             + ("" if d["source"] else f" ({esc(source)})") + "</summary>"]
    lines = [f"Figure as text: {d['summary']}" + ("" if d["source"] else f" ({source})")]
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

"""Every figure stored in the notebooks can be read without seeing it or its colours (issue 25) and
says where its numbers come from (issue 28): each plotly chart, in a cell's outputs or in an
explorer's stored widget state, is followed by its text alternative (a <details> with a summary and
a <table>); its title names its source; its categories stay apart for protan, deutan and tritan
viewers (palette.closest_pair) unless marker shapes, dashes, patterns or written labels tell them
apart. Reads the stored JSON only: no kernel runs here."""
import json
import re
from pathlib import Path

import pytest

from course_lib.notebook import alt, palette

NOTEBOOKS = sorted((Path(__file__).resolve().parents[2] / "notebooks").glob("*.ipynb"))
PLOTLY = "application/vnd.plotly.v1+json"


def output_lists(nb: dict):
    """(where, outputs) for each cell and each explorer chart area (ipywidgets Output state)."""
    for i, cell in enumerate(nb["cells"]):
        if cell.get("outputs"):
            yield f"cell {i}", cell["outputs"]
    state = nb.get("metadata", {}).get("widgets", {}).get("application/vnd.jupyter.widget-state+json", {})
    for key, model in state.get("state", {}).items():
        if model.get("model_name") == "OutputModel" and model["state"].get("outputs"):
            yield f"explorer output {key[:8]}", model["state"]["outputs"]


def figures(nb: dict):
    """(where, figure dict, the output after it or None)."""
    for where, outs in output_lists(nb):
        for k, o in enumerate(outs):
            if PLOTLY in o.get("data", {}):
                yield where, o["data"][PLOTLY], outs[k + 1] if k + 1 < len(outs) else None


def problems_with_text(fig: dict, after) -> list[str]:
    title = (fig.get("layout", {}).get("title") or {}).get("text", "")
    got = []
    if not alt.source_of(title):
        got.append(f"title {alt.plain(title)[:80]!r} does not say where its numbers come from")
    html = "".join((after or {}).get("data", {}).get("text/html", ""))
    if 'class="course-figure-text"' not in html or "<table>" not in html or "<summary>" not in html:
        got.append("no text alternative (<details class='course-figure-text'> with a summary and a table) after it")
    elif not alt.PROVENANCE.search(html.split("</summary>")[0]):
        got.append("its text alternative's summary does not say where the numbers come from")
    return got


def _colors(v) -> list:
    if isinstance(v, str):
        return [v]
    return [c for c in v if isinstance(c, str)] if isinstance(v, list) else []


def marks(fig: dict) -> list[tuple]:
    """(colour, style, labelled) of every coloured mark: style is what tells marks apart without
    colour (symbol, dash, hatching), labelled whether each mark has text written on or beside it."""
    way = fig.get("layout", {}).get("template", {}).get("layout", {}).get("colorway") or palette.SERIES
    out = []
    for i, t in enumerate(fig.get("data", [])):
        if t.get("type") == "heatmap":       # a scale (viridis) with the value written in each cell
            continue
        m, line = t.get("marker", {}), t.get("line", {})
        style = (json.dumps(m.get("symbol")), line.get("dash"), json.dumps(m.get("pattern", {}).get("shape")))
        labelled = bool(t.get("text")) and ("text" in t.get("mode", "") or t.get("type") == "bar")
        colors = _colors(m.get("color")) + _colors(line.get("color"))
        if not colors and t.get("mode", "markers") != "text":
            colors = [way[i % len(way)]]
        out += [(c, style, labelled) for c in dict.fromkeys(colors)]
    for s in fig.get("layout", {}).get("shapes", []) or []:
        line = s.get("line", {})
        out += [(c, ("shape", line.get("dash")), False) for c in _colors(line.get("color"))]
    return out


def colour_problems(fig: dict) -> list[str]:
    got, ms = [], marks(fig)
    for i, (a, sa, la) in enumerate(ms):
        for b, sb, lb in ms[i + 1:]:
            if a.lower() == b.lower() or sa != sb or (la and lb):
                continue
            close = palette.closest_pair([a, b])
            if close:
                got.append(f"{a} and {b} differ only in colour and look alike with {close[2]} "
                           f"(delta E {close[3]:.0f} < {palette.MIN_DELTA_E:.0f})")
    return got


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem[:2] for p in NOTEBOOKS])
def test_every_stored_figure_has_text_source_and_safe_colours(path):
    nb = json.loads(path.read_text())
    bad = [f"{path.name} {where}: {p}" for where, fig, after in figures(nb)
           for p in problems_with_text(fig, after) + colour_problems(fig)]
    assert not bad, "\n".join(bad[:20])


def test_the_check_catches_a_figure_without_text_source_or_safe_colours():
    """The attack the check must stop: the course's old colours, no source, no text alternative."""
    fig = {"data": [{"type": "scatter", "mode": "markers", "marker": {"color": "#2a9d8f", "symbol": "square"}},
                    {"type": "scatter", "mode": "markers", "marker": {"color": "#457b9d", "symbol": "square"}}],
           "layout": {"title": {"text": "bank map"}}}
    got = problems_with_text(fig, None) + colour_problems(fig)
    assert any("where its numbers" in g for g in got) and any("text alternative" in g for g in got)
    assert any("tritanopia" in g for g in got)
    styled = json.loads(json.dumps(fig))
    styled["data"][1]["marker"]["symbol"] = "diamond"      # a shape tells them apart: allowed
    assert not colour_problems(styled)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem[:2] for p in NOTEBOOKS])
def test_every_stored_table_says_where_its_numbers_come_from(path):
    nb = json.loads(path.read_text())
    bad = []
    for where, outs in output_lists(nb):
        for o in outs:
            html = "".join(o.get("data", {}).get("text/html", ""))
            if "<table" in html and "course-figure-text" not in html and not alt.PROVENANCE.search(alt.plain(html)):
                bad.append(f"{path.name} {where}: a table without 'measured on', 'simulated', 'modelled' or "
                           f"'computed from': {alt.plain(html)[:100]!r}")
    assert not bad, "\n".join(bad[:20])


# the notebooks whose figures all come from makers that say what to notice (draw, charts, bank_pictures,
# lessons.cpu/warps/shapes/banks); 08 and 12 join once aos.py's and hopper.py's own pictures do too
NOTICED = [p for p in NOTEBOOKS if p.stem[:2] not in {"08", "12"}]


def _alternatives(nb: dict):
    """(where, text/plain of each figure's text alternative and of each explorer's stored output)."""
    for where, fig, after in figures(nb):
        yield where, "".join((after or {}).get("data", {}).get("text/plain", ""))
    for i, cell in enumerate(nb["cells"]):
        for o in cell.get("outputs", []):
            if "application/vnd.jupyter.widget-view+json" in o.get("data", {}):
                yield f"cell {i} (widget)", "".join(o["data"].get("text/plain", ""))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem[:2] for p in NOTEBOOKS])
def test_stored_text_alternatives_name_their_tables_and_explorers_describe_their_view(path):
    """No 'series 1' caption; an explorer's stored output says what its view shows (a notebook read
    on GitHub or nbviewer shows that text, not `VBox(...)`); no chart measured on a CPU calls its
    ceiling cudaMemcpy, and each says it is not a GPU."""
    nb = json.loads(path.read_text())
    bad = []
    for where, text in _alternatives(nb):
        if "series " in text and any(line.startswith("series ") for line in text.splitlines()):
            bad.append(f"{path.name} {where}: a table captioned 'series N'")
        if where.endswith("(widget)") and (re.match(r"\w+\(", text) or "Its view with" not in text
                                           and not text.startswith("(a progress bar")):
            bad.append(f"{path.name} {where}: the widget stores {text[:60]!r}, not what its view shows")
        if "this CPU" in text and ("cudaMemcpy" in text or "not a GPU" not in text):
            bad.append(f"{path.name} {where}: a chart measured on this CPU that names cudaMemcpy or does not say "
                       "it is not a GPU")
    assert not bad, "\n".join(bad[:20])


@pytest.mark.parametrize("path", NOTICED, ids=[p.stem[:2] for p in NOTICED])
def test_every_stored_figure_says_what_to_notice_first(path):
    nb = json.loads(path.read_text())
    bad = [f"{path.name} {where}: {alt.plain(fig.get('layout', {}).get('title', {}).get('text', ''))[:70]!r} "
           "has no sentence saying what to notice" for where, fig, _ in figures(nb)
           if not (fig.get("layout", {}).get("meta") or {}).get("notice")]
    assert not bad, "\n".join(bad[:20])


def test_the_stored_checks_catch_series_captions_vbox_explorers_and_cpu_memcpy():
    fig = {"data": [{"type": "scatter", "x": [1], "y": [2]}], "layout": {"title": {"text": "measured on this CPU"}}}
    plain = alt.bundle(fig)["text/plain"]
    assert "series" not in plain and "y against x" in plain
    nb = {"cells": [{"outputs": [{"data": {PLOTLY: fig}}, {"data": {"text/plain": "series 1: x | y"}}]},
                    {"outputs": [{"data": {"application/vnd.jupyter.widget-view+json": {}, "text/plain": "VBox(...)"}}]}]}
    found = list(_alternatives(nb))
    assert [w for w, _ in found] == ["cell 0", "cell 1 (widget)"] and found[1][1] == "VBox(...)"

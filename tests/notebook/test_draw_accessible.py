"""The draw functions' figures carry their meaning without colour and say their source; the palette
check (Machado 2009 + CIELAB) tells safe colours from unsafe ones; the text alternative holds the
figure's numbers and is displayed after every figure (plotly renderer and explorers)."""
import numpy as np
import plotly.graph_objects as go
import plotly.io as pio
import pytest

from course_lib.notebook import alt, draw, palette, widgets

LANE = np.arange(32)


def test_palette_pairs_stay_apart_in_every_vision_and_old_ones_did_not():
    for pair in [(palette.OK, palette.BAD), (palette.MAIN, palette.PALE), (palette.MAIN, palette.BAD),
                 (palette.MAIN, palette.ORANGE)]:
        assert palette.closest_pair(pair) is None, pair
    # the course's former green/blue pair (bank maps, sector pictures) collapses for tritan viewers
    a, b, vision, d = palette.closest_pair(["#2a9d8f", "#457b9d"])
    assert vision == "tritanopia" and d < palette.MIN_DELTA_E
    assert palette.distance("#0072B2", "#0072B2", "deuteranopia") == 0
    # red and green nearly merge for a deuteranope (the matrices are applied, not ignored)
    assert palette.distance("#ff0000", "#00ff00", "deuteranopia") < palette.distance("#ff0000", "#00ff00") / 2


def test_palette_refuses_what_it_cannot_read():
    with pytest.raises(ValueError, match="not a colour"):
        palette.rgb("bluish")


def test_one_wavefront_bank_map_has_no_minus_one_tick_and_a_legend():
    fig = draw.banks(addresses=4 * LANE * 33)
    assert list(fig.layout.yaxis.tickvals) == [0]
    assert fig.layout.showlegend and [t.name for t in fig.data if t.showlegend] == ["served in the first wavefront"]
    fig = draw.banks(addresses=4 * LANE * 32)          # 32-way: conflicts drawn as diamonds, in the legend
    kinds = {t.name: t.marker.symbol for t in fig.data if t.showlegend}
    assert kinds == {"served in the first wavefront": "square", "conflict: waits for a later wavefront": "diamond"}
    assert list(fig.layout.yaxis.tickvals) == list(range(0, 32, 4))


def test_every_draw_figure_says_its_source():
    assert "simulated (H100 rules)" in draw.sectors(addresses=LANE * 32).layout.title.text
    assert "simulated (H100 rules)" in draw.banks(addresses=4 * LANE, title="mine").layout.title.text
    modelled = draw.bandwidth({"copy": 2900.0}, measured=False, device="H100", title="leaderboard")
    assert "MODELLED for H100" in modelled.layout.title.text
    assert "measured on this CPU" in draw.sweep([1, 2], {"a": [1, 2]}, ylabel="GB/s (this CPU)").layout.title.text
    said = draw.sweep([1, 2], {"a": [1, 2]}, title="strided copy, measured on NVIDIA H100")
    assert said.layout.title.text == "strided copy, measured on NVIDIA H100"        # not said twice
    assert alt.source_of(draw.sourced(go.Figure(), "computed from the formula").layout.title.text)


def test_sweep_lines_differ_in_dash_and_marker():
    fig = draw.sweep([0, 1], {"a": [1, 2], "b": [2, 1], "c": [0, 0]})
    assert len({t.line.dash for t in fig.data}) == 3 and len({t.marker.symbol for t in fig.data}) == 3


def test_text_alternative_says_what_to_notice_then_holds_the_numbers():
    fig = draw.banks(addresses=4 * LANE * 2)             # stride 2: 2-way, lanes 0 and 16 share bank 0
    b = alt.bundle(fig)
    assert b["text/html"].startswith('<details class="course-figure-text"><summary>Figure as text: A 2-way bank '
                                     'conflict: bank 0 holds 2 different words')
    assert "(lanes 0, 16)" in b["text/plain"] and "2 wavefront(s) where 1 would do" in b["text/plain"]
    assert "2 wavefront(s), 1 bank conflict(s) — 2-way" in b["text/plain"] and "simulated (H100 rules)" in b["text/plain"]
    assert "<th scope=\"col\">banks serving</th>" in b["text/html"] and "<td>0-15</td>" in b["text/html"]
    bars = alt.describe(draw.bandwidth({"copy": 2900.0, "naive": 900.5}, measured=True, device="X"))
    assert bars["source"] == "measured on X" and bars["tables"][0][2][1][:2] == ["naive", "900"]
    assert bars["notice"] == "Fastest: copy at 2900 GB/s; slowest: naive at 900 GB/s."
    capped = alt.describe(draw.bandwidth({"copy": 2900.0, "naive": 900.5}, measured=True, device="X", ceiling=3000))
    assert capped["notice"] == "Fastest: copy at 97% of cudaMemcpy; slowest: naive at 30% of cudaMemcpy."


def test_bank_maps_name_their_phases_and_list_one_row_per_wavefront():
    """A 16-byte store is served in quarter-warps: the picture and its text say so, and the text
    lists a row per wavefront of each quarter-warp, not one per mark under identical headers."""
    fig = draw.banks(addresses=16 * LANE, width=16, op="st")
    titles = [a.text for a in fig.layout.annotations]
    assert titles[:2] == ["quarter-warp 1 (lanes 0-7): 1 wavefront(s)", "quarter-warp 2 (lanes 8-15): 1 wavefront(s)"]
    d = alt.describe(fig)
    assert d["notice"].startswith("Conflict-free: 16-byte accesses are served in 4 quarter-warps of 8 lanes")
    (caption, header, rows), = d["tables"]
    assert [r[0] for r in rows] == [f"quarter-warp {i} (lanes {8 * i - 8}-{8 * i - 1})" for i in range(1, 5)]
    assert rows[0][2:] == ["0-31", "0-7"]
    worst = alt.describe(draw.banks(addresses=16 * (LANE % 8) + 128 * (LANE // 8) * 8, width=16, op="st"))
    assert len(worst["tables"][0][2]) <= 32 and "quarter-warp" in worst["notice"]
    half = alt.describe(draw.banks(addresses=8 * LANE * 2, width=8))
    assert half["tables"][0][2][0][0] == "half-warp 1 (lanes 0-15)" and "half-warp 1's request" in half["notice"]


def test_no_caption_is_series_n():
    fig = go.Figure([go.Scatter(x=[1, 2], y=[3, 4]), go.Heatmap(z=[[1, 2], [3, 4]])])
    fig.update_layout(xaxis_title="column", yaxis_title="row")
    captions = [t[0] for t in alt.describe(draw.sourced(fig, "computed from nothing"))["tables"]]
    assert captions == ["row against column", "value for each row and column"]


def test_labels_keep_two_significant_figures():
    assert [alt.sig(v) for v in (2672.4, 4.04, 0.85, 0.64, 0.0021, 0)] == ["2672", "4.0", "0.85", "0.64", "0.0021", "0"]
    fig = draw.bandwidth({"copy (ceiling)": 4.04, "by rows": 0.64, "serial": 0.0021}, measured=True,
                         device="this CPU (numpy loops)", ceiling=4.04)
    labels = list(fig.data[0].text)
    assert labels[1].startswith("0.64 GB/s") and labels[2].startswith("0.0021 GB/s"), labels


def test_a_chart_measured_off_the_gpu_says_so_and_names_no_cudamemcpy():
    fig = draw.bandwidth({"copy (ceiling)": 4.04, "blocked": 2.6}, measured=True, device="this CPU (numpy loops)",
                         ceiling=4.04)
    text = alt.bundle(fig)["text/plain"] + str(fig.to_dict())
    assert "cudaMemcpy" not in text and "measured on this CPU (numpy loops), not a GPU" in text
    assert "the copy 4.0 GB/s" in fig.layout.annotations[0].text
    assert "not a GPU" in draw.sweep([1, 2], {"a": [1, 2]}, ylabel="GB/s (this CPU)").layout.title.text
    gpu = draw.bandwidth({"copy": 2900.0}, measured=True, device="NVIDIA H100", ceiling=3000.0)
    assert "cudaMemcpy 3000 GB/s" in gpu.layout.annotations[0].text and "not a GPU" not in gpu.layout.title.text


def test_explorers_store_what_their_first_view_shows():
    """A notebook read without a kernel (GitHub, nbviewer) shows an explorer's text/plain or text/html:
    the controls' settings and each chart's text alternative, not `VBox(...)`."""
    ex = widgets.Explorer(compute=lambda s: 4 * LANE * s, figures=lambda a, s: [draw.banks(addresses=a)],
                          controls=dict(s=[1, 2]), start=dict(s=2), title="stride")
    data = ex._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in data
    assert data["text/plain"].startswith("Explorer: stride — run the notebook to move its controls. Its view with "
                                         "s = 2 (of 1, 2):")
    assert "A 2-way bank conflict" in data["text/plain"] and "VBox" not in data["text/plain"]
    assert 'class="course-figure-text"' in data["text/html"]


def test_text_alternative_of_a_heatmap_and_of_subplots():
    from course_lib.lessons import cpu, hopper
    grid = alt.describe(hopper.layout_picture(128))
    assert grid["tables"][0][1][:3] == ["y \\ x", "c0", "c1"] and grid["tables"][0][2][1][:3] == ["r1", "1", "0"]
    layout = alt.describe(cpu.layout(2, 2))
    assert layout["summary"].startswith("a 2 x 2 matrix") and "computed from" in layout["summary"]


def test_the_notebook_renderer_displays_the_text_after_the_figure(monkeypatch):
    shown = []
    monkeypatch.setattr("IPython.display.display", lambda obj, raw=False, **kw: shown.append(obj))
    monkeypatch.setattr("plotly.io._renderers.ipython_display.display", lambda obj, raw=False, **kw: shown.append(obj))
    old = pio.renderers.default
    try:
        assert draw.configure() == "course_plotly+course_text"
        pio.show(draw.sectors(addresses=LANE * 4 * 8))
    finally:
        pio.renderers.default = old
    assert list(shown[0]) == ["application/vnd.plotly.v1+json"]
    title = shown[0]["application/vnd.plotly.v1+json"]["layout"]["title"]["text"]
    assert title.startswith("global store, warp 0: 32 sector(s) for 32 lanes<br><sup>")      # fitted (fit.py)
    assert shown[0]["application/vnd.plotly.v1+json"]["config"]["displaylogo"] is False
    assert 'class="course-figure-text"' in shown[1]["text/html"]


def test_explorer_charts_carry_their_text_alternative():
    old = pio.renderers.default
    try:
        draw.configure()
        ex = widgets.Explorer(compute=lambda s: 4 * LANE * s, figures=lambda a, s: [draw.banks(addresses=a)],
                              controls=dict(s=[1, 2]))
    finally:
        pio.renderers.default = old
    outs = ex.views[0].out.outputs
    assert "application/vnd.plotly.v1+json" in outs[0]["data"]
    assert "course-figure-text" in outs[1]["data"]["text/html"]


def test_text_on_marks_has_enough_contrast():
    assert palette.contrast("#000000", "#ffffff") == pytest.approx(21)
    for c in palette.CATEGORIES + palette.SERIES:
        assert palette.contrast(c, palette.ink(c)) >= 4.5, c        # WCAG AA for text
    fig = draw.banks(addresses=4 * LANE * 32)
    assert all(palette.contrast(t.marker.color, t.textfont.color) >= 4.5 for t in fig.data)


def test_a_one_shot_sweep_stores_what_its_bar_was(monkeypatch):
    shown = []
    monkeypatch.setattr(widgets, "display", lambda obj, raw=False, **kw: shown.append(obj))
    assert widgets.sweep(lambda v: 2 * v, [1, 2, 3], description="B") == [2, 4, 6]
    assert shown[0]["text/plain"] == "(a progress bar: B over 3 values)"
    assert "application/vnd.jupyter.widget-view+json" in shown[0]

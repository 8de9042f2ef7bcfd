"""course_lib.fit: chart titles broken into lines that fit a notebook (the browser test measures the
pixels; this checks the text): every line short enough, no word lost or reordered, room made above."""
import re

import plotly.graph_objects as go
import pytest

from course_lib.notebook import draw, fit

TITLES = [
    "global store, line 8, warp 0: 32 sector(s) for 32 lanes — 128 of 1024 bytes moved are used (12%)",
    "100 x 70: grid 3 x 4 = 12 blocks, 3072 threads for 7000 elements — 43% of the tiles' slots are outside",
    "32x32 tile, PAD=0, column read<br><sup>shared load (4 B), line 44, warp 0: 32 wavefront(s), "
    "31 bank conflict(s), and some more words to make this sub line long — 32-way</sup>",
    "Leaderboard, float32 256x256, MODELLED for H100 (course_lib.model), not measured",
    "short",
]


def _words(text):
    return re.sub(r"<[^>]+>|—", " ", text).split()


@pytest.mark.parametrize("title", TITLES)
def test_titles_fit_and_keep_every_word_in_order(title):
    fig = go.Figure(layout=dict(title=title, height=300, margin=dict(t=40)))
    fitted = fit.fit_title(fig)
    lines = fitted.layout.title.text.split("<br>")
    for line in lines:
        plain = re.sub(r"<[^>]+>", "", line)
        assert len(plain) <= (fit.SUB_CHARS if line.startswith("<sup>") else fit.TITLE_CHARS * 1.15), line
    assert _words(fitted.layout.title.text) == _words(title)
    assert fig.layout.title.text == title, "the figure given is not changed"
    grown = fitted.layout.margin.t - 40
    assert grown >= 0 and fitted.layout.height == 300 + grown       # the plot keeps its size
    if len(lines) > 1:
        assert grown > 0


def test_draw_reexports_it_and_short_titles_stay_as_they_are():
    fig = draw.sweep([0, 1], {"a": [1, 2]}, title="short, simulated")      # says its source: nothing added
    assert draw.fit_title(fig).layout.title.text == "short, simulated" and draw.fit_title is fit.fit_title

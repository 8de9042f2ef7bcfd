"""Every figure the notebooks' prose quotes from a GPU run is the one in the results file it
cites (prose_figures.toml, checked by prose_figures.py): a rerun that changes a result fails here
until the sentence is updated. The checker itself is tested on planted prose, stale and new numbers
included. Reads files only; no GPU, no simulator."""
import json
from pathlib import Path

import pytest

import prose_figures as pf

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
RUN = "h100_2026-11-26/rounds_prose.json"


def markdown(text):
    return {"cell_type": "markdown", "source": text}


def entry(cell, figures, **kw):
    return dict(notebook="99", cell=cell, source=RUN,
                figures=[dict(text=t, value=v, source=RUN) for t, v in figures], **kw)


@pytest.mark.parametrize("path", sorted(NOTEBOOKS.glob("[01][0-9]_*.ipynb")), ids=lambda p: p.name[:2])
def test_notebook_prose_matches_the_results_it_cites(path):
    cells = json.loads(path.read_text())["cells"]
    problems = pf.check(cells, pf.load_registry(), path.name[:2])
    assert not problems, "\n".join(problems)


def test_every_registered_cell_belongs_to_a_notebook():
    names = {p.name[:2] for p in NOTEBOOKS.glob("*.ipynb")}
    assert {e["notebook"] for e in pf.load_registry()} <= names


def test_a_current_figure_passes():
    cells = [markdown("On the 2026-11-26 run padded reached 0.55 of a copy.")]
    assert pf.check(cells, [entry("padded reached", [("0.55", "float32 8192x8192 padded")])], "99") == []


def test_a_planted_stale_number_fails_and_says_what_the_file_holds():
    cells = [markdown("On the 2026-11-26 run padded reached 0.57 of a copy.")]
    (problem,) = pf.check(cells, [entry("padded reached", [("0.57", "float32 8192x8192 padded")])], "99")
    assert "stale" in problem and "0.551" in problem


def test_a_figure_the_cell_no_longer_says_fails():
    cells = [markdown("On the 2026-11-26 run padded reached half of a copy.")]
    (problem,) = pf.check(cells, [entry("padded reached", [("0.55", "float32 8192x8192 padded")])], "99")
    assert "does not say '0.55'" in problem


def test_an_unregistered_number_in_a_cell_that_quotes_a_run_fails():
    cells = [markdown("On the 2026-11-26 run padded reached 0.55 of a copy and tile 0.41 (1234 GB/s).")]
    problems = pf.check(cells, [entry("padded reached", [("0.55", "float32 8192x8192 padded")])], "99")
    assert len(problems) == 2 and all("neither a registered figure" in p for p in problems)
    ok = pf.check(cells, [entry("padded reached", [("0.55", "float32 8192x8192 padded")],
                                not_measured=["0.41", "1234"])], "99")
    assert ok == []


def test_a_cell_that_quotes_a_run_must_name_its_date():
    cells = [markdown("On the H100 padded reached 0.55 of a copy.")]
    (problem,) = pf.check(cells, [entry("padded reached", [("0.55", "float32 8192x8192 padded")])], "99")
    assert "without naming its date" in problem and "2026-11-26" in problem


def test_lookups_read_every_kind_of_source():
    assert pf.lookup(RUN, "float32 8192x8192 padded ratio.max") == pytest.approx(0.552, abs=5e-4)
    assert pf.lookup(RUN, "float32 8192x8192 naive_col / float32 8192x8192 naive_row") == pytest.approx(3.55, abs=0.01)
    assert pf.lookup("h100_2026-11-26/latency.json", "loaded.copy.in_flight_kib_per_sm.median") == pytest.approx(12.03, abs=0.01)
    assert pf.lookup("h100_2026-11-24/misaligned_probe.json",
                     "results[label=f32 tr 32x32/32x8 AM 8191x8193].frac_copy") == pytest.approx(0.606, abs=1e-3)
    assert pf.lookup("h100_2026-11-24/lesson_profiles.txt", "06 | 32 x 8 threads | gpu__time_duration.sum") == 45.95
    assert pf.matches("16 864 200", 16864200) and pf.matches("0.04", 0.0446) and not pf.matches("0.05", 0.0446)

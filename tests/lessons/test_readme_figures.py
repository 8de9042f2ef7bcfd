"""The README's H100 table is the five-round run it cites, as course_lib.lessons.rounds renders it: a new run
changes the file, and a stale README fails here (notebooks have tests/lessons/test_prose_figures.py)."""
import re
from pathlib import Path

import pytest

from course_lib.lessons import rounds

README = Path(__file__).resolve().parents[2] / "README.md"
BEGIN = "<!-- leaders table:"
END = "<!-- end of leaders table -->"


def _block(text: str) -> str:
    start = text.index(BEGIN)
    body = text[text.index("-->", start) + 3:text.index(END)]
    return body.strip("\n") + "\n"


def test_the_readme_table_is_the_run_it_cites():
    run = rounds.load(rounds.PROSE)
    assert not run.get("missing"), run
    assert _block(README.read_text()) == rounds.leaders_markdown(run)


def test_a_stale_number_in_the_readme_table_fails():
    text = README.read_text()
    median = re.search(r"\| (\d\.\d{3}) \[", _block(text))[1]
    stale = text.replace(f"| {median} [", f"| {float(median) + 0.1:.3f} [", 1)
    with pytest.raises(AssertionError):
        assert _block(stale) == rounds.leaders_markdown(rounds.load(rounds.PROSE))

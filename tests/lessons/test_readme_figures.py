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


HOPPER = "h100_2026-11-26_hopper/rounds_hopper.json"
ALIGNED = [(4096, 4096), (8192, 8192), (16384, 16384), (8192, 2048), (2048, 8192)]


def _spread(r):
    return rounds.Spread(r["ratio"]["median"], r["ratio"]["min"], r["ratio"]["max"])


def test_the_readme_s_hopper_paragraph_is_the_run_it_cites():
    run = rounds.load(HOPPER)
    text = " ".join(README.read_text().split())
    verdicts = []
    for c in run["cases"]:
        if (c["rows"], c["cols"]) not in ALIGNED:
            continue
        course = [r for r in c["results"] if r.get("kind") == "course" and r.get("correct") and "skipped" not in r]
        tma = max((r for r in course if r["name"].startswith("tma")), key=lambda r: r["ratio"]["median"])
        other = max((r for r in course if not r["name"].startswith("tma")), key=lambda r: r["ratio"]["median"])
        verdicts.append(rounds.compare(_spread(tma), _spread(other)))
    level, behind = verdicts.count("within noise"), verdicts.count("slower")
    assert "faster" not in verdicts and "No TMA transpose is ahead of the course's best" in text
    assert f"level in {level} of the {len(verdicts)} aligned cases" in text and f"behind in {behind}" in text
    tally = rounds.tally(rounds.leader_rows(run)).split(": ", 1)[1]        # course ahead in 17, within ...
    ahead, noise, library = (int(w) for w in re.findall(r"\d+", tally))
    assert f"the tally is {ahead} ahead, {noise} within noise, {library} library ahead" in text
    copies = [rounds.value(run, d, (8192, 8192), "tma_copy").median for d in ("float32", "float64", "float16", "uint8")]
    assert f"{min(copies):.2f}–{max(copies):.2f} of `cudaMemcpy`" in text
    for name, words in (("vec_out", "`vec_out` reaches"), ("torch.compile", "`torch.compile`"),
                        ("band", "for this case,")):
        assert f"{words} {rounds.value(run, 'uint8', (1000, 1030), name).median:.3f}" in text, name


def test_the_readme_s_pieces_sentence_is_the_small_run():
    run = rounds.load(rounds.SMALL)
    text = " ".join(README.read_text().split())
    pieces, triton = (rounds.value(run, "uint8", (1000, 1030), k) for k in ("pieces", "torch.compile"))
    assert f"it reaches {pieces.median:.3f} of a copy against torch.compile's {triton.median:.3f} for bytes" in text
    assert f"{rounds.compare(pieces, triton)}" == "within noise" and "for bytes, within noise" in text
    pieces, triton = (rounds.value(run, "float16", (1000, 1030), k) for k in ("pieces", "torch.compile"))
    assert f"and {pieces.median:.3f} against {triton.median:.3f} for halves, every round ahead" in text
    assert pieces.low > triton.high and rounds.compare(pieces, triton) == "within noise"

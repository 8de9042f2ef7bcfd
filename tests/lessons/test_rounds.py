"""course_lib.lessons.rounds: the five-round runs as tables that show the spread and name the run,
and the noise rule every "faster" in the notebooks follows. Reads files only."""
import pytest

from course_lib.lessons import rounds

RUN = rounds.load()


def test_value_is_the_median_and_range_of_the_rounds():
    s = rounds.value(RUN, "float32", (8192, 8192), "padded")
    case = rounds.case(RUN, "float32", (8192, 8192))
    values = next(r for r in case["results"] if r["name"] == "padded")["ratio"]["values"]
    assert len(values) == RUN["meta"]["rounds"] == 5
    assert (s.low, s.high) == (min(values), max(values)) and s.median == sorted(values)[2]
    assert rounds.value(RUN, "float32", (8192, 8192), "no_such_kernel") is None
    assert rounds.value(RUN, "float32", (8191, 8193), "naive_row") is None      # not measured at that size


@pytest.mark.parametrize("a,b,median_a,median_b,expected", [
    ((1.00, 0.99, 1.01), (0.90, 0.89, 0.91), 1.0, 0.9, "faster"),
    ((0.90, 0.89, 0.91), (1.00, 0.99, 1.01), 0.9, 1.0, "slower"),
    ((0.95, 0.90, 0.99), (0.93, 0.92, 0.94), 0.95, 0.93, "within noise"),     # gap 0.02 < spread 0.09
    ((0.95, 0.949, 0.951), (0.93, 0.90, 0.96), 0.95, 0.93, "within noise"),   # the wider spread decides
])
def test_compare_says_faster_only_beyond_both_spreads(a, b, median_a, median_b, expected):
    assert rounds.compare(rounds.Spread(*a), rounds.Spread(*b)) == expected


def test_verdicts_the_notebooks_rely_on():
    assert rounds.verdict(RUN, "float64", (8192, 8192), "padded_32x16", "warp") == "faster"
    assert rounds.verdict(RUN, "float32", (8192, 8192), "padded_32x8", "copy") == "within noise"
    assert rounds.verdict(RUN, "float32", (8192, 8192), "fast", "cublas") == "within noise"
    with pytest.raises(KeyError, match="not measured"):
        rounds.verdict(RUN, "float32", (8192, 8192), "fast", "no_such_kernel")


def test_tables_show_the_spread_and_name_the_run():
    text = repr(rounds.table(RUN, ["memcpy", "padded"], dtypes=["float32"], sizes=[(8192, 8192)], unit="gbps"))
    assert "NVIDIA H100 80GB HBM3, 2026-11-26" in text and "rounds.py prose --out DIR" in text and "5 rounds" in text
    assert "rounds_prose.json" in text and "[" in text.splitlines()[-1]
    lead = repr(rounds.leaders(RUN, sizes=[(8192, 8192)]))
    assert "within noise" in lead and "course ahead" in lead and "(= " in lead
    assert "idle, dram" in repr(rounds.latency_table()) and "12.0 [12.0-12.1]" in repr(rounds.latency_table())
    assert "8x8" in repr(rounds.blocks_table()) and "BLOCK_ROWS" in repr(rounds.block_rows_table())
    with pytest.raises(ValueError):
        rounds.table(RUN, ["copy"], unit="percent")


def test_a_missing_file_is_a_table_that_says_so():
    gone = rounds.load("nowhere/rounds_prose.json")
    assert gone["missing"] and "missing in this installation" in repr(rounds.table(gone, ["copy"]))
    assert "missing" in repr(rounds.leaders(gone)) and "missing" in repr(rounds.latency_table("nowhere/latency.json"))
    assert rounds.in_flight("nowhere/latency.json") == {}

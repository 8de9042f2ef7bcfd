"""A check's verdict as data (course_lib.teach.record): what the report says, as a JSON record, measured.

beat_library's solution and two of its named mutants (course_lib.teach.mutants) are checked once; their
records must hold each property's result, each problem's kind, name, line and that line's code, and the
counts the runs measured (compared with the runs' own rows and with sim.results.spend)."""
import json

import pytest

from course_lib.notebook import magic
from course_lib.sim.results.spend import spend
from course_lib.teach import exercises as E, mutants, record, solutions
from course_lib.teach.pipeline import tiles_covered
from course_lib.teach.runs import run_shapes

KEY = "beat_library"


def _fn(source):
    return magic.compile_cell("", source)[1][E.get(KEY).kernel]


@pytest.fixture(scope="module")
def checked():
    ex = E.get(KEY)
    named = {m.name: m.source for m in mutants.derive(ex, lambda p: solutions.body(KEY, p))}
    kernels = {"solution": solutions.body(KEY), "drop_barrier": named["drop_barrier"],
               "swap_store_bounds": named["swap_store_bounds"]}
    return {name: (E.check(KEY, _fn(src), gpu=False), _fn(src)) for name, src in kernels.items()}


def test_a_passing_kernel_records_every_property_held_and_what_its_runs_spent(checked):
    report, fn = checked["solution"]
    rec = report.record
    assert rec["schema"] == record.SCHEMA and rec["exercise"] == KEY and rec["ok"] and not rec["problems"]
    assert [p["result"] for p in rec["properties"]] == ["held"] * len(E.get(KEY).properties)
    json.dumps(rec, allow_nan=False)                                # plain JSON, whole
    runs, _, _ = run_shapes(E.get(KEY), fn, E.get(KEY).dtypes[0], 0)     # the same runs, again
    spent = [spend(run) for _, run in runs]
    c = rec["counts"]
    assert (c["sectors"], c["wavefronts"], c["instructions"]) == tuple(
        sum(getattr(s, k) for s in spent) for k in ("sectors", "wavefronts", "instructions"))
    assert c["elements"] == sum(on.rows * on.cols * on.batch for on, _ in runs) and c["elements wrong"] == 0
    assert c["instructions per element"] == round(c["instructions"] / c["elements"], 3)
    assert c["tile elements"] == sum(tiles_covered(on) * 32 * 32 for on, _ in runs)     # what the budget divides by
    loads = [r for _, run in runs for r in run.instructions if r["space"] == "global" and r["op"] == "ld"]
    assert c["sectors per request, global loads"] == round(sum(r["sectors"] for r in loads)
                                                           / sum(r["requests"] for r in loads), 3)
    assert [s["shape"] for s in rec["shapes"]] == [list(s) for s in E.get(KEY).shapes]


def test_a_race_is_recorded_as_the_property_with_the_line_it_blames_and_its_code(checked):
    report, fn = checked["drop_barrier"]
    rec = report.record
    races = next(p for p in rec["properties"] if p["name"] == "no races on shared memory")
    assert races["result"] == "failed" and not rec["ok"]
    problem = next(p for p in rec["problems"] if p["name"] == "no races on shared memory")
    assert problem["kind"] == "property" and problem["hint"] and problem["shapes"]
    line = problem["line"]
    assert isinstance(line, int) and f"line {line}" in repr(report)      # the line the student's report names
    assert problem["code"] == record.anonymised(fn.module.code.splitlines()[line - 1]) and "tile" in problem["code"]


def test_a_stopped_run_and_a_wrong_result_are_recorded_with_their_shapes_and_elements(checked):
    report, fn = checked["swap_store_bounds"]
    rec = report.record
    stopped = [p for p in rec["problems"] if p["kind"] == "stopped"]
    wrong = [p for p in rec["problems"] if p["kind"] == "wrong result"]
    assert stopped and stopped[0]["name"] == "MemoryAccessError" and isinstance(stopped[0]["line"], int)
    assert wrong and all(p["hint"] for p in wrong)
    by_shape = {tuple(s["shape"]): s for s in rec["shapes"]}
    for p in stopped:
        for label in p["shapes"]:
            s = by_shape[tuple(int(n) for n in label.split("x"))]
            assert s["stopped"]["error"] == "MemoryAccessError" and s["elements"] is None
    ran = [s for s in rec["shapes"] if s["stopped"] is None]
    assert sum(s["elements"]["wrong"] for s in ran) == rec["counts"]["elements wrong"] > 0
    assert all(0 <= s["elements"]["unwritten"] <= s["elements"]["wrong"] <= s["elements"]["total"] for s in ran)


def test_no_kernel_is_a_kernel_problem_and_nothing_was_run():
    report = E.check(KEY, None, gpu=False)          # outside IPython: no kernel named counted_transpose
    rec = report.record
    assert not rec["ok"] and [p["kind"] for p in rec["problems"]] == ["kernel"]
    assert {p["result"] for p in rec["properties"]} == {"not run"} and rec["shapes"] == []


def test_notes_outside_a_check_are_ignored_and_nested_checks_keep_their_own():
    record.found("kernel", [("what", "hint")])                       # no check open: nothing happens
    with record.tracing(E.get(KEY)) as outer:
        with record.tracing(E.get("tile_32x8")) as inner:
            record.found("footprint", [("inner", "h")])
        record.found("footprint", [("outer", "h")])
    assert [p["what"] for p in outer.problems] == ["outer"] and [p["what"] for p in inner.problems] == ["inner"]


def test_an_example_line_names_no_one():
    line = '    out[i] = tile[k][j];   // Alice Smith, 2026 /* mine */ printf("by alice");'
    assert record.anonymised(line) == 'out[i] = tile[k][j];'
    assert record.anonymised('printf("alice %d", x); /* bob */ y = 1;') == 'printf("…", x); y = 1;'
    assert record.anonymised("   // only a comment") is None and len(record.anonymised("x" * 500)) == 160


def test_a_record_that_fails_is_said_in_it_and_never_stops_the_students_check(monkeypatch, checked):
    fn = checked["solution"][1]
    monkeypatch.setattr(record, "accesses", lambda run: 1 / 0)
    report = E.check(KEY, fn, gpu=False)
    assert report.ok and report.record["ok"] and report.record["errors"][0].startswith("ran: ZeroDivisionError")

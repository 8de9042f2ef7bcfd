"""``instructor report`` on a course folder made here (no nbgrader run: the round trip is
tests/lab/test_class_report.py): its numbers are counts of students from the signed records only; problems
ranked with the course's hint and an example line; first tries from the kept submissions; the variant that
did worse; the leaderboard's rule, ties, variants and names; GPU times shown only after their sanity
checks; the page escapes what students wrote; bad input gets one line, not a traceback."""
import csv
import json
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from course_lib.lab.grader import hidden as H, verdict_store, verdicts
from course_lib.lab.instructor import class_summary, classbook, gpu_times, leaderboard, report
from course_lib.teach import exercises as E

A, KEY, BOARD = "11_capstone", "beat_library", "beat_library"
REPO = Path(__file__).resolve().parents[2]


def _problem(kind, name="", hint="h", line=None, code=None):
    return {"kind": kind, "name": name, "what": "w", "hint": hint, "shapes": ["64x64"], "line": line, "code": code}


def _record(ok, problems=(), counts=None, variant="", hidden=None, key=KEY):
    rec = {"schema": "course_lib.verdict/1", "exercise": key, "variant": variant, "params": {}, "ok": ok,
           "properties": [], "problems": list(problems), "shapes": [],
           "counts": counts if counts is not None else {"sectors": 100, "wavefronts": 40, "instructions": 900,
                                                        "elements": 4096, "elements wrong": 0,
                                                        "sectors per request, global loads": 4.0}}
    if hidden is not None:
        rec["hidden"] = {"shapes": [[8, 20]], "ok": False, "problems": hidden, "counts": {}}
    return rec


def _course(tmp_path, students, history=()) -> Path:
    """students: {id: (record, submitted)}; history: [(id, record, submitted)] of earlier submissions."""
    course = tmp_path / "course"
    secret = H.seed(course, create=True)
    for student, (rec, submitted) in students.items():
        nb = nbformat.v4.new_notebook()
        cell = nbformat.v4.new_code_cell(f'cl.exercises.grade("{rec["exercise"]}")')
        cell.metadata["nbgrader"] = {"grade": True, "locked": True, "grade_id": f"{rec['exercise']}_check", "points": 3}
        cell.outputs = [verdicts.output(rec)]
        nb.cells = [cell]
        envs = verdicts.seal(nb, secret, student, A, A, E.EXERCISES, submitted)
        verdict_store.keep(course, A, student, A, submitted, envs)
        path = course / "autograded" / student / A / f"{A}.ipynb"
        path.parent.mkdir(parents=True)
        nbformat.write(nb, path)
    for student, rec, submitted in history:
        env = verdicts.sign({"record": rec, "student": student, "assignment": A, "notebook": A,
                             "cell": f"{rec['exercise']}_check", "submitted": submitted, "graded": None}, secret)
        verdict_store.keep(course, A, student, A, submitted, [env])
    return course


def _t(minute):
    return f"2026-12-01 10:{minute:02d}:00.000000 UTC"


def test_the_summary_counts_students_first_tries_problems_and_variants(tmp_path):
    races = _problem("property", "no races on shared memory", "put __syncthreads()", 20, "x = tile[k][j];")
    bounds = _problem("stopped", "MemoryAccessError", "check the bounds", 9, "out[i] = v;")
    course = _course(tmp_path, {
        "ada": (_record(True), _t(0)),
        "bob": (_record(False, [races]), _t(1)),
        "cyd": (_record(False, [dict(races, code="y = tile[k][j];", line=21)]), _t(2)),
        "dot": (_record(False, [dict(races, code="x = tile[k][j];")], variant="T = double"), _t(3)),
        "eve": (_record(False, [bounds], hidden=[_problem("wrong result", hint="partial tiles")]), _t(4)),
        "fay": (_record(True, variant="T = double"), _t(9)),
    }, history=[("fay", _record(False, [_problem("property", "no bank conflicts on shared loads and stores")],
                                variant="T = double"), _t(5))])
    book = classbook.read(course)
    assert (book.notebooks, book.refused, book.unrecorded, len(book.final)) == (6, 0, 0, 6)
    s = class_summary.exercise(book, A, KEY)
    assert (s.students, s.passed, s.passed_first, s.resubmitted) == (6, 2, 1, 1)
    top = s.problems[0]
    assert (top.label, top.students, top.first, top.kind) == ("no races on shared memory", 3, 3, "property")
    assert (top.example, top.line, top.hint) == ("x = tile[k][j];", 20, "put __syncthreads()")   # the most common
    labels = {p.label: (p.students, p.first) for p in s.problems}
    assert labels["stopped by the simulator (MemoryAccessError)"] == (1, 1)
    assert labels["hidden shapes: wrong result"] == (1, 1)
    assert labels["no bank conflicts on shared loads and stores"] == (0, 1)      # fay's first try only
    assert s.variants == [("T = double", 2, 1), ("default", 4, 1)] and s.worse == "default"
    assert sorted(s.counts["sectors per request, global loads"]) == [4.0] * 6


def test_records_not_signed_for_their_place_are_left_out_and_said(tmp_path):
    course = _course(tmp_path, {"ada": (_record(True), _t(0)), "bob": (_record(True), _t(1))})
    moved = course / "autograded" / "mallory" / A
    moved.mkdir(parents=True)
    (moved / f"{A}.ipynb").write_bytes((course / "autograded" / "ada" / A / f"{A}.ipynb").read_bytes())   # ada's, moved
    path = course / "autograded" / "bob" / A / f"{A}.ipynb"
    nb = json.loads(path.read_text())
    nb["cells"][0]["outputs"][0]["data"][verdicts.MIME]["record"]["counts"]["sectors"] = 1    # edited after grading
    path.write_text(json.dumps(nb))
    book = classbook.read(course)
    assert [e.student for e in book.final] == ["ada"] and book.refused == 2 and book.unrecorded == 2


def _board_course(tmp_path):
    def c(sectors, wavefronts, instructions):
        return {"sectors": sectors, "wavefronts": wavefronts, "instructions": instructions, "elements": 4096}
    return _course(tmp_path, {
        "zed": (_record(True, counts=c(100, 40, 900)), _t(5)),
        "amy": (_record(True, counts=c(100, 40, 900)), _t(7)),          # ties zed, later
        "kim": (_record(True, counts=c(100, 40, 800)), None),           # fewer instructions, no timestamp
        "lou": (_record(True, counts=c(100, 32, 999)), _t(9)),          # fewer wavefronts wins over instructions
        "max": (_record(True, counts=c(90, 64, 999)), _t(9)),           # fewer sectors wins over everything
        "ned": (_record(False, counts=c(10, 0, 10)), _t(1)),            # did not pass: not ranked
        "oli": (_record(True, counts=c(50, 40, 900), variant="T = double"), _t(1)),   # its own board
    })


def test_the_leaderboard_follows_its_rule_and_ranks_only_passing_kernels_of_one_variant(tmp_path):
    book = classbook.read(_board_course(tmp_path))
    default, double = leaderboard.boards(book, "ids")
    assert (default.variant, double.variant) == ("", "T = double")
    assert [r.name for r in default.rows] == ["max", "lou", "kim", "zed", "amy"] and default.unranked == 1
    assert [r.tied for r in default.rows] == [False, False, False, False, True]
    assert [r.name for r in double.rows] == ["oli"] and double.rows[0].per()["sectors"] == 12.5
    assert [r.name for r in leaderboard.boards(book, "ids")[0].rows] == [r.name for r in default.rows]   # every run
    named = leaderboard.boards(book, "pseudonyms")[0]
    assert [r.student for r in named.rows] == [r.name for r in default.rows]
    assert len({r.name for r in named.rows}) == 5 and all(r.name != r.student for r in named.rows)
    secret = H.seed(book.course)
    assert leaderboard.pseudonym(secret, "amy") == leaderboard.pseudonym(secret, "amy") != \
        leaderboard.pseudonym("another term", "amy")
    assert [r.name for r in leaderboard.boards(book, "names")[0].rows] == [r.name for r in default.rows]  # no gradebook


def test_only_the_exercises_that_opt_in_rank():
    assert leaderboard.opted_in("beat_library") and not leaderboard.opted_in("tile_32x8")


@pytest.mark.parametrize("entry, shown, words", [
    (dict(rounds_ms=[1.0] * 7, copy_ms=[0.9] * 7, bytes=2e9), True, "2,000 GB/s (median of 7 rounds"),
    (dict(rounds_ms=[1.0] * 3, copy_ms=[0.9] * 7, bytes=2e9), False, "3 round(s)"),
    (dict(rounds_ms=[0.5] * 7, copy_ms=[0.4] * 7, bytes=2e9), False, "above the card's peak"),
    (dict(rounds_ms=[1.0] * 7, copy_ms=[1.5] * 7, bytes=2e9), False, "above the same run's copy"),
    (dict(rounds_ms=[1.0] * 7, bytes=2e9), False, "no copy"),
    (dict(rounds_ms=[1.0, 1.0, 1.0, 9.0, 0.1, 1.0, 1.0], copy_ms=[0.9] * 5, bytes=2e9), True, "2,000 GB/s"),
])
def test_a_gpu_time_is_shown_only_after_its_sanity_checks(entry, shown, words):
    ok, text = gpu_times.check(entry, peak_gbps=3350)
    assert ok == shown and words in text, text


def test_gpu_times_stand_beside_the_rank_and_never_change_it(tmp_path):
    course = _board_course(tmp_path)
    timing = tmp_path / "times.json"
    timing.write_text(json.dumps({"device": "NVIDIA H100", "peak_gbps": 3350, "times": [
        {"assignment": A, "student": "amy", "exercise": KEY, "rounds_ms": [0.001] * 7, "copy_ms": [0.9] * 7,
         "bytes": 2e9}, {"assignment": A, "student": "zed", "exercise": KEY, "rounds_ms": [1.0] * 7,
                         "copy_ms": [0.9] * 7, "bytes": 2e9}]}))
    rows = leaderboard.boards(classbook.read(course), "ids", gpu_times.read(timing))[0].rows
    assert [r.name for r in rows] == ["max", "lou", "kim", "zed", "amy"]
    assert rows[3].gpu.endswith("on NVIDIA H100") and rows[4].gpu.startswith("not shown")
    timing.write_text("[]")
    with pytest.raises(ValueError, match="not a timing file"):
        gpu_times.read(timing)


def test_the_report_writes_its_page_and_csv_and_escapes_what_students_wrote(tmp_path):
    evil = _problem("property", "no races on shared memory", "h", 3, '</code><script>alert(1)</script>')
    course = _course(tmp_path, {"ada": (_record(True), _t(0)), "bob": (_record(False, [evil]), _t(1))})
    said = []
    written = report.write(course, [], tmp_path / "out", log=said.append)
    assert set(written) == {*report.FILES, "index.html"} and (tmp_path / "out" / "plotly.min.js").stat().st_size > 1e6
    page = written["index.html"].read_text()
    assert "<script>alert(1)" not in page and "&lt;script&gt;alert(1)" in page
    assert page.count('<details class="course-figure-text">') == 1 and '<script src="plotly.min.js">' in page
    with open(written["problems.csv"]) as f:
        rows = list(csv.DictReader(f))
    assert [(r["problem"], r["students"], r["example"]) for r in rows] == [
        ("no races on shared memory", "1", '</code><script>alert(1)</script>')]
    with open(written["leaderboard.csv"]) as f:
        assert [r["rank"] for r in csv.DictReader(f)] == ["1"]
    assert any("1 of 2 passed" in line for line in said)


@pytest.mark.parametrize("args, words", [
    (["--course", "{tmp}/nowhere"], ".course_lib_seed: no seed"),
    (["--course", "{course}", "99_nothing"], "no graded notebook of 99_nothing"),
    (["--course", "{course}", "--out", "{course}/autograded/ada/11_capstone/11_capstone.ipynb"], "is a file"),
])
def test_bad_input_gets_one_line_and_no_traceback(tmp_path, args, words):
    course = _course(tmp_path, {"ada": (_record(True), _t(0))})
    argv = [a.format(tmp=tmp_path, course=course) for a in args]
    r = subprocess.run([sys.executable, "-m", "course_lib", "instructor", "report", *argv], capture_output=True,
                       text=True, cwd=REPO, timeout=120)
    assert r.returncode == 1 and words in r.stderr and "Traceback" not in r.stderr, r.stderr


def test_the_gpu_timing_script_refuses_without_a_gpu_and_asks_for_a_course(tmp_path):
    script = REPO / "benchmarks" / "leaderboard_gpu_times.py"
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and "--course COURSE or --demo" in r.stderr
    from course_lib import gpu
    if not gpu.available():
        r = subprocess.run([sys.executable, str(script), "--demo", "--out", str(tmp_path / "t.json")],
                           capture_output=True, text=True, timeout=120)
        assert r.returncode == 1 and "no GPU here" in r.stderr and not (tmp_path / "t.json").exists()


# tests/teach/test_pipeline.py's 16-byte cp.async kernel for beat_library's launch (issue 35): 32 of its 64
# wavefronts per 1024 elements are its copies' writes into shared memory, which counts that leave them out miss
CP_ASYNC_16 = """#include <cuda_pipeline.h>
__global__ void counted_transpose(float* out, const float* in, int rows, int cols)
{
    __shared__ alignas(16) float tile[32][32];
    int t = threadIdx.y * 8 + threadIdx.x, r = t / 8, q = t % 8;
    int gr = blockIdx.y * 32 + r, gc = blockIdx.x * 32 + q * 4;
    if (gr < rows && gc < cols)
        __pipeline_memcpy_async(&tile[r][(q ^ (r / 4 % 8)) * 4], in + (size_t)gr * cols + gc, 16);
    __pipeline_commit();
    __pipeline_wait_prior(0);
    __syncthreads();
    int oc = blockIdx.y * 32 + threadIdx.x * 4, orow = blockIdx.x * 32 + threadIdx.y;
    if (orow < cols && oc < rows) {
        int k = threadIdx.x * 4, c = threadIdx.y, cq = c / 4, cw = c % 4;
        float v[4];
        for (int e = 0; e < 4; ++e)
            v[e] = tile[k + e][(cq ^ ((k + e) / 4 % 8)) * 4 + cw];
        *reinterpret_cast<float4*>(out + (size_t)orow * rows + oc) = make_float4(v[0], v[1], v[2], v[3]);
    }
}
"""


def test_the_leaderboard_counts_the_writes_of_async_copies_into_shared_memory(tmp_path):
    """With beat_library's budget lifted (so that both pass), the cp.async kernel would lead on counts without
    its copies' writes (fewer wavefronts than the solution's); with them it ties on wavefronts and its
    instructions put it after the solution."""
    import dataclasses

    from course_lib.notebook import magic
    from course_lib.teach import solutions
    ex = E.get(KEY)
    lifted = dataclasses.replace(ex, properties=tuple(p for p in ex.properties if "at most" not in p.name))
    records = {}
    for student, source in (("sol", solutions.body(KEY)), ("cpa", CP_ASYNC_16)):
        rec = E.check(lifted, magic.compile_cell("", source)[1][ex.kernel], gpu=False).record
        assert rec["ok"], rec["problems"]
        records[student] = rec
    copies = sum(a["wavefronts"] for s in records["cpa"]["shapes"] for a in s["accesses"] if a["op"] == "ldgsts")
    shared = sum(a["wavefronts"] for s in records["cpa"]["shapes"] for a in s["accesses"] if a["space"] == "shared")
    assert copies > 0 and records["cpa"]["counts"]["wavefronts"] == shared
    assert shared - copies < records["sol"]["counts"]["wavefronts"] <= shared     # left out, it would lead
    course = _course(tmp_path, {s: (rec, _t(i)) for i, (s, rec) in enumerate(records.items())})
    board = leaderboard.boards(classbook.read(course), "ids")[0]
    assert [r.name for r in board.rows] == ["sol", "cpa"] and board.rows[1].spend.wavefronts == shared

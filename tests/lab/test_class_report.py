"""A synthetic class through real nbgrader, then ``instructor report`` on what grading stored (issue 34).

Seven students hand in beat_library (notebook 11's exercise, a one-exercise assignment): the course's
solution written as a student would (ada), the same with one more barrier (cal: a few more instructions),
three of the exercise's named mutants (course_lib.teach.mutants: dee without the barrier, who also displays
a forged record claiming a pass; eve with rows and cols swapped in a bounds test), the untouched stub
(gus: correct, over the budget), a kernel right on the release's shapes only (hal: its hidden shapes fail;
the assignment's feedback level is 'shape', so hal's feedback names one), and fay, who first hands in the
mutant without padding and then resubmits the solution. One ``nbgrader autograde`` round, fay's
resubmission graded in a second. Then:

- the records in autograded/ are the grader's (signed; dee's forgery gone), the feedback holds none;
- ``instructor report`` (run as an instructor would) counts exactly what was handed in: the passes, the
  first tries, each problem's students, each key count, compared with the checker run here on the same
  kernels; two runs write the same files;
- the leaderboard ranks the passing kernels by their exact counts (ada and fay tie: the earlier first);
- the page renders in Chromium with no console error; its screenshot goes to tests/screenshots/.

About 60 s (eight sandboxed autogrades): slow."""
from __future__ import annotations

import csv
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest

from course_lib.lab.grader import hidden as H, verdicts
from course_lib.lab.instructor import assignments as grading, release
from course_lib.notebook import magic
from course_lib.sim.results.spend import COUNTS
from course_lib.teach import exercises as E, mutants, solutions

pytestmark = pytest.mark.slow
pytest.importorskip("nbgrader", reason="nbgrader comes with the [instructor] extra (Python >= 3.11)")
from test_nbgrader import _nbgrader  # noqa: E402  (tests/lab, as test_formgrader imports test_browser)

REPO = Path(__file__).resolve().parents[2]
ART = Path(os.environ.get("COURSE_SCREENSHOTS") or REPO / "tests" / "screenshots")
A, KEY, LESSON = "11_capstone", "beat_library", "11_capstone"
LOAD = "if (r < rows && c < cols) {"


def _own(source: str) -> str:
    """A kernel as a student writes it: no markers, no comment of the solution's."""
    return "%%cuda\n" + "\n".join(line.split("//")[0].rstrip() for line in source.splitlines() if line.strip())


def _kernels() -> dict:
    ex = E.get(KEY)
    solved = solutions.solved(solutions.body(KEY))
    named = {m.name: m.source for m in mutants.derive(ex, lambda p: solutions.solved(solutions.body(KEY, p)))}
    assert {"drop_barrier", "swap_store_bounds", "no_padding"} <= set(named), sorted(named)
    assert LOAD in solved and solved.count("__syncthreads();") == 1
    return {"solution": _own(solved), "one_more_barrier": _own(solved.replace("__syncthreads();",
                                                                             "__syncthreads();\n    __syncthreads();")),
            "drop_barrier": _own(named["drop_barrier"]), "swap_store_bounds": _own(named["swap_store_bounds"]),
            "no_padding": _own(named["no_padding"]), "stub": None,
            "tried_few": _own(solved.replace(LOAD, "if (r < rows && c < cols && (cols % 32 < 8 || c + 32 < cols)) {"))}


FORGED = ("from IPython.display import display\n"
          f"display({{{verdicts.MIME!r}: {{'record': {{'exercise': {KEY!r}, 'ok': True, 'counts': {{}}}}, "
          "'signature': '00'}}, raw=True)")
# student: [(kernel, minutes after 10:00, extra cells)]: autograded in order, the second entry a resubmission
CLASS = {"ada": [("solution", 0, [])], "cal": [("one_more_barrier", 2, [])], "dee": [("drop_barrier", 4, [FORGED])],
         "eve": [("swap_store_bounds", 6, [])], "fay": [("no_padding", 8, []), ("solution", 30, [])],
         "gus": [("stub", 10, [])], "hal": [("tried_few", 12, [])]}


def _mini(tmp_path) -> Path:
    nb = nbformat.read(REPO / "notebooks" / f"{LESSON}.ipynb", 4)
    ec = next(e for e in release.exercise_cells(nb, f"{LESSON}.ipynb") if e.key == KEY)
    mini = nbformat.v4.new_notebook(metadata=nb.metadata)
    # no setup cell: the grade is the trusted checker's on the cell's text, and the sandboxed run of the notebook
    # is quicker without the course's import (here it only shows that %%cuda needs it)
    mini.cells = [nbformat.v4.new_markdown_cell(f"# {A}"), nb.cells[ec.index], nb.cells[ec.check_index]]
    path = tmp_path / "notebooks" / f"{A}.ipynb"
    path.parent.mkdir(exist_ok=True)
    nbformat.write(mini, path)
    return path


def _submit(course, student, source, minutes, extra):
    nb = json.loads((course / "release" / A / f"{A}.ipynb").read_text())
    i = next(i for i, c in enumerate(nb["cells"]) if c["metadata"].get("nbgrader", {}).get("solution"))
    if source is not None:
        nb["cells"][i]["source"] = source
    nb["cells"][i + 1:i + 1] = [nbformat.v4.new_code_cell(x) for x in extra]
    folder = course / "submitted" / student / A
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{A}.ipynb").write_text(json.dumps(nb))
    (folder / "timestamp.txt").write_text(f"2026-12-01 {10 + minutes // 60:02d}:{minutes % 60:02d}:00.000000 UTC")


def _report(course, env, out, *extra):
    r = subprocess.run([sys.executable, "-m", "course_lib", "instructor", "report", "--course", str(course),
                        "--out", str(out), *extra], capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    return {p.name: p.read_bytes() for p in sorted(out.iterdir()) if p.suffix in (".csv", ".html")}


def _csv(data: bytes) -> list[dict]:
    return list(csv.DictReader(data.decode().splitlines()))


def _expected(kernels, seed) -> dict:
    """Each student's final kernel checked here, in-process: its record, and its hidden shapes' record."""
    out = {}
    for student, attempts in CLASS.items():
        name = attempts[-1][0]
        source = kernels[name] or "%%cuda\n" + solutions.stub(KEY)
        fn = magic.compile_cell("", source.split("\n", 1)[1])[1][E.get(KEY).kernel]
        shown = E.check(KEY, fn, gpu=False)
        hidden = E.check(KEY, fn, gpu=False, shapes=H.hidden_shapes(E.get(KEY), seed, student, A)) if shown.ok else None
        out[student] = (shown.record, hidden.record if hidden else None)
    return out


def test_a_graded_class_is_reported_from_its_records_and_ranked_by_exact_counts(tmp_path):
    from course_lib.lab.grader import sandbox
    try:
        sandbox.require()
    except sandbox.SandboxUnavailable as exc:
        pytest.skip(str(exc))
    start = time.perf_counter()
    course = tmp_path / "course"
    env = dict(os.environ, HOME=str(tmp_path), PYTHONPATH=str(REPO), COURSE_LIB_SOLUTIONS=str(solutions.SOLUTIONS_DIR))
    grading.export([_mini(tmp_path)], course, log=lambda *a: None)
    with open(course / "nbgrader_config.py", "a") as f:
        f.write(f"\nc.SandboxedExecute.hidden_feedback_by_assignment = {{{A!r}: 'shape'}}\n")
    _nbgrader(course, env, "generate_assignment", A)
    kernels = _kernels()
    for student, attempts in CLASS.items():
        name, minutes, extra = attempts[0]
        _submit(course, student, kernels[name], minutes, extra)
    t = time.perf_counter()
    _nbgrader(course, env, "autograde", A)
    print(f"autograde of {len(CLASS)}: {time.perf_counter() - t:.0f} s")
    name, minutes, extra = CLASS["fay"][1]
    _submit(course, "fay", kernels[name], minutes, extra)
    t = time.perf_counter()
    _nbgrader(course, env, "autograde", A)
    print(f"autograde of 1: {time.perf_counter() - t:.0f} s")
    _nbgrader(course, env, "generate_feedback", A)
    graded_s = time.perf_counter() - start
    seed = H.seed(course)

    failures = []
    for student in CLASS:                       # the stored records: signed, in the test cell only
        nb = json.loads((course / "autograded" / student / A / f"{A}.ipynb").read_text())
        found = verdicts.read(nb, seed, student, A, A, E.EXERCISES)
        anywhere = sum(verdicts.MIME in o.get("data", {}) for c in nb["cells"] for o in c.get("outputs", []))
        if len(found) != 1 or anywhere != 1:
            failures.append(f"{student}: {len(found)} valid record(s), {anywhere} output(s) of the type")
        feedback = (course / "feedback" / student / A / f"{A}.html").read_text()
        if any(env["signature"] in feedback or env["record"]["schema"] in feedback for env in found):
            failures.append(f"{student}'s feedback holds the record")
    hal = (course / "feedback" / "hal" / A / f"{A}.html").read_text()
    shown_shape = [s for s in H.hidden_shapes(E.get(KEY), seed, "hal", A)
                   if re.search(rf"(?<![\d.]){s[0]}x{s[1]} matrix", hal)]
    if not shown_shape:
        failures.append("the 'shape' feedback level did not show hal a failing hidden shape")

    t = time.perf_counter()
    first = _report(course, env, tmp_path / "report1", "--names", "ids")
    print(f"report: {time.perf_counter() - t:.1f} s")
    again = _report(course, env, tmp_path / "report2", "--names", "ids")
    if first != again:
        failures.append(f"two runs differ: {sorted(k for k in first if first[k] != again.get(k))}")
    t = time.perf_counter()
    expected = _expected(kernels, seed)
    print(f"expected: {time.perf_counter() - t:.1f} s")
    failures += _compare(first, expected)
    failures += _leaderboard(_csv(first["leaderboard.csv"]), expected)
    failures += _browser(tmp_path / "report1" / "index.html")
    print(f"graded in {graded_s:.0f} s, all in {time.perf_counter() - start:.0f} s")
    assert not failures, "\n".join(failures)


def _compare(files, expected) -> list[str]:
    """The report's numbers against the checker's own, student by student."""
    failures = []
    row = _csv(files["exercises.csv"])[0]
    want = {"students": 7, "passed": 3, "passed_first_try": 2, "resubmitted": 1}
    failures += [f"exercises.csv {k} = {row[k]}, expected {v}" for k, v in want.items() if int(row[k]) != v]
    problems = {(p["problem"], p["hidden_shapes"] == "True"): p for p in _csv(files["problems.csv"])}
    tally = {}
    for shown, hidden in expected.values():
        for is_hidden, rec in ((False, shown), (True, hidden)):
            for label in {_label(p) for p in (rec or {}).get("problems", [])}:
                tally[(label, is_hidden)] = tally.get((label, is_hidden), 0) + 1
    for (label, is_hidden), n in tally.items():
        got = problems.get((("hidden shapes: " if is_hidden else "") + label, is_hidden))
        if got is None or int(got["students"]) != n:
            failures.append(f"problem {label!r} (hidden {is_hidden}): {got and got['students']} students, expected {n}")
    must = {("no races on shared memory", False), ("hidden shapes: wrong result", True)}
    failures += [f"problems.csv lacks {m}" for m in must if m not in problems]
    conflicts = problems.get(("no bank conflicts on shared loads and stores", False))
    if not conflicts or (conflicts["students"], conflicts["students_first_try"]) != ("0", "1"):
        failures.append(f"fay's first try (bank conflicts) is not counted as first try only: {conflicts}")
    counts = {}
    for r in _csv(files["counts.csv"]):
        counts.setdefault(r["count"], []).append(float(r["value"]))
    for name in ("sectors per request, global loads", "instructions per element"):
        want_values = sorted(float(s["counts"][name]) for s, _ in expected.values() if name in s["counts"])
        if sorted(counts.get(name, [])) != want_values:
            failures.append(f"counts.csv {name}: {sorted(counts.get(name, []))}, expected {want_values}")
    return failures


def _label(p) -> str:
    from course_lib.lab.instructor.class_summary import _label as label
    return label(p)


def _leaderboard(rows, expected) -> list[str]:
    passing = [s for s, (shown, hidden) in expected.items() if shown["ok"] and hidden and hidden["ok"]]
    key = {s: tuple(expected[s][0]["counts"][k] for k in COUNTS) for s in passing}
    order = sorted(passing, key=lambda s: (key[s], CLASS[s][-1][1], s))     # counts, then the final submission's time
    got = [r["name"] for r in rows]
    failures = [] if got == order == ["ada", "fay", "cal"] else [f"leaderboard {got}, by the counts {order}"]
    for r in rows:
        if tuple(int(r[k]) for k in COUNTS) != key.get(r["name"]):
            failures.append(f"leaderboard {r['name']}: {[r[k] for k in COUNTS]}, the checker {key.get(r['name'])}")
    if [r["tied_on_counts"] for r in rows] != ["False", "True", "False"]:
        failures.append(f"ties: {[r['tied_on_counts'] for r in rows]}")
    return failures


def _browser(page_path: Path) -> list[str]:
    from test_browser import CHROMIUM_ARGS, _chromium, _playwright
    executable, pw_api = _chromium(), _playwright()
    errors = []
    ART.mkdir(parents=True, exist_ok=True)
    with pw_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=executable, headless=True, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.on("console", lambda m: errors.append(f"console {m.type}: {m.text}") if m.type == "error" else None)
            page.on("pageerror", lambda e: errors.append(f"page error: {e}"))
            page.goto(page_path.as_uri())
            page.wait_for_selector(".js-plotly-plot .main-svg", timeout=30_000)
            charts = page.locator(".js-plotly-plot").count()
            tables = page.locator("details.course-figure-text table").count()
            page.screenshot(path=str(ART / "class_report.png"), full_page=True)
        finally:
            browser.close()
    if charts < 1 or tables < 1:
        errors.append(f"{charts} chart(s), {tables} text-alternative table(s) drawn")
    return errors

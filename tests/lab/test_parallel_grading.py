"""Issue 32, items 5 and 6, through real nbgrader: one variant truth, and a batch graded in parallel on Dask.

A course with variants (instructor nbgrader --variants) and notebook 04's shared_tile exercise; six
submissions: alice's kernel written for the variant her notebook showed her (the issue's attack: before,
`cl.exercises.variant(key, "alice")` drew from a built-in seed while the grader graded the default, 0 points),
carol's likewise, bob's copied from the notebook's default answer, a mutant of dave's variant, erin's untouched
stub, and mallory, who tries to see alice's variant and the class's secret from her notebook. What each
student's notebook shows comes from a real Python with the environment deploy/config.yaml's hub gives them.

The same course is graded twice: by plain `nbgrader autograde`, and by `instructor grade --workers 2`
stopped with Ctrl-C once two results are stored, then run again. The grades must agree with each other and
with what each submission deserves; the second run grades only what the first left, nbgrader applies every
stored result and grades nothing in place, progress lines with the time left appear; the feedback names the
student's own variant; the instructor's listing, each student's notebook and the grader agree on every
variant. About 4 minutes on 2 busy cores: slow."""
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.needs_solutions, pytest.mark.usefixtures("bubblewrap")]       # the students' right kernels are the solutions'
pytest.importorskip("nbgrader", reason="nbgrader comes with the [instructor] extra (Python >= 3.11)")
pytest.importorskip("distributed", reason="Dask's distributed comes with the [instructor] extra")

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "benchmarks"))
import grading_class as G  # noqa: E402
from test_grading_cluster import _spawned_env  # noqa: E402

from course_lib.lab.grader import hidden, results  # noqa: E402
from course_lib.teach import mutants, solutions, variants  # noqa: E402

A, NOTEBOOK, KEY = "04_tiles", "04_shared_memory_tiles", "shared_tile"
SHOW = ("import course_lib as cl\nex = cl.exercises.get('shared_tile')\nprint(repr(dict(ex.params)))\n"
        "print('VARIANT', ex.variant)")
MALLORY = """import os, course_lib as cl
print(sorted(os.environ))
for f in ["../../../.course_lib_seed", "/home/student/.course_lib_seed"]:
    try: print(open(f).read())
    except OSError as e: print(e)
try: cl.exercises.variant("shared_tile", "alice")
except Exception as e: print(e)"""


def _env():
    return {**os.environ, "PYTHONPATH": str(REPO),
            "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])}


def _shown(name, secret, monkeypatch) -> tuple[dict, str]:
    """The parameters `name`'s notebook shows, in a Python with the environment the hub gives their server."""
    env = {k: v for k, v in _env().items() if not k.startswith("COURSE_LIB_") and k != "JUPYTERHUB_USER"}
    env.update(_spawned_env(name, secret, monkeypatch), JUPYTERHUB_USER=name)
    out = subprocess.run([sys.executable, "-c", SHOW], capture_output=True, text=True, env=env, check=True).stdout
    return eval(out.splitlines()[0]), out.splitlines()[1].removeprefix("VARIANT ")


def test_parallel_grading_agrees_with_nbgrader_resumes_and_every_view_shows_the_students_own_variant(
        tmp_path, monkeypatch):
    course = G.course(tmp_path / "class", {A: (NOTEBOOK, KEY)})
    secret = hidden.seed(course)
    shown = {s: _shown(s, secret, monkeypatch) for s in ("alice", "carol", "dave", "bob")}
    assert all(v for _, v in shown.values()), "with variants every student's differs from the notebook's"
    wrong = mutants.derive(variants.of_key(KEY, variants.course_key(course, "dave")),
                           lambda p: solutions.solved(solutions.body(KEY, p)))[0]
    submissions = {"alice": (G.own(KEY, shown["alice"][0]), 2), "carol": (G.own(KEY, shown["carol"][0]), 2),
                   "bob": (G.own(KEY), 0), "dave": (G._uncommented(wrong.source), 0), "erin": (None, 0)}
    for student, (source, _) in submissions.items():
        G.submit(course, student, A, source)
    G.submit(course, "mallory", A, None, [MALLORY])
    expected = {**{s: p for s, (_, p) in submissions.items()}, "mallory": 0}
    plain, parallel = tmp_path / "plain", tmp_path / "parallel"
    subprocess.run(["cp", "-a", str(course), str(plain)], check=True)
    subprocess.run(["cp", "-a", str(course), str(parallel)], check=True)

    G.nbgrader(plain, "autograde", A)
    stopped = _grade_stopped_after(parallel, 2)
    again = _grade(parallel)
    before = int(re.search(r"(\d+) graded before", again)[1])
    assert before >= stopped >= 2 and f"{6 - before} to grade" in again, again
    assert f"[graded {6 - before}/{6 - before}]" in again and "left" in again, "progress lines with the time left"
    assert "applied 6 stored result(s) and graded 0 in place" in again, again
    assert not list((parallel / results.FOLDER).rglob(".partial-*")), "no partial result stays"
    assert {s: v for (s, _), v in G.scores(plain).items()} == expected
    assert {s: v for (s, _), v in G.scores(parallel).items()} == expected

    G.nbgrader(parallel, "generate_feedback", A)
    listed = subprocess.run([sys.executable, "-m", "course_lib", "instructor", "variants", "--course", str(parallel),
                             *sum((["--student", s] for s in shown), [])], capture_output=True, text=True,
                            env=_env(), check=True).stdout
    for student, (params, text) in shown.items():
        feedback = re.sub(r"<[^>]+>", "", (parallel / "feedback" / student / A / f"{A}.html").read_text())
        assert f"YOUR VARIANT: {text}" in feedback.replace("&#39;", "'"), f"{student}'s feedback shows their variant"
        assert f"graded as your variant of {KEY}: {text}" in feedback, f"{student} is graded on the one shown"
        assert re.search(rf"^{student}\s+{KEY}\s+{re.escape(text)}$", listed, re.M), (student, listed)
    said = (parallel / "feedback" / "mallory" / A / f"{A}.html").read_text()
    assert "not yours to see" in said and secret not in said
    assert not any(variants.student_key(secret, s) in said for s in ("alice", "carol", "bob")), "no classmate's key"


def _grade_cmd(course):
    return [sys.executable, "-m", "course_lib", "instructor", "grade", A, "--course", str(course), "--workers", "2"]


def _grade_stopped_after(course, n) -> int:
    """Start `instructor grade`, press Ctrl-C once `n` results are stored; how many were stored."""
    # Ctrl-C as a terminal gives it: a job started in the background of a shell without job control (a CI runner's,
    # an agent's) inherits SIGINT ignored, and a Python started so never raises KeyboardInterrupt
    proc = subprocess.Popen(_grade_cmd(course), env=_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, start_new_session=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    store, deadline = course / results.FOLDER, time.monotonic() + 400
    stored = lambda: [p for p in store.rglob("*.json") if not p.name.startswith(".partial-")]     # noqa: E731
    while len(stored()) < n and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.5)
    os.kill(proc.pid, signal.SIGINT)
    out, _ = proc.communicate(timeout=120)
    assert proc.returncode == 130 and "the same command goes on from there" in out, out[-3000:]
    return len(stored())


def _grade(course) -> str:
    r = subprocess.run(_grade_cmd(course), env=_env(), capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    return r.stdout

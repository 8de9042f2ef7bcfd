"""A student's notebook may not act as the instructor (issue 32, item 1), in a real browser.

One nbgrader course, as docs/INSTRUCTORS.md §6 makes it: ``python -m course_lib instructor nbgrader`` on a
small notebook (the column_read exercise of notebook 03 and its check), ``nbgrader generate_assignment``,
two submissions, one ``nbgrader autograde``, ``generate_feedback`` and ``export``:

- ``honest``: a correct kernel (2/2, and it must stay 2/2);
- ``mallory``: the untouched stub (0/2) plus scripted cells: markdown with ``<img onerror>``, remote
  images and CSS ``url()``, a raw cell of HTML, and code cells whose outputs are HTML with ``<script>`` and
  ``onerror``, ``application/javascript``, markdown with ``onerror``, an SVG with ``onload``. Each payload,
  where it runs, reports to a loopback server this test runs, logs to the console, and acts as the
  instructor: it gives itself full points through formgrader's grade API and writes a file into the
  course folder through the server's contents API (what issue 32 proved with nbgrader as it ships).

Then a live formgrader (a Jupyter server with nbgrader's server extension on loopback, the course folder its
root), the instructor's browser (Chromium, as tests/lab/test_browser.py drives it) opens mallory's grading
page, then both feedback pages (file://, as an instructor opens a file). Asserted: no payload ran (no
report, no console line), nothing was fetched from another host by the student's content, no grade changed
(the gradebook and ``nbgrader export`` before and after), no file appeared or changed in the course folder,
and the checker's verdict is on the pages. Last, the control: mallory's notebook as submitted, put where
formgrader reads the autograded one, must run the payloads and change the grade, or this test proves
nothing. Slow (one autograde of two submissions, a server, a browser): 86 s on a 2-core machine under a
load of 6, 30 s of it CPU time, two thirds of it nbgrader's own steps.
"""
from __future__ import annotations

import csv
import http.server
import os
import shutil
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import nbformat
import pytest

from course_lib.lab.instructor import release
from course_lib.teach import solutions

pytestmark = [pytest.mark.slow, pytest.mark.needs_solutions, pytest.mark.usefixtures("bubblewrap")]
pytest.importorskip("nbgrader", reason="nbgrader comes with the [instructor] extra (Python >= 3.11)")

from test_browser import CHROMIUM_ARGS, _chromium, _playwright  # noqa: E402  (tests/lab, as fresh_env is)


REPO = Path(__file__).resolve().parents[2]
A, KEY = "03_columns", "column_read"
EVIL_HOST = "attacker.invalid"                       # the student's "remote" content: any fetch of it is recorded
VERDICT = {"honest": "✓ column_read: all checks pass", "mallory": "never written"}
UNUSED = ("jupyterlab", "notebook", "jupyter_lsp", "nbgitpuller", "nbgrader.server_extensions.assignment_list",
          "nbgrader.server_extensions.course_list", "nbgrader.server_extensions.validate_assignment")  # a faster start


def payload(vector: str, mark: str) -> str:
    """JavaScript that, run in a page of the instructor's server, reports `vector` and acts as the instructor.
    No double quote, < or > in it: it sits in HTML attributes and markdown as it is."""
    return ("(function(v){var m='" + mark + "/ran/'+v; try{fetch(m,{mode:'no-cors'})}catch(e){}"
            " console.log('PAYLOAD-RAN '+v);"
            " var x=decodeURIComponent((document.cookie.match(/_xsrf=([^;]+)/)||[])[1]||'');"
            " var h={'X-XSRFToken':x,'Content-Type':'application/json'};"
            " var s=(location.pathname.match(/submissions[/]([^/]+)/)||[])[1];"
            " var b=location.pathname.split('/formgrader/')[0];"
            " if(s){fetch(b+'/formgrader/api/grades?submission_id='+s).then(function(r){return r.json()})"
            ".then(function(gs){gs.forEach(function(g){fetch(b+'/formgrader/api/grade/'+g.id,{method:'PUT',"
            "headers:h,body:JSON.stringify({manual_score:g.max_score})})})})}"
            " fetch(b+'/api/contents/pwned-'+v+'.txt',{method:'PUT',headers:h,"
            "body:JSON.stringify({type:'file',format:'text',content:'written by a student'})});"
            "})('" + vector + "')")


def attack_cells(mark: str) -> list:
    """Mallory's extra cells, each code cell with the outputs it makes (stored too, as a student who ran it
    hands it in: the control renders them)."""
    js = lambda v: payload(v, mark)  # noqa: E731
    md = nbformat.v4.new_markdown_cell
    cells = [
        md(f'My notes on the kernel.\n\n<img src="x" onerror="{js("md_img")}">\n\n'
           f'<div style="background:url(http://{EVIL_HOST}/css.png)">styled</div>\n\n'
           f'![tracker](http://{EVIL_HOST}/md.png)'),
        nbformat.v4.new_raw_cell(f"<script>{js('raw')}</script>", metadata={"raw_mimetype": "text/html"}),
    ]
    outputs = {
        "html_script": {"text/html": f"<b>bold</b><script>{js('html_script')}</script>"},
        "html_img": {"text/html": f'<img src="y" onerror="{js("html_img")}">'},
        "js": {"application/javascript": js("js")},
        "md_output": {"text/markdown": f'<img src="z" onerror="{js("md_output")}">'},
        "svg": {"image/svg+xml": f'<svg xmlns="http://www.w3.org/2000/svg" onload="{js("svg")}"></svg>'},
    }
    for vector, data in outputs.items():
        data = {**data, "text/plain": f"<{vector}>"}
        code = f"from IPython.display import display\ndisplay({data!r}, raw=True)"
        if vector == "html_script":                  # as issue 32 wrote it
            code = f"from IPython.display import HTML, display\ndisplay(HTML({data['text/html']!r}))"
        cell = nbformat.v4.new_code_cell(code, execution_count=1)
        cell.outputs = [nbformat.v4.new_output("display_data", data=data)]
        cells.append(cell)
    return cells


def handed_in(mark: str) -> dict:
    """Files mallory hands in beside her notebook: formgrader serves an assignment's files from the instructor's
    own server (/formgrader/submissions/<id>/<file>), so a page among them would run as the instructor."""
    page = f"<html><body>notes<script>{payload('file_html', mark)}</script></body></html>"
    svg = f'<svg xmlns="http://www.w3.org/2000/svg"><script>{payload("file_svg", mark)}</script></svg>'
    return {"notes.html": page, "figures/plot.svg": svg}


def _own(key):
    """The solution as a student would write it: no markers, no comments of the solution's."""
    body = solutions.solved(solutions.body(key))
    return "%%cuda\n" + "\n".join(line.split("//")[0].rstrip() for line in body.splitlines())


def _mini(folder: Path) -> Path:
    """A small notebook with notebook 03's exercise: setup, the %%cuda exercise cell, its check."""
    name = "03_naive_transpose"
    nb = nbformat.read(REPO / "notebooks" / f"{name}.ipynb", 4)
    ec = next(e for e in release.exercise_cells(nb, f"{name}.ipynb") if e.key == KEY)
    mini = nbformat.v4.new_notebook(metadata=nb.metadata)
    mini.cells = [nbformat.v4.new_markdown_cell(f"# {A}"),
                  nbformat.v4.new_code_cell("import numpy as np\nimport course_lib as cl\nbackend = cl.setup()"),
                  nb.cells[ec.index], nb.cells[ec.check_index]]
    folder.mkdir()
    nbformat.write(mini, folder / f"{A}.ipynb")
    return folder / f"{A}.ipynb"


def _run(args, cwd, env, timeout=600):
    r = subprocess.run([sys.executable, "-m", *args], cwd=cwd, env=env, capture_output=True, text=True,
                       timeout=timeout)
    assert r.returncode == 0 and "ERROR" not in r.stderr, f"{' '.join(args)}:\n{r.stdout[-2000:]}{r.stderr[-4000:]}"
    return r


def _submit(course: Path, student: str, source, extra) -> Path:
    nb = nbformat.read(course / "release" / A / f"{A}.ipynb", 4)
    i = next(i for i, c in enumerate(nb.cells) if c.metadata.get("nbgrader", {}).get("solution"))
    if source is not None:
        nb.cells[i].source = source
    nb.cells[i + 1:i + 1] = extra
    target = course / "submitted" / student / A / f"{A}.ipynb"
    target.parent.mkdir(parents=True)
    nbformat.write(nb, target)
    return target


# ------------------------------------------------------------------------------------ what is compared

def _grades(course: Path) -> dict:
    """Every grade of the gradebook, as nbgrader's API gives it, and each student's score (what export writes)."""
    from nbgrader.api import Gradebook
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        grades = {(nb.student.id, g.name): (g.auto_score, g.manual_score, g.extra_credit, g.needs_manual_grade)
                  for nb in gb.notebook_submissions(A, A) for g in nb.grades}
        return grades | {nb.student.id: nb.score for nb in gb.notebook_submissions(A, A)}


def _export(course: Path, env) -> dict:
    _run(["nbgrader", "export"], course, env)
    with open(course / "grades.csv") as f:
        return {row["student_id"]: float(row["score"]) for row in csv.DictReader(f)}


def _files(course: Path) -> dict:
    """Every file of the course folder and its content (the gradebook's grades are compared as grades; grades.csv
    is what nbgrader export writes)."""
    return {p.relative_to(course).as_posix(): p.read_bytes() for p in sorted(course.rglob("*"))
            if p.is_file() and p.name not in ("gradebook.db", "grades.csv")}


def _submission_id(course: Path, student: str) -> str:
    from nbgrader.api import Gradebook
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        return gb.find_submission_notebook(A, A, student).id


# ------------------------------------------------------------------------------------ the live pieces

class Reports(http.server.BaseHTTPRequestHandler):
    """The loopback server a payload reports to: every path it is asked for, kept."""
    seen: list = []

    def do_GET(self):
        self.seen.append(self.path)
        self.send_response(204)
        self.send_header("Access-Control-Allow-Origin", "*")
        self.end_headers()

    def log_message(self, *args):
        pass


@pytest.fixture
def reports():
    """The URL of the loopback server payloads report to."""
    Reports.seen = []
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Reports)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def _free_port() -> int:
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Formgrader:
    """A Jupyter server with nbgrader's extensions (the [instructor] extra enables them), its root the course
    folder, on loopback; stopped by its process id."""

    def __init__(self, course: Path, env: dict, home: Path, log: Path):
        self.port, self.token = _free_port(), "instructor-token-5e1f"
        self.base = f"http://127.0.0.1:{self.port}"
        env = dict(env, JUPYTER_CONFIG_DIR=str(home / "config"), JUPYTER_DATA_DIR=str(home / "data"),
                   JUPYTER_RUNTIME_DIR=str(home / "runtime"), IPYTHONDIR=str(home / "ipython"))
        self.log = open(log, "w")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "jupyter", "server", "--no-browser", "--allow-root", "--ServerApp.ip=127.0.0.1",
             f"--ServerApp.port={self.port}", "--ServerApp.port_retries=0", f"--IdentityProvider.token={self.token}",
             f"--ServerApp.root_dir={course}", *(f"--ServerApp.jpserver_extensions={x}=False" for x in UNUSED)],
            cwd=course, env=env, stdout=self.log, stderr=subprocess.STDOUT)

    def wait(self, seconds=90):
        end = time.monotonic() + seconds
        while time.monotonic() < end and self.proc.poll() is None:
            try:
                req = urllib.request.Request(f"{self.base}/api/status", headers={"Authorization": f"token {self.token}"})
                with urllib.request.urlopen(req, timeout=5):
                    return self
            except OSError:
                time.sleep(0.3)
        pytest.fail(f"the Jupyter server did not start (log: {self.log.name})")

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.log.close()


def _open(context, url: str, console: list):
    """Open `url` in a new page and let it settle: every script it runs has run, every fetch ended."""
    page = context.new_page()
    page.on("console", lambda m: console.append(m.text))
    page.goto(url, wait_until="load", timeout=60_000)
    page.wait_for_load_state("networkidle", timeout=30_000)
    page.wait_for_timeout(500)
    return page


def _deny_remote(route, remote):
    """Nothing leaves the machine: the course pages' CDN scripts fail fast, and a fetch of the student's
    remote host is recorded."""
    from urllib.parse import urlsplit
    url = urlsplit(route.request.url)
    if url.scheme == "file" or url.hostname in ("127.0.0.1", "localhost"):
        return route.continue_()
    remote.append(route.request.url)
    return route.abort()


# ------------------------------------------------------------------------------------ the test

def test_a_scripted_submission_runs_nothing_in_formgrader_or_feedback(tmp_path, reports):
    started = time.monotonic()
    executable, sync_api = _chromium(), _playwright()
    course, home = tmp_path / "course", tmp_path / "home"
    env = dict(os.environ, HOME=str(home), PYTHONPATH=str(REPO), COURSE_LIB_SOLUTIONS=str(solutions.SOLUTIONS_DIR),
               PATH=os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]))
    home.mkdir()
    _run(["course_lib", "instructor", "nbgrader", "--out", str(course), str(_mini(tmp_path / "notebooks"))], tmp_path, env)
    server = Formgrader(course, env, home, tmp_path / "jupyter.log")      # starts while nbgrader grades
    pw = None
    try:
        _run(["nbgrader", "generate_assignment", A], course, env)
        _submit(course, "honest", _own(KEY), [])
        submitted = _submit(course, "mallory", None, attack_cells(reports))
        for name, text in handed_in(reports).items():          # files beside her notebook, formgrader serves them
            (submitted.parent / name).parent.mkdir(parents=True, exist_ok=True)
            (submitted.parent / name).write_text(text)
        _run(["nbgrader", "autograde", A], course, env)
        _run(["nbgrader", "generate_feedback", A], course, env)
        graded = time.monotonic()
        grades, files = _grades(course), _files(course)
        assert (grades["honest"], grades["mallory"]) == (2.0, 0.0), f"autograde, before anyone looked: {grades}"

        server.wait()
        pw = sync_api.sync_playwright().start()
        failures, checked = _look(pw.chromium.launch(executable_path=executable, headless=True, args=CHROMIUM_ARGS),
                                  server, course, submitted, grades, files, env)
    finally:
        if pw is not None:
            pw.stop()
        server.stop()
    print(f"\ntimes: export+autograde+feedback {graded - started:.1f} s, server+browser+checks "
          f"{checked - graded:.1f} s, control {time.monotonic() - checked:.1f} s")
    assert not failures, "\n".join(failures)


def _look(browser, server, course, submitted, grades, files, env) -> tuple[list, float]:
    """The instructor opens mallory's grading page and both feedback pages; what went wrong, and when the
    checks ended (the control follows)."""
    remote, console = [], []
    context = browser.new_context()
    context.route("**/*", lambda route: _deny_remote(route, remote))
    _open(context, f"{server.base}/formgrader?token={server.token}", console)           # logged in, as the instructor
    grading = f"{server.base}/formgrader/submissions/{_submission_id(course, 'mallory')}/"
    shown = {("formgrader", "mallory"): _open(context, grading, console).inner_text("body")}
    for name in handed_in("x"):
        _open(context, f"{grading}{name}", console)
    for student in ("mallory", "honest"):
        feedback = course / "feedback" / student / A / f"{A}.html"
        shown[("feedback", student)] = _open(context, feedback.as_uri(), console).inner_text("body")

    ran = sorted(set(Reports.seen)) + [m for m in console if "PAYLOAD-RAN" in m]
    evil = [u for u in remote if EVIL_HOST in u]
    exported, after, now = _export(course, env), _grades(course), _files(course)
    written = sorted(set(now) ^ set(files)) + [f for f in files if now.get(f, files[f]) != files[f]]
    failures = [f"a payload ran: {ran}"] if ran else []
    failures += [f"the student's content fetched {evil}"] if evil else []
    failures += [f"nbgrader export after the instructor looked: {exported}"] if exported != {"honest": 2.0, "mallory": 0.0} else []
    failures += [f"the gradebook changed: {grades} -> {after}"] if after != grades else []
    failures += [f"files written in the course folder: {written}"] if written else []
    failures += [f"{page} ({student}): the verdict {VERDICT[student]!r} is not shown"
                 for (page, student), text in shown.items() if VERDICT[student] not in text]
    failures += [f"{page} (mallory): her own words are gone" for (page, student), text in shown.items()
                 if student == "mallory" and "My notes on the kernel." not in text]
    kept = [p.relative_to(course).as_posix() for p in course.glob("*/mallory/**/*")
            if p.is_file() and p.suffix != ".ipynb" and "submitted" not in p.parts and p.name != f"{A}.html"]
    failures += [f"files mallory handed in are where formgrader and the feedback serve them: {kept}"] if kept else []
    made = (course / "autograded" / "mallory" / A / f"{A}.ipynb").read_text()      # her cells ran, and were cleaned
    if "<b>bold</b>" not in made or "not shown by the course's grader: application/javascript" not in made:
        failures.append("mallory's cells made no outputs in the sandbox: nothing was there to run")
    checked = time.monotonic()

    # the control: the notebook as submitted, where formgrader reads the autograded one
    Reports.seen.clear()
    shutil.copy(submitted, course / "autograded" / "mallory" / A / f"{A}.ipynb")
    _open(context, grading, console)
    control = {v.split("/ran/")[1] for v in Reports.seen if "/ran/" in v}
    if not {"md_img", "html_script", "html_img", "js"} <= control:
        failures.append(f"control: the unsanitized notebook ran only {sorted(control)}: the test proves nothing")
    if _grades(course)["mallory"] != 2.0 or not list(course.glob("pwned-*.txt")):
        failures.append("control: the unsanitized notebook did not act as the instructor: the test proves nothing")
    browser.close()
    return failures, checked

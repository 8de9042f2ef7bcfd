"""Real nbgrader, end to end: ``instructor nbgrader``'s export of two small notebooks made here (the
exercise cells of notebooks 06 and 03 and their check cells), ``nbgrader generate_assignment`` (the
released exercise is the course's stub, and compiles), one ``nbgrader autograde`` round per assignment
on every submission, ``generate_feedback`` and ``export`` (grades.csv). The submissions: correct, wrong
and untouched work, cheating through the kernel (the course's kernel, a solution file pasted or
#included, one block or one thread doing everything, every element stored twice, 32-bit offsets), and
attacks on the grader itself (issue 27): Python that replaces the checker, cells that print the
solutions, the seed, other students' work and the grader's environment through /proc, a cell that
plants an IPython startup file in the grader's HOME and files in the course folder before a later
student's untouched stub. Each attack must score 0 and leave nothing behind; the feedback must hold no
solution line, no other student's work, no hidden shape and nothing of the grader's environment;
honest work must show no checksum warning, a tampered test cell must; without bubblewrap autograde
refuses. About 90 s: slow."""
import csv
import html
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from course_lib.lab.grader import hidden as H
from course_lib.lab.instructor import assignments as grading, release
from course_lib.teach import exercises as E
from course_lib.teach import solutions

pytestmark = pytest.mark.slow       # nbgrader runs each submission's notebook in a sandbox (~3 s each)
pytest.importorskip("nbgrader", reason="nbgrader comes with the [instructor] extra (Python >= 3.11)")


@pytest.fixture(autouse=True)
def _bubblewrap():
    """Autograding refuses without a sandbox (the test's last step checks that it does): skip, saying why."""
    from course_lib.lab.grader import sandbox
    try:
        sandbox.require()
    except sandbox.SandboxUnavailable as exc:
        pytest.skip(str(exc))

REPO = Path(__file__).resolve().parents[2]
TILE, COL = "06_tiles", "03_columns"
SOURCES = {TILE: ("06_more_work_per_thread", "tile_32x8"), COL: ("03_naive_transpose", "column_read")}
SECRET_ENV = "tell-no-one-6d1f"                        # in the grader's environment only
OTHER = "OTHER-STUDENT-WORK-c0ffee"                    # in student 'correct''s notebook only


def _own(key):
    """The solution as a student would write it: no markers, no comments of the solution's."""
    return "%%cuda\n" + "\n".join(line.split("//")[0].rstrip() for line in solutions.solved(solutions.body(key)).splitlines())


ONE_BLOCK = """%%cuda
__global__ void transpose_32x8(float* out, const float* in, int rows, int cols)
{
    __shared__ float tile[32][32 + 1];
    if (blockIdx.x || blockIdx.y) return;
    for (int by = 0; by * 32 < rows; ++by)
        for (int bx = 0; bx * 32 < cols; ++bx) {
            int x = bx * 32 + threadIdx.x, y = by * 32 + threadIdx.y;
            for (int j = 0; j < 32; j += 8)
                if (x < cols && y + j < rows) tile[threadIdx.y + j][threadIdx.x] = in[(size_t)(y + j) * cols + x];
            __syncthreads();
            x = by * 32 + threadIdx.x; y = bx * 32 + threadIdx.y;
            for (int j = 0; j < 32; j += 8)
                if (x < rows && y + j < cols) out[(size_t)(y + j) * rows + x] = tile[threadIdx.x][threadIdx.y + j];
            __syncthreads();
        }
}"""
ONE_THREAD = """%%cuda
__global__ void transpose_32x8(float* out, const float* in, int rows, int cols)
{
    __shared__ float tile[32][32 + 1];
    if (blockIdx.x || blockIdx.y || threadIdx.x || threadIdx.y) return;
    tile[0][0] = 0;
    for (int r = 0; r < rows; ++r)
        for (int c = 0; c < cols; ++c)
            out[(size_t)c * rows + r] = in[(size_t)r * cols + c];
}"""
STORE = "            out[(size_t)(y + j) * rows + x] = tile[threadIdx.x][threadIdx.y + j];"
TWICE = ("        {\n            volatile float* o = out + (size_t)(y + j) * rows + x;\n"
         "            *o = tile[threadIdx.x][threadIdx.y + j];\n            *o = tile[threadIdx.x][threadIdx.y + j];\n        }")
DECLARE = "%%cuda\n__global__ void transpose_32x8(float* out, const float* in, int rows, int cols);\n"
# issue 32: kernels/tile.cu's tile<float, 32, 8, 1> dressed: renamed, constants written in, no comments, extra ';',
# two independent statements swapped — the same code as the course's kernel
COSMETIC = """%%cuda
__global__ void transpose_32x8(float* __restrict__ o, const float* __restrict__ a, int n_rows, int n_cols)
{
    __shared__ float buf[32][32 + 1];;
    int row = blockIdx.y * 32 + threadIdx.y;;
    int col = blockIdx.x * 32 + threadIdx.x;;
    for (int k = 0; k < 32; k += 8)
        if (col < n_cols && row + k < n_rows)
            buf[threadIdx.y + k][threadIdx.x] = a[(size_t)(row + k) * n_cols + col];;
    __syncthreads();;
    row = blockIdx.x * 32 + threadIdx.y;
    col = blockIdx.y * 32 + threadIdx.x;
    for (int k = 0; k < 32; k += 8)
        if (col < n_rows && row + k < n_cols)
            o[(size_t)(row + k) * n_rows + col] = buf[threadIdx.x][threadIdx.y + k];
}"""

REPLACE_CHECKER = """import course_lib.teach.exercises as E
E.grade = lambda *a, **k: print("✓ tile_32x8: all checks pass")
E.check = lambda *a, **k: E.Report("tile_32x8")
E.Report.ok = property(lambda self: True)"""
SNOOP = f"""import glob, os
print("SOLUTIONS", os.environ.get("COURSE_LIB_SOLUTIONS"))
for f in [*glob.glob(os.environ.get("COURSE_LIB_SOLUTIONS", "/nowhere") + "/*.cu"), {str(solutions.path('tile_32x8'))!r}]:
    try: print(open(f).read())
    except OSError as e: print(e)
try:
    from course_lib.lab import grading; print("HIDDEN", getattr(grading, "HIDDEN_SHAPES", None))
except Exception as e: print(e)
for f in ["../../../.course_lib_seed", *glob.glob("../../../*/*/*/*.ipynb")]:
    try: print(f, open(f).read())
    except OSError as e: print(e)"""
PROC = """import os
pid = os.getpid()
while pid > 0:
    for what in ("environ", "cmdline"):
        try: print(pid, what, open(f"/proc/{pid}/{what}").read())
        except OSError as e: print(e)
    try: print(pid, "cwd", os.readlink(f"/proc/{pid}/cwd"), os.listdir(f"/proc/{pid}/cwd"))
    except OSError as e: print(e)
    try: pid = int(next(l for l in open(f"/proc/{pid}/status") if l.startswith("PPid")).split()[1])
    except (OSError, StopIteration): break
print(os.listdir("/proc/1/root"))"""
PLANT = """import pathlib
startup = pathlib.Path.home() / ".ipython/profile_default/startup"
startup.mkdir(parents=True, exist_ok=True)
code = 'import course_lib.teach.exercises as E\\nE.grade = lambda *a, **k: print("planted")\\n'
(startup / "00-planted.py").write_text(code)
for d in ("../../..", "../../../source/06_tiles", "."):
    try: (pathlib.Path(d) / "planted.py").write_text(code)
    except OSError as e: print(e)"""

# student: (assignment, the exercise cell's new source (None: untouched), extra cells after it, points, words the
# feedback must hold). Students are autograded in this order (nbgrader sorts them): 'plant' before 'zz_later'.
SUBMISSIONS = {
    "correct": (TILE, _own("tile_32x8"), [f"# {OTHER}"], 2, ["✓ tile_32x8: all checks pass",
                                                             "more shapes the release does not show"]),
    "bank_conflicts": (TILE, _own("tile_32x8").replace("[32][32 + 1]", "[32][32]"), [], 0,
                       ["no bank conflicts", "pad each row"]),
    "course_kernel": (TILE, 'transpose_32x8 = cl.transposes.kernel("padded_32x8").function', [], 0,
                      ["not a %%cuda cell", "took from the course's own kernels"]),
    "solution_file": (TILE, "%%cuda\n" + solutions.body("tile_32x8"), [], 0, ["a course solution", "markers"]),
    "one_block": (TILE, ONE_BLOCK, [], 0, ["too slow", "spread the work over the grid"]),
    "stores_twice": (TILE, "%%cuda\n" + solutions.solved(solutions.body("tile_32x8")).replace(STORE, TWICE)
                     .replace("// column of out = row of in", "").replace("// row of out = column of in", ""), [], 0,
                     ["stored more than once", "each element of in is loaded once"]),
    "one_thread": (TILE, ONE_THREAD, [], 0, ["too slow", "not stuck"]),
    "untouched": (TILE, None, [], 0, ["never written"]),
    "include_solution": (TILE, DECLARE + '#include "solutions/tile_32x8.cu"', [], 0, ["does not compile"]),
    "include_absolute": (TILE, DECLARE + f'#include "{solutions.path("tile_32x8")}"', [], 0, ["does not compile"]),
    "snoop": (TILE, None, [SNOOP, PROC], 0, ["never written"]),
    "plant": (TILE, None, [REPLACE_CHECKER, PLANT], 0, ["never written"]),
    "tampered": (TILE, None, [], 0, ["never written"]),          # its locked test cell says pass
    "zz_later": (TILE, None, [], 0, ["never written"]),
    "cosmetic_copy": (TILE, COSMETIC, [], 0, ["is the course's kernel tile", "kernels/tile.cu", "same code"]),
    "col_correct": (COL, _own("column_read"), [], 2, ["✓ column_read: all checks pass"]),
    "col_32_bit": (COL, _own("column_read").replace("(size_t)", ""), [], 0, ["more than 2^32", "64 bits"]),
}
HONEST = ("correct", "bank_conflicts", "untouched", "col_correct", "col_32_bit")
ATTACKS = ("include_solution", "include_absolute", "snoop", "plant", "tampered", "zz_later", "untouched")          # their feedback may show no solution line: they wrote none


def _mini(tmp_path, assignment) -> Path:
    """A small notebook with the exercise of a course notebook: setup, the %%cuda stub, its check cell."""
    name, key = SOURCES[assignment]
    nb = nbformat.read(REPO / "notebooks" / f"{name}.ipynb", 4)
    ec = release.exercise_cells(nb, f"{name}.ipynb")[0]
    mini = nbformat.v4.new_notebook(metadata=nb.metadata)
    mini.cells = [nbformat.v4.new_markdown_cell(f"# {assignment}"),
                  nbformat.v4.new_code_cell("import numpy as np\nimport course_lib as cl\nbackend = cl.setup()"),
                  nb.cells[ec.index], nb.cells[ec.check_index]]
    path = tmp_path / "notebooks" / f"{assignment}.ipynb"
    path.parent.mkdir(exist_ok=True)
    nbformat.write(mini, path)
    return path


def _nbgrader(course, env, *args, timeout=600):
    env = {**env, "PATH": os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])}  # its alembic
    r = subprocess.run([sys.executable, "-m", "nbgrader", *args], cwd=course, capture_output=True, text=True,
                       timeout=timeout, env=env)
    assert r.returncode == 0 and "ERROR" not in r.stderr, f"nbgrader {' '.join(args)}:\n{r.stderr[-4000:]}"
    return r


def _cells(path):
    nb = json.loads(path.read_text())
    return nb, {c["metadata"]["nbgrader"]["grade_id"]: c for c in nb["cells"] if "nbgrader" in c["metadata"]}


def _submit(course, student, assignment, source, extra):
    nb = json.loads((course / "release" / assignment / f"{assignment}.ipynb").read_text())
    i = next(i for i, c in enumerate(nb["cells"]) if c["metadata"].get("nbgrader", {}).get("solution"))
    if source is not None:
        nb["cells"][i]["source"] = source
    if student == "tampered":
        next(c for c in nb["cells"] if c["metadata"].get("nbgrader", {}).get("grade"))["source"] = "pass"
    nb["cells"][i + 1:i + 1] = [nbformat.v4.new_code_cell(x) for x in extra]
    target = course / "submitted" / student / assignment / f"{assignment}.ipynb"
    target.parent.mkdir(parents=True)
    target.write_text(json.dumps(nb))


def _warnings_by_student(log: str) -> dict[str, list[str]]:
    """nbgrader's log of one autograde round: each student's WARNING lines."""
    out, student = {}, None
    for line in log.splitlines():
        m = re.search(r"submitted/([^/]+)/", line)
        if m and "INFO" in line:
            student = m[1]
        elif "WARNING" in line and student:
            out.setdefault(student, []).append(line)
    return out


def test_nbgrader_round_trip_grades_the_kernel_only_and_every_attack_gets_nothing(tmp_path):
    course, home = tmp_path / "course", tmp_path / "home"
    home.mkdir()
    env = dict(os.environ, HOME=str(home), GRADER_SECRET=SECRET_ENV, PYTHONPATH=str(REPO),   # this checkout's course_lib
               COURSE_LIB_SOLUTIONS=str(solutions.SOLUTIONS_DIR))      # as on a hub: the instructor keeps them
    paths = [_mini(tmp_path, a) for a in (TILE, COL)]
    assert set(grading.export(paths, course, log=lambda *a: None)) == {TILE, COL}
    seed = H.seed(course)
    for a, (name, key) in SOURCES.items():
        _nbgrader(course, env, "generate_assignment", a)
        released, cells = _cells(course / "release" / a / f"{a}.ipynb")
        assert "".join(cells[f"{key}_kernel"]["source"]).endswith(solutions.stub(key))  # the course's stub
        assert "".join(cells[f"{key}_check"]["source"]).endswith(f'cl.exercises.grade("{key}")')
        assert seed not in json.dumps(released) and not list((course / "release").rglob(H.SEED_FILE))
    for student, (a, source, extra, _, _) in SUBMISSIONS.items():
        _submit(course, student, a, source, extra)
    logs = {a: _nbgrader(course, env, "autograde", a).stderr for a in (TILE, COL)}
    for a in (TILE, COL):
        _nbgrader(course, env, "generate_feedback", a)
    _nbgrader(course, env, "export")
    with open(course / "grades.csv") as f:
        scores = {(row["student_id"], row["assignment"]): float(row["score"]) for row in csv.DictReader(f)}
    secret = release._secret_lines(solutions.body("tile_32x8"), solutions.stub("tile_32x8"), "")
    failures = []
    for student, (a, _, _, points, words) in SUBMISSIONS.items():
        if scores[(student, a)] != points:
            failures.append(f"{student}: {scores[(student, a)]} points, expected {points}")
        feedback = re.sub(r"<[^>]+>", "", html.unescape((course / "feedback" / student / a / f"{a}.html").read_text()))
        _, graded = _cells(course / "autograded" / student / a / f"{a}.ipynb")
        said = json.dumps(next(c["outputs"] for g, c in graded.items() if g.endswith("_check")), ensure_ascii=False)
        failures += [f"{student}: {w!r} not in the verdict" for w in words if w not in feedback or w not in said]
        hidden = H.hidden_shapes(E.get(SOURCES[a][1]), seed, student, a)
        leaked = ([f"solution line {s!r}" for s in secret if s in feedback and student in ATTACKS] + [s for s in (OTHER, SECRET_ENV, seed,
                  str(course), "(33, 70)") if s in feedback and not (s == OTHER and student == "correct")]
                  + [f"hidden shape {s}" for s in hidden if f"{s[0]}x{s[1]} matrix" in feedback or str(s) in feedback])
        failures += [f"{student}'s feedback shows {x}" for x in leaked]
    planted = [p for p in (*course.rglob("planted.py"), *home.rglob("00-planted.py"))]
    failures += [f"planted: {p}" for p in planted]
    warned = {**_warnings_by_student(logs[TILE]), **_warnings_by_student(logs[COL])}
    failures += [f"{s}: nbgrader warns {w}" for s in HONEST for w in warned.get(s, []) if "checksum" in w]
    if not any("checksum" in w for w in warned.get("tampered", [])):
        failures.append("a tampered locked cell gave no checksum warning")
    refused = subprocess.run([sys.executable, "-m", "nbgrader", "autograde", TILE, "--student", "zz_later", "--force"],
                             cwd=course, capture_output=True, text=True, env=dict(env, PATH="/nowhere"))   # no bwrap
    if refused.returncode == 0 or "apt install bubblewrap" not in refused.stderr:
        failures.append(f"without bwrap autograde did not refuse: {refused.stderr[-2000:]}")
    assert not failures, "\n".join(failures)

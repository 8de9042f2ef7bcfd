"""Real nbgrader, end to end: ``instructor nbgrader``'s export of small notebooks made here (the exercise
cells and check cells of tile_32x8, column_read and every exercise whose kernel has a declared signature:
today the in-place transpose and the three-array split), ``nbgrader generate_assignment`` (the released
exercise is the course's stub, and compiles), one ``nbgrader autograde`` round on every submission of every
assignment, ``generate_feedback`` and ``export`` (grades.csv); each step is one nbgrader for all the assignments
(the id '*': nbgrader globs it, and grades each match as it grades a named one), not one per assignment (2.5 s
of CPU each to start). Every exercise of the round gets the same
three submissions, each derived from its folder: its solution as a student would write it (full points),
its first wrong kernel of wrong.toml (none, and the words that kernel's report must hold) and the untouched
stub (none). tile_32x8 gets the rest, built from its parameters rather than its spelling: cheating through
the kernel (the course's kernel, a cosmetic copy of it, a solution file pasted or #included, one block or
one thread doing everything, every element stored twice), and attacks on the grader itself (issue 27):
Python that replaces the checker, cells that print the solutions, the seed, other students' work and the
grader's environment through /proc, a cell that plants an IPython startup file in the grader's HOME and
files in the course folder before a later student's untouched stub; and attacks on the class's grading
(issue 32), each after a correct kernel, under small bounds of the box around a submission (BOUNDS): files
written to the working folder, /tmp, HOME and /dev/shm, memory held by processes or by processes and files
together, 300 processes, two sleeps that together pass the notebook's time, 256 lines of 1 MiB, one line of
32 MiB and a 4 MiB image. column_read's 32-bit offsets score 0 too. Each attack must score 0 and leave
nothing behind (a stopped notebook: the bound named in its verdict, at most its output bound kept; nbgrader
itself stays under 512 MiB; nothing lands in the grader's TMPDIR); the feedback must hold no solution line,
no other student's work, no hidden shape and nothing of the grader's environment; honest work, graded under
the same bounds, gets its points and shows no checksum warning, a tampered test cell must; without
bubblewrap autograde refuses. Before the generic round (2026-12-05, 30 submissions): 4:03 on 2 cores at
load 4-5; slow."""
import csv
import html
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import nbformat
import pytest

from course_lib.lab.grader import hidden as H
from course_lib.lab.instructor import assignments, release
from course_lib.teach import exercises as E
from course_lib.teach import mutants, solutions, spec
from course_lib.teach.exercise_list import folder

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("bubblewrap")]       # nbgrader runs each submission's notebook in a sandbox (~3 s each)
pytest.importorskip("nbgrader", reason="nbgrader comes with the [instructor] extra (Python >= 3.11)")


REPO = Path(__file__).resolve().parents[2]
ATTACKED = "tile_32x8"                   # the exercise every attack below is made for
ROUND = [ATTACKED, "column_read"] + sorted(k for k, ex in E.EXERCISES.items() if ex.custom)
SOURCES = {f"{E.get(k).lesson}_{k}": k for k in ROUND}       # assignment -> exercise
TILE = f"{E.get(ATTACKED).lesson}_{ATTACKED}"
SECRET_ENV = "tell-no-one-6d1f"                        # in the grader's environment only
OTHER = "OTHER-STUDENT-WORK-c0ffee"                    # in student 'own''s notebook only


def _plain(text):
    """A cell body as a student would write it: no markers, no comments of the solution's."""
    return "%%cuda\n" + "\n".join(line.split("//")[0].rstrip() for line in solutions.solved(text).splitlines())


def _own(key):
    return _plain(solutions.body(key))


def _wrong(key):
    """(the first wrong kernel of the exercise's wrong.toml as a student's cell, the words its verdict must hold)."""
    m = mutants.written(folder(key), E.get(key), solutions._cell(solutions.path(key).read_text()))[0]
    return _plain(m.source), list(m.words)


_EX = E.get(ATTACKED)
_T, _P = _EX.parameters[0].ctype.rstrip("*"), dict(_EX.params)
_SIG = f"__global__ void {_EX.kernel}({', '.join(map(str, _EX.parameters))})"
ONE_BLOCK = "%%cuda\n" + spec.render(_SIG + """
{
    __shared__ T tile[TILE][TILE + 1];
    if (blockIdx.x || blockIdx.y) return;
    for (int by = 0; by * TILE < rows; ++by)
        for (int bx = 0; bx * TILE < cols; ++bx) {
            int x = bx * TILE + threadIdx.x, y = by * TILE + threadIdx.y;
            for (int j = 0; j < TILE; j += BY)
                if (x < cols && y + j < rows) tile[threadIdx.y + j][threadIdx.x] = in[(size_t)(y + j) * cols + x];
            __syncthreads();
            x = by * TILE + threadIdx.x; y = bx * TILE + threadIdx.y;
            for (int j = 0; j < TILE; j += BY)
                if (x < rows && y + j < cols) out[(size_t)(y + j) * rows + x] = tile[threadIdx.x][threadIdx.y + j];
            __syncthreads();
        }
}""", _P)
ONE_THREAD = "%%cuda\n" + spec.render(_SIG + """
{
    __shared__ T tile[TILE][TILE + 1];
    if (blockIdx.x || blockIdx.y || threadIdx.x || threadIdx.y) return;
    tile[0][0] = 0;
    for (int r = 0; r < rows; ++r)
        for (int c = 0; c < cols; ++c)
            out[(size_t)c * rows + r] = in[(size_t)r * cols + c];
}""", _P)
STORE = "            out[(size_t)(y + j) * rows + x] = tile[threadIdx.x][threadIdx.y + j];"
TWICE = (f"        {{\n            volatile {_T}* o = out + (size_t)(y + j) * rows + x;\n"
         "            *o = tile[threadIdx.x][threadIdx.y + j];\n            *o = tile[threadIdx.x][threadIdx.y + j];\n        }")
DECLARE = f"%%cuda\n{_SIG};\n"
NO_PADDING = next(m for m in mutants.derive(_EX, lambda p: solutions.body(ATTACKED, p)) if m.name == "no_padding")
# issue 32: kernels/tile.cu's tile<T, TILE, BY, 1> dressed: renamed, constants written in, no comments, extra ';',
# two independent statements swapped — the same code as the course's kernel (with this exercise's parameters)
COSMETIC = "%%cuda\n" + spec.render(f"__global__ void {_EX.kernel}(T* __restrict__ o, const T* __restrict__ a, "
                                    "int n_rows, int n_cols)" + """
{
    __shared__ T buf[TILE][TILE + 1];;
    int row = blockIdx.y * TILE + threadIdx.y;;
    int col = blockIdx.x * TILE + threadIdx.x;;
    for (int k = 0; k < TILE; k += BY)
        if (col < n_cols && row + k < n_rows)
            buf[threadIdx.y + k][threadIdx.x] = a[(size_t)(row + k) * n_cols + col];;
    __syncthreads();;
    row = blockIdx.x * TILE + threadIdx.y;
    col = blockIdx.y * TILE + threadIdx.x;
    for (int k = 0; k < TILE; k += BY)
        if (col < n_rows && row + k < n_cols)
            o[(size_t)(row + k) * n_rows + col] = buf[threadIdx.x][threadIdx.y + k];
}""", _P)

REPLACE_CHECKER = f"""import course_lib.teach.exercises as E
E.grade = lambda *a, **k: print("✓ {ATTACKED}: all checks pass")
E.check = lambda *a, **k: E.Report("{ATTACKED}")
E.Report.ok = property(lambda self: True)"""
SNOOP = f"""import glob, os
print("SOLUTIONS", os.environ.get("COURSE_LIB_SOLUTIONS"))
for f in [*glob.glob(os.environ.get("COURSE_LIB_SOLUTIONS", "/nowhere") + "/*/*.cu"), {str(solutions.path(ATTACKED))!r}]:
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
PLANT = f"""import pathlib
startup = pathlib.Path.home() / ".ipython/profile_default/startup"
startup.mkdir(parents=True, exist_ok=True)
code = 'import course_lib.teach.exercises as E\\nE.grade = lambda *a, **k: print("planted")\\n'
(startup / "00-planted.py").write_text(code)
for d in ("../../..", "../../../source/{TILE}", "."):
    try: (pathlib.Path(d) / "planted.py").write_text(code)
    except OSError as e: print(e)"""

# Attacks on the grading of the class (issue 32): each student writes a correct kernel, then one cell passes one
# bound of the box around a submission (course_lib/lab/grader/box.py), set small here; the box stops the notebook and
# the submission gets 0, the bound named. MiB = 2**20 bytes.
MIB = 2**20
BOUNDS = dict(time_limit=30, memory_limit=512 * MIB, space_limit=128 * MIB, shm_limit=32 * MIB, process_limit=64,
              output_limit=1 * MIB)
FILL = """written = 0
try:
    with open({path}, "wb") as f:
        for _ in range(320):
            f.write(b"w" * 2**20); f.flush(); written += 1
except OSError as e:
    print(e)
print("WROTE", written, "MiB")"""
HOLD = """import subprocess, sys, time
hogs = [subprocess.Popen([sys.executable, "-c", "import time; x = b'm' * (300 << 20); time.sleep(60)"]) for _ in range(2)]
time.sleep(8)
print("HELD", [h.poll() for h in hogs])"""
TOGETHER = f"""import time
with open("/tmp/half.bin", "wb") as f:
    f.write(b"t" * (100 << 20))                     # files: under the space bound
held = b"h" * ({BOUNDS['memory_limit']} - (140 << 20))  # the kernel (about 100 MiB before): under the bound alone
time.sleep(3)
print("TOGETHER", len(held) >> 20, "MiB held and 100 MiB of files")"""
FORK = """import subprocess
procs = []
try:
    for _ in range(300):
        procs.append(subprocess.Popen(["sleep", "60"]))
except OSError as e:
    print(e)
print("STARTED", len(procs))"""
SLEEP = f"import time\ntime.sleep({BOUNDS['time_limit'] * 3 // 4})\nprint('SLEPT')"
LINES = "for _ in range(256):\n    print('l' * 2**20, flush=True)"
ONE_LINE = "print('o' * (32 << 20))"
PNG = "import os\nfrom IPython.display import Image, display\ndisplay(Image(data=b'\\x89PNG\\r\\n\\x1a\\n' + os.urandom(4 << 20)))"
SAYS = {"space": f"more than {BOUNDS['space_limit'] // MIB} MiB of files",
        "shm": f"more than {BOUNDS['shm_limit'] // MIB} MiB of files",
        "memory": f"more than {BOUNDS['memory_limit'] // MIB} MiB of memory (processes and files together)",
        "processes": f"more than {BOUNDS['process_limit']} processes",
        "time": f"longer than {BOUNDS['time_limit']} s",
        "output": f"more than {BOUNDS['output_limit'] // MIB} MiB of output"}
BOXED = {"fill_folder": ([FILL.format(path='"big.bin"')], "space"),
         "fill_tmp": ([FILL.format(path='"/tmp/big.bin"')], "space"),
         "fill_home": ([FILL.format(path='__import__("os").path.expanduser("~/big.bin")')], "space"),
         "fill_shm": ([FILL.format(path='"/dev/shm/big.bin"')], "shm"),
         "hold_memory": ([HOLD], "memory"), "memory_and_files": ([TOGETHER], "memory"),
         "processes_300": ([FORK], "processes"), "two_sleeps": ([SLEEP, SLEEP], "time"),
         "output_lines": ([LINES], "output"), "output_one_line": ([ONE_LINE], "output"), "output_png": ([PNG], "output")}

# (student, assignment): (the exercise cell's new source (None: untouched), extra cells after it, points, words the
# feedback must hold ("a|b": either)). Students are autograded in this order (nbgrader sorts them): 'plant' before
# 'zz_later'. Every exercise of the round: its own solution, its first wrong kernel, its untouched stub.
SUBMISSIONS = {}
for _a, _k in SOURCES.items():
    SUBMISSIONS[("own", _a)] = (_own(_k), [f"# {OTHER}"], E.get(_k).points,
                                [f"✓ {_k}: all checks pass", "more shapes the release does not show"])
    SUBMISSIONS[("wrong", _a)] = (_wrong(_k)[0], [], 0, _wrong(_k)[1])
    SUBMISSIONS[("untouched", _a)] = (None, [], 0, ["✗"])
SUBMISSIONS.update({(student, TILE): v for student, v in {
    "bank_conflicts": (_plain(NO_PADDING.source), [], 0, ["no bank conflicts", "pad each row"]),
    "course_kernel": (f'{_EX.kernel} = cl.transposes.kernel("padded_32x8").function', [], 0,
                      ["not a %%cuda cell", "took from the course's own kernels"]),
    "solution_file": ("%%cuda\n" + solutions.body(ATTACKED), [], 0, ["a course solution", "markers"]),
    "one_block": (ONE_BLOCK, [], 0, ["too slow", "spread the work over the grid"]),
    "stores_twice": (_own(ATTACKED).replace(STORE.rstrip(), TWICE), [], 0,
                     ["stored more than once", "each element of in is loaded once"]),
    "one_thread": (ONE_THREAD, [], 0, ["too slow", "not stuck"]),
    "include_solution": (DECLARE + f'#include "solutions/{ATTACKED}.cu"', [], 0, ["does not compile"]),
    "include_absolute": (DECLARE + f'#include "{solutions.path(ATTACKED)}"', [], 0, ["does not compile"]),
    "snoop": (None, [SNOOP, PROC], 0, ["never written"]),
    "plant": (None, [REPLACE_CHECKER, PLANT], 0, ["never written"]),
    "tampered": (None, [], 0, ["never written"]),          # its locked test cell says pass
    "zz_later": (None, [], 0, ["never written"]),
    "cosmetic_copy": (COSMETIC, [], 0, ["is the course's kernel tile", "kernels/tile.cu", "same code"]),
    **{student: (_own(ATTACKED), cells, 0, ["stopped: the notebook", SAYS[bound]])
       for student, (cells, bound) in BOXED.items()},
}.items()})
SUBMISSIONS[("col_32_bit", f"{E.get('column_read').lesson}_column_read")] = (
    _own("column_read").replace("(size_t)", ""), [], 0, ["more than 2^32", "64 bits"])
HONEST = ("own", "wrong", "bank_conflicts", "untouched", "col_32_bit")
ATTACKS = ("include_solution", "include_absolute", "snoop", "plant", "tampered", "zz_later", "untouched")          # their feedback may show no solution line: they wrote none


def _mini(tmp_path, assignment) -> Path:
    """A small notebook with the exercise of a course notebook: setup, the %%cuda stub, its check cell."""
    key = SOURCES[assignment]
    path = next((REPO / "notebooks").glob(f"{E.get(key).lesson}_*.ipynb"))
    nb = nbformat.read(path, 4)
    ec = next(e for e in release.exercise_cells(nb, path.name) if e.key == key)
    mini = nbformat.v4.new_notebook(metadata=nb.metadata)
    mini.cells = [nbformat.v4.new_markdown_cell(f"# {assignment}"),
                  nbformat.v4.new_code_cell("import numpy as np\nimport course_lib as cl\nbackend = cl.setup()"),
                  nb.cells[ec.index], nb.cells[ec.check_index]]
    path = tmp_path / "notebooks" / f"{assignment}.ipynb"
    path.parent.mkdir(exist_ok=True)
    nbformat.write(mini, path)
    return path


def _nbgrader(course, env, *args, timeout=600, peaks=None):
    """nbgrader's command `args`; its process's peak resident memory (sampled) into `peaks`[args[0]]."""
    import psutil               # ipykernel's dependency, so nbgrader's
    env = {**env, "PATH": os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])}  # its alembic
    with subprocess.Popen([sys.executable, "-m", "nbgrader", *args], cwd=course, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, env=env) as p:
        peak, me = 0, psutil.Process(p.pid)
        with ThreadPoolExecutor(1) as pool:
            out = pool.submit(p.communicate, timeout=timeout)
            while not out.done():
                try:
                    peak = max(peak, me.memory_info().rss)
                except psutil.Error:
                    pass
                time.sleep(0.05)
        r = subprocess.CompletedProcess(p.args, p.returncode, *out.result())
    if peaks is not None:
        peaks[args[0]] = max(peaks.get(args[0], 0), peak)
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


def _warnings_by_submission(log: str) -> dict[tuple[str, str], list[str]]:
    """nbgrader's log of one autograde round: the WARNING lines of each (student, assignment)."""
    out, submission = {}, None
    for line in log.splitlines():
        m = re.search(r"submitted/([\w.-]+)/([\w.-]+)", line)
        if m and "INFO" in line:
            submission = (m[1], m[2])
        elif "WARNING" in line and submission:
            out.setdefault(submission, []).append(line)
    return out


def test_nbgrader_round_trip_grades_the_kernel_only_and_every_attack_gets_nothing(tmp_path, request):
    course, home = tmp_path / "course", tmp_path / "home"
    home.mkdir()
    env = dict(os.environ, HOME=str(home), GRADER_SECRET=SECRET_ENV, PYTHONPATH=str(REPO),   # this checkout's course_lib
               COURSE_LIB_SOLUTIONS=str(solutions.SOLUTIONS_DIR))      # as on a hub: the instructor keeps them
    paths = [_mini(tmp_path, a) for a in SOURCES]
    assert set(assignments.export(paths, course, log=lambda *a: None)) == set(SOURCES)
    with open(course / "nbgrader_config.py", "a") as f:
        f.writelines(f"c.SandboxedExecute.{k} = {v}\n" for k, v in BOUNDS.items())
    grader_tmp = Path(tempfile.mkdtemp(prefix="grader_"))               # what the grader's disk gets
    env["TMPDIR"] = str(grader_tmp)
    request.addfinalizer(lambda: shutil.rmtree(grader_tmp, ignore_errors=True))
    seed = H.seed(course)
    _nbgrader(course, env, "generate_assignment", "*")
    for a, key in SOURCES.items():
        released, cells = _cells(course / "release" / a / f"{a}.ipynb")
        assert "".join(cells[f"{key}_kernel"]["source"]).endswith(solutions.stub(key))  # the course's stub
        assert "".join(cells[f"{key}_check"]["source"]).endswith(f'cl.exercises.grade("{key}")')
        assert seed not in json.dumps(released) and not list((course / "release").rglob(H.SEED_FILE))
    for (student, a), (source, extra, _, _) in SUBMISSIONS.items():
        _submit(course, student, a, source, extra)
    peaks, started = {}, time.monotonic()
    log = _nbgrader(course, env, "autograde", "*", peaks=peaks).stderr
    print(f"autograde: {time.monotonic() - started:.0f} s")
    print(*(line.split("course_lib: ")[-1].split(str(course))[-1] for line in log.splitlines() if " used " in line),
          sep="\n")        # what each notebook used
    _nbgrader(course, env, "generate_feedback", "*", peaks=peaks)
    _nbgrader(course, env, "export")
    with open(course / "grades.csv") as f:
        scores = {(row["student_id"], row["assignment"]): float(row["score"]) for row in csv.DictReader(f)}
    failures = []
    for (student, a), (_, _, points, words) in SUBMISSIONS.items():
        key = SOURCES[a]
        if scores[(student, a)] != points:
            failures.append(f"{student} ({a}): {scores[(student, a)]} points, expected {points}")
        feedback = re.sub(r"<[^>]+>", "", html.unescape((course / "feedback" / student / a / f"{a}.html").read_text()))
        _, graded = _cells(course / "autograded" / student / a / f"{a}.ipynb")
        said = json.dumps(next(c["outputs"] for g, c in graded.items() if g.endswith("_check")), ensure_ascii=False)
        failures += [f"{student} ({a}): {w!r} not in the verdict" for w in words
                     if not any(x in feedback and x in said for x in w.split("|"))]
        secret = release._secret_lines(solutions.body(key), solutions.stub(key), "")
        hidden = H.hidden_shapes(E.get(key), seed, student, a)
        leaked = ([f"solution line {s!r}" for s in secret if s in feedback and student in ATTACKS] + [s for s in (OTHER, SECRET_ENV, seed,
                  str(course), "(33, 70)") if s in feedback and not (s == OTHER and student == "own")]
                  # "(4, 64)" may turn up in the feedback page's style sheet: as a tuple, only the verdict counts
                  + [f"hidden shape {s}" for s in hidden              # whole numbers: (4, 64) is not in 64x64
                     if re.search(rf"(?<![\d.]){s[0]}x{s[1]} matrix", feedback) or str(s) in said])
        failures += [f"{student}'s feedback ({a}) shows {x}" for x in leaked]
    print("peak resident memory:", {k: f"{v >> 20} MiB" for k, v in peaks.items()})
    for student in BOXED:                                      # what came back from a stopped notebook: at most the cap
        sent = (course / "autograded" / student / TILE / f"{TILE}.ipynb").stat().st_size
        print(f"{student}: {scores[(student, TILE)]} points, notebook {sent >> 10} KiB")
        if sent > 2 * BOUNDS["output_limit"]:
            failures.append(f"{student}: its autograded notebook holds {sent >> 20} MiB")
    failures += [f"nbgrader {k} held {v >> 20} MiB" for k, v in peaks.items() if v > 512 * MIB]   # about 300 MiB
    failures += [f"on the grader's disk: {p} ({p.stat().st_size >> 20} MiB)"
                 for p in grader_tmp.rglob("*") if p.is_file() and p.stat().st_size > MIB]
    planted = [p for p in (*course.rglob("planted.py"), *home.rglob("00-planted.py"))]
    failures += [f"planted: {p}" for p in planted]
    warned = _warnings_by_submission(log)
    failures += [f"{s} ({a}): nbgrader warns {w}" for (s, a), ws in warned.items() if s in HONEST for w in ws
                 if "checksum" in w]
    if not any("checksum" in w for w in warned.get(("tampered", TILE), [])):
        failures.append("a tampered locked cell gave no checksum warning")
    refused = subprocess.run([sys.executable, "-m", "nbgrader", "autograde", TILE, "--student", "zz_later", "--force"],
                             cwd=course, capture_output=True, text=True, env=dict(env, PATH="/nowhere"))   # no bwrap
    if refused.returncode == 0 or "apt install bubblewrap" not in refused.stderr:
        failures.append(f"without bwrap autograde did not refuse: {refused.stderr[-2000:]}")
    assert not failures, "\n".join(failures)

"""Real nbgrader, end to end, on the course's notebooks as they are (notebooks/): the instructor
tool's export, ``nbgrader generate_assignment`` (the released exercise is the course's stub, and
compiles), ``nbgrader autograde`` on submissions that are correct, wrong, cheating in each way
issue 18 lists, and untouched, ``generate_feedback`` (the checker's words reach the student) and
``export`` (grades.csv). Two assignments: notebook 06 (tile_32x8) takes every kind of submission,
notebook 03 (column_read) the 32-bit offsets its exercise must not accept. About 100 s: slow."""
import csv
import html
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from course_lib.lab import grading, release
from course_lib.teach import exercises as E
from course_lib.teach import solutions

pytestmark = pytest.mark.slow       # nbgrader runs each submission's whole notebook (~8 s each)
pytest.importorskip("nbgrader", reason="nbgrader comes with the [instructor] extra (Python >= 3.11)")

REPO = Path(__file__).resolve().parents[2]
TILE, COL = "06_more_work_per_thread", "03_naive_transpose"


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

# student: (assignment, the exercise cell's new source (None: untouched), points, words the feedback must hold)
SUBMISSIONS = {
    "correct": (TILE, _own("tile_32x8"), 2, ["✓ tile_32x8: all checks pass"]),
    "bank_conflicts": (TILE, _own("tile_32x8").replace("[32][32 + 1]", "[32][32]"), 0,
                       ["no bank conflicts", "pad each row"]),
    "course_kernel": (TILE, 'transpose_32x8 = cl.transposes.kernel("padded_32x8").function', 0,
                      ["the course's own kernel", "not one you wrote"]),
    "solution_file": (TILE, "%%cuda\n" + solutions.body("tile_32x8"), 0, ["a course solution", "markers"]),
    "one_block": (TILE, ONE_BLOCK, 0, ["too slow", "spread the work over the grid"]),
    "stores_twice": (TILE, "%%cuda\n" + solutions.solved(solutions.body("tile_32x8")).replace(STORE, TWICE)
                     .replace("// column of out = row of in", "").replace("// row of out = column of in", ""), 0,
                     ["stored more than once", "each element of in is loaded once"]),
    "one_thread": (TILE, ONE_THREAD, 0, ["too slow", "not stuck"]),
    "untouched": (TILE, None, 0, ["never written"]),
    "col_correct": (COL, _own("column_read"), 2, ["✓ column_read: all checks pass"]),
    "col_32_bit": (COL, _own("column_read").replace("(size_t)", ""), 0, ["more than 2^32", "64 bits"]),
}


def _nbgrader(course, *args, timeout=600):
    r = subprocess.run([sys.executable, "-m", "nbgrader", *args], cwd=course, capture_output=True, text=True,
                       timeout=timeout)
    assert r.returncode == 0 and "ERROR" not in r.stderr, f"nbgrader {' '.join(args)}:\n{r.stderr[-4000:]}"
    return r


def _cells(path):
    nb = json.loads(path.read_text())
    return nb, {c["metadata"]["nbgrader"]["grade_id"]: c for c in nb["cells"] if "nbgrader" in c["metadata"]}


def test_nbgrader_round_trip_from_export_to_gradebook(tmp_path):
    course = tmp_path / "course"
    paths = [REPO / "notebooks" / f"{a}.ipynb" for a in (TILE, COL)]
    assert set(grading.export(paths, course, log=lambda *a: None)) == {TILE, COL}
    for a, key in ((TILE, "tile_32x8"), (COL, "column_read")):
        _nbgrader(course, "generate_assignment", a)
        released, cells = _cells(course / "release" / a / f"{a}.ipynb")
        student = json.loads((REPO / "notebooks" / f"{a}.ipynb").read_text())
        stub = next("".join(c["source"]) for c in student["cells"] if f"void {E.get(key).kernel}(" in "".join(c["source"]))
        assert "".join(cells[f"{key}_kernel"]["source"]) == stub                  # the course's stub: it compiles
        test = "".join(cells[f"{key}_check"]["source"])
        assert cells[f"{key}_check"]["metadata"]["nbgrader"]["locked"] and "HIDDEN" not in test
        text = json.dumps(released)
        assert "BEGIN SOLUTION" not in text and "exercises.reveal(" not in "".join(
            "".join(c["source"]) for c in released["cells"] if c["cell_type"] == "code")
        shown = "\n".join("".join(c["source"]) for c in student["cells"])     # what notebooks/ shows anyway
        secret = release._secret_lines(solutions.body(key), solutions.stub(key), shown)
        assert secret and release.leaks(released, secret) == []                # the export adds none
    for student, (a, source, _, _) in SUBMISSIONS.items():
        nb, cells = _cells(course / "release" / a / f"{a}.ipynb")
        if source is not None:
            next(c for c in nb["cells"] if c["metadata"].get("nbgrader", {}).get("solution"))["source"] = source
        target = course / "submitted" / student / a / f"{a}.ipynb"
        target.parent.mkdir(parents=True)
        target.write_text(json.dumps(nb))
    for a in (TILE, COL):
        _nbgrader(course, "autograde", a)
        _nbgrader(course, "generate_feedback", a)
    _nbgrader(course, "export")
    with open(course / "grades.csv") as f:
        scores = {(row["student_id"], row["assignment"]): float(row["score"]) for row in csv.DictReader(f)}
    for student, (a, _, points, words) in SUBMISSIONS.items():
        assert scores[(student, a)] == points, f"{student}: {scores[(student, a)]} points, expected {points}"
        feedback = html.unescape((course / "feedback" / student / a / f"{a}.html").read_text())
        feedback = re.sub(r"<[^>]+>", "", feedback)
        for w in words:
            assert w in feedback, f"{student}: {w!r} not in the feedback"
        _, graded = _cells(course / "autograded" / student / a / f"{a}.ipynb")
        said = json.dumps(next(c["outputs"] for g, c in graded.items() if g.endswith("_check")), ensure_ascii=False)
        assert all(w in said for w in words) and ("infinite" not in said and "endless" not in said)


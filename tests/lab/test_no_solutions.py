"""Solutions stay with instructors: the built wheel, the student notebooks and the student repository
(`instructor publish`) carry no solution text.

What counts as an exercise's solution text here:

- its solution lines: the code part of each statement (ending with ``;``: not a bare ``if`` or
  ``for`` head) of kernels/solutions/<key>.cu's solution blocks, spacing collapsed, 8+ characters,
  that no stub of its lesson or an earlier one shows and that is not boilerplate (a line two or more
  course kernels share, like ``__syncthreads();``); and, outside the library's own code, the
  solution files' markers;
- in prose (markdown), the hex constants of its solution lines (09's ``__byte_perm`` selectors);
- a listing of a course kernel that answers the exercise (:data:`ANSWERED_BY`): a cell showing 80%
  or more of that kernel's code lines, as ``cl.draw.listing`` does.

The wheel is built from a clean clone of this commit and must hold no file of kernels/solutions/
and no solution line outside the course's kernels, which the lessons run (they are checked apart).
A student notebook must show none of an exercise's solution text above its exercise cell (a solution line
found as publish finds it: anywhere in a cell, with any spacing). The student repository itself, published
from a clean clone and its README's test command run there, is tests/lab/test_publish.py's.
"""
import html
import re
import shutil
import subprocess
import zipfile
from pathlib import Path

import nbformat
import pytest

from course_lib import paths
from course_lib.compile import source
from course_lib.lab.instructor import leaks, publish, release
from course_lib.lab.instructor.publish import code_lines as _lines
from course_lib.lab.instructor.publish import solution_lines
from course_lib.teach import exercises as E
from course_lib.teach import solutions

REPO = Path(__file__).resolve().parents[2]
# course kernels whose listing is an exercise's answer (the same kernel with a template parameter set)
ANSWERED_BY = {"column_read": [("naive.cu", "naive_col")], "shared_tile": [("tile.cu", "tile")],
               "padded_tile": [("tile.cu", "tile")], "tile_32x8": [("tile.cu", "tile")],
               "vectorized": [("vec.cu", "vec")], "async_tile": [("async_tile.cu", "async_tile")]}


def solution_hexes(key: str) -> set[str]:
    return set(re.findall(r"0x[0-9A-Fa-f]{4,}", solutions.solved(solutions.body(key)))) - set(
        re.findall(r"0x[0-9A-Fa-f]{4,}", solutions.stub(key)))


def kernel_lines(file: str, name: str) -> set[str]:
    code = source.strip_comments((paths.KERNELS / file).read_text())
    start = code.index("{", code.index(f"__global__ void {name}("))
    depth, end = 1, start + 1
    while depth:
        depth += {"{": 1, "}": -1}.get(code[end], 0)
        end += 1
    return {s for s in _lines(code[start:end]) if len(s) >= 8}


def _text(cell) -> str:
    parts = [cell.source]
    for o in cell.get("outputs", []):
        parts += [o.get("text", "")] + [v for v in o.get("data", {}).values() if isinstance(v, str)]
    return html.unescape(re.sub(r"<[^>]+>", "", "\n".join(parts)))


def shown_above(nb, name, key) -> list[str]:
    """What the cells of notebook `name` above exercise `key`'s cell show of its solution."""
    ec = next(e for e in release.exercise_cells(nb, name) if e.key == key)
    hexes = solution_hexes(key)
    found = []
    for i, cell in enumerate(nb.cells[:ec.index]):
        text = _text(cell)
        lines = _lines(text)
        found += [f"cell {i}: the solution line {s!r}" for s in sorted(leaks.found(key, leaks.tokens(text)))]
        found += [f"cell {i}: {h}, the solution's constant" for h in sorted(hexes)
                  if cell.cell_type == "markdown" and h in text]
        for file, kernel in ANSWERED_BY.get(key, []):
            own = kernel_lines(file, kernel)
            if len(own & lines) >= 0.8 * len(own):
                found.append(f"cell {i}: a listing of {kernel} (kernels/{file}), which answers '{key}'")
    return found


def test_the_detector_finds_what_it_must():
    """Each kind of solution text, planted in a notebook, is found (so the tests below can fail)."""
    nb = nbformat.v4.new_notebook()
    listing = nbformat.v4.new_code_cell("cl.draw.listing(run)")
    listing.outputs = [nbformat.v4.new_output("execute_result", {"text/plain": "\n".join(
        f"  {n}  {line}" for n, line in enumerate((paths.KERNELS / "tile.cu").read_text().splitlines()))})]
    prose = nbformat.v4.new_markdown_cell("`0x5410` gives (a0, b0)")
    pasted = nbformat.v4.new_code_cell("int c = blockIdx.x * 8 + threadIdx.y;   // the column")
    for key, cell, word in (("shared_tile", listing, "listing of tile"), ("packed_b16", prose, "0x5410"),
                            ("column_read", pasted, "solution line")):
        nb.cells = [cell, nbformat.v4.new_code_cell("%%cuda\n" + solutions.stub(key))]
        assert any(word in f for f in shown_above(nb, f"{E.get(key).lesson}_x.ipynb", key)), key
    assert "__syncthreads();" not in solution_lines("shared_tile")          # boilerplate is no secret


def _notebook(key):
    p = next(paths.NOTEBOOKS.glob(f"{E.get(key).lesson}_*.ipynb"))
    return nbformat.read(p, as_version=4), p.name


def test_the_student_notebooks_show_no_solution_above_an_exercise():
    found = {}
    for key in sorted(solutions.keys()):
        nb, name = _notebook(key)
        assert any(e.key == key for e in release.exercise_cells(nb, name)), f"{key}: no cells in {name}"
        found.update({f"{name}: {f}": key for f in shown_above(nb, name, key)})
    assert not found, "\n".join(found)


@pytest.fixture(scope="module")
def wheel_files(course_build) -> dict[str, str]:
    """The files of the wheel pip builds from a clean clone of this commit (once per session: fresh_env)."""
    with zipfile.ZipFile(course_build[1]) as z:
        return {n: z.read(n).decode("utf-8", "replace") for n in z.namelist()}


@pytest.mark.slow          # builds a wheel from a fresh clone
def test_the_built_wheel_carries_no_solution(wheel_files):
    assert any(n.startswith("course_lib/kernels/") and n.endswith(".cu") for n in wheel_files)
    assert not [n for n in wheel_files if "solutions/" in n or n.endswith(("/solution.cu", "/wrong.toml"))], \
        "the wheel ships a solution (or wrong kernels written from one)"
    leaks = []
    for name, text in wheel_files.items():
        if name.startswith("course_lib/kernels/"):
            continue                            # the course's kernels: the lessons run them (the next test)
        lines = _lines(text)
        # an exercise's stub.cu is its notebook's cell: like the notebook, it may show earlier lessons' answers
        stub_of = re.fullmatch(r"course_lib/exercise_files/(\w+)/stub\.cu", name)
        keys = [k for k in solutions.keys() if not stub_of or E.get(k).lesson >= E.get(stub_of[1]).lesson]
        leaks += [f"{name}: {s!r} ({key})" for key in keys for s in sorted(solution_lines(key) & lines)]
        marked = re.search(r"^\s*//\s*(BEGIN|END) SOLUTION", text, re.M) or re.search(r"^\s*//>", text, re.M)
        if marked and not name.endswith(".py"):       # solutions.py documents the convention
            leaks.append(f"{name}: solution markers")
    assert solution_lines("vectorized") and not leaks, "\n".join(leaks)


@pytest.mark.slow
def test_the_course_kernels_in_the_wheel_show_no_exercise_s_solution(wheel_files):
    """The course's own kernels are what the lessons run, so one of their lines may equal one of a solution's
    (a shared tile's load is written the same way everywhere). What must not ship is an exercise's answer: two
    or more of its solution lines in one file, or a constant the student is asked to find (a selector)."""
    leaks = []
    for name, text in wheel_files.items():
        if not name.startswith("course_lib/kernels/"):
            continue
        for key in solutions.keys():
            shared = sorted(solution_lines(key) & _lines(text))
            if len(shared) >= 2:
                leaks.append(f"{name}: {len(shared)} lines of {key}'s solution: {shared}")
            leaks += [f"{name}: {h}, which {key} asks for" for h in sorted(solution_hexes(key)) if h in text]
    assert not leaks, "\n".join(leaks)


# ------------------------------------------------------------------------------------ the student repository

def test_instructor_only_paths_are_one_glob_list():
    only = publish.instructor_only
    assert only("kernels/solutions/shared_tile.cu") and only("kernels/solutions/more/x.cu")
    assert only("exercises/shared_tile/solution.cu") and only("exercises/shared_tile/hidden.json")
    assert only("exercises/inplace/wrong.toml")            # wrong kernels are the solution, edited: never published
    assert not only("kernels/tile.cu") and not only("exercises/shared_tile/stub.cu")
    assert not only("exercises/a/b/solution.cu"), "'*' is one folder name, '**' any number"


def test_the_publish_check_finds_a_solution_line_where_the_course_does_not_show_it():
    line = sorted(solution_lines("column_read"))[0]
    assert publish.shown("docs/notes.md", f"    {line}   // pasted") == [
        f"docs/notes.md: {line!r}, a line of column_read's solution"]
    assert publish.shown("docs/notes.md", f"{line}", visible=frozenset({line})) == [], "a lesson shows it anyway"
    lesson = E.get("column_read").lesson
    later = f"notebooks/{int(lesson) + 1:02d}_x.ipynb"
    earlier = f"notebooks/{int(lesson) - 1:02d}_x.ipynb"
    nb = nbformat.writes(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(line)]))
    assert publish.shown(earlier, nb) and not publish.shown(later, nb), "a later lesson may show an answer"
    assert publish.shown("kernels/x.cu", "// BEGIN SOLUTION\n") == ["kernels/x.cu: solution markers"]


def _repo(tmp_path, files: dict) -> Path:
    root = tmp_path / "instructor"
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    subprocess.run(["git", "-C", str(root), "add", "-A"], check=True)
    return root


def test_publish_leaves_instructor_files_out_and_refuses_a_solution_elsewhere(tmp_path):
    if not shutil.which("git"):
        pytest.skip("needs git")
    line = sorted(solution_lines("shared_tile"))[0]
    repo = _repo(tmp_path, {"README.md": "the course\n", "kernels/solutions/shared_tile.cu": line + "\n",
                            "exercises/shared_tile/hidden.json": "[]\n"})
    out = tmp_path / "student"
    assert publish.publish(out, repo=repo, log=lambda *_: None) == ["README.md"]
    assert sorted(p.name for p in out.rglob("*") if p.is_file()) == [publish.MANIFEST, "README.md"]
    (repo / "docs").mkdir()
    (repo / "docs" / "answers.md").write_text(f"    {line}\n")          # a solution copied where students get it
    subprocess.run(["git", "-C", str(repo), "add", "-A"], check=True)
    with pytest.raises(publish.PublishError, match=r"docs/answers\.md: .*a line of shared_tile's solution"):
        publish.publish(tmp_path / "student2", repo=repo, log=lambda *_: None)
    assert not (tmp_path / "student2").exists(), "nothing is written when the check refuses"
    with pytest.raises(publish.PublishError, match="inside the instructor repository"):
        publish.publish(repo / "out", repo=repo)

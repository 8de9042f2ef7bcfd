"""docs/INSTRUCTORS.md §7 followed literally in a fresh clone: an instructor adds a grid-stride copy to
notebook 02 with the commands the section gives (new-exercise, edit exercise.toml and solution.cu, the
notebook's cells, check --sync-stubs, refresh, check, the nbgrader export) and each step does what the
section says. The commands are read out of the section itself, so a renamed flag or a path that no
longer works breaks this test, not an instructor's afternoon. Slow (a clone, three notebook runs)."""
import shlex
import os
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

REPO = Path(__file__).resolve().parents[2]
NB = "02_warps_and_coalescing.ipynb"
KEY = "walk_copy"

TOML = '''title = "a grid-stride copy, 8 blocks of 32x8 threads"
lesson = "02"
kernel = "walk_copy"
copy = true
shapes = [[64, 64], [96, 160], [100, 130], [1, 4097], [4097, 1]]
question = """
## Exercise: the walk's grid-stride copy

Copy `in` to `out` with 8 blocks of 32 x 8 threads, each element once.
"""
properties = [{coalesced = {op = "ld"}}, {coalesced = {op = "st"}}]

[launch]
kind = "grid-stride"
block = [32, 8]
grid = ["8"]
'''
SOLUTION = '''__global__ void walk_copy(float* out, const float* in, int rows, int cols)
{
    size_t n = (size_t)rows * cols;
    // BEGIN SOLUTION
    //> size_t first = 0, step = n;                 // TODO
    size_t first = ((size_t)blockIdx.x * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x;
    size_t step = (size_t)gridDim.x * blockDim.y * blockDim.x;
    // END SOLUTION
    for (size_t i = first; i < n; i += step)
        out[i] = in[i];
}
'''


def _section_7() -> str:
    text = (REPO / "docs" / "INSTRUCTORS.md").read_text()
    return text.split("## 7. ")[1].split("\n## 8. ")[0]


def _commands(section: str) -> list[str]:
    """Every `python -m course_lib instructor ...` command the section writes, as written."""
    return re.findall(r"^(python -m course_lib instructor [^#\n]*?)\s*(?:#.*)?$", section, re.M)


def _sh(clone, command, ok=True):
    env = {**os.environ, "PYTHONPATH": str(clone),     # the clone's course_lib, in the kernels refresh starts too
           "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])}   # `python`: ours
    done = subprocess.run(command, shell=True, cwd=clone, env=env, capture_output=True, text=True, timeout=180)
    if ok:
        assert done.returncode == 0, f"{command}\n{done.stdout}\n{done.stderr}"
    return done.stdout + done.stderr


@pytest.mark.slow
def test_adding_an_exercise_as_section_7_says_in_a_fresh_clone(tmp_path):
    if not (REPO / ".git").exists():
        pytest.skip("not a git checkout: nothing to clone")
    clone = tmp_path / "course"
    subprocess.run(["git", "clone", "-q", str(REPO), str(clone)], check=True)
    commands = _commands(_section_7())
    new = next(c for c in commands if "new-exercise" in c)
    sync = next(c for c in commands if "check --sync-stubs" in c)
    refresh = next(c for c in commands if " refresh " in c)
    for c in (new, sync, refresh):           # the section's example names grid_copy / notebook 05: ours instead
        assert re.search(r"grid_copy|\d\d_\w+\.ipynb", c), c

    # 1. scaffold: the folder loads and says what next
    out = _sh(clone, new.replace("grid_copy", KEY))
    folder = clone / "exercises" / KEY
    assert {"exercise.toml", "solution.cu", "stub.cu"} <= {p.name for p in folder.iterdir()} and "--sync-stubs" in out
    # 2. edit exercise.toml and the solution between the markers (the header lines stay)
    (folder / "exercise.toml").write_text(TOML)
    head = "".join(line for line in (folder / "solution.cu").read_text().splitlines(True) if line.startswith("//!"))
    (folder / "solution.cu").write_text(head + SOLUTION)
    # 3. the notebook's cells: predict-then-see, the question, get, %%cuda, check, reveal
    path = clone / "notebooks" / NB
    nb = nbformat.read(path, 4)
    cell = nbformat.v4.new_code_cell
    nb.cells += [cell('cl.predict(cl.Simulator().run("copy"), sectors_ld=None)'),
                 nbformat.v4.new_markdown_cell("## Exercise: the walk's grid-stride copy"),
                 cell(f'cl.exercises.get("{KEY}")'), cell("%%cuda"), cell(f'cl.exercises.check("{KEY}", {KEY})'),
                 cell(f'cl.exercises.reveal("{KEY}")')]
    nbformat.write(nb, path)
    check = f"python -m course_lib instructor check {NB}"
    assert KEY in _sh(clone, check, ok=False)                   # before syncing: the cell is not the stub
    # 4. check --sync-stubs writes the stub into the cell and the question above it; refresh stores outputs
    _sh(clone, re.sub(r"\d\d_\w+\.ipynb", NB, sync), ok=False)
    stubbed = nbformat.read(path, 4)
    assert any(c.source.startswith("%%cuda") and "TODO" in c.source and KEY in c.source for c in stubbed.cells)
    assert "Copy `in` to `out` with 8 blocks" in stubbed.cells[-5].source
    _sh(clone, re.sub(r"\d\d_\w+\.ipynb", NB, refresh))
    # 5. check is clean, and the stored check output refuses the stub
    assert f"{NB}: ok" in _sh(clone, check)
    stored = "".join(o.get("text", "") + o.get("data", {}).get("text/plain", "")
                     for o in nbformat.read(path, 4).cells[-2].outputs)
    assert "✗ walk_copy" in stored and "hint:" in stored
    # (refresh ran every cell and writes nothing when one fails: nbval on the outputs it just stored would
    # only run the notebook again, 10 s of CI for no new fact)
    # 6. the nbgrader export: the exercise's autograded cell; its hidden shapes are drawn at grading time from
    # the course's seed, never written into the notebook
    _sh(clone, "python -m course_lib instructor nbgrader --out ../nbgrader 02_warps_and_coalescing.ipynb")
    exported = (tmp_path / "nbgrader" / "source" / NB[:-6] / NB).read_text()
    assert f'cl.exercises.grade(\\"{KEY}\\"' in exported and "HIDDEN" not in exported
    assert (tmp_path / "nbgrader" / ".course_lib_seed").is_file()
    # 7. the classic bug, and every mutant derived from the solution, are refused in the clone
    probe = (f"from course_lib.teach import exercises as E, mutants, solutions\n"
             f"from course_lib.notebook import magic\n"
             f"ex = E.get('{KEY}'); src = solutions.body('{KEY}')\n"
             f"bug = src.replace('gridDim.x * blockDim.y * blockDim.x', 'blockDim.x')\n"
             f"cases = [('step = blockDim.x', bug)] + [(m.name, m.source) for m in mutants.derive(ex, lambda p: src)]\n"
             f"print({{name: E.check(ex, magic.compile_cell('', s)[1]['{KEY}']).ok for name, s in cases}})\n")
    verdicts = _sh(clone, f"{sys.executable} -c {shlex.quote(probe)}").strip().splitlines()[-1]
    assert "True" not in verdicts and "'step = blockDim.x': False" in verdicts and "grid_step_without_rows" in verdicts

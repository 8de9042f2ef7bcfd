"""docs/INSTRUCTORS.md §7 followed literally in a fresh clone: the trial's four tasks of issue 33 with the
commands the section gives, read out of it (a renamed flag or a path that no longer works breaks this test,
not an instructor's afternoon).

1. tile_32x8 becomes a 64x64 tile on a 64x8 block with a `double` variant (exercise.toml alone);
2. the in-place transpose and 3. the three-array split are added (both are removed from the clone first,
   then added back with new-exercise, their folder's three files and their notebook's cells — the
   question left for --sync-stubs to write);
4. a graded round of four students in a class with variants (``instructor nbgrader --variants``: each
   student graded on their own variant, drawn from the course folder's secret).

After each of tasks 1-3 the tools' state is the course's again: `check` passes, the folder's tests pass, and
git says that nothing but the exercise's folder and its notebook changed. Slow (a clone, three notebook
refreshes, an nbgrader round): 8:16 on 2 cores shared with other jobs (load ~3, 2026-12-05); its commands took
2.2, 2.1, 2.0 and 1.0 minutes for the four tasks (1.3, 1.3, 2.5 in a quieter run of tasks 1-3)."""
import copy
import csv
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat
import pytest

REPO = Path(__file__).resolve().parents[2]
NB06, NB08 = "06_more_work_per_thread.ipynb", "08_aos_struct_loading.ipynb"
ADDED = {"inplace": (NB06, "## In place: no second array"), "aos_split": (NB08, "## The smallest struct")}
TILE_EDITS = [   # task 1, as §7 words it: TILE = 64, the text parameters, their variants, a double variant
    ('TILE = 32\n', 'TILE = 64\n'),
    ('EACH = "four"\nROWS = "y, y + 8, y + 16, y + 24"', 'EACH = "eight"\nROWS = "y, y + 8, ..., y + 56"'),
    ('BY = 4\nEACH = "eight"\nROWS = "y, y + 4, y + 8, ..., y + 28"\n\n', 'BY = 4\nEACH = "sixteen"\nROWS = "y, y + 4, ..., y + 60"\n\n'),
    ('BY = 16\nEACH = "two"\nROWS = "y and y + 16"', 'BY = 16\nEACH = "four"\nROWS = "y, y + 16, y + 32, y + 48"'),
    ('BY = 4\nEACH = "eight"\nROWS = "y, y + 4, y + 8, ..., y + 28"\nT = "double"', 'T = "double"'),
]


def _build() -> Path:
    (REPO / "build").mkdir(exist_ok=True)
    return REPO / "build"


def _section(n: int) -> str:
    text = (REPO / "docs" / "INSTRUCTORS.md").read_text()
    return text.split(f"\n## {n}. ")[1].split(f"\n## {n + 1}. ")[0]


def _lines(section: str, start: str) -> list[str]:
    """Every command line of the section that starts with `start`, as written (its comment dropped)."""
    return re.findall(rf"^({re.escape(start)}[^#\n]*?)\s*(?:#.*)?$", section, re.M)


class Clone:
    def __init__(self, root: Path):
        self.root, self.times = root, {}
        self.env = {**os.environ, "PYTHONPATH": str(root),      # the clone's course_lib, in refresh's kernels too
                    "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])}

    def sh(self, command, task, ok=True, cwd=None, env=None):
        start = time.perf_counter()
        done = subprocess.run(command, shell=True, cwd=cwd or self.root, env={**self.env, **(env or {})},
                              capture_output=True, text=True, timeout=600)
        self.times[task] = self.times.get(task, 0) + time.perf_counter() - start
        if ok:
            assert done.returncode == 0, f"{command}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
        return done.stdout + done.stderr

    def changed(self) -> set[str]:
        out = self.sh("git status --porcelain --untracked-files=all", "git")
        return {line[3:] for line in out.splitlines() if line.strip()}

    def commit(self, message):
        self.sh(f"git add -A && git -c user.name=walk -c user.email=walk@example.org commit -qm {shlex.quote(message)}",
                "git")
        print(f"walk: {message} done, {self.times.get(message, 0) / 60:.1f} min of commands")   # -s shows them


def _cells_of(nb, heading: str, key: str) -> tuple[int, list]:
    """(index, cells) of an added exercise's lesson: from its heading to the cell after its reveal (the
    recap excluded)."""
    start = next(i for i, c in enumerate(nb.cells) if c.source.startswith(heading))
    reveal = next(i for i, c in enumerate(nb.cells) if f'exercises.reveal("{key}")' in c.source)
    end = reveal + 1
    if end < len(nb.cells) and nb.cells[end].cell_type == "markdown" and not nb.cells[end].source.startswith("#"):
        end += 1
    return start, nb.cells[start:end]


def _remove_added(clone: Clone) -> dict:
    """The course before the trial: the two new exercises' folders and cells gone (kept here to add back)."""
    kept = {}
    for key, (name, heading) in ADDED.items():
        folder = clone.root / "exercises" / key
        files = {f: (folder / f).read_text() for f in ("exercise.toml", "solution.cu", "wrong.toml")}
        path = clone.root / "notebooks" / name
        nb = nbformat.read(path, 4)
        start, cells = _cells_of(nb, heading, key)
        kept[key] = (files, start, copy.deepcopy(cells), [c.source for c in cells])
        del nb.cells[start:start + len(cells)]
        nbformat.write(nb, path)
        clone.sh(f"git rm -rq exercises/{key}", "git")
    clone.commit("the course before the trial: no inplace, no aos_split")
    return kept


def _sync_refresh_test(clone, section, key, notebook, task):
    sync = next(c for c in _lines(section, "python -m course_lib instructor check --sync-stubs"))
    refresh = next(c for c in _lines(section, "python -m course_lib instructor refresh"))
    tests = next(c for c in _lines(section, "python -m pytest"))
    said = clone.sh(re.sub(r"\d\d_\w+\.ipynb", notebook, sync), task, ok=False)
    assert key in said, said
    clone.sh(re.sub(r"\d\d_\w+\.ipynb", notebook, refresh), task)
    assert f"{notebook}: ok" in clone.sh(f"python -m course_lib instructor check {notebook}", task)
    out = clone.sh(tests.replace("tile_32x8", key), task)
    assert " passed" in out and "failed" not in out, out[-2000:]


@pytest.mark.slow
def test_the_trials_four_tasks_as_section_7_says_in_a_fresh_clone(tmp_path, request):
    if not (REPO / ".git").exists():
        pytest.skip("not a git checkout: nothing to clone")
    pytest.importorskip("nbgrader", reason="task 4 grades with nbgrader (the [instructor] extra)")
    from course_lib.lab.grader import sandbox
    try:
        sandbox.require()
    except sandbox.SandboxUnavailable as exc:
        pytest.skip(str(exc))
    section = _section(7)
    # the clone beside this checkout (build/ is ignored), not under /tmp: the grading sandbox of task 4 binds the
    # clone's course_lib, and its kernel did not start from a checkout under /tmp (the sandbox's /tmp is its own)
    clone = Clone(Path(tempfile.mkdtemp(prefix="walk-", dir=_build())))
    request.addfinalizer(lambda: shutil.rmtree(clone.root, ignore_errors=True))
    subprocess.run(["git", "clone", "-q", str(REPO), str(clone.root)], check=True)
    kept = _remove_added(clone)

    # 1. tile_32x8 to a 64x64 tile on a 64x8 block, a double variant: exercise.toml alone
    toml = clone.root / "exercises" / "tile_32x8" / "exercise.toml"
    text = toml.read_text()
    for old, new in TILE_EDITS:
        assert old in text, old
        text = text.replace(old, new, 1)
    toml.write_text(text)
    _sync_refresh_test(clone, section, "tile_32x8", NB06, "1. tile_32x8 to 64x64")
    assert clone.changed() == {"exercises/tile_32x8/exercise.toml", f"notebooks/{NB06}"}
    nb = nbformat.read(clone.root / "notebooks" / NB06, 4)
    assert any("64x64 tile" in str(c.get("outputs")) for c in nb.cells if "exercises.get(\"tile_32x8\")" in c.source)
    clone.commit("1. tile_32x8 to 64x64")

    # 2 and 3. the in-place transpose (06) and the three-array split (08), added as §7 says
    new = next(c for c in _lines(section, "python -m course_lib instructor new-exercise"))
    for task, (key, (name, _)) in zip(("2. inplace", "3. aos_split"), ADDED.items()):
        files, start, cells, sources = kept[key]
        kernel = re.search(r'^kernel = "(\w+)"', files["exercise.toml"], re.M)[1]
        command = new if key in new else re.sub(r"new-exercise \w+ --lesson \d\d --kernel \w+",
                                                f"new-exercise {key} --lesson {name[:2]} --kernel {kernel}", new)
        assert "--sync-stubs" in clone.sh(command, task)
        for f, content in files.items():                   # the instructor's three files
            (clone.root / "exercises" / key / f).write_text(content)
        nb = nbformat.read(clone.root / "notebooks" / name, 4)
        for c in cells:                                    # the lesson's cells: %%cuda left empty, the question
            if c.cell_type == "code" and c.source.startswith("%%cuda") and f"void {kernel}(" in c.source:
                c.source, c.outputs = "%%cuda", []         # left for --sync-stubs to write (or to rewrite)
            elif c.cell_type == "markdown" and c.source.startswith("## Exercise"):
                c.source = "## Exercise: TODO" if key == "aos_split" else c.source
        cells = [c for c in cells if not (key == "inplace" and c.source.startswith("## Exercise"))]
        nb.cells[start:start] = cells
        nbformat.write(nb, clone.root / "notebooks" / name)
        _sync_refresh_test(clone, section, key, name, task)
        changed = clone.changed()
        assert changed == {f"exercises/{key}/{f}" for f in ("exercise.toml", "solution.cu", "stub.cu", "wrong.toml")
                           } | {f"notebooks/{name}"}, changed
        redone = nbformat.read(clone.root / "notebooks" / name, 4).cells[start:start + len(sources)]
        assert [c.source for c in redone] == sources, f"{name}: the tools did not write the course's cells"
        clone.commit(task)

    # 4. a graded round: four students in a class with variants, each graded on their own
    _graded_round(clone, tmp_path)
    print("walk: minutes of commands per task:", {k: round(v / 60, 1) for k, v in clone.times.items()})


def _graded_round(clone: Clone, tmp_path: Path):
    task = "4. graded round"
    nbgrader = _lines(_section(6), "nbgrader ")
    export = next(c for c in _lines(_section(6), "python -m course_lib instructor nbgrader"))
    mini = _mini(clone.root, tmp_path / "06_graded.ipynb")
    env = {"COURSE_LIB_SOLUTIONS": str(clone.root / "exercises")}
    course = tmp_path / "course"
    clone.sh(export.replace("../course", str(course)) + f" --variants {mini}", task, env=env)
    generate = next(c for c in nbgrader if "generate_assignment" in c).split()[:2] + ["06_graded"]
    clone.sh(" ".join(generate), task, cwd=course, env=env)
    plan = {"alice": ("own", "own"), "bob": ("own", "wrong"), "carol": (None, None), "dave": ("notebook's", "own")}
    expected = {}
    for student, (tile, inplace) in plan.items():
        expected[student] = _submit(clone.root, course, student, {"tile_32x8": tile, "inplace": inplace})
    autograde = next(c for c in nbgrader if "autograde" in c).split()[:2] + ["06_graded"]
    clone.sh(" ".join(autograde), task, cwd=course, env=env)
    clone.sh("nbgrader export", task, cwd=course, env=env)
    with open(course / "grades.csv") as f:
        scores = {row["student_id"]: float(row["score"]) for row in csv.DictReader(f)}
    assert scores == expected, (scores, expected)


def _mini(root: Path, path: Path) -> Path:
    """Notebook 06 cut to what grading needs: the setup cell and both exercises' get, %%cuda and check cells."""
    nb = nbformat.read(root / "notebooks" / NB06, 4)
    keep = [c for c in nb.cells if c.cell_type == "code" and (
        "import course_lib as cl" in c.source or c.source.startswith("%%cuda\n__global__ void transpose_")
        or re.search(r"exercises\.(get|check)\(\"(tile_32x8|inplace)\"", c.source))]
    mini = nbformat.v4.new_notebook(metadata=nb.metadata)
    mini.cells = [nbformat.v4.new_markdown_cell("# 06 graded")] + keep
    nbformat.write(mini, path)
    return path


def _submit(root: Path, course: Path, student: str, plan: dict) -> float:
    """Write one student's submission (their variant's solution, a wrong kernel, the notebook's answer, or
    nothing) and return the points it must get."""
    probe = ("import json, sys; from course_lib.teach import solutions, spec, variants, mutants\n"
             "from course_lib.teach.exercise_list import folder\n"
             "out = {}\n"
             "for key, what in json.loads(sys.argv[1]).items():\n"
             "    ex = variants.exercise(key, sys.argv[2], course=sys.argv[3]); p = dict(ex.params)\n"
             "    if what == 'own': out[key] = solutions.body(key, p)\n"
             "    elif what == \"notebook's\": out[key] = solutions.body(key)\n"
             "    elif what == 'wrong': out[key] = mutants.written(folder(key), spec.load(folder(key), p), "
             "solutions._cell(solutions.path(key).read_text()))[0].source\n"
             "print(json.dumps(out))\n")
    env = {**os.environ, "PYTHONPATH": str(root)}
    bodies = json.loads(subprocess.run([sys.executable, "-c", probe, json.dumps({k: w for k, w in plan.items() if w}),
                                        student, str(course)], env=env, cwd=root,   # -c puts the cwd first: the clone's
                                       capture_output=True, text=True, check=True).stdout)
    nb = json.loads((course / "release" / "06_graded" / "06_graded.ipynb").read_text())
    points = 0.0
    for key, what in plan.items():
        cell = next(c for c in nb["cells"] if c["metadata"].get("nbgrader", {}).get("grade_id") == f"{key}_kernel")
        if what:
            plain = "\n".join(line.split("//")[0].rstrip() for line in bodies[key].splitlines()
                              if not re.match(r"\s*//\s*(BEGIN|END) SOLUTION|\s*//>", line))
            cell["source"] = "%%cuda\n" + plain
        points += 2.0 if what == "own" else 0.0
    target = course / "submitted" / student / "06_graded" / "06_graded.ipynb"
    target.parent.mkdir(parents=True)
    target.write_text(json.dumps(nb))
    return points

"""Instructor tooling on the real notebooks: every exercise's solution passes its checker and its
student stub fails it with hints; the student build shows no solution; the Colab cell of every
notebook does nothing off Colab and, under a fake google.colab, only clones the course and installs
it (and that install works from a fresh clone); environment.yml; refreshing stored outputs."""
import dataclasses
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from course_lib.teach import exercises as E
from course_lib.lab import course
from course_lib.lab.instructor import check as icheck, cli, colab, refresh, release
from course_lib.lab.student import course_lab as lab
from course_lib.teach import debug, solutions
from course_lib.notebook import magic
from course_lib.errors import KernelError

REPO = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((REPO / "notebooks").glob("[0-9][0-9]_*.ipynb"))


def _read(p):
    return nbformat.read(p, as_version=4)


SOLUTION_CELLS = [sc for p in NOTEBOOKS for sc in icheck.file_solution_cells(_read(p), p.name)]
needs_notebooks = pytest.mark.skipif(not NOTEBOOKS, reason="notebooks/ has no course notebooks yet")


def _compile(cell_source):
    line, _, body = cell_source.lstrip().partition("\n")
    assert line.startswith("%%cuda")
    return magic.compile_cell(line[len("%%cuda"):].strip(), body)[1]


# ------------------------------------------------------------------------------------ exercises

@needs_notebooks
@pytest.mark.slow
@pytest.mark.folder
@pytest.mark.parametrize("sc", SOLUTION_CELLS, ids=str)
def test_solution_passes_its_checker_and_the_stub_fails_it_cleanly(sc):
    ex = E.get(sc.key)
    names = _compile(sc.source)                      # the instructor's cell, markers and all
    solved = E.check(ex, names[sc.kernel or ex.kernel])
    assert solved.ok, f"{sc}: the solution fails its own checker:\n{solved!r}"

    stub_source = E.strip_solutions(sc.source)
    assert "SOLUTION" not in stub_source and "//>" not in stub_source
    try:
        stub_names = _compile(stub_source)
    except KernelError as exc:
        pytest.fail(f"{sc}: the student stub must compile: {exc.message}")
    report = E.check(ex, stub_names[sc.kernel or ex.kernel])   # must answer, never raise
    assert not report.ok, f"{sc}: the stub passes the checker, so the exercise asks for nothing"
    assert report.problems and all(what and hint for what, hint in report.problems), repr(report)
    assert "hint:" in repr(report) and "Traceback" not in repr(report)


@needs_notebooks
def test_every_exercise_has_its_stub_cell_checker_and_reveal_in_its_notebook():
    found = {}
    for p in NOTEBOOKS:
        nb = _read(p)
        assert not release.solution_cells(nb, p.name), f"{p.name} holds solution markers: notebooks/ is what students open"
        for ec in release.exercise_cells(nb, p.name):
            found[ec.key] = ec
            assert release.cell_state(nb, ec) == "stub", f"{ec}: not the stub of exercises/{ec.key}/solution.cu"
            assert ec.check_index is not None, f"{ec}: no exercises.check cell after it"
            assert f'cl.exercises.reveal("{ec.key}")' in nb.cells[ec.check_index + 1].source, f"{ec}: no reveal cell"
    assert set(found) == set(E.EXERCISES) == set(solutions.keys())
    for key, ec in found.items():
        assert ec.notebook.startswith(E.get(key).lesson + "_")


def test_verify_catches_a_broken_exercise():
    base = "%%cuda\n" + r"""__global__ void transpose_padded(unsigned short* out, const unsigned short* in, int rows, int cols)
{
    __shared__ unsigned short tile[32][32 + 2];
    int x = blockIdx.x * 32 + threadIdx.x, y = blockIdx.y * 32 + threadIdx.y;
    if (x < cols && y < rows) tile[threadIdx.y][threadIdx.x] = in[(size_t)y * cols + x];
    __syncthreads();
    x = blockIdx.y * 32 + threadIdx.x; y = blockIdx.x * 32 + threadIdx.y;
    // BEGIN SOLUTION
    //> STUB
    if (x < rows && y < cols) out[(size_t)y * rows + x] = tile[threadIdx.x][threadIdx.y];
    // END SOLUTION
}
"""

    def problems(src):
        return "\n".join(icheck.verify_solution_cell(release.SolutionCell("t.ipynb", 0, src, "padded_tile", None, 1)))
    assert problems(base.replace("    //> STUB\n", "")) == ""                       # a good exercise
    assert "does not compile" in problems(base.replace("//> STUB", "//> int x = ;"))
    assert "passes the checker" in problems(base.replace(
        "//> STUB", "//> if (x < rows && y < cols) out[(size_t)y * rows + x] = tile[threadIdx.x][threadIdx.y];"))
    assert "fails its checker" in problems(base.replace("    //> STUB\n", "").replace("[32 + 2]", "[32]"))
    assert "markers" in problems(base.replace("    // END SOLUTION\n", ""))


# ------------------------------------------------------------------------------------ what students see

@needs_notebooks
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_the_notebooks_students_open_show_no_solution(path):
    """A fresh clone's notebooks (what course-lab, the README and every Colab badge open): no solution
    line of any exercise in a cell, a stored output or widget state, and the reveal cells stored as
    'hidden'. A line the notebook shows anyway (prose, a course kernel) is not a secret."""
    nb = _read(path)
    every = dict(nb)
    visible = "\n".join(c.source for p in NOTEBOOKS for c in _read(p).cells)     # what the course shows anyway
    secret = set()
    for key in solutions.keys():
        secret |= release._secret_lines(solutions.body(key), solutions.stub(key), visible)
    assert secret, "no solution lines found: the test would pass anything"
    assert release.leaks(json.loads(json.dumps(every)), secret) == []
    _, notes = release.student_notebook(nb, path.name)
    assert notes[1:] == [], notes
    for c in nb.cells:
        if c.cell_type == "code" and "cl.exercises.reveal(" in c.source:
            assert "stays hidden" in json.dumps(c.outputs)


def test_readme_shows_no_solution():
    text = (REPO / "README.md").read_text() + (REPO / "docs" / "NOTEBOOK_API.md").read_text()
    visible = "\n".join(c.source for p in NOTEBOOKS for c in _read(p).cells)
    for key in solutions.keys():
        secret = release._secret_lines(solutions.body(key), solutions.stub(key), visible)
        assert release.leaks(text, secret) == [], key


@needs_notebooks
def test_debug_and_predict_cells_are_stored_unsolved():
    tasks = {}
    for p in NOTEBOOKS:
        nb = _read(p)
        for i, c in enumerate(nb.cells):
            m = re.search(r'cl\.debug\.check\("(\w+)", (\w+)\)', c.source)
            if m:
                t = debug.task(m[1])
                tasks[m[1]] = p.name
                kernel_cell = next(x for x in nb.cells[:i] if f"void {t.kernel}(" in x.source)
                assert kernel_cell.source == "%%cuda\n" + t.source(), f"{p.name}: {m[1]} is not the broken kernel"
                assert "not fixed yet" in json.dumps(c.outputs) and p.name.startswith(t.lesson)
            if "cl.predict(" in c.source:         # every quantity the student predicts is stored unanswered
                asked = re.findall(r"\b(?:sectors|wavefronts|conflicts)_(?:ld|st|ldgsts)=(\S+?)[,)]", c.source)
                assert asked and set(asked) == {"None"}, f"{p.name} cell {i}: {c.source[-120:]}"
                assert "Replace each None" in json.dumps(c.outputs)
                tasks.setdefault("predict", set()).add(p.name[:2])
    assert len([k for k in tasks if k != "predict"]) >= 4 and {"02", "05", "07"} <= tasks["predict"]


# ------------------------------------------------------------------------------------ the build

@needs_notebooks
def test_build_writes_the_notebooks_for_students_and_solutions_for_instructors(tmp_path):
    release.build(NOTEBOOKS, tmp_path, execute=False, log=lambda *a: None)
    for p in NOTEBOOKS:
        original, student = _read(p), _read(tmp_path / "student" / p.name)
        teacher = _read(tmp_path / "instructor" / p.name)
        assert [c.source for c in student.cells] == [c.source for c in original.cells]
        for ec in release.exercise_cells(original, p.name):
            assert teacher.cells[ec.index].source == f"{ec.magic}\n{solutions.body(ec.key)}"
            assert teacher.cells[ec.index].outputs == [] and teacher.cells[ec.check_index].outputs == []
        changed = [i for i, (a, b) in enumerate(zip(original.cells, teacher.cells)) if a.source != b.source]
        assert changed == [ec.index for ec in release.exercise_cells(original, p.name)]


@needs_notebooks
@pytest.mark.slow          # executes the instructor copy of the notebooks
def test_the_instructor_copy_runs_its_solutions(tmp_path):
    nb3 = [p for p in NOTEBOOKS if p.name.startswith("03_")]
    notes = release.build(nb3, tmp_path, log=lambda *a: None)
    teacher = _read(tmp_path / "instructor" / nb3[0].name)
    ec = release.exercise_cells(teacher, nb3[0].name)[0]
    assert "executed" in notes[nb3[0].name][-1]
    assert "✓ column_read: all checks pass" in json.dumps(teacher.cells[ec.check_index].outputs, ensure_ascii=False)
    # after the pass, reveal shows the course kernel the lesson shows next (naive_col), never the solution file
    revealed = json.dumps(teacher.cells[ec.check_index + 1].outputs, ensure_ascii=False)
    assert "naive_col" in revealed and "BEGIN SOLUTION" not in revealed


def test_an_edited_exercise_cell_stops_the_build_until_synced(tmp_path):
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("%%cuda\n" + solutions.stub("padded_tile").replace("int x", "int  x"))
    nb.cells = [cell, nbformat.v4.new_code_cell('cl.exercises.check("padded_tile", transpose_padded)')]
    name = "05_t.ipynb"
    with pytest.raises(release.BuildError, match="neither the stub nor the solution"):
        release.instructor_notebook(nb, name)
    assert any("not the stub" in x for x in icheck._exercise_cell_problems(nb, name))
    assert icheck.sync_stubs(nb, name) and nb.cells[0].source == "%%cuda\n" + solutions.stub("padded_tile")
    teacher, _ = release.instructor_notebook(nb, name)
    assert teacher.cells[0].source == "%%cuda\n" + solutions.body("padded_tile")
    student, _ = release.student_notebook(teacher, name)            # an instructor copy built back: stubs again
    assert student.cells[0].source == nb.cells[0].source


# ------------------------------------------------------------------------------------ what check catches

from course_lib import paths                                      # noqa: E402
from course_lib.lab.instructor import authoring                   # noqa: E402


def _cells(*sources):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(s) for s in sources]
    return nb


def test_check_fails_on_missing_cells_and_on_a_cell_holding_only_cuda():
    name = "05_t.ipynb"
    missing = authoring.missing_cells(_cells("x = 1"), name)
    assert len(missing) == 1 and "'padded_tile'" in missing[0] and "cl.exercises.check" in missing[0]
    nb = _cells('cl.exercises.get("padded_tile")', "%%cuda", 'cl.exercises.check("padded_tile", transpose_padded)',
                'cl.exercises.reveal("padded_tile")')
    assert not authoring.missing_cells(nb, name)                  # the bare %%cuda cell is the exercise's cell
    assert any("holds only %%cuda" in x and "--sync-stubs" in x for x in icheck._exercise_cell_problems(nb, name))
    assert icheck.sync_stubs(nb, name) and nb.cells[1].source == "%%cuda\n" + solutions.stub("padded_tile")
    assert not icheck._exercise_cell_problems(nb, name)


def test_check_fails_on_a_stub_file_out_of_sync_and_sync_stubs_rewrites_it(tmp_path, monkeypatch):
    shutil.copytree(paths.EXERCISES, tmp_path / "exercises")
    monkeypatch.setattr(paths, "EXERCISES", tmp_path / "exercises")
    monkeypatch.setattr(solutions, "SOLUTIONS_DIR", tmp_path / "exercises")
    assert not authoring.stub_file_problems()
    sol = tmp_path / "exercises" / "padded_tile" / "solution.cu"
    sol.write_text(sol.read_text().replace("//> __shared__ T tile[TILE][TILE];", "//> __shared__ T tile[TILE][TILE]; // pad?"))
    (problem,) = authoring.stub_file_problems()
    assert "exercises/padded_tile/stub.cu is not the stub of solution.cu" in problem and "--sync-stubs" in problem
    assert not icheck.check([], log=lambda x: None)                     # instructor check fails ...
    assert icheck.check([], sync=True, log=lambda x: None)              # ... until --sync-stubs writes stub.cu
    assert "// pad?" in (tmp_path / "exercises" / "padded_tile" / "stub.cu").read_text()


def test_check_finds_stale_stored_outputs_of_an_exercises_cells(monkeypatch):
    path = next(p for p in NOTEBOOKS if p.name.startswith("05_"))
    nb = _read(path)
    (ec,) = release.exercise_cells(nb, path.name)
    stub = _compile(nb.cells[ec.index].source)["transpose_padded"]
    reports = {"padded_tile": E.check(E.EXERCISES["padded_tile"], stub)}
    assert not authoring.stale_outputs(nb, path.name, reports)
    edited = dataclasses.replace(E.EXERCISES["padded_tile"], title="a 64x64 tile without bank conflicts")
    monkeypatch.setitem(E.EXERCISES, "padded_tile", edited)
    (stale,) = authoring.stale_outputs(nb, path.name, reports)
    assert "cl.exercises.get(\"padded_tile\") is stale" in stale and "instructor refresh" in stale
    reports["padded_tile"].problems.append(("something new", "hint"))
    assert any("not the checker's answer to the stub" in x for x in authoring.stale_outputs(nb, path.name, reports))


def test_check_finds_a_solution_shown_above_its_exercise_mistakes_included():
    nb06 = next(p for p in NOTEBOOKS if p.name.startswith("06_"))
    nb = _read(nb06)
    assert not authoring.shown_above(nb, nb06.name)                # the slip is shown after the exercise
    slip = next(i for i, c in enumerate(nb.cells) if 'mistakes.get("uninitialized_shared")' in c.source)
    ask = next(i for i, c in enumerate(nb.cells) if 'cl.exercises.get("tile_32x8")' in c.source)
    nb.cells.insert(ask, nb.cells.pop(slip))                        # as it was: the mistake's kernel above it
    (found,) = authoring.shown_above(nb, nb06.name)
    assert "'tile_32x8'" in found and "mistakes" in found
    body = solutions.solved(solutions.body("shared_tile"))
    nb = _cells("# an explanation", 'cl.exercises.get("shared_tile")', "%%cuda\n" + solutions.stub("shared_tile"),
                'cl.exercises.check("shared_tile", transpose_tile)')
    assert not authoring.shown_above(nb, "04_t.ipynb")
    nb.cells[0] = nbformat.v4.new_markdown_cell("Here is how:\n```cuda\n" + body + "\n```")
    assert "'shared_tile'" in authoring.shown_above(nb, "04_t.ipynb")[0]


def test_new_exercise_scaffolds_a_folder_that_loads_passes_and_says_what_next(tmp_path, monkeypatch, capsys):
    from course_lib.teach import spec
    monkeypatch.setattr(paths, "EXERCISES", tmp_path)
    assert cli.main(["new-exercise", "my_copy", "--lesson", "02"]) == 0
    steps = capsys.readouterr().out
    assert "exercise.toml" in steps and "--sync-stubs" in steps and "instructor refresh" in steps
    ex = spec.load(tmp_path / "my_copy")
    assert ex.lesson == "02" and ex.kernel == "my_copy"
    body = solutions._cell((tmp_path / "my_copy" / "solution.cu").read_text())
    stub = solutions._cell((tmp_path / "my_copy" / "stub.cu").read_text())
    assert solutions.has_solution(body) and stub == solutions.strip_solutions(body)
    assert E.check(ex, _compile("%%cuda\n" + body)["my_copy"]).ok
    assert not E.check(ex, _compile("%%cuda\n" + stub)["my_copy"]).ok
    assert cli.main(["new-exercise", "my_copy", "--lesson", "02"]) == 1        # never overwrites


def _tiny_notebook(solution_cell, later_output_text):
    nb = nbformat.v4.new_notebook()
    sol = nbformat.v4.new_code_cell(solution_cell)
    sol.outputs = [nbformat.v4.new_output("stream", text="compiled: k(float* out)\n")]
    later = nbformat.v4.new_code_cell("cl.draw.listing(run)")
    later.outputs = [nbformat.v4.new_output("execute_result", {"text/plain": later_output_text}, execution_count=3)]
    nb.cells = [nbformat.v4.new_markdown_cell("# t"), sol, nbformat.v4.new_code_cell("check"), later]
    nb.metadata["widgets"] = {"state": {"x": {"value": "<pre>" + later_output_text.replace("<", "&lt;") + "</pre>"}}}
    return nb


def test_student_build_clears_later_outputs_and_widget_state_that_show_a_solution():
    cell = "%%cuda\n__global__ void k(float* out)\n{\n    // BEGIN SOLUTION\n    out[threadIdx.x] = secret_value(7);\n" \
           "    // END SOLUTION\n}\n"
    student, notes = release.student_notebook(_tiny_notebook(cell, "line 5: out[threadIdx.x] = secret_value(7);"), "t")
    assert "// TODO: your code here" in student.cells[1].source and student.cells[1].outputs == []
    assert student.cells[3].outputs == [] and "widgets" not in student.metadata
    assert "secret_value" not in json.dumps(student) and any("cell 3" in n for n in notes)
    harmless, _ = release.student_notebook(_tiny_notebook(cell, "nothing to see"), "t")
    assert harmless.cells[3].outputs and "widgets" in harmless.metadata
    with pytest.raises(release.BuildError, match="never closed"):
        release.student_notebook(_tiny_notebook(cell.replace("    // END SOLUTION\n", ""), ""), "t")


@needs_notebooks
def test_build_refuses_to_write_anything_when_a_marker_is_unbalanced(tmp_path):
    bad = _read(NOTEBOOKS[0])
    bad.cells.append(nbformat.v4.new_code_cell("%%cuda\n// BEGIN SOLUTION\nint x;\n"))
    nbformat.write(bad, tmp_path / "99_bad.ipynb")
    with pytest.raises(release.BuildError, match="99_bad.ipynb cell"):
        release.build([NOTEBOOKS[0], tmp_path / "99_bad.ipynb"], tmp_path / "out", log=lambda *a: None)
    assert not (tmp_path / "out").exists()


# ------------------------------------------------------------------------------------ Colab

@needs_notebooks
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_colab_badge_and_install_cell(path):
    assert colab.check_colab_cell(_read(path), path.name) == []


def test_colab_cell_does_nothing_here_and_only_installs_the_course_on_colab():
    off = colab.colab_commands(course.colab_install_cell(), on_colab=False)
    assert off == dict(shell=[], magics=[], path_added=[], error=None)
    on = colab.colab_commands(course.colab_install_cell(), on_colab=True)
    assert on["error"] is None and len(on["shell"]) == 1 and f"git clone -q --depth 1 {course.COURSE_REPO}" in on["shell"][0]
    assert on["magics"] == [("pip", f"install -q {course.COLAB_CLONE_DIR}")]
    assert "google.colab" not in sys.modules


@pytest.mark.parametrize("change, complaint", [
    (lambda s: re.sub(r"\nif .*:\n", "\nif True:\n", s, count=1), "off Colab the cell must do nothing"),
    (lambda s: s + "\n    %pip install -q torch", "and nothing else"),
    (lambda s: s + "\n    !apt-get install -y cuda", "also runs: apt-get"),
    (lambda s: s.replace("transpose-course/transpose-course ", "someone/else "), "must clone"),
    (lambda s: s.replace("install -q /", "install -q -e /"), "runtime restart"),
    (lambda s: s.replace("import importlib.util, sys\n", ""), "on Colab the cell fails"),
    (lambda s: s.replace("test -d /content/transpose-course || ", ""), "the clone is not guarded"),
    (lambda s: s.replace(' and importlib.util.find_spec("course_lib") is None', ""), "run again once the course"),
    (lambda s: s.replace("install -q /", "install -q -U /"), "would replace packages Colab has"),
])
def test_colab_checker_names_what_is_wrong(change, complaint):
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell(change(course.colab_install_cell()))
    cell.metadata["tags"] = ["colab-install"]
    nb.cells = [nbformat.v4.new_markdown_cell("# x\n" + course.colab_badge("x.ipynb")), cell]
    problems = colab.check_colab_cell(nb, "x.ipynb")
    assert any(complaint in p for p in problems), problems


@needs_notebooks
def test_rewriting_the_repo_url_moves_badge_and_clone_together():
    nb = _read(NOTEBOOKS[0])
    new = "https://github.com/my-school/gpu-course"
    assert release.rewrite_urls(nb, NOTEBOOKS[0].name, new, "student") == 2
    assert colab.check_colab_cell(nb, NOTEBOOKS[0].name, new, "student") == []
    assert course.COURSE_REPO not in json.dumps([c.source for c in nb.cells])


@needs_notebooks
@pytest.mark.slow          # a fresh install
def test_colab_install_from_a_fresh_clone_gives_an_importable_course(tmp_path, course_build):
    """What the cell does on Colab, with the clone URL pointed at this repository: the clone builds
    and installs (--target, no deps), and `import course_lib` from it runs the simulator; the
    installed course carries no solution (they stay with instructors). The clone and the wheel pip builds
    from it are the session's (fresh_env.course_build: a clean clone of HEAD, built once)."""
    on = colab.colab_commands(next(c for c in _read(NOTEBOOKS[0]).cells if c.cell_type == "code").source)
    clone, wheel = course_build
    target = tmp_path / "site"
    pip = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target), str(wheel)],
                         capture_output=True, text=True, timeout=300)
    assert pip.returncode == 0, pip.stderr[-2000:]
    probe = ("import course_lib as cl, sys; p = cl.__file__; assert p.startswith(sys.argv[1]), p; "
             "r = cl.Simulator().run('tile', shape=(32, 32)); assert r.correct.ok; "
             "kept = cl.solutions.keys(); assert (kept == []) == (sys.argv[2] == 'installed'), kept; "
             "assert not cl.exercises.reveal('shared_tile', give_up=True).shown; "
             "print('ok', p)")
    env = dict(os.environ, COURSE_LIB_BACKEND="sim")
    assert not list(target.glob("course_lib/kernels/solutions*")) and list(target.glob("course_lib/kernels/*.cu"))
    assert not list(target.glob("course_lib/exercise_files/*/solution.cu"))
    assert len(list(target.glob("course_lib/exercise_files/*/stub.cu"))) == len(E.EXERCISES)
    installed = subprocess.run([sys.executable, "-c", probe, str(target), "installed"], env=dict(env, PYTHONPATH=str(target)),
                               capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert installed.returncode == 0 and "ok" in installed.stdout, installed.stderr[-2000:]
    if on["path_added"]:       # an editable install: the notebook imports from the clone through sys.path
        from_path = subprocess.run([sys.executable, "-c", f"import sys; sys.path.insert(0, {str(clone)!r}); " + probe,
                                    str(clone), "checkout"], env=env, capture_output=True, text=True, timeout=300,
                                   cwd=tmp_path)
        assert from_path.returncode == 0, from_path.stderr[-2000:]


# ------------------------------------------------------------------------------------ Binder / conda

def test_environment_yml_is_what_binder_needs():
    yaml = pytest.importorskip("yaml")
    env = yaml.safe_load((REPO / "environment.yml").read_text())
    assert env["channels"] == ["conda-forge"]
    deps = env["dependencies"]
    python = next(d for d in deps if isinstance(d, str) and d.startswith("python"))
    assert re.fullmatch(r"python=3\.1[0-3]", python), "repo2docker needs an exact x.y python pin"
    pip = next(d["pip"] for d in deps if isinstance(d, dict))
    assert "pip" in deps and pip == ["-e .[lab]"], \
        "the course with JupyterLab (deps from pyproject) is installed from the checkout: Binder serves it from there"


# ------------------------------------------------------------------------------------ refresh

def test_refresh_runs_on_the_simulator_with_this_python_and_never_writes_a_failed_run(tmp_path):
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    bad = nbformat.v4.new_code_cell("1 / 0")
    bad.metadata["tags"] = ["raises-exception"]
    nb.cells = [nbformat.v4.new_code_cell("import os, sys\nprint(os.environ['COURSE_LIB_BACKEND'], sys.executable)"),
                bad]
    good = tmp_path / "good.ipynb"
    nbformat.write(nb, good)
    ok, msg = refresh.refresh_one(good, timeout=120)
    assert ok, msg
    out = _read(good).cells[0].outputs[0]["text"]
    assert out.split() == ["sim", sys.executable]
    assert "execution" not in _read(good).cells[0].metadata          # no timestamps: small diffs
    nb.cells.append(nbformat.v4.new_code_cell("raise RuntimeError('an instructor typo')"))
    broken = tmp_path / "broken.ipynb"
    nbformat.write(nb, broken)
    before = broken.read_text()
    ok, msg = refresh.refresh_one(broken, timeout=120)
    assert not ok and "NOT written" in msg and "an instructor typo" in msg
    assert broken.read_text() == before


def test_refresh_stores_one_stream_per_name_however_the_kernel_flushed():
    cell = nbformat.v4.new_code_cell("")
    cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text="compiled: k"),
                    nbformat.v4.new_output("stream", name="stdout", text="\n"),
                    nbformat.v4.new_output("stream", name="stderr", text="warning\n"),
                    nbformat.v4.new_output("stream", name="stdout", text="after\n")]
    refresh.coalesce_streams(cell)
    assert [(o["name"], o["text"]) for o in cell.outputs] == [
        ("stdout", "compiled: k\n"), ("stderr", "warning\n"), ("stdout", "after\n")]

"""`instructor publish` writes the student repository and never deletes what it did not write (issue 36).

Each case of the issue's trial, as a test: --out an unrelated git repository (it lost bashrc and thesis.tex),
a second clone of the instructor repository (it lost every solution.cu), a published file with an
uncommitted edit (the edit was lost), an untracked file, --out a file (a traceback after 43 s), and a
previous publish updated (only publish's own files changed or removed). Then what students get: the
detector of solution lines finds one anywhere (a .md, a Python string, split over lines, JSON, gzip) and
stays quiet on the lines every kernel has; the Markdown is the students' (no instructor passages, no link
to a file they lack); neither image can hold a solution. The slow test publishes from a clean clone and
runs the published README's test command exactly as written, in a fresh virtual environment.
"""
import gzip
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest

from course_lib.lab import course
from course_lib.lab.instructor import cli, leaks, publish, student_docs
from course_lib.lab.instructor.student_repo import MANIFEST, PublishError
from course_lib.teach import exercises as E
from live_progress import say

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.skipif(not shutil.which("git"), reason="publish needs git")


def _git(folder, *args) -> str:
    r = subprocess.run(["git", "-C", str(folder), "-c", "user.name=t", "-c", "user.email=t@example.org", *args],
                       capture_output=True, text=True, check=True)
    return r.stdout


def _repo(root: Path, files: dict, commit=True) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    if not (root / ".git").exists():
        _git(root.parent, "init", "-q", root.name)
    _git(root, "add", "-A")
    if commit:
        _git(root, "commit", "-qm", "files")
    return root


def _tree(folder: Path) -> dict:
    """Every file under `folder` but .git's, with its bytes."""
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file() and ".git" not in p.relative_to(folder).parts}


V1 = {"README.md": "# the course\n", "kernels/copy.cu": "// a kernel\n", "docs/old.md": "old notes\n",
      "exercises/first_copy/solution.cu": "// the solution\n", "exercises/first_copy/stub.cu": "// the stub\n"}


@pytest.fixture
def instructor(tmp_path):
    return _repo(tmp_path / "instructor", V1)


def _publish(out, repo, **kw) -> list[str]:
    said = []
    publish.publish(out, repo=repo, log=said.append, **kw)
    return said


# ---------------------------------------------------------------------------- where it may write

def test_a_new_folder_gets_the_release_and_the_manifest_of_what_was_written(instructor, tmp_path):
    said = _publish(tmp_path / "student", instructor)
    tree = _tree(tmp_path / "student")
    assert set(tree) == {"README.md", "kernels/copy.cu", "docs/old.md", "exercises/first_copy/stub.cu", MANIFEST}
    manifest = json.loads(tree[MANIFEST])
    assert manifest["course"] == course.COURSE_ID and manifest["commit"] == _git(instructor, "rev-parse", "HEAD").strip()
    assert set(manifest["files"]) == set(tree) - {MANIFEST} and all(len(h) == 64 for h in manifest["files"].values())
    assert "an empty folder: 4 to add" in said[0] and any("add    README.md" in line for line in said)


def test_an_unrelated_git_repository_is_refused_and_keeps_every_file(instructor, tmp_path):
    other = _repo(tmp_path / "other", {"bashrc": "alias ll='ls -l'\n", "thesis.tex": "\\chapter{One}\n"})
    before = _tree(other)
    with pytest.raises(PublishError, match=r"is a git repository that publish did not write.*bashrc, thesis\.tex"):
        _publish(other, instructor)
    assert _tree(other) == before


def test_a_clone_of_the_instructor_repository_is_refused_and_keeps_its_solutions(instructor, tmp_path):
    clone = tmp_path / "second"
    subprocess.run(["git", "clone", "-q", str(instructor), str(clone)], check=True)
    with pytest.raises(PublishError, match="holding exercise solutions"):
        _publish(clone, instructor)
    assert (clone / "exercises/first_copy/solution.cu").read_text() == "// the solution\n"


def test_out_a_file_is_refused_at_once_before_any_check(tmp_path, capsys, monkeypatch):
    """It was a traceback after 43 s of solution checks: --out is judged first."""
    notes = tmp_path / "notes.txt"
    notes.write_text("mine\n")
    monkeypatch.setattr(leaks, "check_texts", lambda *a: pytest.fail("the release was scanned before --out was"))
    start = time.monotonic()
    assert cli.main(["publish", "--out", str(notes)]) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err and f"--out {notes} is a file, not a folder" in err and "hint:" in err
    assert time.monotonic() - start < 20 and notes.read_text() == "mine\n"


def test_an_empty_clone_is_empty_and_a_symbolic_link_is_never_written_through(instructor, tmp_path):
    empty = tmp_path / "empty"
    _git(tmp_path, "init", "-q", "empty")
    _publish(empty, instructor)
    assert (empty / MANIFEST).is_file()
    elsewhere = tmp_path / "elsewhere.md"
    elsewhere.write_text("not the course's\n")
    (empty / "docs" / "old.md").unlink()
    (empty / "docs" / "old.md").symlink_to(elsewhere)
    with pytest.raises(PublishError, match="docs/old.md: a symbolic link"):
        _publish(empty, instructor)
    assert elsewhere.read_text() == "not the course's\n"


def test_a_manifest_naming_a_path_outside_the_folder_is_refused(instructor, tmp_path):
    out = tmp_path / "student"
    _publish(out, instructor)
    manifest = json.loads((out / MANIFEST).read_text())
    manifest["files"]["../instructor/README.md"] = manifest["files"]["README.md"]
    (out / MANIFEST).write_text(json.dumps(manifest))
    with pytest.raises(PublishError, match="not a manifest publish wrote"):
        _publish(out, instructor)
    assert (instructor / "README.md").read_text() == "# the course\n"


# ---------------------------------------------------------------------------- a previous publish

@pytest.fixture
def published(instructor, tmp_path):
    """A previous publish, committed in its own repository (a clone of the student repository)."""
    out = tmp_path / "student"
    _publish(out, instructor)
    return _repo(out, {})


def _next_release(instructor):
    (instructor / "README.md").write_text("# the course, version 2\n")
    (instructor / "docs/old.md").unlink()
    (instructor / "docs/new.md").parent.mkdir(exist_ok=True)
    (instructor / "docs/new.md").write_text("new notes\n")
    _repo(instructor, {})


def test_a_previous_publish_is_updated_and_only_its_own_files_change(instructor, published):
    (published / "my-notes.txt").write_text("untracked, mine\n")
    (published / "CHANGELOG.md").write_text("committed by a maintainer of the student repository\n")
    _git(published, "add", "CHANGELOG.md")
    _git(published, "commit", "-qm", "changelog")
    _next_release(instructor)
    said = _publish(published, instructor)
    tree = _tree(published)
    assert tree["README.md"] == b"# the course, version 2\n" and tree["docs/new.md"] == b"new notes\n"
    assert "docs/old.md" not in tree and not (published / "docs" / "old.md").exists()
    assert tree["my-notes.txt"] == b"untracked, mine\n" and b"maintainer" in tree["CHANGELOG.md"]
    assert said[0].startswith(f"publish into {published}, a previous publish") and "1 to add, 1 to change, 1 to remove" in said[0]
    assert {line.split()[0] + " " + line.split()[1] for line in said[1:4]} == {
        "add docs/new.md", "change README.md", "remove docs/old.md"}
    assert set(json.loads(tree[MANIFEST])["files"]) == {"README.md", "kernels/copy.cu", "docs/new.md",
                                                        "exercises/first_copy/stub.cu"}


def test_dry_run_lists_the_changes_and_writes_nothing(instructor, published, capsys):
    _next_release(instructor)
    before = _tree(published)
    said = _publish(published, instructor, dry_run=True)
    assert _tree(published) == before
    assert said[-1] == "--dry-run: nothing written" and "  change README.md" in said and "  remove docs/old.md" in said


@pytest.mark.parametrize("how", ["changed", "removed"])
def test_an_uncommitted_edit_is_never_overwritten_or_removed(instructor, published, how):
    target = "README.md" if how == "changed" else "docs/old.md"
    (published / target).write_text("my edit, not committed\n")
    _next_release(instructor)
    with pytest.raises(PublishError, match=rf"{re.escape(target)}: edited since the last publish, and not committed"):
        _publish(published, instructor)
    assert (published / target).read_text() == "my edit, not committed\n"
    assert not (published / "docs" / "new.md").exists(), "nothing written"
    _git(published, "commit", "-qam", "the edit, kept in git")          # committed: git keeps it
    said = _publish(published, instructor)
    assert any(target in line and "git keeps it" in line for line in said)


def test_an_untracked_file_in_the_way_is_refused_and_kept(instructor, published):
    _next_release(instructor)
    (published / "docs" / "new.md").write_text("my own new.md, untracked\n")
    with pytest.raises(PublishError, match="docs/new.md: there already, and publish did not write it"):
        _publish(published, instructor)
    assert (published / "docs" / "new.md").read_text() == "my own new.md, untracked\n"


def test_without_git_an_edited_file_is_refused(instructor, tmp_path):
    out = tmp_path / "plain"
    _publish(out, instructor)
    (out / "README.md").write_text("edited by hand\n")
    _next_release(instructor)
    with pytest.raises(PublishError, match="README.md: edited since the last publish\n"):
        _publish(out, instructor)


def test_an_interrupted_publish_is_finished_by_the_next(instructor, published, monkeypatch):
    _next_release(instructor)
    real, calls = Path.write_bytes, []

    def fail_second(self, data):
        calls.append(self)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(self, data)
    monkeypatch.setattr(Path, "write_bytes", fail_second)
    with pytest.raises(KeyboardInterrupt):
        _publish(published, instructor)
    monkeypatch.undo()
    _publish(published, instructor)
    assert (published / "README.md").read_text() == "# the course, version 2\n" and (published / "docs/new.md").exists()


# ---------------------------------------------------------------------------- what students get

def _line(key: str) -> str:
    return max(leaks.solution_lines(key), key=len)


def test_a_solution_line_is_found_anywhere_in_any_file():
    key = "shared_tile"
    line = "out[(size_t)y * rows + x] = tile[threadIdx.x][threadIdx.y];"
    assert line in leaks.solution_lines(key)
    spaced = "out[ (size_t) y*rows+x ]=tile[threadIdx.x] [threadIdx.y] ;"
    long_one = _line("async_tile")                        # a statement over two lines in its solution
    head, tail = long_one.split(", sizeof")
    places = {"docs/tips.md": f"Hint: {spaced} and you are done.",
              "tests/teach/test_mine.py": f'SRC = "__global__ void k() {{\\n{line}\\n}}"',
              "tests/lab/test_split.py": f"x = '''\n{head},\n      sizeof{tail}\n'''",
              "benchmarks/results/run/notes.json": json.dumps({"kernel": f"// x\n{line}\n"}),
              "kernels/comment.cu": f"// once: {line}"}
    for rel, text in places.items():
        assert leaks.shown(rel, text), f"{rel}: not found"
    packed = gzip.compress(f"{line}\n".encode())
    assert leaks.shown("benchmarks/results/run/log.txt.gz", leaks.text_of("log.txt.gz", packed))


def test_lines_every_kernel_has_are_no_secret():
    ordinary = "\n".join(["__syncthreads();", "int x = blockIdx.x * blockDim.x + threadIdx.x;",
                          "if (x < cols && y < rows)", "const float* src = in;", *sorted(leaks.boilerplate())])
    for rel in ("docs/tips.md", "tests/test_x.py", "kernels/x.cu"):
        assert leaks.shown(rel, ordinary) == []
    text = "\n".join(p.read_text() for p in (REPO / "docs").glob("ARCHITECTURE.md"))
    assert leaks.shown("docs/ARCHITECTURE.md", text) == []


def test_a_later_lesson_may_show_an_answer_and_then_any_file_may():
    key = "column_read"
    line, lesson = sorted(leaks.solution_lines(key))[0], int(E.get(key).lesson)
    nb = nbformat.writes(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(line)]))
    later, earlier = f"notebooks/{lesson + 1:02d}_x.ipynb", f"notebooks/{lesson - 1:02d}_x.ipynb"
    assert leaks.check_texts({later: nb, "docs/tips.md": line}) == []
    assert leaks.check_texts({earlier: nb}) and leaks.check_texts({"docs/tips.md": line})


def test_markdown_goes_out_without_its_instructor_passages():
    text = ("# Course\n<!-- instructor-only -->\n## Instructors\nsecret ways\n<!-- end instructor-only -->\n"
            "<!-- student-only\n## For you\nend student-only -->\nthe rest\n")
    assert student_docs.student_text("README.md", text) == "# Course\n## For you\nthe rest\n"
    for broken, where in (("<!-- instructor-only -->\nx\n", "line 1"), ("x\n<!-- end instructor-only -->\n", "line 2"),
                          ("<!-- student-only\n<!-- instructor-only -->\n", "line 2")):
        with pytest.raises(student_docs.MarkerError, match=f"README.md {where}"):
            student_docs.student_text("README.md", broken)


def test_the_student_readme_is_a_students():
    instructors = (REPO / "README.md").read_text()
    students = student_docs.student_text("README.md", instructors)
    for gone in ("## Instructors", "INSTRUCTORS.md", "solution.cu", "instructor-only", "student-only", "NOTEBOOK_API"):
        assert gone not in students, gone
    first, second = (re.search(r"```bash\n(.*?)```", t, re.S)[1].splitlines()[:2] for t in (instructors, students))
    assert first[0] == second[0] and course.COURSE_REPO in second[0], "both clone the student repository"
    assert first[1].split("#")[0].rstrip().endswith("python -m pytest"), "the instructor's README keeps the full run"
    assert second[1].split("#")[0].rstrip().endswith("python -m pytest -m student")
    texts = {"README.md": students, "docs/ARCHITECTURE.md": (REPO / "docs/ARCHITECTURE.md").read_text()}
    files, _ = publish.release(REPO)
    assert student_docs.doc_problems(texts, set(files), set(publish.tracked_files(REPO)), publish.solution_path) == []


def test_a_link_to_a_file_students_lack_or_a_solution_path_is_refused():
    texts = {"README.md": "see [the guide](docs/INSTRUCTORS.md#4) and exercises/padded_tile/solution.cu\n"}
    found = student_docs.doc_problems(texts, {"README.md"}, {"README.md", "docs/INSTRUCTORS.md"}, publish.solution_path)
    assert found == ["README.md: links to docs/INSTRUCTORS.md, which the student repository does not have",
                     "README.md: names exercises/padded_tile/solution.cu, where instructors keep solutions"]


def test_colab_installs_the_student_repository():
    for p in sorted((REPO / "notebooks").glob("[0-9][0-9]_*.ipynb")):
        cells = [c for c in nbformat.read(p, as_version=4).cells if "colab-install" in c.metadata.get("tags", [])]
        assert [c.source for c in cells] == [course.colab_install_cell()], p.name
    assert f"git clone -q --depth 1 {course.COURSE_REPO} " in course.colab_install_cell()


# ---------------------------------------------------------------------------- images

def _solution_paths() -> list[str]:
    """One path for each INSTRUCTOR_ONLY glob where solutions are kept."""
    return [g.replace("**", "a/b").replace("*", "shared_tile") for g in publish.INSTRUCTOR_ONLY
            if publish.solution_path(g.replace("**", "a").replace("*", "x"))]


def test_dockerignore_leaves_every_solution_out_of_both_images():
    from fresh_env import dockerignore
    ignored = dockerignore(REPO)
    paths = _solution_paths()
    assert "exercises/shared_tile/solution.cu" in paths
    for p in paths:
        assert any(x.match(p) for x in ignored), f".dockerignore lets {p} into the image"
    for p in ("exercises/shared_tile/stub.cu", "exercises/shared_tile/exercise.toml", "kernels/tile.cu"):
        assert not any(x.match(p) for x in ignored), p


@pytest.mark.parametrize("dockerfile", ["Dockerfile", "deploy/Dockerfile"])
def test_each_dockerfile_stops_a_build_whose_context_holds_a_solution(dockerfile, tmp_path):
    from fresh_env import _expand, dockerfile_steps
    steps = dockerfile_steps((REPO / dockerfile).read_text())
    i = next(i for i, (what, _) in enumerate(steps) if what == "COPY")
    what, guard = steps[i + 1]
    assert what == "RUN" and "solution.cu" in guard, "the step right after COPY guards against solutions"
    context = tmp_path / "course"
    (context / "exercises" / "shared_tile").mkdir(parents=True)
    (context / "exercises" / "shared_tile" / "stub.cu").write_text("// stub\n")
    run = lambda: subprocess.run(["bash", "-euo", "pipefail", "-c", _expand(guard, {"COURSE": str(context)})],
                                 capture_output=True, text=True, timeout=60)
    assert run().returncode == 0
    for p in _solution_paths():
        (context / p).parent.mkdir(parents=True, exist_ok=True)
        (context / p).write_text("// BEGIN SOLUTION\n")
        r = run()
        assert r.returncode != 0 and p in r.stdout and "student repository" in r.stderr, (p, r.stdout, r.stderr)
        (context / p).unlink()


# ---------------------------------------------------------------------------- the published repository

def _readme_test_command(readme: Path) -> str:
    lines = re.search(r"```bash\n(.*?)```", readme.read_text(), re.S)[1].splitlines()
    return [line for line in lines if line.strip() and not line.lstrip().startswith("#")][1]


@pytest.mark.slow          # a clean clone, publish, a fresh virtual environment, the student's tests (minutes)
def test_the_published_repository_passes_its_readme_test_command(tmp_path):
    from fresh_env import clean_env, run
    if not (REPO / ".git").exists():
        pytest.skip("needs a git checkout")
    clone, out = tmp_path / "instructor", tmp_path / "transpose-course"
    say("publish: cloning the instructor repository's HEAD")
    subprocess.run(["git", "clone", "-q", "--depth", "1", f"file://{REPO}", str(clone)], check=True, timeout=300)
    say("publish: writing the student repository (python -m course_lib instructor publish)")
    env = {k: v for k, v in os.environ.items() if k not in ("COURSE_LIB_SOLUTIONS", "PYTEST_XDIST_WORKER")}
    r = subprocess.run([sys.executable, "-m", "course_lib", "instructor", "publish", "--out", str(out)], cwd=clone,
                       env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    published = sorted(_tree(out))
    assert "notebooks/04_shared_memory_tiles.ipynb" in published and "tests/test_your_install.py" in published
    assert not [f for f in published if publish.instructor_only(f)], "an instructor-only file was published"
    assert "docs/INSTRUCTORS.md" not in published and "## Instructors" not in (out / "README.md").read_text()
    assert not publish.check_files(out, [f for f in published if f != MANIFEST]), "solution text was published"
    command = _readme_test_command(out / "README.md")
    assert "-m student" in command and ".venv-test" in command
    say(f"publish: the published README's test command, as written: {command.split('#')[0].strip()} "
        "(a fresh virtual environment: a few minutes)")
    start = time.monotonic()
    r = run(["bash", "-c", f"set -euo pipefail\n{command}"], "the published README's test command", cwd=out,
            env=clean_env(tmp_path), timeout=1800)
    say(f"publish: the student's command passed in {time.monotonic() - start:.0f} s")
    summary = r.stdout.strip().splitlines()[-1]
    assert re.search(r"\b\d+ passed\b", summary) and not re.search(r"failed|error|skipped", summary), r.stdout[-3000:]
    assert int(re.search(r"(\d+) passed", summary)[1]) >= 40, summary

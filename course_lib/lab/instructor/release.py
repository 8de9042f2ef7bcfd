"""The two copies of the course a release holds: the student notebooks and the instructor's.

    cells = exercise_cells(nb, "04_shared_memory_tiles.ipynb")   # [ExerciseCell(key='shared_tile', index=13, ...)]
    teacher, notes = instructor_notebook(nb, name)   # every exercise cell with its solution put back
    student, notes = student_notebook(nb, name)      # stubs only; nothing that shows a solution line
    build(paths, "build/release")                    # writes student/ and instructor/ (executed)

An exercise cell is the ``%%cuda`` cell of notebook NN that defines the kernel of an exercise of
lesson NN; in notebooks/ its body is the stub of exercises/<key>/solution.cu (course_lib.solutions),
in an instructor copy the file's body with its BEGIN/END SOLUTION markers. A solution line is a line
(its code part, 8+ characters) that only a solution holds: a student copy must show none, in cell
sources, stored outputs or saved widget state, unless the student's notebook shows it anyway
elsewhere (prose, another kernel). Building refuses (BuildError) rather than leak or drop an
author's edit. Executing the instructor copy uses ``refresh.refresh_one``; nothing here runs a
kernel itself.
"""
from __future__ import annotations

import copy
import html
import re
from dataclasses import dataclass
from pathlib import Path

from ...teach import solutions
from ...teach.solutions import has_solution, strip_solutions
from .. import course, stored
from .refresh import refresh_one

CHECK_CALL = re.compile(r"exercises\.check\(\s*['\"](?P<key>\w+)['\"]\s*(?:,\s*(?P<kernel>\w+))?")


class BuildError(ValueError):
    pass


def _nbformat():
    import nbformat
    return nbformat


# ---------------------------------------------------------------------------- exercise cells

@dataclass
class ExerciseCell:
    notebook: str
    key: str
    index: int                          # the %%cuda cell
    magic: str                          # its first line ('%%cuda ...')
    check_index: int | None = None      # the first later cell calling exercises.check('key', ...)

    def __str__(self):
        return f"{self.notebook} cell {self.index} (exercise '{self.key}')"


def exercise_cells(nb, name: str) -> list[ExerciseCell]:
    """The cells of `nb` (notebook file `name`) that hold an exercise with a solution file."""
    from ...teach.exercises import EXERCISES
    found = []
    for key, ex in EXERCISES.items():
        if not name.startswith(f"{ex.lesson}_") or key not in solutions.keys():
            continue
        defines = re.compile(rf"\bvoid\s+{ex.kernel}\s*\(")
        i = next((i for i, c in enumerate(nb.cells) if c.cell_type == "code" and c.source.startswith("%%cuda")
                  and defines.search(c.source)), None)
        checks = [j for j, c in enumerate(nb.cells) if c.cell_type == "code"
                  and (m := CHECK_CALL.search(c.source)) and m["key"] == key]
        if i is None and checks:          # the stub missing (only %%cuda), or the kernel renamed in the folder
            i = _before_check(nb, checks[0])
        if i is not None:
            later = next((j for j in checks if j > i), None)
            found.append(ExerciseCell(name, key, i, solutions.split_cell(nb.cells[i].source)[0], later))
    return sorted(found, key=lambda e: e.index)


def _before_check(nb, at: int) -> int | None:
    """The %%cuda cell right before check cell `at` when it holds nothing yet, or defines the kernel the check
    cell still names (exercise.toml's kernel was renamed: --sync-stubs writes the new stub there)."""
    old = CHECK_CALL.search(nb.cells[at].source)["kernel"]
    for j in range(at - 1, -1, -1):
        c = nb.cells[j]
        if c.cell_type == "code" and c.source.startswith("%%cuda"):
            body = solutions.split_cell(c.source)[1]
            return j if not body.strip() or (old and re.search(rf"\bvoid\s+{old}\s*\(", body)) else None
        if c.cell_type == "code" and "exercises." in c.source:
            return None
    return None


def cell_state(nb, ec: ExerciseCell) -> str:
    """'stub' (the student's version), 'solution' (the instructor's) or 'edited' (neither)."""
    body = solutions.split_cell(nb.cells[ec.index].source)[1]
    return {solutions.stub(ec.key): "stub", solutions.body(ec.key): "solution"}.get(body, "edited")


CHECK_CALL = re.compile(r"exercises\.check\(\s*['\"](?P<key>\w+)['\"]\s*(?:,\s*(?P<kernel>\w+))?")


@dataclass
class SolutionCell:
    notebook: str
    index: int                 # cell index in the notebook
    source: str
    key: str | None = None     # the exercise its checker cell names, if any
    kernel: str | None = None  # the name passed to exercises.check
    check_index: int | None = None

    @property
    def cuda(self) -> bool:
        return self.source.lstrip().startswith("%%cuda")

    def __str__(self):
        return f"{self.notebook} cell {self.index}" + (f" (exercise '{self.key}')" if self.key else "")


def solution_cells(nb, name="") -> list[SolutionCell]:
    """Code cells holding solution markers, each with the first exercises.check cell after it."""
    cells = [SolutionCell(name, i, c.source) for i, c in enumerate(nb.cells)
             if c.cell_type == "code" and has_solution(c.source)]
    for n, sc in enumerate(cells):
        stop = cells[n + 1].index if n + 1 < len(cells) else len(nb.cells)
        for j in range(sc.index + 1, stop):
            m = CHECK_CALL.search(nb.cells[j].source) if nb.cells[j].cell_type == "code" else None
            if m:
                sc.key, sc.kernel, sc.check_index = m["key"], m["kernel"], j
                break
    return cells


def instructor_notebook(nb, name=""):
    """(a copy of `nb` with every exercise cell's solution put back, notes)."""
    out, notes = copy.deepcopy(nb), []
    for ec in exercise_cells(nb, name):
        state = cell_state(nb, ec)
        if state == "edited":
            raise BuildError(f"{ec}: the cell is neither the stub nor the solution of exercises/{ec.key}/solution.cu; "
                             "edit the file, then `python -m course_lib instructor check --sync-stubs` rewrites the cell")
        cell = out.cells[ec.index]
        cell.source = f"{ec.magic}\n{solutions.body(ec.key)}"
        for i in {ec.index, ec.check_index} - {None}:
            out.cells[i].outputs, out.cells[i].execution_count = [], None
    notes.append(f"{len(exercise_cells(nb, name))} solution(s) filled in")
    return out, notes


# ---------------------------------------------------------------------------- what must not show

def _strings(obj):
    """Every string inside a notebook structure (sources, outputs, metadata), HTML unescaped."""
    if isinstance(obj, str):
        yield obj
        if "&" in obj:
            yield html.unescape(obj)
    elif isinstance(obj, dict):
        for v in obj.values():
            yield from _strings(v)
    elif isinstance(obj, (list, tuple)):
        for v in obj:
            yield from _strings(v)


def _code_part(line: str) -> str:
    return re.split(r"\s//|\s#|^//|^#", line.strip(), maxsplit=1)[0].strip()


def _secret_lines(solution: str, stub: str, visible: str) -> set[str]:
    kept = set(stub.splitlines())
    secret = set()
    for line in solution.splitlines():
        s = line.strip()
        if line in kept or "SOLUTION" in s or s.startswith(("//>", "#>")):
            continue
        code = _code_part(line)
        if len(code) >= 8 and re.search(r"\w", code) and code not in visible:
            secret.add(code)
    return secret


def solution_lines(instructor_nb, student_nb, name="") -> set[str]:
    """Lines only the solutions hold (code part, 8+ characters): what a student copy must not show —
    from marker blocks left in cells, and from the solution files of the notebook's exercises."""
    visible = "\n".join(c.source for c in student_nb.cells)
    secret = set()
    for c_in, c_out in zip(instructor_nb.cells, student_nb.cells):
        if c_in.source != c_out.source:
            secret |= _secret_lines(c_in.source, c_out.source, visible)
    for ec in exercise_cells(student_nb, name):
        secret |= _secret_lines(solutions.body(ec.key), solutions.stub(ec.key), visible)
    return secret


def leaks(obj, secret) -> list[str]:
    return sorted({s for text in _strings(obj) for s in secret if s in text})


def student_notebook(nb, name=""):
    """(student notebook, notes): marker blocks replaced by their stubs, outputs of those cells and
    of their checker cells cleared, any later output or widget state that shows a solution line
    cleared too. Raises BuildError rather than leak. Outputs stored before the first solution or
    exercise cell cannot come from a solution and stay."""
    out = copy.deepcopy(nb)
    notes, clear = [], set()
    cells = solution_cells(nb, name)
    for sc in cells:
        try:
            out.cells[sc.index].source = strip_solutions(sc.source)
        except ValueError as exc:
            raise BuildError(f"{name} cell {sc.index}: {exc}") from None
        clear |= {sc.index} | ({sc.check_index} if sc.check_index is not None else set())
    first = min([sc.index for sc in cells] + [ec.index for ec in exercise_cells(out, name)], default=len(nb.cells))
    secret = solution_lines(nb, out, name)
    for i in range(first, len(out.cells)):
        shown = leaks(out.cells[i].get("outputs", []), secret)
        if shown and i not in clear:
            clear.add(i)
            notes.append(f"cell {i}: its stored output showed {shown[0]!r}, cleared")
    for i in sorted(clear):
        out.cells[i].outputs, out.cells[i].execution_count = [], None
    if "widgets" in out.metadata and leaks(out.metadata["widgets"], secret):
        del out.metadata["widgets"]
        notes.append("saved widget state showed a solution line, dropped")
    left = leaks([c.source for c in out.cells] + [c.get("outputs", []) for c in out.cells[first:]] + [out.metadata],
                 secret)
    if left:
        raise BuildError(f"{name}: the student copy would still show solution text: {left[:3]}")
    notes.insert(0, f"{len(cells)} solution cell(s) stripped, outputs of {len(clear)} cell(s) cleared")
    return out, notes


# ---------------------------------------------------------------------------- the build

def rewrite_urls(nb, name: str, repo: str = course.COURSE_REPO, branch: str = course.BRANCH) -> int:
    """Point Colab links (badges) and the install cell's clone URL at `repo`/`branch`, keeping
    the notebook each link opens; returns how many cells changed."""
    owner_name = course.colab_url("x", repo, branch).split("/github/", 1)[1].split("/blob/", 1)[0]
    badge = re.compile(r"(https://colab\.research\.google\.com/github/)[\w.-]+/[\w.-]+/blob/[\w.-]+/")
    clone = re.compile(r"https://github\.com/[\w.-]+/[\w.-]+?(?:\.git)?(?=[\s\"'/]|$)")
    n = 0
    for c in nb.cells:
        new = badge.sub(lambda m: f"{m[1]}{owner_name}/blob/{branch}/", c.source) if c.cell_type == "markdown" \
            else c.source
        if "colab-install" in c.metadata.get("tags", []):
            new = clone.sub(repo.removesuffix(".git"), new)
        n += new != c.source
        c.source = new
    return n


def build(paths, out, repo=course.COURSE_REPO, branch=course.BRANCH, execute=True, log=print) -> dict:
    """Write out/student and out/instructor, then execute the instructor copies on the simulator
    (unless execute=False). Nothing is written if any notebook cannot be built; a copy that fails
    to execute raises BuildError after writing (the solution fails: `instructor check` says why)."""
    nbf, done = _nbformat(), {}
    for p in paths:
        p = Path(p)
        nb = stored.read_notebook(p)
        rewrite_urls(nb, p.name, repo, branch)
        student, notes = student_notebook(nb, p.name)
        teacher, more = instructor_notebook(nb, p.name)
        done[p.name] = (teacher, student, notes + more)
    for kind in ("student", "instructor"):
        (Path(out) / kind).mkdir(parents=True, exist_ok=True)
    for name, (teacher, student, notes) in done.items():
        nbf.write(teacher, Path(out) / "instructor" / name)
        nbf.write(student, Path(out) / "student" / name)
    for name, (_, _, notes) in done.items():
        if execute:
            ok, msg = refresh_one(Path(out) / "instructor" / name)
            if not ok:
                raise BuildError(f"instructor copy: {msg}")
            notes.append("executed")
        log(f"{name}: " + "; ".join(notes))
    return {k: v[2] for k, v in done.items()}

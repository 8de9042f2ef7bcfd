"""What ``instructor check`` catches in an exercise's notebook and folder, and ``new-exercise``.

    missing_cells(nb, name)       # an exercise of lesson NN without its cells in notebook NN
    stub_file_problems(keys)      # exercises/<key>/stub.cu that is not solution.cu's stub
    stale_outputs(nb, name)       # get()/check() cells whose stored output is not what they print now
    shown_above(nb, name)         # most of a solution's lines shown above its exercise (mistakes included)
    scaffold("grid_copy", "02")   # writes exercises/grid_copy/{exercise.toml,solution.cu,stub.cu}

Each problem says what, where and how to fix it. Nothing here edits a notebook; ``sync_stub_files``
and ``scaffold`` write exercise folders, as the instructor asked.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

from ... import paths
from ...teach import solutions, spec
from ...teach.exercise_list import EXERCISES
from .release import exercise_cells

SHOWN = 0.5          # a notebook may show at most this share of a solution's own lines above the exercise


def _lesson(name: str) -> str:
    return name.split("_", 1)[0]


def missing_cells(nb, name) -> list[str]:
    """Exercises of this notebook's lesson whose %%cuda cell (or check cell) the notebook lacks."""
    found = {ec.key for ec in exercise_cells(nb, name)}
    out = []
    for key, ex in EXERCISES.items():
        if ex.lesson == _lesson(name) and key in solutions.keys() and key not in found:
            out.append(f"{name}: exercise '{key}' (exercises/{key}/) has no %%cuda cell defining {ex.kernel}: "
                       f"add the cells `cl.exercises.get(\"{key}\")`, a `%%cuda` cell (then --sync-stubs writes "
                       f"its stub), `cl.exercises.check(\"{key}\", {ex.kernel})` and `cl.exercises.reveal(\"{key}\")`")
    return out


def stub_file_problems(keys=None) -> list[str]:
    """Every exercises/<key>/stub.cu that differs from what solution.cu makes (or is missing)."""
    out = []
    for key in keys if keys is not None else solutions.keys():
        f = paths.EXERCISES / key / spec.STUB
        if f.is_dir():
            out.append(f"exercises/{key}/{spec.STUB} is a folder, not the stub file: remove it (move what you keep in "
                       "it elsewhere), then `python -m course_lib instructor check --sync-stubs` writes the file")
        elif not f.exists() or f.read_text() != solutions.stub_file_text(key):
            what = "missing" if not f.exists() else "not the stub of solution.cu"
            out.append(f"exercises/{key}/{spec.STUB} is {what}: run `python -m course_lib instructor check "
                       "--sync-stubs` to write it")
    return out


def sync_stub_files(keys=None) -> list[str]:
    """Rewrite every stub.cu that stub_file_problems names; say which."""
    done = []
    for key in keys if keys is not None else solutions.keys():
        f = paths.EXERCISES / key / spec.STUB
        if not f.is_dir() and (not f.exists() or f.read_text() != solutions.stub_file_text(key)):
            f.write_text(solutions.stub_file_text(key))
            done.append(f"exercises/{key}/{spec.STUB}: written from solution.cu")
    return done


def _question_cell(nb, key):
    """(index, cell) of the markdown cell right above the exercise's get() cell, or (None, None)."""
    i = next((i for i, c in enumerate(nb.cells) if c.cell_type == "code"
              and re.search(rf"exercises\.get\(\s*['\"]{key}['\"]\s*\)", c.source)), None)
    if i is None or i == 0 or nb.cells[i - 1].cell_type != "markdown":
        return None, None
    return i - 1, nb.cells[i - 1]


def question_problems(nb, name, sync=False) -> list[str]:
    """The question of each exercise (exercise.toml's `question`) must be the end of the markdown cell above
    its get() cell, from its "## Exercise" heading on; with sync, that part is rewritten (and reported)."""
    out = []
    for ec in exercise_cells(nb, name):
        question = EXERCISES[ec.key].question
        i, cell = _question_cell(nb, ec.key)
        if not question or cell is None or cell.source.rstrip().endswith(question):
            continue
        head = cell.source.find("## Exercise")
        if sync:
            cell.source = (cell.source[:head] if head >= 0 else cell.source.rstrip() + "\n\n") + question
            out.append(f"{name} cell {i}: the question of '{ec.key}' set from exercises/{ec.key}/exercise.toml")
        else:
            out.append(f"{name} cell {i}: the question above exercise '{ec.key}' is not the `question` of "
                       f"exercises/{ec.key}/exercise.toml: edit the file, then --sync-stubs rewrites the cell")
    return out


def _plain(cell) -> str:
    return next((o.get("data", {}).get("text/plain", "") for o in cell.get("outputs", [])
                 if o.get("output_type") == "execute_result"), "")


def _html_text(cell) -> str:
    import html
    raw = next((o.get("data", {}).get("text/html", "") for o in cell.get("outputs", [])
                if o.get("output_type") == "execute_result"), "")
    return html.unescape(re.sub(r"<[^>]+>", "", raw))


def stale_outputs(nb, name, stub_reports: dict) -> list[str]:
    """Stored outputs of an exercise's get() and check() cells that differ from what they print now
    (stub_reports: {key: the checker's Report on the stub}, as instructor check computed it)."""
    out = []
    for ec in exercise_cells(nb, name):
        for i, c in enumerate(nb.cells):
            if c.cell_type == "code" and re.search(rf"exercises\.get\(\s*['\"]{ec.key}['\"]\s*\)\s*$", c.source):
                if _plain(c).strip() != repr(EXERCISES[ec.key]).strip():
                    out.append(f"{name} cell {i}: the stored output of cl.exercises.get(\"{ec.key}\") is stale "
                               f"(exercises/{ec.key}/exercise.toml changed, or never stored): run "
                               f"`python -m course_lib instructor refresh {name}`")
        report = stub_reports.get(ec.key)
        cell = nb.cells[ec.check_index] if ec.check_index is not None else None
        if report is not None and cell is not None:
            if _html_text(cell).strip() != repr(report).strip():
                out.append(f"{name} cell {ec.check_index}: the stored output of the check is not the checker's "
                           f"answer to the stub now: run `python -m course_lib instructor refresh {name}`")
    return out


def _norm(line: str) -> str:
    from .release import _code_part
    return re.sub(r"\s+", "", re.sub(r"\(size_t\)", "", _code_part(line)))


def _above(nb, upto: int) -> str:
    """Everything cells above `upto` show: sources, stored outputs, and the mistakes they display."""
    from ...teach import mistakes
    parts = []
    for c in nb.cells[:upto]:
        parts += [c.source, json.dumps(c.get("outputs", [])).replace("\\n", "\n").replace('\\"', '"')]
        for m in re.finditer(r"mistakes\.get\(\s*['\"](\w+)", c.source):
            if m[1] in mistakes.keys():
                slip = mistakes.get(m[1])
                parts += [slip.source, slip.fix]
    return re.sub(r"\s+", "", re.sub(r"\(size_t\)", "", "\n".join(parts)))


def shown_above(nb, name) -> list[str]:
    """An exercise whose solution's own lines (code lines the stub lacks, 8+ characters) mostly appear
    above its first cell — in sources, stored outputs (listings) or a mistake the notebook shows."""
    out = []
    for ec in exercise_cells(nb, name):
        stub = {_norm(x) for x in solutions.stub(ec.key).splitlines()}
        own = [n for n in map(_norm, solutions.solved(solutions.body(ec.key)).splitlines())
               if len(n) >= 8 and n not in stub]
        first = next((i for i, c in enumerate(nb.cells) if re.search(rf"exercises\.get\(\s*['\"]{ec.key}['\"]",
                                                                     c.source)), ec.index)
        text = _above(nb, first)
        shown = [n for n in own if n in text]
        if len(shown) >= 2 and len(shown) > SHOWN * len(own):
            out.append(f"{name}: {len(shown)} of the {len(own)} lines of exercise '{ec.key}''s solution are "
                       f"shown above it (cells 0-{first - 1}, mistakes they display included), e.g. {shown[0]!r}: "
                       "move that "
                       "listing below the exercise, or change the exercise (a variant) so that it no longer solves it")
    return out


# ---------------------------------------------------------------------------- new-exercise

TOML_TEMPLATE = '''# Exercise '{key}': everything but the solution (solution.cu, instructor-only) and the stub (stub.cu,
# generated: python -m course_lib instructor check --sync-stubs). docs/INSTRUCTORS.md §7.
title = "TODO: one line, what the kernel does"
lesson = "{lesson}"
kernel = "{kernel}"
points = 2
question = """
## Exercise: TODO

TODO: what to write, how it is launched, what the checker requires (the notebook shows this).
"""
reveal = ""                  # a course kernel (course_lib.transposes) reveal() shows after a pass
# properties by name (course_lib/teach/properties.py), with parameters: {{coalesced = {{op = "st"}}}}
# (the scaffold's naive solution passes these; add what the lesson is about)
properties = [{{coalesced = {{op = "ld"}}}}]

[launch]
kind = "tile"                # tile | batched | grid-stride | custom (grid = ["expressions of rows, cols"])
block = [32, 8]
tile = [32, 16]
'''

CU_TEMPLATE = '''//! Exercise '{key}' ({lesson}_*.ipynb): the instructor's version of the exercise's %%cuda cell.
//! The notebook holds this file without the //! lines and with each BEGIN/END SOLUTION block
//! replaced by its //> stub lines (stub.cu beside it, generated). Instructor-only: never in the wheel.
__global__ void {kernel}(float* out, const float* in, int rows, int cols)
{{
    // BEGIN SOLUTION
    //> // TODO: the student's starting point (these //> lines are the stub)
    int c = blockIdx.x * 32 + threadIdx.x;              // a naive transpose, two rows per thread
    int last = min(rows, (int)(blockIdx.y + 1) * 16);
    for (int r = blockIdx.y * 16 + threadIdx.y; r < last; r += 8)
        if (c < cols)
            out[(size_t)c * rows + r] = in[(size_t)r * cols + c];
    // END SOLUTION
}}
'''


def scaffold(key: str, lesson: str, kernel: str | None = None, root: Path | None = None) -> list[str]:
    """Write exercises/<key>/ (exercise.toml, solution.cu with markers, stub.cu); return the next steps."""
    if not re.fullmatch(r"[a-z][a-z0-9_]*", key) or not re.fullmatch(r"\d\d", lesson):
        raise ValueError(f"new-exercise {key} --lesson {lesson}: KEY is lower_case_with_underscores, NN two digits")
    folder = Path(root or paths.EXERCISES) / key
    if folder.exists():
        raise ValueError(f"{folder} exists already: edit its files instead")
    kernel = kernel or key
    folder.mkdir(parents=True)
    (folder / spec.TOML).write_text(TOML_TEMPLATE.format(key=key, lesson=lesson, kernel=kernel))
    (folder / spec.SOLUTION).write_text(CU_TEMPLATE.format(key=key, lesson=lesson, kernel=kernel))
    body = solutions._cell((folder / spec.SOLUTION).read_text())
    (folder / spec.STUB).write_text(
        f"{solutions.DOC} Generated from {spec.SOLUTION} (instructor-only) by `python -m course_lib instructor check "
        f"--sync-stubs`: edit {spec.SOLUTION}, not this file.\n" + solutions.strip_solutions(body) + "\n")
    nb = f"notebooks/{lesson}_*.ipynb"
    return [f"wrote {folder}/{{{spec.TOML},{spec.SOLUTION},{spec.STUB}}}",
            f"1. edit {folder / spec.TOML}: title, question, launch, properties (docs/INSTRUCTORS.md §7)",
            f"2. write the solution between the markers of {folder / spec.SOLUTION}, the stub as //> lines",
            f"3. in {nb}: a predict-then-see cell, then cl.exercises.get(\"{key}\"), a %%cuda cell, "
            f"cl.exercises.check(\"{key}\", {kernel}), cl.exercises.reveal(\"{key}\")",
            f"4. python -m course_lib instructor check --sync-stubs {nb}   (writes the cell and stub.cu, checks all)",
            f"5. python -m course_lib instructor refresh {nb}; then python -m pytest -n 0 "
            "tests/teach/test_exercises.py (add three wrong kernels to WRONG there)"]

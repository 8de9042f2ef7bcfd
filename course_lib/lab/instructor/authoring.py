"""What ``instructor check`` catches in an exercise's notebook and folder.

    missing_cells(nb, name)       # an exercise of lesson NN without its cells in notebook NN
    stub_file_problems(keys)      # exercises/<key>/stub.cu that is not solution.cu's stub
    stale_outputs(nb, name)       # get()/check() cells whose stored output is not what they print now
    shown_above(nb, name)         # most of a solution's lines shown above its exercise (mistakes included)

Each problem says what, where and how to fix it. Nothing here edits a notebook; ``sync_stub_files``
writes stub.cu files, as the instructor asked (``exercise_folder`` scaffolds and renames folders).
"""
from __future__ import annotations

import json
import re

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

"""What ``instructor check`` says of the lesson around each exercise: its question, its cells, its text.

    question_problems(nb, name, sync=True)   # the question above get(): rewritten, or inserted as its own cell
    cell_warnings(nb, name)                  # no get() or reveal() cell for an exercise
    text_warnings(nb, name)                  # the text after an exercise names another kernel than its reveal

The question (exercise.toml's ``question``) is the markdown cell right above the exercise's
``cl.exercises.get`` cell, from its ``## Exercise`` heading on. ``--sync-stubs`` rewrites that part; where
the cell above holds no such heading (the question's cell was deleted, or the exercise is new) the
question becomes a cell of its own, inserted above get(), never appended to the lesson's prose. The
text right after an exercise that speaks of what it reveals (markdown up to the next heading that says
"reveal" or names the exercise) is read for the kernels it names: ``kernels/NAME.cu``, a course kernel in backticks, a ``PARAM = value`` of the reveal's
parameters; one that is not what ``reveal`` shows is a warning, as is an exercise without its get() or
reveal() cell. Warnings do not fail the check (a lesson may name other kernels on purpose); problems do.
This module edits a notebook only when asked to sync.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from ... import transposes
from ...teach.exercise_list import EXERCISES
from .release import exercise_cells


@dataclass(frozen=True)
class Shown:
    """The course kernel a reveal shows: its file, the catalog names of that very kernel, its parameters."""
    file: str
    names: frozenset
    params: dict
    label: str


def revealed(ex) -> Shown | None:
    """What ``cl.exercises.reveal`` shows for `ex` (None: nothing, or the exercise's own solution)."""
    spec = transposes.SPECS.get(ex.reveal)
    if spec is None:
        return None
    params = {**spec.defaults, **dict(ex.reveal_params)}
    same = frozenset(k for k, s in transposes.SPECS.items()
                     if s.file == spec.file and s.template == spec.template and s.defaults == params)
    label = f"kernels/{spec.file} with " + ", ".join(f"{k} = {v}" for k, v in params.items()) if params else \
        f"kernels/{spec.file}"
    return Shown(spec.file, same | {ex.reveal}, params, label)


def _nbformat():
    import nbformat
    return nbformat


def _call(nb, what: str, key: str) -> int | None:
    pattern = re.compile(rf"exercises\.{what}\(\s*['\"]{key}['\"]")
    return next((i for i, c in enumerate(nb.cells) if c.cell_type == "code" and pattern.search(c.source)), None)


def question_problems(nb, name, sync=False) -> list[str]:
    """Each exercise's question must end the markdown cell above its get() cell, from its "## Exercise"
    heading on; with sync, that part is rewritten, or the question inserted as a cell of its own."""
    out = []
    for ec in exercise_cells(nb, name):
        question = EXERCISES[ec.key].question
        i = _call(nb, "get", ec.key)
        if not question or i is None:
            continue
        above = nb.cells[i - 1] if i > 0 else None
        head = above.source.find("## Exercise") if above is not None and above.cell_type == "markdown" else -1
        if head >= 0 and above.source.rstrip().endswith(question):
            continue
        where = f"exercises/{ec.key}/exercise.toml"
        if not sync:
            what = ("is not the `question` of" if head >= 0 else "is missing (no markdown cell with its \"## Exercise\" "
                    "heading right above its get() cell): the `question` is in")
            out.append(f"{name} cell {i - 1 if head >= 0 else i}: the question of exercise '{ec.key}' {what} {where}: "
                       "edit the file, then --sync-stubs writes the cell")
        elif head >= 0:
            above.source = above.source[:head] + question
            out.append(f"{name} cell {i - 1}: the question of '{ec.key}' set from {where}")
        else:
            nb.cells.insert(i, _nbformat().v4.new_markdown_cell(question))
            out.append(f"{name} cell {i}: the question of '{ec.key}' inserted from {where} as a cell of its own")
    return out


def cell_warnings(nb, name) -> list[str]:
    """An exercise of this notebook without its get() or reveal() cell."""
    out = []
    for ec in exercise_cells(nb, name):
        for what, why in (("get", "shows students what to write, the launch and what is checked"),
                          ("reveal", "shows the course's version once their kernel passes")):
            if _call(nb, what, ec.key) is None:
                out.append(f"{name}: exercise '{ec.key}' has no `cl.exercises.{what}(\"{ec.key}\")` cell, which {why}")
    return out


def _after(nb, start: int, key: str) -> str:
    """The markdown right after cell `start`, up to the next heading or exercise, that speaks of what the
    exercise reveals (it says "reveal" or names the exercise): the text a changed reveal makes false."""
    parts = []
    for c in nb.cells[start + 1:]:
        if c.cell_type == "markdown" and re.match(r"\s*#", c.source) or "exercises.get(" in c.source:
            break
        if c.cell_type == "markdown" and ("reveal" in c.source or key in c.source):
            parts.append(c.source)
    return "\n".join(parts)


def text_warnings(nb, name) -> list[str]:
    """The text after an exercise names a kernel, a file or a parameter value its reveal does not show."""
    out = []
    for ec in exercise_cells(nb, name):
        ex = EXERCISES[ec.key]
        last = max(i for i in (ec.index, ec.check_index, _call(nb, "reveal", ec.key)) if i is not None)
        text = _after(nb, last, ec.key)
        shown = revealed(ex)
        if not text or shown is None:
            continue
        files = set(re.findall(r"kernels/(\w+\.cuh?)", text)) - {shown.file}
        named = {m for m in re.findall(r"`(\w+)`", text) if m in transposes.SPECS} - shown.names
        values = [(k, v) for k, v in re.findall(r"\b([A-Z][A-Z_]+) = (\d+)\b", text)
                  if k in shown.params and str(shown.params[k]) != v]
        for what in ([f"kernels/{f}" for f in sorted(files)] + [f"`{n}`" for n in sorted(named)]
                     + [f"{k} = {v} (the reveal has {k} = {shown.params[k]})" for k, v in values]):
            out.append(f"{name}: the text after exercise '{ec.key}' names {what}, but its reveal shows {shown.label}: "
                       f"update the text, or exercises/{ec.key}/exercise.toml's reveal")
    return out

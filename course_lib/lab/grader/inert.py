"""A graded notebook made inert: nothing a student produced runs, or loads anything, where anyone looks.

nbgrader shows a submission in three places, all from the notebook ``nbgrader autograde`` writes to
``autograded/``: formgrader's grading page (nbconvert with nbgrader's template, served by the instructor's own
Jupyter server, where a script acts as the instructor: grades, files, terminals), the feedback page
(``generate_feedback``) and the notebook itself, which an instructor may open. :class:`InertNotebook` runs last
among autograde's preprocessors, after the grades are saved, so every one of them shows only inert content:

- outputs: text and pictures (PNG, JPEG, GIF of valid base64; size metadata only as numbers) stay; HTML is
  cleaned (course_lib.lab.grader.inert_markup.clean_html); SVG becomes an ``<img>`` of itself (a picture, its
  scripts never run); markdown and LaTeX stay if inert, else become text; every other type (JavaScript,
  widget views, plotly's JSON, mermaid, ...) goes, named in the output's text. Streams and errors are text;
- markdown cells: kept if inert as nbconvert renders them (inert_markup.markdown_problems), else shown as
  text (the student's words stay readable); attachments only pictures; raw cells become markdown cells showing
  their text (nbconvert's HTML export passes a raw cell's HTML through). Cells the instructor released
  (``release/`` or ``source/`` of the assignment), unchanged, are the instructor's and stay as they are;
- cell and notebook metadata: an allow-list (nbgrader's keys with values of their types, tags, the display
  flags; the kernelspec and language info as plain names); cell ids as nbformat allows them.

It changes no grade (nbgrader saved them before) and no test cell's verdict: its text and error stay.
"""
from __future__ import annotations

import base64
import html
import json
import re
import uuid
from pathlib import Path

import nbformat
from nbconvert.preprocessors import Preprocessor
from traitlets import default

from . import verdicts
from .inert_markup import BASE64, PICTURES, as_text, clean_html, markdown_problems, mathjax_risk, \
    picture_attachments

NAME = re.compile(r"[\w.+\-/() ]{0,100}")              # kernel, language and lexer names; tags
CELL_ID = re.compile(r"[a-zA-Z0-9_-]{1,64}")           # nbformat 4.5's cell id
NBGRADER = {"grade": bool, "solution": bool, "locked": bool, "task": bool, "points": (int, float),
            "schema_version": int, "grade_id": str, "checksum": str, "cell_type": str}
FLAGS = ("collapsed", "scrolled", "editable", "deletable")


def inert_notebook(nb, released=frozenset()):
    """`nb` (an nbformat v4 notebook, changed in place and returned) made inert; `released`: the
    instructor's cells, as :func:`cell_key` gives them, which stay as they are."""
    nb.metadata = _notebook_metadata(nb.get("metadata", {}))
    nb.cells = [inert_cell(cell, released) for cell in nb.get("cells", [])]
    return nb


def cell_key(cell) -> tuple:
    """What makes a markdown or raw cell the same cell: its type, text and attachments."""
    return cell.get("cell_type"), _text(cell.get("source", "")), json.dumps(cell.get("attachments", {}), sort_keys=True,
                                                                           default=str)


def inert_cell(cell, released=frozenset()):
    kind = cell.get("cell_type")
    meta = _cell_metadata(cell.get("metadata", {}))
    new_id = cell.get("id") if isinstance(cell.get("id"), str) and CELL_ID.fullmatch(cell["id"]) else uuid.uuid4().hex[:8]
    if kind in ("markdown", "raw") and cell_key(cell) in released:
        cell.metadata, cell.id = meta, new_id
        return cell
    source = _text(cell.get("source", ""))
    if kind == "code":
        out = nbformat.v4.new_code_cell(source, metadata=meta, execution_count=_count(cell.get("execution_count")))
        out.outputs = [o for o in map(inert_output, cell.get("outputs", [])) if o is not None]
    elif kind == "markdown":
        attachments = picture_attachments(cell.get("attachments"))
        problems = markdown_problems(source, attachments)
        out = nbformat.v4.new_markdown_cell(as_text(source, ", ".join(problems)) if problems else source, metadata=meta)
        if attachments and not problems:
            out.attachments = attachments
    else:                                            # raw, or a type nbformat does not know: its text, as text
        meta.pop("raw_mimetype", None)
        why = "a raw cell" if kind == "raw" else "a cell of a type nbformat does not know"
        out = nbformat.v4.new_markdown_cell(as_text(source, why) if source.strip() else "", metadata=meta)
    out.id = new_id
    return out


def inert_output(output):
    """One output made inert, or None for an output type nbformat does not know."""
    kind = output.get("output_type")
    if kind == "stream":
        name = output.get("name") if output.get("name") in ("stdout", "stderr") else "stdout"
        return nbformat.v4.new_output("stream", name=name, text=_text(output.get("text", "")))
    if kind == "error":
        return nbformat.v4.new_output("error", ename=_text(output.get("ename", "")), evalue=_text(output.get("evalue", "")),
                                      traceback=[_text(line) for line in output.get("traceback", [])])
    if kind not in ("display_data", "execute_result"):
        return None
    data, dropped = inert_bundle(output.get("data", {}))
    if dropped:
        note = f"[not shown by the course's grader: {', '.join(dropped)}]"
        data["text/plain"] = f"{data['text/plain']}\n{note}" if "text/plain" in data else note
        if "text/html" in data:                      # shown first: an empty chart says why it is empty
            data["text/html"] += f"<pre>{html.escape(note, quote=False)}</pre>"
    metadata = {mime: sizes for mime in PICTURES if mime in data
                and (sizes := _sizes(output.get("metadata", {}).get(mime)))}
    if kind == "execute_result":
        return nbformat.v4.new_output(kind, data=data, metadata=metadata,
                                      execution_count=_count(output.get("execution_count")))
    return nbformat.v4.new_output(kind, data=data, metadata=metadata)


def inert_bundle(data) -> tuple[dict, list[str]]:
    """A mime bundle's inert types ({mime: value}) and the types that went."""
    kept, dropped, svg = {}, [], None
    as_text_too = []                                 # HTML, markdown or LaTeX that is not inert: its text is shown
    for mime, value in (data if isinstance(data, dict) else {}).items():
        text = _text(value) if isinstance(value, (str, list)) else None
        if mime == "text/plain" and text is not None:
            kept[mime] = text
        elif mime in PICTURES and text is not None and BASE64.fullmatch(text):
            kept[mime] = text
        elif mime == "image/svg+xml" and text is not None:
            svg = text
        elif mime == "text/html" and text is not None:
            cleaned = clean_html(text)
            if mathjax_risk(cleaned):
                as_text_too.append(text)
            else:
                kept[mime] = cleaned
        elif mime == "text/markdown" and text is not None:
            if markdown_problems(text):
                as_text_too.append(text)
            else:
                kept[mime] = text
        elif mime == verdicts.MIME and (record := verdicts.inert(value)) is not None:
            kept[mime] = record                      # the grader's record: data, shown nowhere (verdicts)
        elif mime == "text/latex" and text is not None:
            if mathjax_risk(text):
                as_text_too.append(text)
            else:
                kept[mime] = text
        else:
            dropped.append(str(mime)[:80])
    if svg is not None and "text/html" not in kept:     # a picture of itself: an <img>'s SVG runs no script
        kept["text/html"] = f'<img src="data:image/svg+xml;base64,{base64.b64encode(svg.encode()).decode()}">'
    if as_text_too:
        kept["text/plain"] = "\n".join(as_text_too)
    return kept, dropped


def released_cells(*notebooks: Path) -> frozenset:
    """The markdown and raw cells of the instructor's notebooks that exist (cell_key of each)."""
    keys = set()
    for path in notebooks:
        if path.is_file():
            nb = nbformat.read(path, as_version=4)
            keys.update(cell_key(c) for c in nb.cells if c.cell_type in ("markdown", "raw"))
    return frozenset(keys)


class InertNotebook(Preprocessor):
    """nbgrader's last autograde preprocessor (and generate_feedback's first): the notebook made inert, the
    instructor's own released cells kept as they are."""

    @default("enabled")
    def _enabled_default(self):                     # nbconvert's preprocessors are off unless enabled
        return True

    def preprocess(self, nb, resources):
        from nbgrader.coursedir import CourseDirectory
        info = resources.get("nbgrader", {})
        assignment, notebook = str(info.get("assignment", "")), str(info.get("notebook", ""))
        released = frozenset()
        if assignment and notebook:
            course = CourseDirectory(config=self.config)
            released = released_cells(*(Path(course.format_path(step, ".", assignment)) / f"{notebook}.ipynb"
                                        for step in (course.release_directory, course.source_directory)))
        return inert_notebook(nb, released), resources


# ------------------------------------------------------------------------------------ values, as their types

def _text(value) -> str:
    if isinstance(value, list):
        return "".join(v for v in value if isinstance(v, str))
    return value if isinstance(value, str) else ""


def _count(value):
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _sizes(meta) -> dict:
    meta = meta if isinstance(meta, dict) else {}
    return {k: int(v) for k in ("width", "height") if isinstance(v := meta.get(k), (int, str)) and str(v).isdigit()}


def _cell_metadata(meta) -> dict:
    meta = meta if isinstance(meta, dict) else {}
    out = {k: meta[k] for k in FLAGS if isinstance(meta.get(k), bool)}
    if meta.get("scrolled") == "auto":
        out["scrolled"] = "auto"
    if isinstance(meta.get("tags"), list):
        out["tags"] = [t for t in meta["tags"] if isinstance(t, str) and NAME.fullmatch(t) and " " not in t]
    jupyter = meta.get("jupyter")
    if isinstance(jupyter, dict):
        out["jupyter"] = {k: v for k, v in jupyter.items() if k in ("source_hidden", "outputs_hidden") and isinstance(v, bool)}
    if isinstance(meta.get("nbgrader"), dict):
        grader = {k: v for k, v in meta["nbgrader"].items()
                  if k in NBGRADER and isinstance(v, NBGRADER[k]) and (k != "points" or not isinstance(v, bool))}
        for k in ("grade_id", "checksum", "cell_type"):     # nbgrader's templates write grade_id into attributes
            if k in grader:                                   # as it is: no character that ends one
                grader[k] = re.sub(r"[<>\"'&`\\\x00-\x1f]", "_", grader[k])[:200]
        out["nbgrader"] = grader
    return out


def _notebook_metadata(meta) -> dict:
    meta = meta if isinstance(meta, dict) else {}
    out = {}
    for key in ("kernelspec", "language_info"):
        if isinstance(meta.get(key), dict):
            plain = {k: v for k, v in meta[key].items() if isinstance(v, str) and NAME.fullmatch(v)}
            mode = meta[key].get("codemirror_mode")
            if isinstance(mode, dict):
                plain["codemirror_mode"] = {k: v for k, v in mode.items()
                                            if isinstance(v, (str, int)) and NAME.fullmatch(str(v))}
            out[key] = plain
    return out

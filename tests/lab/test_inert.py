"""course_lib.lab.grader.inert on every kind of thing a student can put in a notebook, rendered as formgrader and
the feedback render it (nbconvert with nbgrader's templates): no payload in a script, an event handler, a URL or
a frame; the student's words still there as text; honest content and the checker's verdict as they were; the
result a valid notebook, unchanged by a second pass. tests/lab/test_formgrader.py runs the main vectors through
real nbgrader in a real browser; this is the breadth, in a second or two."""
from __future__ import annotations

import base64
import copy
import html
import json
from html.parser import HTMLParser
from pathlib import Path

import nbformat
import pytest

pytest.importorskip("nbgrader", reason="nbgrader comes with the [instructor] extra (Python >= 3.11)")
pytest.importorskip("nh3", reason="nh3 comes with the [instructor] extra")

from course_lib.lab.grader import inert  # noqa: E402
from course_lib.lab.grader.inert_markup import as_text, clean_html, markdown_problems  # noqa: E402

EVIL = "attacker.invalid"
PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + bytes(16)).decode()
SVG = '<svg xmlns="http://www.w3.org/2000/svg" onload="XSS_svg()"><script>XSS_svgscript()</script></svg>'
HONEST_MD = "Some **bold** text, `rows < cols`, a [link](https://example.com/x), $x^2$ and a table:\n\n| a | b |\n|---|---|\n| 1 | 2 |"
VERDICT = "✗ column_read: element (3, 5) was never written"

MARKDOWN = {   # name: (source, attachments)
    "md_img": ('<img src="x" onerror="XSS_md_img()">', None),
    "md_script": ("before <script>XSS_md_script()</script> after", None),
    "md_iframe": ('<iframe srcdoc="&lt;script&gt;XSS_md_iframe()&lt;/script&gt;"></iframe>', None),
    "md_js_link": ("[click](javascript:XSS_md_js_link())", None),
    "md_entity_link": ("[click](jav&#x61;script:XSS_md_entity_link())", None),
    "md_relative": ("[open](XSS_md_relative.html)", None),
    "md_remote": (f"![XSS_md_remote](http://{EVIL}/x.png)", None),
    "md_html_attachment": ("![XSS_md_html_attachment](attachment:a)", {"a": {"text/html": "PHNjcmlwdD4="}}),
    "md_mathjax": ("$\\href{javascript:XSS_md_mathjax()}{x}$", None),
    "md_mathjax_entity": ("&#92;href{javascript:XSS_md_mathjax_entity()}{x}", None),
    "md_style": (f'<div style="background:url(http://{EVIL}/XSS_md_style)">s</div>', None),
    "md_mermaid": ('```mermaid\ngraph TD; A["<img src=x onerror=XSS_md_mermaid()>"]\n```', None),
}
OUTPUTS = {    # name: mime bundle
    "html": {"text/html": f'<b>kept XSS_html_text</b><script>XSS_html()</script><img src="y" onerror="XSS_html_img()">'
                          f'<a href="javascript:XSS_html_a()">a</a><iframe src="http://{EVIL}/XSS_html_iframe"></iframe>'
                          f'<form action="http://{EVIL}/XSS_html_form"><input></form><div style="background:url(http://{EVIL}/XSS_html_css)">c</div>'
                          f'<img src="http://{EVIL}/XSS_html_remote.png"><img src="XSS_relative.png"><object data="XSS_obj.svg"></object>'},
    "js": {"application/javascript": "XSS_js()", "text/plain": "<IPython.core.display.Javascript object>"},
    "markdown": {"text/markdown": '<img src="z" onerror="XSS_markdown()">'},
    "svg": {"image/svg+xml": SVG},
    "widget": {"application/vnd.jupyter.widget-view+json": {"model_id": "XSS_widget", "version_major": 2},
               "text/plain": "VBox()"},
    "plotly": {"application/vnd.plotly.v1+json": {"data": [{"type": "scatter", "name": "<img src=x onerror=XSS_plotly()>"}]},
               "text/html": "<div>plot</div><script>XSS_plotly_html()</script>"},
    "latex": {"text/latex": "$\\href{javascript:XSS_latex()}{x}$"},
    "mermaid": {"text/vnd.mermaid": "graph TD; A[XSS_mermaid]"},
    "png_bad": {"image/png": '"><img src=x onerror=XSS_png_bad()>'},
    "isolated": {"text/html": "<script>XSS_isolated()</script>"},
}
OUTPUT_META = {"png_ok": {"image/png": {"width": "1 onerror=XSS_width()", "height": 30,
                                        "filenames": {"image/png": f"http://{EVIL}/XSS_filename.png"}}},
               "isolated": {"text/html": {"isolated": True}}}


def _scripted():
    cells = [nbformat.v4.new_markdown_cell(HONEST_MD)]
    cells += [nbformat.v4.new_markdown_cell(src, attachments=att) if att else nbformat.v4.new_markdown_cell(src)
              for src, att in MARKDOWN.values()]
    cells.append(nbformat.v4.new_markdown_cell("![picture](attachment:p.png)", attachments={"p.png": {"image/png": PNG}}))
    cells.append(nbformat.v4.new_raw_cell("<script>XSS_raw()</script>", metadata={"raw_mimetype": "text/html"}))
    code = nbformat.v4.new_code_cell("print('<script>XSS_stream()</script>')", metadata={
        "tags": ['"><img src=x onerror=XSS_tag()>', "ok-tag"], "custom": {"x": "<script>XSS_meta()</script>"},
        "nbgrader": {"grade": False, "solution": False, "grade_id": '"><img src=x onerror=XSS_gradeid()>', "points": "9"}})
    code.outputs = [nbformat.v4.new_output("stream", name="stdout", text="<script>XSS_stream()</script>\n")]
    code.outputs += [nbformat.v4.new_output("display_data", data=data, metadata=OUTPUT_META.get(name, {}))
                     for name, data in OUTPUTS.items()]
    code.outputs.append(nbformat.v4.new_output("display_data", data={"image/png": PNG}, metadata=OUTPUT_META["png_ok"]))
    check = nbformat.v4.new_code_cell('cl.exercises.grade("column_read")', metadata={"nbgrader": {
        "grade": True, "solution": False, "locked": True, "grade_id": "column_read_check", "points": 2, "schema_version": 3}})
    check.outputs = [nbformat.v4.new_output("stream", name="stdout", text=VERDICT + "\n"),
                     nbformat.v4.new_output("error", ename="AssertionError", evalue="column_read: not passed",
                                            traceback=["AssertionError: column_read: not passed"])]
    nb = nbformat.v4.new_notebook(cells=cells + [code, check], metadata={
        "title": "<script>XSS_title()</script>", "widgets": {"application/vnd.jupyter.widget-state+json": {
            "state": {"m": {"state": {"value": "<img src=x onerror=XSS_widget_state()>"}}}}},
        "kernelspec": {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}})
    return nb


class Page(HTMLParser):
    """What a rendered page would run or load: scripts' text, every attribute, frames; and its text."""

    def __init__(self):
        super().__init__()
        self.attributes, self.scripts, self.frames, self.text, self._in_script = [], [], [], [], False

    def handle_starttag(self, tag, attrs):
        self.attributes += [(tag, k, v or "") for k, v in attrs]
        self.frames += [tag] if tag in ("iframe", "object", "embed", "frame", "base", "form") else []
        self._in_script = tag == "script"

    def handle_endtag(self, tag):
        self._in_script = False

    def handle_data(self, data):
        (self.scripts if self._in_script else self.text).append(data)


def _render(nb, template) -> Page:
    from nbconvert.exporters import HTMLExporter
    from nbgrader.server_extensions.formgrader import handlers
    static = Path(handlers.template_path).parent / "static" / "node_modules" / "bootstrap" / "dist" / "css"
    exporter = HTMLExporter(template_name=template, extra_template_basedirs=[handlers.template_path],
                            extra_template_paths=[str(static)])     # as nbgrader's GenerateFeedback sets it
    body, _ = exporter.from_notebook_node(_graded(nb), resources={
        "base_url": "", "index": 0, "total": 1, "notebook_id": "nb", "assignment_id": "a", "submission_id": "s",
        "student": "mallory", "last_name": "", "first_name": "", "notebook_path": "autograded/mallory/a/nb.ipynb",
        "nbgrader": {"notebook": "nb", "score": 0, "max_score": 2, "late_penalty": 0}})     # as GetGrades gives it
    page = Page()
    page.feed(body)
    return page


def _graded(nb):
    """`nb` with the scores nbgrader's GetGrades adds to its grade cells before the feedback is rendered."""
    nb = copy.deepcopy(nb)
    for cell in nb.cells:
        if cell.metadata.get("nbgrader", {}).get("grade"):
            cell.metadata.nbgrader["score"] = 0
    return nb


@pytest.fixture(scope="module")
def made_inert():
    return inert.inert_notebook(_scripted())


@pytest.mark.parametrize("template", ["formgrade", "feedback"])
def test_nothing_the_student_made_runs_or_loads_in_formgrader_or_feedback(made_inert, template):
    page = _render(made_inert, template)
    active = [(tag, k, v[:120]) for tag, k, v in page.attributes
              if k not in ("alt", "title") and ("XSS" in v or EVIL in v or v.strip().lower().startswith("javascript:"))]
    assert not active, f"payloads in attributes (handlers, URLs, styles): {active}"
    assert not [s for s in page.scripts if "XSS" in s], "a payload inside a <script>"
    assert not page.frames, f"frames, objects or forms on the page: {page.frames}"
    text = "".join(page.text)
    hidden = [name for name in MARKDOWN if f"XSS_{name}" not in text and name != "md_mermaid"]
    assert not hidden, f"the student's words are gone, not shown as text: {hidden}"
    assert VERDICT in text and "AssertionError: column_read: not passed" in text
    assert "XSS_raw" in text and "XSS_stream" in text and "kept XSS_html_text" in text


def test_the_unsafe_notebook_does_run_payloads_so_the_check_above_means_something():
    page = _render(_scripted(), "formgrade")
    assert [1 for tag, k, v in page.attributes if k.startswith("on") and "XSS" in v]
    assert [s for s in page.scripts if "XSS_html()" in s]


def test_honest_content_and_the_verdict_stay_as_they_were(made_inert):
    original = _scripted()
    assert made_inert.cells[0].source == HONEST_MD and not markdown_problems(HONEST_MD)
    picture = made_inert.cells[1 + len(MARKDOWN)]
    assert picture.source == "![picture](attachment:p.png)" and picture.attachments == {"p.png": {"image/png": PNG}}
    assert made_inert.cells[-1].outputs == original.cells[-1].outputs
    assert made_inert.cells[-1].metadata == original.cells[-1].metadata
    png = made_inert.cells[-2].outputs[-1]
    assert png.data == {"image/png": PNG} and png.metadata == {"image/png": {"height": 30}}
    nbformat.validate(made_inert)
    assert made_inert.metadata == {"kernelspec": original.metadata.kernelspec}


def test_what_goes_is_named_and_a_second_pass_changes_nothing(made_inert):
    outputs = {name: out for name, out in zip(["stream", *OUTPUTS], made_inert.cells[-2].outputs)}
    assert "application/javascript" in outputs["js"].data["text/plain"]
    assert outputs["widget"].data == {"text/plain": "VBox()\n[not shown by the course's grader: "
                                                    "application/vnd.jupyter.widget-view+json]"}
    assert outputs["svg"].data["text/html"].startswith('<img src="data:image/svg+xml;base64,')
    assert outputs["latex"].data == {"text/plain": OUTPUTS["latex"]["text/latex"]}
    assert outputs["markdown"].data == {"text/plain": OUTPUTS["markdown"]["text/markdown"]}
    assert outputs["png_bad"].data == {"text/plain": "[not shown by the course's grader: image/png]"}
    meta = made_inert.cells[-2].metadata
    assert meta["tags"] == ["ok-tag"] and "custom" not in meta and set(meta["nbgrader"]) == {"grade", "solution", "grade_id"}
    again = inert.inert_notebook(copy.deepcopy(made_inert))
    assert json.dumps(again, sort_keys=True) == json.dumps(made_inert, sort_keys=True)


@pytest.mark.parametrize("source", ["```\n<script>x()</script>\n```", "$$\n\\href{javascript:x}{y}\n$$", "</code></pre><img src=x onerror=y>",
                                    "~~~\nhi\n~~~", "    indented <b>", "````` ``` `` `", "[a]: javascript:x\n[b][a]"])
def test_markup_shown_as_text_is_one_code_block_holding_exactly_it(source):
    from nbconvert.filters.markdown_mistune import markdown2html_mistune
    rendered = markdown2html_mistune(as_text(source, "HTML"))
    page = Page()
    page.feed(rendered)
    assert [t for t, k, v in page.attributes if k != "class"] == [] and rendered.count("<pre") == 1
    code = rendered.split("<pre>", 1)[1].rsplit("</pre>", 1)[0].removeprefix("<span></span>")
    assert html.unescape(code).rstrip("\n") == source
    assert not markdown_problems(as_text(source, "HTML"))           # shown as text, it is inert


def test_clean_html_keeps_tables_and_pictures_and_drops_the_rest():
    table = "<table><thead><tr><th>rows</th></tr></thead><tbody><tr><td>32</td></tr></tbody></table>"
    assert clean_html(table) == table
    assert clean_html(f'<img src="data:image/png;base64,{PNG}" width="10">') == f'<img src="data:image/png;base64,{PNG}" width="10">'
    assert clean_html('<a href="https://example.com/">x</a>') == '<a href="https://example.com/" rel="noopener noreferrer nofollow">x</a>'
    assert clean_html('<img src="data:text/html;base64,PHNjcmlwdD4=" onerror="x()">') == ""


def test_the_course_config_wires_it_into_autograde_and_feedback_where_it_runs(tmp_path):
    from traitlets.config import Config
    from course_lib.lab.grader import nbgrader_hooks
    c = Config()
    nbgrader_hooks.configure(c)
    assert c.Autograde.autograde_preprocessors[-1] is inert.InertNotebook
    assert c.GenerateFeedback.preprocessors[0] is inert.InertNotebook
    c.CourseDirectory.root = str(tmp_path)
    nb, _ = inert.InertNotebook(config=c)(_scripted(), {"nbgrader": {"assignment": "a", "notebook": "nb"}})
    assert nb.cells[1].source.startswith("*The course's grader shows this as text")   # as nbgrader calls it


def test_the_instructors_released_cells_stay_as_they_are(tmp_path: Path):
    mine = nbformat.v4.new_markdown_cell("<details><summary>Hint</summary>pad the tile</details>")
    nbformat.write(nbformat.v4.new_notebook(cells=[mine]), tmp_path / "nb.ipynb")
    released = inert.released_cells(tmp_path / "nb.ipynb", tmp_path / "missing.ipynb")
    theirs = nbformat.v4.new_markdown_cell("<details><summary>Hint</summary>pad the tile</details><img src=x onerror=y()>")
    nb = inert.inert_notebook(nbformat.v4.new_notebook(cells=[copy.deepcopy(mine), theirs]), released)
    assert nb.cells[0].source == mine.source and nb.cells[1].source.startswith("*The course's grader shows this as text")

"""Markup a student wrote or made, judged or cleaned so that it runs and loads nothing where it is shown.

- :func:`clean_html`: an HTML output cleaned with nh3 (ammonia, in Rust) on an allow-list: text and tables
  stay; scripts, event handlers, iframes, forms, ``style`` (CSS ``url()``), ``class``, remote and relative
  URLs go; an image only from a ``data:`` URL of a picture type, a link only to ``http(s):``/``mailto:``.
- :func:`markdown_problems`: why a markdown text is not inert as nbconvert renders it (formgrader's and the
  feedback's pages), parsed by nbconvert's own parser, so that what is judged is what is rendered: raw HTML,
  a link other than ``http(s):``/``mailto:``/``#``, an image other than the cell's own picture attachments,
  a mermaid diagram (its script renders labels as HTML), a MathJax command that links, loads or styles.
- :func:`as_text`: such a text shown as text (a fenced code block no markdown parser reads into).
- :func:`mathjax_risk`: whether text the page's MathJax typesets holds such a command.

It judges markup only; which parts of a notebook go through it is course_lib.lab.grader.inert's.
"""
from __future__ import annotations

import html
import re

try:
    import nh3
except ImportError as exc:                      # a grader without it would show a student's scripts to the instructor
    raise ImportError("the course's grader needs nh3 to clean what a student's notebook shows you: pip install nh3 "
                      "(the [instructor] extra brings it; docs/INSTRUCTORS.md §6)") from exc

PICTURES = ("image/png", "image/jpeg", "image/gif")       # raster: inert wherever they are shown
PICTURE_URL = re.compile(r"data:image/(?:png|jpeg|gif|svg\+xml);base64,[A-Za-z0-9+/=\s]*", re.I)  # <img>: inert
LINK_URL = re.compile(r"(?:https?://|mailto:)[^\s\x00-\x1f\"'<>`\\]+|#[\w\-.~%]*", re.I)
BASE64 = re.compile(r"[A-Za-z0-9+/=\s]*")
# MathJax (nbconvert's pages, JupyterLab) typesets $...$ in any text outside code: these commands make links
# (\href, \url: javascript: ones too), load code (\require), or set HTML attributes and CSS (url() loads)
MATHJAX = re.compile(r"\\(?:href|url|require|unicode|style|class|cssId|bbox|mmlToken|html|data)(?![A-Za-z])")

_TAGS = {"a", "abbr", "b", "blockquote", "br", "caption", "code", "col", "colgroup", "dd", "del", "details", "div",
         "dl", "dt", "em", "figcaption", "figure", "h1", "h2", "h3", "h4", "h5", "h6", "hr", "i", "img", "ins",
         "kbd", "li", "mark", "ol", "p", "pre", "q", "s", "samp", "small", "span", "strong", "sub", "summary",
         "sup", "table", "tbody", "td", "tfoot", "th", "thead", "tr", "u", "ul", "var"}
_ATTRIBUTES = {"*": {"title"}, "a": {"href"}, "img": {"src", "alt", "width", "height"}, "ol": {"start"},
               "td": {"colspan", "rowspan", "align"}, "th": {"colspan", "rowspan", "align", "scope"},
               "col": {"span"}, "colgroup": {"span"}}


def _attribute(tag: str, name: str, value: str) -> str | None:
    """nh3's last word on an attribute it allowed: URLs and sizes narrowed further."""
    if name == "src":
        return value if PICTURE_URL.fullmatch(value) else None
    if name == "href":
        return value if LINK_URL.fullmatch(value) else None
    if name in ("width", "height", "colspan", "rowspan", "start", "span"):
        return value if value.strip().isdigit() else None
    return value


_CLEANER = nh3.Cleaner(tags=_TAGS, attributes=_ATTRIBUTES, attribute_filter=_attribute, url_relative="deny",
                       url_schemes={"http", "https", "mailto", "data"}, link_rel="noopener noreferrer nofollow",
                       strip_comments=True)


def clean_html(text: str) -> str:
    """`text` with only inert HTML left (its words stay; a script's and a style sheet's content go). An image
    left without a source goes too: a browser would draw a broken picture."""
    return _CLEANER.clean(text).replace("<img>", "")


def mathjax_risk(text: str) -> bool:
    """Whether `text` (entities decoded, as a page shows it) holds a MathJax command that links, loads or styles."""
    return bool(MATHJAX.search(text) or MATHJAX.search(html.unescape(text)))


def picture_attachments(attachments) -> dict:
    """The pictures among a markdown cell's attachments ({name: {mime: base64}}), each checked; the rest
    (HTML, scripts, unknown types, data that is not base64) goes."""
    kept = {}
    for name, bundle in (attachments or {}).items():
        if not isinstance(bundle, dict):
            continue
        pictures = {mime: data for mime, data in bundle.items()
                    if mime in (*PICTURES, "image/svg+xml") and isinstance(data, str) and BASE64.fullmatch(data)}
        if pictures and isinstance(name, str):
            kept[name] = pictures
    return kept


def _renderer_class():
    """A subclass of nbconvert's markdown renderer that notes what is not inert (built on first use: importing
    nbconvert takes a second)."""
    from nbconvert.filters.markdown_mistune import MISTUNE_V3, IPythonRenderer
    if not MISTUNE_V3:
        raise RuntimeError("the course's grader judges markdown with mistune 3, nbconvert's parser: "
                           "pip install 'mistune>=3' (the [instructor] extra asks for it)")

    class Findings(IPythonRenderer):
        def __init__(self, attachments):
            super().__init__(escape=False, attachments=attachments, exclude_anchor_links=True)
            self.problems: list[str] = []

        def block_html(self, html):
            self.problems.append("HTML")
            return ""

        def inline_html(self, html):
            self.problems.append("HTML")
            return ""

        def link(self, text, url, title=None):
            if not LINK_URL.fullmatch(url):
                self.problems.append("a link that is not http(s), mailto or #")
            return text

        def image(self, text, url, title=None):
            name = url[len("attachment:"):] if url.startswith("attachment:") else None
            if not (name in self.attachments if name is not None else PICTURE_URL.fullmatch(url)):
                self.problems.append("an image that is not one of the cell's own pictures")
            return text

        def block_code(self, code, info=None):
            if info and info.strip().lower().startswith("mermaid"):
                self.problems.append("a mermaid diagram")
                info = None
            return super().block_code(code, info)

    return Findings


_FINDINGS = []
_CODE = re.compile(r"<(pre|code)\b.*?</\1>", re.S)       # in the renderer's own HTML (none of the student's)


def markdown_problems(source: str, attachments=None) -> list[str]:
    """Why markdown `source` (with a cell's checked `attachments`) is not inert as nbconvert renders it; [] if
    it is."""
    from nbconvert.filters.markdown_mistune import MarkdownWithMath
    if not _FINDINGS:
        _FINDINGS.append(_renderer_class())
    renderer = _FINDINGS[0](attachments or {})
    rendered = MarkdownWithMath(renderer=renderer).render(source)
    problems = list(dict.fromkeys(renderer.problems))
    if mathjax_risk(_CODE.sub("", rendered)):        # MathJax skips code; raw HTML, which could hide it, is a problem
        problems.append("a MathJax command that links, loads or styles")
    return problems


def as_text(source: str, why: str) -> str:
    """Markdown that shows `source` as it is, as text, under a line saying `why` (our words, no markup): a code
    fence longer than any run of backticks in it, which no CommonMark parser closes early."""
    longest = max((len(run) for run in re.findall(r"`+", source)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"*The course's grader shows this as text: it held {why}.*\n\n{fence}text\n{source}\n{fence}\n"

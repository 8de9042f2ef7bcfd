"""A catalog of classic student mistakes in CUDA kernels, each with the diagnosis course_lib gives.

    from course_lib import mistakes
    m = mistakes.get("off_by_one")
    m                        # in a notebook: the buggy kernel, the launch, what course_lib says
    d = m.diagnose()         # run it: Diagnosis(kind='MemoryAccessError', lines=(6,), ...)
    m.explain()              # markdown: what went wrong, and the fix
    mistakes.table()         # markdown: every entry, one line each

Each :class:`Mistake` is data (``mistakes.toml``, one table per entry): a short kernel written the way a student writes it (compiled
as ``cell.cu`` so messages look like a notebook's), the Python that launches it — shown as
is and run as is, so what a notebook shows is exactly what runs — the kind of diagnosis to
expect (an exception class, a race kind, ``uninitialized read`` or ``wrong result``: a result
that ``verify.compare`` or an exercise's checker, ``cl.exercises.check``, found wrong), the
source line(s) the diagnosis must point at, and an explanation with the fix. Tests run every
entry and check kind, line, thread/block/buffer and hint (tests/teach/test_mistakes.py).

This module runs nothing on import and never needs a GPU: every launch is ``simulate`` or
the launch guard's CPU check (``guard.check``).
"""
from __future__ import annotations

import ast
import contextlib
import difflib
import io
import linecache
import sys
import textwrap
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace

import numpy as np

from ..errors import CompileError, KernelError, NotFound
from ..kernel import guard
from ..kernel.module import RawModule
from ..transposes import verify
from ..transposes.data import poisoned, random_matrix
from . import exercises

if sys.version_info >= (3, 11):
    import tomllib
else:                                   # Python 3.10: the same parser, from PyPI
    import tomli as tomllib

FILENAME = "cell.cu"


@dataclass
class Diagnosis:
    """What course_lib said about one mistake: the kind, the text a student sees, and where."""
    kind: str                      # 'MemoryAccessError', 'RAW race', 'uninitialized read', 'wrong result', ...
    text: str
    lines: tuple = ()
    thread: tuple | None = None
    block: tuple | None = None
    hint: str | None = None
    error: Exception | None = None
    result: object = None
    output: str = ""

    def __str__(self):
        return f"{self.kind}: {self.text}"

    def _repr_markdown_(self):
        return f"**{self.kind}**\n\n```text\n{self.text}\n```"


@dataclass
class Mistake:
    key: str
    title: str
    source: str                    # the buggy kernel (CUDA C++)
    launch: str                    # Python run with `src` = source; the last expression is the result
    expect: str                    # the Diagnosis.kind this mistake must produce
    points_at: tuple = ()          # text of the source line(s) the diagnosis must name, in order
    mentions: tuple = ()           # words the diagnosis must contain (buffer, thread, block, ...)
    explanation: str = ""
    fix: str = ""
    hint: str = ""                 # for 'wrong result': what to look at (the other kinds carry their own)
    tags: tuple = field(default_factory=tuple)

    # ------------------------------------------------------------------ running
    def expected_lines(self) -> tuple:
        """1-based line numbers of `points_at` in the source (each text must occur exactly once)."""
        src = self.source.splitlines()
        out = []
        for text in self.points_at:
            hits = [i + 1 for i, s in enumerate(src) if text in s]
            if len(hits) != 1:
                raise ValueError(f"{self.key}: {text!r} matches lines {hits}, expected exactly one")
            out.append(hits[0])
        return tuple(out)

    def diagnose(self) -> Diagnosis:
        """Run the launch and describe what course_lib reported."""
        ns = dict(np=np, cl=SimpleNamespace(RawModule=RawModule, exercises=exercises), verify=verify, guard=guard,
                  src=self.source,
                  random_matrix=lambda r, c, dtype=np.float32: random_matrix(r, c, dtype),
                  poisoned=lambda *shape, dtype=np.float32: poisoned(shape, dtype))
        out = io.StringIO()
        try:
            with contextlib.redirect_stdout(out):
                result = _run_cell(self.launch, ns)
        except KernelError as err:
            return _from_error(err, out.getvalue())
        return _from_result(result, out.getvalue(), self.hint)

    # ------------------------------------------------------------------ showing
    def show(self) -> str:
        """Markdown: the kernel (numbered as in the messages) and how it is launched."""
        numbered = "\n".join(f"{n:3d}  {line}" for n, line in enumerate(self.source.splitlines(), 1))
        return (f"### {self.title}\n\n`{FILENAME}`:\n```cuda\n{numbered}\n```\n"
                f"Launched with:\n```python\n{self.launch.strip()}\n```\n")

    def explain(self) -> str:
        """Markdown: what went wrong and how to fix it."""
        return f"**What went wrong.** {self.explanation}\n\n**Fix.** {self.fix}\n"

    def _repr_markdown_(self):
        return self.show() + f"\nExpected diagnosis: **{self.expect}** (run `.diagnose()`; `.explain()` for the fix)\n"


def _run_cell(code, ns):
    """exec a cell's code; the value of a final expression is the result (as in a notebook)."""
    code = textwrap.dedent(code)
    name = "<mistake cell>"
    linecache.cache[name] = (len(code), None, code.splitlines(True), name)   # so tracebacks show the line
    tree = ast.parse(code)
    last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
    exec(compile(tree, name, "exec"), ns)
    return eval(compile(ast.Expression(last.value), name, "eval"), ns) if last else None


def _from_error(err, output):
    if isinstance(err, CompileError):
        lines = tuple(d[0] for d in err.diagnostics[:1])
    else:
        lines = (err.line,) if err.line else ()
    return Diagnosis(type(err).__name__, str(err), lines, err.thread, err.block, err.hint, err, None, output)


def _from_result(result, output, hint):
    races = [r for r in getattr(result, "races", []) if r.scope == "block"] or list(getattr(result, "races", []))
    if races:
        r = races[0]
        return Diagnosis(f"{r.kind} race", "\n".join(str(x) for x in races), tuple(r.lines), r.threads[1],
                         r.block, r.hint, None, result, output)
    # a note that metrics follow the PTX (no machine code here) is about the setup, not the kernel
    warnings = [w for w in getattr(result, "warnings", []) if w.kind != "machine code"]
    if warnings:
        w = warnings[0]
        return Diagnosis(f"{w.kind} read" if w.kind == "uninitialized" else w.kind,
                         "\n".join(str(x) for x in warnings), (w.line,), w.thread, w.block, w.hint, None, result, output)
    if result is not None and hasattr(result, "ok") and not result.ok:
        text = (output + str(result)).strip()
        problems = getattr(result, "problems", None)        # a checker's Report: its first hint is the one to act on
        return Diagnosis("wrong result", text, (), None, None, problems[0][1] if problems else hint, None, result,
                         output)
    return Diagnosis("no error", (output + str(result)).strip(), (), None, None, None, None, result, output)


# ----------------------------------------------------------------------------- the catalog

CATALOG_FILE = Path(__file__).with_name("mistakes.toml")


def _load(path=CATALOG_FILE) -> dict[str, Mistake]:
    with open(path, "rb") as f:
        entries = tomllib.load(f)["mistake"]
    return {e["key"]: Mistake(**{k: tuple(v) if isinstance(v, list) else v for k, v in e.items()})
            for e in entries}


CATALOG: dict[str, Mistake] = _load()


def get(key: str) -> Mistake:
    if key not in CATALOG:
        close = difflib.get_close_matches(str(key), CATALOG, n=3)
        raise NotFound(f"no mistake {key!r}", hint=(f"did you mean {', '.join(close)}? " if close else "")
                       + f"the catalog: {', '.join(CATALOG)}")
    return CATALOG[key]


def keys() -> list[str]:
    return list(CATALOG)


def table() -> str:
    rows = [f"| `{m.key}` | {m.title} | {m.expect} |" for m in CATALOG.values()]
    return "| key | mistake | diagnosis |\n|---|---|---|\n" + "\n".join(rows) + "\n"


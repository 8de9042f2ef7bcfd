"""A check's verdict as data: what ``exercises.check`` found and measured, as a JSON-able record.

    report = exercises.check("tile_32x8", transpose_32x8)
    report.record["problems"]      # [{"kind": "property", "name": "no bank conflicts ...", "line": 14, ...}]
    report.record["counts"]        # {"sectors per request, global loads": 4.0, ..., "instructions": 41216}

The report's text is for the student; the record is for whoever counts a class's verdicts (the instructor's
class report and leaderboard, course_lib.lab.instructor), so that nothing is ever parsed back from text.
``exercises.check`` opens a :func:`tracing` around one check; the places that find something note it here
(``runs.run_shapes``: each shape that ran or was stopped; ``check``: the kernel, each property's verdict, the
problems found once the result is right); :meth:`Trace.record` turns the notes into the record. Outside a
check every note is ignored. A record holds, for the exercise and its variant: each property's result
(held, failed, not judged), each problem (its kind, name, the course's hint, the shapes it was found on, the
line it blames and that line's code without comments or strings: an example that names no one), and per
shape the elements wrong and unwritten, the memory accesses per source line (requests, sectors, wavefronts,
bank conflicts) and what the launch spends (``sim.results.spend``); ``counts`` sums them over the shapes.
This module runs nothing and changes no verdict.
"""
from __future__ import annotations

import contextlib
import contextvars
import functools
import re

import numpy as np

from ..sim.results.spend import spend
from .pipeline import tiles_covered

SCHEMA = "course_lib.verdict/1"
_TRACE: contextvars.ContextVar = contextvars.ContextVar("course_lib_record_trace", default=None)
_KIND_ORDER = ("kernel", "stopped", "wrong result", "property", "footprint", "gpu")
_TEXT_MAX = 400          # a problem's text in the record: enough to read, never a student's whole output


class Trace:
    """The notes of one check (see the module's docstring)."""

    def __init__(self, ex):
        self.ex, self.fn = ex, None
        self.shapes, self.problems, self.judged, self.runs, self.errors = [], [], [], [], []

    def record(self, report) -> dict:
        """The record (see the module's docstring); a note or this that failed is named under "errors" (the
        student's check goes on: a record is never worth a crash of the check)."""
        ex = self.ex
        out = {"schema": SCHEMA, "exercise": ex.key, "variant": ex.variant,
               "params": {str(k): _plain(v) for k, v in ex.params}, "ok": bool(report.ok)}
        try:
            ran = [s for s in self.shapes if s["stopped"] is None]
            out.update(properties=self._properties(), problems=self._merged(), shapes=self.shapes, counts=counts(ran))
        except Exception as exc:         # noqa: BLE001
            self.errors.append(f"record: {type(exc).__name__}: {exc}")
            out.update(properties=[], problems=[], shapes=[], counts={})
        if self.errors:
            out["errors"] = self.errors
        return out

    def _properties(self) -> list:
        verdicts = {p.name: problem for p, problem in self.judged}
        out = []
        for p in self.ex.properties:
            if p.name in verdicts:
                result = "failed" if verdicts[p.name] else "held"
            else:
                result = "not judged" if self.runs else "not run"
            out.append({"name": p.name, "result": result})
        return out

    def _merged(self) -> list:
        """The problems, one per (kind, name, hint), each with every shape it was found on."""
        merged = {}
        for p in self.problems:
            key = (p["kind"], p["name"], p["hint"])
            if key in merged:
                merged[key]["shapes"] += [s for s in p["shapes"] if s not in merged[key]["shapes"]]
            else:
                merged[key] = dict(p, shapes=list(p["shapes"]))
        return sorted(merged.values(), key=lambda p: _KIND_ORDER.index(p["kind"]) if p["kind"] in _KIND_ORDER
                      else len(_KIND_ORDER))


@contextlib.contextmanager
def tracing(ex):
    """Collect the notes of one check of `ex` (a nested check gets its own Trace)."""
    trace = Trace(ex)
    token = _TRACE.set(trace)
    try:
        yield trace
    finally:
        _TRACE.reset(token)


def _note(f):
    """A note: nothing outside a check; inside one, a failure is kept in the record, never raised."""
    @functools.wraps(f)
    def noted(*args, **kwargs):
        t = _TRACE.get()
        if t is None:
            return None
        try:
            return f(t, *args, **kwargs)
        except Exception as exc:         # noqa: BLE001
            t.errors.append(f"{f.__name__}: {type(exc).__name__}: {exc}")
            return None
    return noted


@_note
def kernel(t, fn) -> None:
    """The Function being checked (its source gives the example lines), or None when none was found."""
    t.fn = fn


@_note
def ran(t, on, run, out, want, problem=None) -> None:
    """One shape that ran: its elements, accesses and spend; `problem` the (what, hint) of a wrong result."""
    t.runs.append((on, run))
    t.shapes.append({"shape": _shape(on), "dtype": str(np.asarray(out).dtype), "elements": elements(out, want),
                     "tile_elements": _tile_elements(on), "stopped": None, "accesses": accesses(run),
                     "spend": _spend(run)})
    if problem:
        t.problems.append(_problem("wrong result", "", problem, [on]))


@_note
def stopped(t, on, exc, problem) -> None:
    """A shape the simulator stopped (`exc`, a KernelError or another exception), with the report's problem."""
    line = getattr(exc, "line", None)
    t.shapes.append({"shape": _shape(on), "dtype": on.ctype, "elements": None, "accesses": [], "spend": None,
                     "stopped": {"error": type(exc).__name__, "line": line if isinstance(line, int) else None}})
    t.problems.append(_problem("stopped", type(exc).__name__, problem, [on], line, _code_line(t, None, line)))


@_note
def judged(t, p, problem) -> None:
    """Property `p`'s verdict over every shape: None where it held, else the report's (what, hint)."""
    t.judged.append((p, problem))
    if problem:
        failing = [(on, run) for on, run in t.runs if p.test(run, on)]     # pure: judges the runs again
        on, run = failing[0] if failing else (None, None)
        line = blamed_line(p.name, run) if run is not None else None
        t.problems.append(_problem("property", p.name, problem, [o for o, _ in failing], line,
                                   _code_line(t, run, line)))


@_note
def found(t, kind: str, problems) -> None:
    """Problems found apart from the runs and properties: "kernel" (none to check), "footprint", "gpu"."""
    t.problems += [_problem(kind, "", p, []) for p in problems]


def stage(key: str, kind: str, what: str, hint: str = "", variant: str = "", line=None, code=None) -> dict:
    """The record of a submission the checker never judged (refused, copied, not compiling, too slow to
    grade, the checker stopped): ok false, one problem of `kind`."""
    return {"schema": SCHEMA, "exercise": key, "variant": variant, "params": {}, "ok": False, "properties": [],
            "problems": [{"kind": kind, "name": "", "what": what[:_TEXT_MAX], "hint": hint, "shapes": [],
                          "line": line, "code": anonymised(code) if code else None}],
            "shapes": [], "counts": {}}


# ---------------------------------------------------------------------------- what a run measured

def elements(out, want) -> dict:
    """{total, wrong, unwritten} of one output against what a correct kernel writes (unwritten: still NaN or
    the poison's bytes)."""
    from ..transposes.data import poisoned
    out, want = np.asarray(out), np.asarray(want)
    same = lambda x, y: (x == y) | (np.isnan(x) & np.isnan(y)) if x.dtype.kind == "f" else x == y   # noqa: E731
    bad = ~same(out, want)
    poison = np.broadcast_to(poisoned((1,), out.dtype)[0], out.shape)
    return {"total": int(out.size), "wrong": int(bad.sum()), "unwritten": int((bad & same(out, poison)).sum())}


def accesses(run) -> list:
    """The run's memory accesses per (source line, space, op): requests, sectors, wavefronts, conflicts,
    bytes, the widest access in bytes (atomics included, as their own op)."""
    rows = {}
    for r in [*getattr(run, "instructions", []), *getattr(run, "atomics", [])]:
        key = (int(r["line"] or 0), r["space"], r["op"])
        a = rows.setdefault(key, {"line": key[0], "space": key[1], "op": key[2], "requests": 0, "sectors": 0,
                                  "wavefronts": 0, "conflicts": 0, "bytes": 0, "width": 0})
        for k in ("requests", "sectors", "wavefronts", "conflicts", "bytes"):
            a[k] += int(r.get(k, 0) or 0)
        a["width"] = max(a["width"], int(r.get("width", 0) or 0))
    return [rows[k] for k in sorted(rows)]


def counts(shapes) -> dict:
    """The key counts over `shapes` (records of shapes that ran): per request of each kind of access, bank
    conflicts, what the launches spend in all and per element, elements wrong and unwritten."""
    rows = [a for s in shapes for a in s["accesses"]]
    out = {}
    for space, op, words, per in (("global", "ld", "global loads", "sectors"), ("global", "st", "global stores",
                                  "sectors"), ("shared", "ld", "shared loads", "wavefronts"),
                                  ("shared", "st", "shared stores", "wavefronts"),
                                  ("shared", "ldgsts", "cp.async writes into shared memory", "wavefronts")):
        mine = [a for a in rows if a["space"] == space and a["op"] == op]
        requests = sum(a["requests"] for a in mine)
        if requests:
            out[f"{per} per request, {words}"] = round(sum(a[per] for a in mine) / requests, 3)
    out["bank conflicts"] = sum(a["conflicts"] for a in rows)
    moved = sum(int(np.prod(s["shape"])) for s in shapes)
    spent = [s["spend"] for s in shapes if s["spend"]]
    if spent and len(spent) == len(shapes):
        for k in ("sectors", "wavefronts", "instructions"):
            out[k] = sum(s[k] for s in spent)
        out["instructions per element"] = round(out["instructions"] / moved, 3) if moved else 0.0
        covered = [s.get("tile_elements") for s in shapes]
        if all(covered):                          # what within_budget divides by: the tiles the grid covers
            out["tile elements"] = sum(covered)
    out["elements"] = sum(s["elements"]["total"] for s in shapes)
    out["elements wrong"] = sum(s["elements"]["wrong"] for s in shapes)
    out["elements unwritten"] = sum(s["elements"]["unwritten"] for s in shapes)
    return out


def blamed_line(name: str, run) -> int | None:
    """The source line a failed property's counts point at, for the record's example (the checker's own text
    names the same line or the first of several): the worst access of the kind the property judges."""
    rows = [*getattr(run, "instructions", []), *getattr(run, "atomics", [])]
    ratio = lambda r, k: r[k] / r["requests"] if r["requests"] else 0      # noqa: E731
    pick = None
    if "coalesced" in name:
        op = "st" if "stores" in name else "ld"
        pick = max((r for r in rows if r["space"] == "global" and r["op"] == op), key=lambda r: ratio(r, "sectors"),
                   default=None)
    elif "bank conflicts" in name:
        pick = max((r for r in rows if r["space"] == "shared" and r["conflicts"]), key=lambda r: r["conflicts"],
                   default=None)
    elif "byte global" in name:
        pick = min((r for r in rows if r["space"] == "global"), key=lambda r: r["width"], default=None)
    elif "cp.async" in name:
        pick = next((r for r in rows if r["space"] == "global" and r["op"] == "ld"
                     and not str(r.get("text", "")).startswith("cp.async")), None)
    elif "races" in name and getattr(run, "races", None):
        return int(run.races[0].lines[-1])
    elif "written" in name:
        return next((int(w.line) for w in getattr(run, "warnings", []) if w.kind == "uninitialized"), None)
    return int(pick["line"]) if pick and pick.get("line") else None


# ---------------------------------------------------------------------------- the example line

_COMMENT = re.compile(r"//.*$|/\*.*?\*/", re.S)
_STRING = re.compile(r'"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\])*\'')


def anonymised(code: str | None) -> str | None:
    """A line of a student's kernel with nothing of theirs but the code: comments and string literals out,
    spaces collapsed, at most 160 characters; None for a line that is nothing else."""
    if not code:
        return None
    text = " ".join(_COMMENT.sub(" ", _STRING.sub('"…"', code)).split())
    return (text[:157] + "...") if len(text) > 160 else (text or None)


def _code_line(trace, run, line):
    if not isinstance(line, int) or line < 1:
        return None
    lines = getattr(run, "source_lines", None)
    if lines is None:
        code = getattr(getattr(trace.fn, "module", None), "code", None) if trace.fn is not None else None
        lines = code.splitlines() if isinstance(code, str) else []
    return anonymised(lines[line - 1]) if line <= len(lines) else None


# ---------------------------------------------------------------------------- helpers

def _problem(kind, name, problem, shapes, line=None, code=None) -> dict:
    what, hint = problem
    return {"kind": kind, "name": name, "what": str(what)[:_TEXT_MAX], "hint": str(hint), "shapes": [_label(o) for o in shapes],
            "line": line if isinstance(line, int) else None, "code": code}


def _shape(on) -> list:
    return [int(on.batch), int(on.rows), int(on.cols)] if on.batch > 1 else [int(on.rows), int(on.cols)]


def _label(on) -> str:
    return str(on)


def _tile_elements(on) -> int | None:
    """Elements of the whole tiles the exercise's grid covers on this shape (None: no tile, a custom grid)."""
    tile = getattr(on, "tile", None)
    return tiles_covered(on) * int(tile[0]) * int(tile[1]) if tile else None


def _spend(run) -> dict | None:
    try:
        s = spend(run)
    except (AttributeError, KeyError, TypeError):       # a stand-in run without the counts
        return None
    return {"sectors": s.sectors, "wavefronts": s.wavefronts, "instructions": s.instructions}


def _plain(v):
    return v if isinstance(v, (int, float, str, bool)) or v is None else str(v)

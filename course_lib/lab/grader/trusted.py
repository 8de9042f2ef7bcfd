"""The trusted grader: the course's checker on the CUDA text of a submitted exercise cell, in a sandbox.

    ok, text = grader.grade(nb, "tile_32x8", hidden=[(33, 70), ...])    # nb: the submitted notebook

The grade depends only on the kernel the student wrote: the exercise's cell is found in the notebook
file by nbgrader's grade_id ``<key>_kernel`` (else as course_lib.lab.instructor.release finds it: the ``%%cuda``
cell defining the exercise's kernel), its ``%%cuda`` line is read with an allow-list (-D, --instantiate,
--name, --quiet, -std: no include path, no other compiler flag), and a fresh Python process in the
sandbox (course_lib.lab.grader.sandbox: no solutions, no course folder, no network) compiles the text and runs
``exercises.check`` on the exercise's shapes, then on the hidden ones. No student Python runs in it and
nothing the student's notebook did can reach it. Before that, here, the text is compared with the
course's solution (markers, a comment only the solution has) where the solutions are kept, and the
course kernels the compiled code is compared with (``teach.course_code``: a kernel of kernels/ that
answers the exercise is not the student's work, however it is dressed) are compiled here, where
compilations are cached, and handed to the sandbox as digests of their code.

The verdict (:class:`Verdict`: passed and its text, with the checker's record as data, teach.record) says of
the hidden shapes what the instructor's level allows (:func:`hidden_text`): how many problems ("count"),
and their hints ("hint", the default), or each problem with its shape ("shape", practice rounds); the
record holds them all. This module neither runs notebooks nor talks to nbgrader (nbgrader_hooks does).
"""
from __future__ import annotations

import json
import os
import re
import sys

import numpy as np

from ...notebook import magic
from ...teach import course_code, record, solutions, variants
from ...teach.exercises import EXERCISES
from . import hidden as hidden_shapes, sandbox

TIMEOUT_S = 300
FEEDBACK = ("count", "hint", "shape")      # what a failed hidden check tells the student (hidden_text)
FEEDBACK_DEFAULT = "hint"                  # the count and the hints, never a shape: hidden across resubmissions
ALLOWED = "-DNAME=VALUE, --instantiate EXPR, --name MOD, --quiet, --std=c++NN"
_STD = re.compile(r"^--?std=c\+\+\d\d$")
_DEFINE = re.compile(r"^[A-Za-z_]\w*$")
_VALUE = re.compile(r"^[\w.+\-*/() ]*$")


class Refused(ValueError):
    """The submission cannot be graded as it is (said to the student as the verdict)."""


def kernel_cell(nb, key: str) -> str:
    """The source of exercise `key`'s cell in the submitted notebook `nb`."""
    ex = EXERCISES[key]
    for c in nb.cells:
        if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == f"{key}_kernel":
            return c.source
    defines = re.compile(rf"\bvoid\s+{ex.kernel}\s*\(")
    for c in nb.cells:
        if c.cell_type == "code" and c.source.startswith("%%cuda") and defines.search(c.source):
            return c.source
    raise Refused(f"no exercise cell for '{key}' in this notebook (nbgrader's cell {key}_kernel is gone)")


def split(source: str, key: str) -> tuple[str, str]:
    """(the %%cuda line's options, the cell's CUDA text); Refused for a cell that is not %%cuda or an option
    that could reach files (an include path) or change the compiler."""
    kernel = EXERCISES[key].kernel
    first, _, body = source.lstrip().partition("\n")
    if not first.startswith("%%cuda"):
        raise Refused(f"the exercise cell is not a %%cuda cell: the grade is the {kernel} you write in it as CUDA, "
                      "not one you wrote elsewhere or took from the course's own kernels")
    line = first[len("%%cuda"):].strip()
    try:
        opts = magic.parse_line(line)
    except magic.MagicUsageError as exc:
        raise Refused(f"the %%cuda line cannot be read: {exc.message}") from None
    bad = [o for o in opts["options"] if not _STD.match(o)]
    bad += [f"-D{k}={v}" for k, v in opts["defines"].items() if not (_DEFINE.match(k) and _VALUE.match(v))]
    if bad:
        raise Refused(f"the %%cuda line's {' '.join(bad)} is not allowed in a graded exercise (allowed: {ALLOWED}); "
                      "the kernel must compile from the cell's own text")
    return line, body


def _comments(text: str) -> set[str]:
    return {m.strip() for m in re.findall(r"//(.*)$", text, flags=re.M) if m.strip()}


def copied(body: str, key: str) -> str | None:
    """What shows `body` was copied from the course's solution of `key` (where it is kept), else None."""
    if solutions.has_solution(body):
        return (f"{EXERCISES[key].kernel} is a course solution: the instructor's version, BEGIN/END SOLUTION "
                "markers and all")
    if key not in solutions.keys():
        return None
    sol = solutions.body(key)
    own = {c for c in _comments(solutions.solved(sol)) - _comments(solutions.stub(key)) if len(c) >= 16}
    hit = sorted(own & _comments(body))
    if hit:
        return (f"{EXERCISES[key].kernel} carries the course's solution of '{key}': its comment \"{hit[0]}\" is "
                "the solution's")
    return None


class Verdict(tuple):
    """(passed, the verdict's text), as callers unpack it, with ``record``: the same as data (teach.record;
    for the shapes the release shows, and under "hidden" for the hidden ones)."""
    record: dict

    def __new__(cls, ok: bool, text: str, record: dict | None = None):
        self = super().__new__(cls, (bool(ok), str(text)))
        self.record = record if isinstance(record, dict) else {}
        return self


def _stage(key, kind, text, variant_key, hint="", what=None) -> Verdict:
    """A verdict the checker never reached (refused, copied, too slow, stopped): its text and its record."""
    variant = getattr(variants.of_key(key, variant_key), "variant", "")
    return Verdict(False, text, record.stage(key, kind, what or text.removeprefix(f"✗ {key}: "), hint, variant))


def refusal(nb, key: str, variant_key: str | None = None) -> Verdict | None:
    """The verdict of exercise `key`'s cell when it cannot be graded as it is (not a %%cuda cell, a forbidden
    option, a course solution's text: compared here, where the solutions are kept), else None."""
    try:
        _, body = split(kernel_cell(nb, key), key)
    except Refused as exc:
        return _stage(key, "refused", f"✗ {key}: {exc}", variant_key)
    found = copied(body, key)
    if found:
        hint = "write the kernel yourself: a course solution or its text is not your work"
        return _stage(key, "copied", f"✗ {key}: 1 problem(s)\n  • {found}\n    hint: {hint}", variant_key, hint, found)
    return None


_ASK = object()      # grade(refused=...): not given, so refusal() is asked here


def grade(nb, key: str, hidden=(), variant_key: str | None = None, feedback: str = FEEDBACK_DEFAULT,
          refused=_ASK) -> Verdict:
    """(passed, the verdict's text) for exercise `key` of the submitted notebook `nb`, as the variant of the
    holder of `variant_key` (course_lib.teach.variants.student_key; None: the default), with its record
    (``Verdict.record``). The key, never the class's secret, goes into the sandbox. `feedback`: what the text
    says of failures on the hidden shapes (FEEDBACK). `refused`: refusal(nb, key) where the caller has it
    already (a worker without the solutions gets it from the machine that has them)."""
    refused = refusal(nb, key, variant_key) if refused is _ASK else refused
    if refused:
        return refused
    line, body = split(kernel_cell(nb, key), key)
    job = json.dumps({"key": key, "line": line, "body": body, "hidden": [list(s) for s in hidden],
                      "variant_key": variant_key, "course_code": _course_code(key, variant_key),
                      "feedback": feedback})
    try:
        r = sandbox.run([sys.executable, "-m", "course_lib.lab.grader.trusted"], input=job, timeout=TIMEOUT_S, cpu_s=TIMEOUT_S)
    except Exception as exc:            # subprocess.TimeoutExpired: the sandbox was killed
        return _stage(key, "timeout", f"✗ {key}: the checker did not finish ({type(exc).__name__}); the kernel is too "
                      "slow to grade", variant_key)
    try:
        out = json.loads(r.stdout.strip().splitlines()[-1])
        return Verdict(bool(out["ok"]), str(out["text"]), out.get("record"))
    except (ValueError, IndexError, KeyError):
        return _stage(key, "grader", f"✗ {key}: the checker stopped (exit {r.returncode}): "
                      + "\n".join(r.stderr.splitlines()[-3:]), variant_key)


def _course_code(key: str, variant_key: str | None) -> dict:
    """{element type: course_code.table} of the course kernels the variant of `key` is compared with."""
    ex = variants.of_key(key, variant_key)
    try:
        return {np.dtype(d).str: course_code.table(ex, d) for d in ex.dtypes}
    except Exception:                   # noqa: BLE001  (the sandbox compiles them itself, only slower)
        return {}


def _hidden_verdict(ex, fn, hidden, feedback=FEEDBACK_DEFAULT) -> tuple[bool, str, dict]:
    """The check on the hidden shapes: those run whole, and the wide one (over 2^32 elements) as the
    exercise's wide launch, a few blocks sampled (64-bit offsets); (passed, its text as `feedback` allows,
    its record)."""
    import dataclasses

    from ...teach import exercises
    key = ex.key
    if not hidden:
        return True, "", {}
    run, wide = hidden_shapes.split(hidden)
    report = exercises.check(dataclasses.replace(ex, wide=wide) if wide else ex, fn, shapes=run, gpu=False)
    n = len(hidden)
    if report.ok:
        return True, f"✓ and on {n} more shapes the release does not show", report.record
    return False, hidden_text(key, report, n, feedback), report.record


def hidden_text(key: str, report, n: int, feedback: str = FEEDBACK_DEFAULT) -> str:
    """What a student reads of a failed check on `n` hidden shapes: their count ("count"), and the hints
    ("hint", the default), and the problems with the shapes they were found on ("shape": practice rounds)."""
    if feedback == "shape":
        return "\n".join([f"✗ {key}: but {len(report.problems)} problem(s) on {n} more shapes (shown here: this "
                          "round shows the hidden shapes that fail)", *repr(report).splitlines()[1:]])
    head = (f"✗ {key}: but {len(report.problems)} problem(s) on {n} more shapes the release does not show (sizes "
            "off the tile in one dimension or both, thousands long, 1 x N and N x 1: try some)")
    if feedback == "count":
        return head
    hints = list(dict.fromkeys(h for _, h in report.problems))
    return "\n".join([head + "; what to look at:", *(f"    hint: {h}" for h in hints)])


def _check(job: dict) -> tuple[bool, str, dict]:
    """Inside the sandbox: compile the cell's text, check it on the exercise's shapes, then the hidden ones;
    (passed, the text, the record: the shown shapes' with the hidden shapes' under "hidden")."""
    import contextlib
    import warnings

    from ...errors import KernelError
    from ...teach import exercises
    key = job["key"]
    ex = variants.of_key(key, job.get("variant_key"))
    graded_as = f"graded as your variant of {key}: {ex.variant}" if ex.variant else ""
    for dtype, table in (job.get("course_code") or {}).items():
        course_code.adopt(ex, dtype, table)
    try:
        names = magic.compile_cell(job["line"], job["body"])[1]
    except KernelError as exc:
        lines = ["%%cuda", *job["body"].splitlines()]
        code = lines[exc.line - 1] if isinstance(exc.line, int) and 0 < exc.line <= len(lines) else None
        text = f"✗ {key}: the exercise cell does not compile:\n{exc}"
        return False, text, record.stage(key, "compile", exc.message.splitlines()[0], exc.hint or "", ex.variant,
                                         exc.line, code)
    fn = names.get(ex.kernel)
    if fn is None:
        text = f"✗ {key}: the exercise cell defines no __global__ void {ex.kernel}(...)"
        return False, text, record.stage(key, "kernel", text.removeprefix(f"✗ {key}: "), "", ex.variant)
    with warnings.catch_warnings(), contextlib.redirect_stderr(sys.stdout):
        warnings.simplefilter("ignore")
        report = exercises.check(ex, fn, gpu=False)
        if not report.ok:
            return False, "\n".join(filter(None, [graded_as, repr(report)])), report.record
        hidden = [tuple(s) for s in job["hidden"]]
        ok, more, seen = _hidden_verdict(ex, fn, hidden, job.get("feedback") or FEEDBACK_DEFAULT)
    verdict = dict(report.record, ok=ok)
    if hidden:
        verdict["hidden"] = {"shapes": [list(s) for s in hidden], "ok": ok, "problems": seen.get("problems", []),
                             "properties": seen.get("properties", []), "counts": seen.get("counts", {})}
    return ok, "\n".join(filter(None, [graded_as, repr(report), more])), verdict


def main() -> None:
    """The sandboxed process: a job (JSON) on stdin, the verdict (JSON) as the last line of stdout. Whatever
    else is printed (a kernel's printf included) goes to stderr, so that nothing can forge the verdict."""
    verdict = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    ok, text, found = _check(json.loads(sys.stdin.read()))
    verdict.write(json.dumps({"ok": ok, "text": text, "record": found}) + "\n")
    verdict.flush()


if __name__ == "__main__":
    main()

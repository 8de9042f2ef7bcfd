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

The verdict names the hidden shapes' problems by their hints only: "and on N more shapes the release
does not show". This module neither runs notebooks nor talks to nbgrader (nbgrader_hooks does).
"""
from __future__ import annotations

import json
import os
import re
import sys

import numpy as np

from ...notebook import magic
from ...teach import course_code, solutions, variants
from ...teach.exercises import EXERCISES
from . import hidden as hidden_shapes, sandbox

TIMEOUT_S = 300
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


def refusal(nb, key: str) -> str | None:
    """The verdict of exercise `key`'s cell when it cannot be graded as it is (not a %%cuda cell, a forbidden
    option, a course solution's text: compared here, where the solutions are kept), else None."""
    try:
        _, body = split(kernel_cell(nb, key), key)
    except Refused as exc:
        return f"✗ {key}: {exc}"
    found = copied(body, key)
    if found:
        return (f"✗ {key}: 1 problem(s)\n  • {found}\n    hint: write the kernel yourself: a course solution "
                "or its text is not your work")
    return None


_ASK = object()      # grade(refused=...): not given, so refusal() is asked here


def grade(nb, key: str, hidden=(), variant_key: str | None = None, refused=_ASK) -> tuple[bool, str]:
    """(passed, the verdict's text) for exercise `key` of the submitted notebook `nb`, as the variant of the
    holder of `variant_key` (course_lib.teach.variants.student_key; None: the default). The key, never the
    class's secret, goes into the sandbox. `refused`: refusal(nb, key) where the caller has it already (a
    worker without the solutions gets it from the machine that has them)."""
    refused = refusal(nb, key) if refused is _ASK else refused
    if refused:
        return False, refused
    line, body = split(kernel_cell(nb, key), key)
    job = json.dumps({"key": key, "line": line, "body": body, "hidden": [list(s) for s in hidden],
                      "variant_key": variant_key, "course_code": _course_code(key, variant_key)})
    try:
        r = sandbox.run([sys.executable, "-m", "course_lib.lab.grader.trusted"], input=job, timeout=TIMEOUT_S, cpu_s=TIMEOUT_S)
    except Exception as exc:            # subprocess.TimeoutExpired: the sandbox was killed
        return False, f"✗ {key}: the checker did not finish ({type(exc).__name__}); the kernel is too slow to grade"
    try:
        out = json.loads(r.stdout.strip().splitlines()[-1])
        return bool(out["ok"]), str(out["text"])
    except (ValueError, IndexError, KeyError):
        return False, f"✗ {key}: the checker stopped (exit {r.returncode}): " + "\n".join(r.stderr.splitlines()[-3:])


def _course_code(key: str, variant_key: str | None) -> dict:
    """{element type: course_code.table} of the course kernels the variant of `key` is compared with."""
    ex = variants.of_key(key, variant_key)
    try:
        return {np.dtype(d).str: course_code.table(ex, d) for d in ex.dtypes}
    except Exception:                   # noqa: BLE001  (the sandbox compiles them itself, only slower)
        return {}


def _hidden_verdict(ex, fn, hidden) -> tuple[bool, str]:
    """The check on the hidden shapes: those run whole, and the wide one (over 2^32 elements) as the
    exercise's wide launch, a few blocks sampled (64-bit offsets)."""
    import dataclasses

    from ...teach import exercises
    key = ex.key
    if not hidden:
        return True, ""
    run, wide = hidden_shapes.split(hidden)
    report = exercises.check(dataclasses.replace(ex, wide=wide) if wide else ex, fn, shapes=run, gpu=False)
    n = len(hidden)
    if report.ok:
        return True, f"✓ and on {n} more shapes the release does not show"
    hints = list(dict.fromkeys(h for _, h in report.problems))
    return False, "\n".join([f"✗ {key}: but {len(report.problems)} problem(s) on {n} more shapes the release does not "
                             "show (sizes off the tile in one dimension or both, thousands long, 1 x N and N x 1: "
                             "try some); what to look at:",
                             *(f"    hint: {h}" for h in hints)])


def _check(job: dict) -> tuple[bool, str]:
    """Inside the sandbox: compile the cell's text, check it on the exercise's shapes, then the hidden ones."""
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
        return False, f"✗ {key}: the exercise cell does not compile:\n{exc}"
    fn = names.get(ex.kernel)
    if fn is None:
        return False, f"✗ {key}: the exercise cell defines no __global__ void {ex.kernel}(...)"
    with warnings.catch_warnings(), contextlib.redirect_stderr(sys.stdout):
        warnings.simplefilter("ignore")
        report = exercises.check(ex, fn, gpu=False)
        if not report.ok:
            return False, "\n".join(filter(None, [graded_as, repr(report)]))
        ok, more = _hidden_verdict(ex, fn, [tuple(s) for s in job["hidden"]])
    return ok, "\n".join(filter(None, [graded_as, repr(report), more]))


def main() -> None:
    """The sandboxed process: a job (JSON) on stdin, the verdict (JSON) as the last line of stdout. Whatever
    else is printed (a kernel's printf included) goes to stderr, so that nothing can forge the verdict."""
    verdict = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    ok, text = _check(json.loads(sys.stdin.read()))
    verdict.write(json.dumps({"ok": ok, "text": text}) + "\n")
    verdict.flush()


if __name__ == "__main__":
    main()

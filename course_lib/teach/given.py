"""The kernel a student gave the checker: found, compiled from their last cell, their own, with the exercise's
parameters.

    fn = find_kernel(ex, transpose_tile, report)     # the Function, or None with the reason in report

``exercises.check`` asks here first: a name not bound yet (the notebook's namespace is searched for the
exercise's kernel when none is passed), a kernel whose last ``%%cuda`` cell did not compile
(``kernel.cells``), a template, something that is not a compiled kernel, the course's own kernel or one
that reads a clock (``origin``, ``sensors``), or a parameter list that is not the exercise's — the course's
``(T* out, const T* in, int rows, int cols)`` or the signature exercise.toml declares
(``signature.mismatch``) — each is a problem with a hint instead of a run. It runs nothing.
"""
from __future__ import annotations

import numpy as np

from ..compile.source import C_NAME
from ..kernel import cells
from ..kernel.module import Function, Template
from . import origin, sensors, signature


def find_kernel(ex, kernel, report):
    """The compiled Function to check, or None with the reason added to `report`: none found, not a
    kernel, compiled from the course's sources (``origin``), or not the exercise's parameter list."""
    if kernel is None:
        try:
            from IPython import get_ipython
            kernel = get_ipython().user_ns.get(ex.kernel)
        except (ImportError, AttributeError):
            kernel = None
        if kernel is None:
            failed = cells.failure(ex.kernel)
            report.problems.append(_not_compiled(ex.kernel, failed, None) if failed else (
                f"there is no kernel named {ex.kernel} yet",
                f"run the %%cuda cell that defines __global__ void {ex.kernel}(...) first"))
            return None
    if isinstance(kernel, Template):
        report.problems.append((f"{kernel.name} is a template", f"check one instance: {kernel.name}[np.float32, ...]"))
        return None
    if not isinstance(kernel, Function):
        report.problems.append((f"{kernel!r} is not a compiled kernel",
                                f"pass the name the %%cuda cell bound, e.g. check('{ex.key}', {ex.kernel})"))
        return None
    failed = cells.outdated(kernel, dict.fromkeys((ex.kernel, kernel.name)))
    if failed:
        report.problems.append(_not_compiled(kernel.name, failed, kernel.name))
        return None
    refused = origin.borrowed(kernel, ex) or sensors.reads_clock(kernel)
    if refused:
        report.problems.append(refused)
        return None
    sig = kernel.signature or []
    if ex.custom:
        wrong = signature.mismatch(ex.parameters, sig, kernel.name, ex.dtypes)
        if wrong:
            report.problems.append(wrong)
            return None
        return kernel
    shape_ok = len(sig) == 4 and sig[0].pointer and sig[1].pointer and not sig[2].pointer and not sig[3].pointer
    if not shape_ok:
        have = ", ".join(f"{p.ctype} {p.name}" for p in sig)
        report.problems.append((f"{kernel.name}({have}) does not take (T* out, const T* in, int rows, int cols)",
                                "keep the parameter list of the exercise: out first, then in, then rows and cols"))
        return None
    types = {p.dtype for p in sig[:2] if p.dtype is not None}
    if len(types) > 1:
        report.problems.append((f"{kernel.name} takes out and in of different types ({sig[0].base} and {sig[1].base})",
                                "out and in hold the same elements: give both the exercise's element type"))
        return None
    if types and types.pop() not in [np.dtype(d) for d in ex.dtypes]:
        report.problems.append((f"{kernel.name} moves {sig[0].base}; this exercise is about "
                                + ", ".join(C_NAME[np.dtype(d)] for d in ex.dtypes),
                                "use the element type of the exercise's stub"))
        return None
    return kernel


def _not_compiled(name, cell, older) -> tuple[str, str]:
    """(what, hint) for a check whose kernel's last %%cuda cell did not compile (``kernel.cells``)."""
    what = f"the last %%cuda cell that defines {name} did not compile ({cell.where()})"
    what += (f": {older} still holds an earlier cell's kernel, and this check judges only the code you see, so it "
             "checked nothing" if older else f", so there is no {name} to check")
    own = getattr(cell.error, "hint", None)
    return what, ("fix the error shown under that cell" + (f" ({own.rstrip('.')})" if own else " (the caret marks "
                                                           "the place)") + ", then run that cell again and this check")

"""Which of the course's kernels answer an exercise, and is a student's kernel one of them by its code?

    course_code.instances(ex, np.float32)     # [(spec key, template instance)] that answer ex's launch
    course_code.same_code(fn, ex)             # (what, hint) when fn compiles to one of them; else None

The course's kernels/ are in every student's checkout, and `reveal` names one for each exercise.
A student who hands one in, renamed, its constants written in, its comments dropped, its
statements reordered, hands in the same code: :func:`same_code` compiles the course kernels that
answer the exercise (with the exercise's — the student's variant's — parameters and element type)
and compares fingerprints of the compiled code (``codeprint``), not the text.

The kernels compared with (:func:`instances`): the exercise's ``reveal`` kernel, with its template
parameters where exercise.toml gives them (``reveal_params``), else found as below, else its
defaults; and every kernel of ``transposes.SPECS`` (and DEMOS) of which some instance launches as
the exercise does — the same grid and block on probe shapes, a copy for a copy. Parameters are
taken from the exercise's by name (TILE, PAD, T...), then the launch's are searched (at most two
changed from the defaults, among the numbers of the exercise's block, tile and parameters, and
small powers of two), and each other parameter alone is also tried at 0, 1, 2 and 4 (a padding, a
mapping): a copy with another PAD than the exercise's is still the course's.

It judges the course's exercises only (``exercise_list``): the capstone's open challenge and the debug
tasks accept any correct kernel. A kernel whose code is a course kernel's behaves as it does under the
same launch, so an honest, correct kernel is never judged a copy of a course kernel that would fail the
exercise; it is judged one only when its compiled code is exactly that of a correct course kernel. The
tests measure that no exercise's solution, nor the honest kernels written for each, compiles to a course
kernel's code. The one they cannot tell apart: the textbook tile with ``__restrict__`` added to the stub's
signature compiles to tile.cu's code (every course kernel reads through ``__restrict__``, no stub does).
The grader computes :func:`table` outside its sandbox and hands it in (:func:`adopt`). This module
compiles the course's kernels (one NVRTC call per file) and runs nothing else.
"""
from __future__ import annotations

import itertools
from functools import lru_cache

import numpy as np

from .. import transposes
from ..compile.source import C_NAME
from ..errors import ArgumentError, CompileError
from ..kernel.module import RawModule
from . import codeprint
from .exercise_list import EXERCISES

PROBES = ((1000, 1032), (36, 68), (4, 1028), (1028, 4))     # shapes whose launches must agree (multiples of 4)
TRIED = (0, 1, 2, 4)                                       # other values of a parameter that does not change the launch
POWERS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512)
HINT = ("write the kernel yourself, from the exercise's stub with its lines as given (cl.exercises.stub(\"{key}\") "
        "prints it): the course's kernels (kernels/, cl.transposes) show one way, and one handed in — renamed, "
        "reformatted, its constants written in — is not your work")


def _launch(ex) -> tuple:
    batch = 2 if len(ex.shapes[0]) == 3 else 1
    return tuple(ex.launch(r, c, batch) for r, c in PROBES)


def _transpose(spec, dtype, params):
    try:
        return transposes.Transpose.from_spec(spec, dtype, params)
    except (ArgumentError, KeyError, ValueError, TypeError, ZeroDivisionError):
        return None


def _config(t) -> tuple | None:
    try:
        return tuple(t.config(r, c) for r, c in PROBES)
    except (ArgumentError, KeyError, ValueError, TypeError, ZeroDivisionError):
        return None


def _base(spec, dtype, ex) -> dict:
    per_dtype = spec.dtype_defaults(dtype) if spec.dtype_defaults else {}
    given = {k: v for k, v in dict(ex.params).items() if k in spec.defaults and isinstance(v, int)}
    return {**spec.defaults, **per_dtype, **given}


def _numbers(ex) -> list[int]:
    found = set(ex.block) | set(ex.tile) | {v for _, v in ex.params if isinstance(v, int)} | set(POWERS)
    return sorted(n for n in found if isinstance(n, int) and n > 0)


def _fitting(spec, dtype, ex, want) -> list[dict]:
    """Parameter sets of `spec` whose launch is the exercise's (the base first; at most two changed)."""
    base = _base(spec, dtype, ex)
    ints = [k for k, v in base.items() if isinstance(v, int) and not isinstance(v, bool)]
    changes = [{}] + [{k: v} for k in ints for v in _numbers(ex) if v != base[k]]
    changes += [{a: va, b: vb} for a, b in itertools.combinations(ints, 2)
                for va in _numbers(ex) if va != base[a] for vb in _numbers(ex) if vb != base[b]]
    out = []
    for change in changes:
        params = {**base, **change}
        t = _transpose(spec, dtype, params)
        if t is not None and _config(t) == want and params not in out:
            out.append(params)
            if len(out) >= 4:
                break
    return out


def _spread(spec, dtype, params: dict, launch_of) -> list[dict]:
    """`params`, and each parameter that does not change the launch alone at TRIED values."""
    out = [params]
    for k, v in params.items():
        if not isinstance(v, int) or isinstance(v, bool):
            continue
        for other in TRIED:
            p = {**params, k: other}
            t = _transpose(spec, dtype, p)
            if other != v and t is not None and _config(t) == launch_of and p not in out:
                out.append(p)
    return out


def _ident(ex, dtype) -> tuple:
    """What the course kernels compared with depend on: the exercise's variant and the element type."""
    return (ex.key, tuple(ex.params), tuple(ex.block), tuple(ex.tile), ex.copy, len(ex.shapes[0]), ex.reveal,
            tuple(getattr(ex, "reveal_params", ()) or ()), np.dtype(dtype).str)


_INSTANCES: dict = {}
_GIVEN: dict = {}          # _ident -> table, handed in by the grader (adopt)


def instances(ex, dtype=None) -> list[tuple[str, str]]:
    """[(spec key, template instance such as "tile<float, 32, 32, 1>")] of the course kernels `ex` is
    compared with, for elements of `dtype` (default: the exercise's first)."""
    dtype = np.dtype(dtype if dtype is not None else ex.dtypes[0])
    ident = _ident(ex, dtype)
    if ident not in _INSTANCES:
        _INSTANCES[ident] = _search(ex, dtype)
    return list(_INSTANCES[ident])


def _search(ex, dtype) -> tuple:
    want = _launch(ex)
    reveal_params = dict(getattr(ex, "reveal_params", ()) or ())
    out = []
    specs = list(transposes.SPECS.values()) + list(transposes.DEMOS.values())
    for spec in sorted(specs, key=lambda s: s.key != ex.reveal):       # the reveal kernel first: its name is shown
        if spec.is_copy != ex.copy or dtype.itemsize not in spec.itemsizes:
            continue
        fitting = _fitting(spec, dtype, ex, want) if not (spec.key == ex.reveal and reveal_params) else []
        sets = [p for f in fitting for p in _spread(spec, dtype, f, want)]
        if spec.key == ex.reveal and not sets:     # the reveal kernel even where it does not fit the launch
            sets = [{**_base(spec, dtype, ex), **reveal_params}]
        for params in sets:
            t = _transpose(spec, dtype, params)
            if t is not None and (spec.key, t.name) not in out:
                out.append((spec.key, t.name))
    return tuple(out)


@lru_cache(maxsize=256)
def _digests(file: str, names: tuple) -> dict:
    """{instance: digest of its code} of the course file's instances, compiled in one NVRTC call (one by
    one, skipping those that do not compile, where together they do not)."""
    try:
        mod = RawModule(path=file, options=("-std=c++17",), name_expressions=names)
        return {n: codeprint.digest(codeprint.of(mod.get_function(n))) for n in names}
    except CompileError:
        if len(names) == 1:
            return {}
        return {k: v for n in names for k, v in _digests(file, (n,)).items()}


def table(ex, dtype=None) -> dict[str, list]:
    """{instance: [spec key, file, digest of its code]} of the course kernels `ex` is compared with."""
    dtype = np.dtype(dtype if dtype is not None else ex.dtypes[0])
    ident = _ident(ex, dtype)
    if ident in _GIVEN:
        return _GIVEN[ident]
    by_file: dict[str, list] = {}
    for key, name in instances(ex, dtype):
        by_file.setdefault(_spec(key).file, []).append((key, name))
    out = {}
    for file, items in by_file.items():
        digests = _digests(file, tuple(sorted({n for _, n in items})))
        for key, name in items:
            if name in digests and name not in out:
                out[name] = [key, file, digests[name]]
    return out


def adopt(ex, dtype, given: dict) -> None:
    """Use `given` (a table the grader computed outside the sandbox, where compilations are cached) as
    `ex`'s for `dtype`, instead of compiling the course's kernels again."""
    _GIVEN[_ident(ex, np.dtype(dtype))] = {str(k): list(v) for k, v in given.items()}


def _spec(key):
    return transposes.SPECS.get(key) or transposes.DEMOS[key]


def same_code(fn, ex) -> tuple[str, str] | None:
    """(what, hint) when `fn` compiles to the code of a course kernel that answers `ex`; else None. Only the
    course's exercises (``exercise_list.EXERCISES``): the capstone's open challenge and the debug tasks
    judge any correct kernel, the course's own shape of it too."""
    if getattr(ex, "key", None) not in EXERCISES:
        return None
    sig = getattr(fn, "signature", None) or []
    dtype = next((p.dtype for p in sig if p.pointer and p.dtype is not None), None)
    if dtype is None or np.dtype(dtype) not in C_NAME:
        dtype = ex.dtypes[0]
    known = table(ex, dtype)
    if not known:
        return None
    mine = codeprint.digest(codeprint.of(fn))
    for name, (key, file, digest) in known.items():
        if digest == mine:
            return (f"{fn.name.split('<')[0].strip()} is the course's kernel {name} (\"{key}\", kernels/{file}) "
                    "under another name: it compiles to the same code, and names, comments, constants written in "
                    "and the order of independent statements change nothing of it", HINT.format(key=ex.key))
    return None

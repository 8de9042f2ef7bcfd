"""One shape of an exercise as the checker runs it: the arguments, what the kernel writes, what it must hold.

    c = case(ex, (1000, 1030), np.float32, seed=3, shared=(("tile", ("32", "33")),))
    run = simulated.launch(fn, grid, block, c.args)
    outputs.diagnose(ex, c.problem, run)  # a declared signature's verdict (runs.diagnose: the course's)
    args, pairs = c.again()                # fresh buffers for a second run: [(written array, expected)]

For the course's signature (``T* out, const T* in, int rows, int cols``) a case is what it always was:
``exercise.input_for`` (the same random data, so stored answers do not move), a poisoned ``out``, and
``runs.diagnose`` with its transpose-aware hints. For a declared signature it is ``signature.problem``:
every buffer its own data, every written buffer compared with its ``expect`` (``outputs.diagnose``). The
:class:`~course_lib.teach.properties.Shape` it carries names the buffers loads and stores move and the
student's shared arrays, for the properties and their hints. This module builds and compares; it runs
no kernel.
"""
from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field

import numpy as np

from ..compile.source import C_NAME, strip_comments
from ..transposes.data import poisoned
from . import signature
from .exercise import expected, input_for, output_for
from .shape import Shape

_SHARED = re.compile(r"__shared__\s+(?:__align__\s*\(\s*\d+\s*\)\s*)?[\w:<>, ]+?\s+(\w+)\s*((?:\[[^\]]+\]\s*)+);")


@dataclass
class Case:
    on: object                                   # properties.Shape
    args: tuple                                  # the launch's arguments
    written: dict = field(default_factory=dict)  # name -> the array the kernel writes (checked afterwards)
    expected: dict = field(default_factory=dict)
    problem: object = None                       # signature.Problem (a declared signature), else None
    a: np.ndarray | None = None                  # the course signature's in and out
    out: np.ndarray | None = None
    params: tuple = ()

    def result(self) -> tuple[np.ndarray, np.ndarray]:
        """(what the kernel wrote, what it had to): out and its expectation, or every written buffer's, flattened
        one after another (``record``)."""
        if self.problem is None:
            return self.out, self.expected["out"]
        got = [self.written[k].reshape(-1) for k in self.expected]
        want = [w.reshape(-1) for w in self.expected.values()]
        if len({g.dtype for g in got}) > 1:
            return got[0], want[0]
        return np.concatenate(got), np.concatenate(want)

    def again(self) -> tuple[tuple, list]:
        """(arguments with fresh buffers, [(array the kernel will write, what it must hold)]) for a second run."""
        if self.problem is None:
            out = output_for_like(self.out)
            return (out, self.a, *self.args[2:]), [(out, self.expected["out"])]
        args, bufs = signature.fresh(self.params, self.problem)
        return args, [(bufs[k], w) for k, w in self.expected.items()]


def output_for_like(out):
    return poisoned(out.shape, out.dtype)


def written_share(c: Case) -> float:
    """The share of the written buffers' elements the kernel changed (out: no longer the poison; a buffer read
    and written: no longer what it held), for ``evidence.did_work``."""
    total = changed = 0
    for name, now in c.written.items():
        before = c.problem.initial.get(name) if c.problem is not None else None
        before = poisoned(now.shape, now.dtype) if before is None else before
        same = (now == before) | (np.isnan(now) & np.isnan(before)) if now.dtype.kind == "f" else now == before
        total, changed = total + now.size, changed + int((~same).sum())
    return changed / total if total else 1.0


def shared_arrays(source: str) -> tuple:
    """The __shared__ arrays a kernel's source declares: ((name, (dimension texts)), ...)."""
    return tuple((m[1], tuple(d.strip() for d in re.findall(r"\[([^\]]+)\]", m[2])))
                 for m in _SHARED.finditer(strip_comments(source or "")))


def case(ex, shape, dtype, seed: int, shared: tuple = ()) -> Case:
    """The checker's arguments and expectations for one entry of ex.shapes (see the module)."""
    dtype = np.dtype(dtype)
    extra = dict(tile=tuple(ex.tile) if ex.tile and ex.tiled else None, block=tuple(ex.block),
                 ctype=C_NAME[dtype], shared=shared)
    if not ex.custom:
        a, on = input_for(ex, shape, dtype, seed)
        out = output_for(ex, a)
        on = dataclasses.replace(on, **extra)
        return Case(on, (out, a, np.int32(on.rows), np.int32(on.cols)), {"out": out}, {"out": expected(ex, a)},
                    a=a, out=out)
    p = signature.problem(ex.parameters, shape, dtype, seed)
    reads, writes = signature.traffic(ex.parameters, p)
    s = p.sizes
    on = Shape(s["rows"], s["cols"], dtype.itemsize, s["batch"], False, reads=reads, writes=writes, **extra)
    return Case(on, p.launch, {k: p.buffers[k] for k in p.expected}, dict(p.expected), p, params=ex.parameters)

"""An exercise's kernel parameters: which are buffers (read, written, both), which are numbers, and
what each written buffer must hold afterwards.

    args = declare("T* a, int n", {"a": {"role": "inout", "expect": "transpose(a)"}, "n": {"value": "rows"}},
                   {"T": "float"}, where="exercises/inplace_tile/exercise.toml")
    p = problem(args, (33, 33), np.float32, seed=0)   # p.initial, p.buffers (passed), p.expected, p.launch
    mismatch(args, fn.signature, dtypes)              # why a student's parameter list is not the exercise's

exercise.toml declares the list as C (``signature = "T* a, int n"``, parameters rendered) and each
parameter in ``[args.NAME]``: a pointer's ``role`` (``in``: random data, read only; ``out``: poisoned,
compared with ``expect``; ``inout``: random data, compared with ``expect`` afterwards), its ``shape``
(expressions of rows, cols and batch; default ``rows x cols``, with ``batch`` first for batched shapes;
an ``out`` buffer's shape is its ``expect``'s), its ``dtype`` (default: the exercise's element type; a
struct's buffer holds its fields as that type) and ``expect`` (an ``expr.expect`` expression of the
buffers' initial contents: ``transpose(in)``, ``in[0::3]``); a number's ``value`` (an expression of rows,
cols, batch). Without ``signature`` the list is the course's ``T* out, const T* in, int rows, int cols``
(``copy``: out is in, else its transpose). Random data never holds zero or the poison
(``transposes.data``), every buffer its own seed. This module builds arrays and compares parameter
lists; it runs no kernel and says nothing about a result (``outputs`` does).
"""
from __future__ import annotations

import keyword
from dataclasses import dataclass, field

import numpy as np

from ..compile.source import C_NAME, C_TYPES, Kernel
from ..transposes.data import poisoned, random_matrix
from . import expr

ROLES = ("in", "out", "inout")
SIZES = ("rows", "cols", "batch")
DEFAULT = "T* out, const T* in, int rows, int cols"


@dataclass(frozen=True)
class Arg:
    name: str
    ctype: str                 # as declared, parameters rendered: 'const P*', 'float*', 'int'
    pointer: bool
    const: bool = False
    base: str = ""             # 'float', 'P' (a struct)
    role: str = "scalar"       # in | out | inout | scalar
    shape: tuple = ()          # a buffer's dimensions as expressions of rows, cols, batch
    dtype: object = None       # a buffer's element type (None: the exercise's), a number's
    expect: str = ""           # what an out/inout buffer holds after the kernel
    value: str = ""            # a number's value

    def __str__(self):
        return f"{self.ctype} {self.name}"


def default(copy: bool, batched: bool, ctype: str = "T") -> tuple[Arg, ...]:
    dims = ("batch", "rows", "cols") if batched else ("rows", "cols")
    return (Arg("out", f"{ctype}*", True, False, ctype, "out", (), None, "in" if copy else "transpose(in)"),
            Arg("in", f"const {ctype}*", True, True, ctype, "in", dims),
            Arg("rows", "int", False, dtype=np.dtype(np.int32), value="rows"),
            Arg("cols", "int", False, dtype=np.dtype(np.int32), value="cols"))


def declare(text: str, tables: dict, batched: bool, where: str) -> tuple[Arg, ...]:
    """The Args of a rendered parameter list `text` and its [args.NAME] `tables` (ValueError names the key)."""
    params = Kernel("kernel", None, text).signature()
    if not params:
        raise ValueError(f"signature = {text!r}: write the kernel's parameter list as C, e.g. \"T* a, int n\"")
    names = [p.name for p in params]
    if len(set(names)) != len(names):
        raise ValueError(f"signature = {text!r}: a parameter name is used twice")
    unknown = sorted(set(tables) - set(names))
    if unknown:
        raise ValueError(f"[args.{unknown[0]}]: the signature has no parameter {unknown[0]!r} (its parameters: "
                         f"{', '.join(names)})")
    out = [_arg(p, dict(tables.get(p.name, {})), batched, where) for p in params]
    readable = {a.name for a in out if a.role in ("in", "inout")}
    for a in out:
        if a.expect:
            expr.parse_expect(a.expect, readable, SIZES, f"[args.{a.name}] expect")
    if not any(a.role in ("out", "inout") for a in out):
        raise ValueError(f"signature = {text!r}: no buffer is written (give one [args.NAME] role = \"out\" or "
                         "\"inout\" and its expect)")
    return tuple(out)


def _arg(p, table: dict, batched: bool, where: str) -> Arg:
    key = f"[args.{p.name}]"
    if keyword.iskeyword(p.name) and p.name != "in":
        raise ValueError(f"signature: {p.name!r} is a Python keyword, which expect cannot name: rename it")
    if not p.pointer:
        if set(table) - {"value"} or "value" not in table:
            raise ValueError(f"{key}: a number takes one key, value = \"an expression of rows, cols, batch\" "
                             f"(e.g. value = \"rows\"){'; not ' + ', '.join(sorted(set(table) - {'value'})) if set(table) - {'value'} else ''}")
        if p.base not in C_TYPES:
            raise ValueError(f"signature: {p} is a number of a type the checker cannot pass ({p.base}); use int, "
                             "unsigned, size_t, long long ...")
        expr.parse(table["value"], SIZES, f"{key} value")
        return Arg(p.name, p.ctype, False, p.const, p.base, "scalar", (), np.dtype(C_TYPES[p.base]), "", table["value"])
    role = table.get("role", "in" if p.const else "out")
    if role not in ROLES:
        raise ValueError(f"{key} role = {role!r}: one of {', '.join(ROLES)}")
    if p.const and role != "in":
        raise ValueError(f"{key}: {p} is const, so the kernel cannot write it: role = \"in\", or drop the const")
    if role != "in" and not table.get("expect"):
        raise ValueError(f"{key}: a buffer the kernel writes needs expect = \"what it holds afterwards\" "
                         "(e.g. \"transpose(in)\", \"in[0::3]\")")
    if role == "in" and "expect" in table:
        raise ValueError(f"{key}: an input buffer has no expect (the kernel does not write it)")
    shape = table.get("shape", () if role == "out" else (("batch",) if batched else ()) + ("rows", "cols"))
    for i, d in enumerate(shape):
        if isinstance(d, bool) or not isinstance(d, (int, str)):
            raise ValueError(f"{key} shape[{i}] = {d!r}: a size is a whole number or an expression of rows, cols, batch")
        if isinstance(d, str):
            expr.parse(d, SIZES, f"{key} shape[{i}]")
    dtype = table.get("dtype")
    return Arg(p.name, p.ctype, True, p.const, p.base, role, tuple(shape), _dtype(dtype, key) if dtype else None,
               str(table.get("expect", "")))


def _dtype(name, key):
    by_c = {c: n for n, c in C_NAME.items()}
    try:
        return np.dtype(C_TYPES[name]) if name in C_TYPES else np.dtype(by_c.get(name, name))
    except TypeError:
        raise ValueError(f"{key} dtype = {name!r}: a C type (float, double, unsigned short ...) or a numpy name") from None


def is_default(args) -> bool:
    return [a.name for a in args] == ["out", "in", "rows", "cols"] and args[0].expect in ("in", "transpose(in)")


# ---------------------------------------------------------------------------- one problem

@dataclass
class Problem:
    """One shape of an exercise: every buffer's initial contents, the arrays passed, what must result."""
    sizes: dict
    initial: dict = field(default_factory=dict)      # in/inout buffers before the launch
    buffers: dict = field(default_factory=dict)      # every buffer as passed (out poisoned, inout a copy)
    expected: dict = field(default_factory=dict)     # out/inout buffers afterwards
    launch: tuple = ()                               # the kernel's arguments, in order


def sizes_of(shape) -> dict:
    batch, rows, cols = shape if len(shape) == 3 else (1, *shape)
    return {"rows": int(rows), "cols": int(cols), "batch": int(batch)}


def problem(args, shape, dtype, seed: int) -> Problem:
    """Random inputs for `shape`, poisoned outputs, the expected results and the argument tuple."""
    sizes, dtype = sizes_of(shape), np.dtype(dtype)
    p = Problem(sizes)
    readable = [a for a in args if a.pointer and a.role != "out"]
    for k, a in enumerate(readable):          # the first one's seed is `seed`: the course's data as before
        dims = tuple(max(0, expr.evaluate(expr.parse(d, SIZES, a.name), sizes)) if isinstance(d, str) else d
                     for d in a.shape) or (1,)
        flat = random_matrix(int(np.prod(dims[:-1], dtype=np.int64)), dims[-1], a.dtype or dtype, seed + 7919 * k)
        p.initial[a.name] = flat.reshape(dims)
    for a in args:
        if a.role in ("out", "inout"):
            want = expr.expect(a.expect, p.initial, sizes)
            p.expected[a.name] = want.astype(a.dtype or want.dtype, copy=False)
    for a in args:
        if a.role == "out":
            p.buffers[a.name] = poisoned(p.expected[a.name].shape, a.dtype or p.expected[a.name].dtype)
        elif a.pointer:
            p.buffers[a.name] = p.initial[a.name].copy()
    p.launch = tuple(p.buffers[a.name] if a.pointer else
                     a.dtype.type(expr.evaluate(expr.parse(a.value, SIZES, a.name), sizes)) for a in args)
    return p


def fresh(args, p: Problem) -> tuple:
    """The argument tuple again with fresh buffers (poisoned outputs, inputs as they started): a second run."""
    bufs = {a.name: (poisoned(p.buffers[a.name].shape, p.buffers[a.name].dtype) if a.role == "out"
                     else p.initial[a.name].copy()) for a in args if a.pointer}
    return tuple(bufs[a.name] if a.pointer else v for a, v in zip(args, p.launch)), bufs


def traffic(args, p: Problem) -> tuple:
    """(buffers read, buffers written): each (name, bytes of one row, rows, bytes) for properties.Shape."""
    def one(a):
        x = p.buffers[a.name]
        row = x.shape[-1] * x.itemsize if x.ndim else x.itemsize
        return a.name, row, max(1, x.size * x.itemsize // max(1, row)), x.size * x.itemsize
    return (tuple(one(a) for a in args if a.role in ("in", "inout")),
            tuple(one(a) for a in args if a.role in ("out", "inout")))


# ---------------------------------------------------------------------------- a student's parameter list

def element_dtype(args, sig, dtypes):
    """The element type a student's kernel moves: its first buffer whose declared type is the element's."""
    for a, p in zip(args, sig or ()):
        if a.pointer and a.dtype is None and p.pointer and p.dtype is not None:
            return np.dtype(p.dtype)
    return np.dtype(dtypes[0])


def mismatch(args, sig, kernel: str, dtypes) -> tuple[str, str] | None:
    """(what, hint) where a student's parameter list `sig` is not the exercise's `args`, else None."""
    want = ", ".join(map(str, args))
    have = ", ".join(f"{p.ctype} {p.name}" for p in sig or ())
    shape_ok = sig is not None and len(sig) == len(args) and all(p.pointer == a.pointer for p, a in zip(sig, args))
    if not shape_ok:
        return (f"{kernel}({have}) does not take ({want})",
                "keep the parameter list of the exercise: the same buffers and numbers, in the same order")
    elem = element_dtype(args, sig, dtypes)
    if elem not in [np.dtype(d) for d in dtypes]:
        return (f"{kernel} moves {C_NAME.get(elem, elem.name)}; this exercise is about "
                + ", ".join(C_NAME.get(np.dtype(d), str(d)) for d in dtypes), "use the element type of the exercise's stub")
    for a, p in zip(args, sig):
        if a.pointer and a.role != "in" and p.const:
            return (f"{kernel}'s {p.ctype} {p.name} is const, but the kernel must write it ({a})",
                    f"declare it as in the stub: {a}")
        got = np.dtype(p.dtype) if p.dtype is not None else None
        need = (a.dtype if a.pointer and a.dtype is not None else elem) if a.pointer else a.dtype
        struct = a.pointer and a.base not in C_TYPES and a.base != C_NAME.get(elem)
        if not struct and got is not None and got != need:
            return (f"{kernel}'s parameter {p.ctype} {p.name} is not the exercise's {a}",
                    "give every parameter the type of the exercise's stub")
    return None

"""The little expressions exercise.toml may write: launch sizes, shapes and scalars (integers), and
what a kernel's output buffer must hold (arrays).

    tree = parse("(cols / TILE) * (cols / TILE + 1) / 2", {"cols", "TILE"}, "launch.grid")
    evaluate(tree, {"cols": 100, "TILE": 32})           # 10: / rounds up, as a grid must
    number("TILE * 2", {"TILE": 32}, "launch.tile")    # 64; number(32, ...) is 32
    want = expect("transpose(a)", {"a": a}, "args.a.expect")   # what buffer a holds afterwards
    want = expect("in[0::3]", {"in": structs}, "args.xs.expect")

Integers: whole-number constants, names the caller allows (upper-case parameters such as TILE,
the problem's ``rows``, ``cols`` and ``batch``), + - * / // % ( ), ``min`` and ``max``; ``/`` rounds
up (a grid covers a partial tile), ``//`` rounds down. Arrays: a buffer's name, ``transpose(x)``
(its last two axes swapped), subscripts with integers and slices (``x[:, 0]``, ``x[1::3]``), whose
bounds are integer expressions; ``in`` is a buffer's name here, not Python's keyword. Anything
else — a float (``cols / 32.5``), an unknown name, a call, an attribute — is an :class:`ExprError`
naming the text and what is allowed. Nothing here reads files or knows what an exercise is.
"""
from __future__ import annotations

import ast
import re

import numpy as np

_OPS = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
        ast.Div: lambda a, b: -(-a // b), ast.FloorDiv: lambda a, b: a // b, ast.Mod: lambda a, b: a % b}
_IN = re.compile(r"\bin\b")
_ALIAS = "in_"          # `in` is Python's keyword: the buffer named in is read under this name


class ExprError(ValueError):
    """An expression exercise.toml may not write, with what is allowed instead."""


def _known(names) -> str:
    return ", ".join(sorted(names)) or "none"


def parse(text: str, names, where: str):
    """The validated tree of an integer expression of `names` (ExprError names `where`)."""
    names = set(names)
    allowed = f"numbers, {_known(names)}, + - * / // % ( ), min and max (/ rounds up)"
    try:
        tree = ast.parse(str(text).strip(), mode="eval").body
    except SyntaxError:
        raise ExprError(f"{where}: {text!r} is not an expression; allowed: {allowed}") from None
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and (type(node.value) is not int):
            raise ExprError(f"{where}: {text!r}: {node.value!r} is not a whole number; sizes are integers "
                            f"(allowed: {allowed})")
        if isinstance(node, ast.Name) and node.id not in names | {"min", "max"}:
            raise ExprError(f"{where}: {text!r}: no name {node.id!r} here; known: {_known(names)}")
        if isinstance(node, ast.Call) and not (isinstance(node.func, ast.Name) and node.func.id in ("min", "max")
                                               and node.args and not node.keywords):
            raise ExprError(f"{where}: {text!r}: the only calls are min(...) and max(...)")
        ok = (ast.BinOp, ast.Constant, ast.Name, ast.Call, ast.Load, ast.UnaryOp, ast.USub, ast.UAdd, *_OPS)
        if not isinstance(node, ok):
            raise ExprError(f"{where}: {text!r}: {type(node).__name__} is not allowed; allowed: {allowed}")
    return tree


def evaluate(node, values: dict) -> int:
    if isinstance(node, ast.Constant):
        return int(node.value)
    if isinstance(node, ast.Name):
        return int(values[node.id])
    if isinstance(node, ast.UnaryOp):
        v = evaluate(node.operand, values)
        return -v if isinstance(node.op, ast.USub) else v
    if isinstance(node, ast.Call):
        return (min if node.func.id == "min" else max)(evaluate(a, values) for a in node.args)
    left, right = evaluate(node.left, values), evaluate(node.right, values)
    if isinstance(node.op, (ast.Div, ast.FloorDiv, ast.Mod)) and right == 0:
        raise ExprError(f"division by zero in {ast.unparse(node)} with {values}")
    return _OPS[type(node.op)](left, right)


def number(value, params: dict, where: str) -> int:
    """An integer exercise.toml gives as a number or as an expression of (integer) parameters."""
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise ExprError(f"{where}: {value!r} is not a whole number or an expression of the parameters "
                        f"({_known(k for k, v in params.items() if _is_int(v))})")
    if isinstance(value, int):
        return value
    ints = {k: v for k, v in params.items() if _is_int(v)}
    return evaluate(parse(value, ints, where), ints)


def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


# ---------------------------------------------------------------------------- arrays

def parse_expect(text: str, buffers, sizes, where: str):
    """The validated tree of an array expression of `buffers` (their initial contents) and integer `sizes`."""
    buffers, sizes = set(buffers), set(sizes)
    allowed = (f"a buffer ({_known(buffers)}), transpose(x), subscripts x[i], x[:, k], x[a:b:c] with integer "
               f"expressions of {_known(sizes)}")
    try:
        tree = ast.parse(_IN.sub(_ALIAS, str(text).strip()), mode="eval").body
    except SyntaxError:
        raise ExprError(f"{where}: {text!r} is not an expression; allowed: {allowed}") from None
    _check_array(tree, {_alias(b) for b in buffers}, sizes, where, text, allowed)
    return tree


def _alias(name: str) -> str:
    return _ALIAS if name == "in" else name


def _check_array(node, buffers, sizes, where, text, allowed):
    if isinstance(node, ast.Name):
        if node.id not in buffers:
            raise ExprError(f"{where}: {text!r}: {node.id.replace(_ALIAS, 'in')!r} is not a buffer the kernel "
                            f"reads; allowed: {allowed}")
    elif isinstance(node, ast.Call):
        if not (isinstance(node.func, ast.Name) and node.func.id == "transpose" and len(node.args) == 1
                and not node.keywords):
            raise ExprError(f"{where}: {text!r}: the only call is transpose(x); allowed: {allowed}")
        _check_array(node.args[0], buffers, sizes, where, text, allowed)
    elif isinstance(node, ast.Subscript):
        _check_array(node.value, buffers, sizes, where, text, allowed)
        parts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        for part in parts:
            for bound in ([part.lower, part.upper, part.step] if isinstance(part, ast.Slice) else [part]):
                if bound is not None:
                    parse(ast.unparse(bound), sizes, where)
    else:
        raise ExprError(f"{where}: {text!r}: {type(node).__name__} is not allowed; allowed: {allowed}")


def expect(text: str, arrays: dict, sizes: dict, where: str = "expect") -> np.ndarray:
    """The array `text` names, from the buffers' initial contents `arrays` and the problem's `sizes`."""
    tree = parse_expect(text, arrays, sizes, where)
    named = {_alias(k): v for k, v in arrays.items()}
    return np.ascontiguousarray(_array(tree, named, sizes))


def _array(node, arrays, sizes):
    if isinstance(node, ast.Name):
        return arrays[node.id]
    if isinstance(node, ast.Call):
        x = _array(node.args[0], arrays, sizes)
        return np.swapaxes(x, -1, -2) if x.ndim >= 2 else x
    x = _array(node.value, arrays, sizes)
    parts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
    index = []
    for part in parts:
        if isinstance(part, ast.Slice):
            index.append(slice(*(None if b is None else evaluate(parse(ast.unparse(b), sizes, ""), sizes)
                                  for b in (part.lower, part.upper, part.step))))
        else:
            index.append(evaluate(parse(ast.unparse(part), sizes, ""), sizes))
    return x[tuple(index)]

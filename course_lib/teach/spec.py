"""Reading an exercise folder: ``exercises/<key>/exercise.toml`` into an :class:`Exercise`.

    ex = spec.load(Path("exercises/padded_tile"))            # the default variant
    ex = spec.load(folder, params={"TILE": 16, "T": "double"})  # one of its variants
    spec.render("__shared__ T tile[TILE][TILE + PAD];", {"T": "float", "TILE": 32, "PAD": 1})

An exercise folder holds everything an instructor edits: ``exercise.toml`` (title, the question the
notebook shows, the kernel's name, the launch, shapes, dtypes, the properties it checks by name with
their parameters, hints, points, the course kernel ``reveal`` shows, the variants' parameters),
``solution.cu`` (instructor-only: the cell body with BEGIN/END SOLUTION markers and ``//>`` stub lines)
and ``stub.cu`` (what students get, generated from solution.cu; ``instructor check --sync-stubs``).

The launch is one of: ``kind = "tile"`` (one block per ``tile`` of in), ``"batched"`` (the same,
grid.z = batch), ``"grid-stride"`` and ``"custom"`` (``grid`` given as expressions of ``rows``,
``cols`` and ``batch`` with + - * / ( ), min and max; ``/`` rounds up, as a grid must).
Parameters (``[params]``: upper-case names such as TILE, PAD, BY, T) are identifiers in solution.cu,
stub.cu, hints, the note and the question, replaced by their values (so the .cu files compile with
``-DTILE=32 ...`` as they are); numbers in ``[launch]`` may be such names too.

This module reads and renders; it runs no kernel and knows nothing of notebooks.
"""
from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

import numpy as np

from ..errors import ArgumentError
from ..transposes import verify
from . import footprint, pipeline, properties
from .exercise import Exercise

TOML, SOLUTION, STUB = "exercise.toml", "solution.cu", "stub.cu"
KINDS = ("tile", "batched", "grid-stride", "custom")
_PARAM = re.compile(r"\b([A-Z][A-Z0-9_]*)\b")
_BRACED = re.compile(r"\{([A-Z0-9_ +*/()-]*[A-Z][A-Z0-9_ +*/()-]*)\}")     # {TILE}, {2 * BY}, {TILE / BY}
# property factories by name: properties.__all__ where it is declared, else every public factory
_FACTORIES = ("coalesced", "no_bank_conflicts", "no_races", "no_uninitialized_reads", "uses_shared",
              "vector_width", "async_copies")
_C_NAMES = {"float32": "float", "float64": "double", "float16": "__half", "uint16": "unsigned short",
            "uint8": "unsigned char", "int32": "int"}


class SpecError(ArgumentError):
    """An exercise folder that cannot be read: which file, which field, what to write."""


def read(folder: Path) -> dict:
    """The folder's exercise.toml as a dict (SpecError names the file and TOML's complaint)."""
    path = Path(folder) / TOML
    try:
        return tomllib.loads(path.read_text())
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise SpecError(f"{path}: {exc}", hint="see docs/INSTRUCTORS.md §7 for the fields of exercise.toml") from None


def defaults(data: dict) -> dict:
    """The default variant's parameter values: [params] NAME = value, or NAME = {default = v, ...}."""
    return {k: (v["default"] if isinstance(v, dict) else v) for k, v in data.get("params", {}).items()}


def render(text: str, params: dict) -> str:
    """Code (.cu files): each {NAME} or {expression of NAMEs} (render_text), then every upper-case
    identifier that names a parameter, replaced by its value."""
    if not params:
        return text
    return _PARAM.sub(lambda m: str(params[m[1]]) if m[1] in params else m[1], render_text(text, params))


def render_text(text: str, params: dict) -> str:
    """Prose (title, note, question, hints): each {NAME} of a parameter, or {arithmetic of them}
    ({2 * BY}, {TILE / BY}: / rounds up), replaced by its value; other braces are left alone."""
    def one(m):
        names = set(_PARAM.findall(m[1]))
        if not names or not names <= set(params):
            return m[0]
        expr = _PARAM.sub(lambda n: str(params[n[1]]), m[1])
        if len(names) == 1 and m[1].strip() in params:
            return str(params[m[1].strip()])
        try:
            return str(_eval(_parse(expr), {}))
        except (ValueError, KeyError, TypeError):
            return m[0]
    return _BRACED.sub(one, text) if params else text


def load(folder: Path, params: dict | None = None) -> Exercise:
    """The Exercise of one folder, for `params` (the default variant when None)."""
    folder = Path(folder)
    data = read(folder)
    values = {**defaults(data), **(params or {})}
    where = f"{folder / TOML}"
    try:
        return _build(folder.name, data, values, where)
    except (KeyError, TypeError, ValueError) as exc:
        raise SpecError(f"{where}: {exc}", hint="see docs/INSTRUCTORS.md §7 for the fields of exercise.toml") from None


def _build(key: str, data: dict, values: dict, where: str) -> Exercise:
    launch = data["launch"]
    kind = launch.get("kind", "tile")
    if kind not in KINDS:
        raise ValueError(f"launch.kind = {kind!r}: one of {', '.join(KINDS)}")
    num = lambda v: int(render(str(v), values)) if isinstance(v, str) else int(v)   # noqa: E731
    block = tuple(num(v) for v in launch["block"])
    tile = tuple(num(v) for v in launch.get("tile", block[:2]))
    grid_text = tuple(render(str(g), values) for g in launch.get("grid", ()))
    if kind in ("grid-stride", "custom") and not grid_text:
        raise ValueError(f"launch.kind = {kind!r} needs launch.grid, e.g. grid = [\"8\"] or "
                         "[\"cols / 32\", \"rows / 8\"]")
    dtypes = tuple(_dtype(render(d, values)) for d in data.get("dtypes", [values.get("T", "float32")]))
    txt = lambda name: render_text(data.get(name, ""), values).strip()                # noqa: E731
    base = defaults(data)
    entries = list(data.get("properties", []))
    if kind == "grid-stride" and "each_element_once" not in map(_name, entries):
        entries.append("each_element_once")     # a grid-stride loop's classic bug moves elements many times
    props = tuple(_property(p, data.get("hints", {}), values) for p in entries)
    return Exercise(
        key=key, title=txt("title"), kernel=data["kernel"], block=block, tile=tile, properties=props,
        shapes=tuple(tuple(num(n) for n in s) for s in data.get("shapes", verify.SHAPES)), dtypes=dtypes,
        lesson=str(data["lesson"]), note=txt("note"), copy=bool(data.get("copy", False)),
        grid=_grid(grid_text) if grid_text else None, own_tiles=kind in ("tile", "batched"),
        wide=tuple(data["wide"]) if "wide" in data else None, tiny=tuple(num(n) for n in data.get("tiny", (2, 3))),
        grid_text=grid_text, once=bool(data.get("once", False)), points=int(data.get("points", 2)),
        question=txt("question"), reveal=data.get("reveal", ""), params=tuple(sorted(values.items())),
        variant=", ".join(f"{k} = {v}" for k, v in sorted(values.items()) if base.get(k) != v))


def _property(entry, hints: dict, values: dict):
    """One entry of `properties`: "name" or {name = {parameters}}; its hint from [hints] if given there,
    as "name" or "name value..." (e.g. "coalesced ld": the hint of {coalesced = {op = "ld"}} alone)."""
    if isinstance(entry, str):
        name, kwargs = entry, {}
    elif isinstance(entry, dict) and len(entry) == 1:
        (name, kwargs), = entry.items()
    else:
        raise ValueError(f"properties: {entry!r} is neither \"name\" nor {{name = {{parameter = value}}}}")
    kwargs = {k: values.get(v, v) if isinstance(v, str) else v for k, v in kwargs.items()}   # "TILE": its value
    p = factory(name)(**kwargs)
    hint = hints.get(" ".join([name, *map(str, kwargs.values())])) or hints.get(name) or _fit_hint(p.hint, values)
    return properties.Property(p.name, p.test, render_text(hint, values), p.needs)   # needs: what the run records


def _name(entry) -> str:
    return entry if isinstance(entry, str) else next(iter(entry), "") if isinstance(entry, dict) else ""


def factory(name: str):
    """The property factory called `name` (properties.__all__), or a fallback this module keeps."""
    known = getattr(properties, "__all__", _FACTORIES)
    if name in known and callable(getattr(properties, name, None)):
        return getattr(properties, name)
    if name in _FALLBACKS:
        return _FALLBACKS[name]
    raise ValueError(f"properties: no property {name!r}; known: {', '.join(sorted({*known, *_FALLBACKS}))}")


def _each_element_once():
    """Each element of in loaded once and of out stored once (footprint.traffic), whatever the launch.
    Interim: properties.each_element_once replaces it where the checker's module declares one."""
    def test(run, on):
        found = footprint.traffic(None, [(on, run)])
        return found[0][0] if found else None
    return properties.Property("each element loaded and stored once", test, footprint.ONCE_HINT)


_FALLBACKS = {"each_element_once": _each_element_once, "pipelined": pipeline.pipelined,
              "within_budget": pipeline.within_budget}


def _fit_hint(hint: str, values: dict) -> str:
    """A property's default hint (written for a float 32x32 tile) with this exercise's tile and type."""
    tile, pad, t = values.get("TILE"), values.get("PAD"), values.get("T")
    if tile is not None:
        hint = hint.replace("[32][32 + 1]", f"[{tile}][{tile} + {pad if pad is not None else 1}]")
        hint = hint.replace("[32][32]", f"[{tile}][{tile}]")
    if t is not None:
        hint = hint.replace("float tile", f"{t} tile").replace("sizeof(float)", f"sizeof({t})")
    return hint


def c_name(dtype) -> str:
    return _C_NAMES.get(np.dtype(dtype).name, np.dtype(dtype).name)


def _dtype(name: str):
    """A numpy type from a numpy name ("float64") or the C type a parameter T holds ("double")."""
    by_c = {c: n for n, c in _C_NAMES.items()}
    return np.dtype(by_c.get(name, name)).type


# ---------------------------------------------------------------------------- grid expressions

_OPS = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
        ast.Div: lambda a, b: -(-a // b), ast.FloorDiv: lambda a, b: a // b, ast.Mod: lambda a, b: a % b}


def _grid(texts: tuple):
    trees = [_parse(t) for t in texts]

    def grid(rows, cols, batch=1):
        names = {"rows": int(rows), "cols": int(cols), "batch": int(batch)}
        return tuple(max(1, _eval(t, names)) for t in trees)
    return grid


def _parse(text: str):
    try:
        tree = ast.parse(text, mode="eval").body
    except SyntaxError:
        raise ValueError(f"launch.grid: {text!r} is not an expression of rows, cols and batch") from None
    for node in ast.walk(tree):
        ok = isinstance(node, (ast.BinOp, ast.Constant, ast.Name, ast.Call, ast.Load, *_OPS)) and not (
            isinstance(node, ast.Call) and not (isinstance(node.func, ast.Name) and node.func.id in ("min", "max")))
        if not ok or (isinstance(node, ast.Name) and node.id not in ("rows", "cols", "batch", "min", "max")):
            raise ValueError(f"launch.grid: {text!r} may use only rows, cols, batch, numbers, + - * / // % and "
                             "min/max")
    return tree


def _eval(node, names):
    if isinstance(node, ast.Constant):
        return int(node.value)
    if isinstance(node, ast.Name):
        return names[node.id]
    if isinstance(node, ast.Call):
        return (min if node.func.id == "min" else max)(_eval(a, names) for a in node.args)
    return _OPS[type(node.op)](_eval(node.left, names), _eval(node.right, names))

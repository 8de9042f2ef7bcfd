"""Reading an exercise folder: ``exercises/<key>/exercise.toml`` into an :class:`Exercise`.

    ex = spec.load(Path("exercises/padded_tile"))            # the default variant
    ex = spec.load(folder, params={"TILE": 16, "T": "double"})  # one of its variants
    spec.render("__shared__ T tile[TILE][TILE + PAD];", {"T": "float", "TILE": 32, "PAD": 1})

An exercise folder holds everything an instructor edits: ``exercise.toml`` (title, the question the
notebook shows, the kernel's name and parameter list, the launch, shapes, dtypes, the properties it
checks by name with their parameters, hints, points, what ``reveal`` shows, the variants' parameters,
the hidden shapes' constraints), ``solution.cu`` (instructor-only: the cell body with BEGIN/END
SOLUTION markers and ``//>`` stub lines), ``wrong.toml`` (instructor-only: the wrong kernels its checker
must refuse, ``mutants``) and ``stub.cu`` (what students get, generated from solution.cu;
``instructor check --sync-stubs``). Its keys, types and allowed values are ``schema``'s, strictly: an
unknown key, a wrong type, an expression naming an unknown parameter is a :class:`SpecError` naming the
file, the key and the fix, never a traceback or a value quietly coerced.

The launch is one of: ``kind = "tile"`` (one block per ``tile`` of in), ``"batched"`` (the same,
grid.z = batch), ``"grid-stride"`` and ``"custom"`` (``grid`` given as expressions of ``rows``,
``cols``, ``batch`` and the parameters: ``expr``; ``/`` rounds up, as a grid must).
Parameters (``[params]``: upper-case names such as TILE, PAD, BY, T) are identifiers in solution.cu,
stub.cu and the signature, and ``{NAME}`` or ``{2 * BY}`` in the prose (``{{`` and ``}}`` are braces);
sizes in ``[launch]`` and ``shapes`` may be expressions of them. The kernel's parameters are
``signature``'s (the course's ``out, in, rows, cols`` by default). This module reads and renders; it
runs no kernel and knows nothing of notebooks.
"""
from __future__ import annotations

import inspect
import re
import tomllib
from pathlib import Path

import numpy as np

from ..compile.source import C_NAME, C_TYPES
from ..transposes import verify
from . import expr, footprint, pipeline, properties, schema, signature
from .exercise import Exercise
from .schema import KINDS, SpecError  # noqa: F401  (this module's API)

TOML, SOLUTION, STUB, WRONG = "exercise.toml", "solution.cu", "stub.cu", "wrong.toml"
_PARAM = re.compile(r"\b([A-Z][A-Z0-9_]*)\b")
_BRACED = re.compile(r"\{([A-Z0-9_ +*/()-]*[A-Z][A-Z0-9_ +*/()-]*)\}")     # {TILE}, {2 * BY}, {TILE / BY}
_OPEN, _CLOSE = "\0{", "\0}"
_FACTORIES = ("coalesced", "no_bank_conflicts", "no_races", "no_uninitialized_reads", "uses_shared",
              "vector_width", "async_copies")
_C_NAMES = {"float32": "float", "float64": "double", "float16": "__half", "uint16": "unsigned short",
            "uint8": "unsigned char", "int32": "int"}
_READ: dict = {}          # path -> ((mtime, size), data): read is called per get(), validation once per edit


def read(folder: Path, notebooks: Path | None = None) -> dict:
    """The folder's exercise.toml as a dict, checked against the schema (SpecError names the file and key)."""
    path = Path(folder) / TOML
    try:
        stat = path.stat()
        if path in _READ and _READ[path][0] == (stat.st_mtime_ns, stat.st_size):
            return _READ[path][1]
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise SpecError(f"{path}: no such file", hint="python -m course_lib instructor new-exercise KEY --lesson NN "
                        "writes an exercise folder") from None
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        why = "not UTF-8 text" if isinstance(exc, UnicodeDecodeError) else str(exc)
        raise SpecError(f"{path}: {why}", hint=schema.HINT) from None
    schema.validate(data, path, notebooks)
    _READ[path] = ((stat.st_mtime_ns, stat.st_size), data)
    return data


def defaults(data: dict) -> dict:
    """The default variant's parameter values ([params])."""
    return dict(data.get("params", {}))


def render(text: str, params: dict) -> str:
    """Code (.cu files): each {NAME} or {expression of NAMEs} (render_text), then every upper-case
    identifier that names a parameter, replaced by its value."""
    if not params:
        return text
    return _PARAM.sub(lambda m: str(params[m[1]]) if m[1] in params else m[1], render_text(text, params))


def render_text(text: str, params: dict, where: str = "") -> str:
    """Prose (title, note, question, hints): each {NAME} of a parameter, or {arithmetic of them}
    ({2 * BY}, {TILE / BY}: / rounds up), replaced by its value; {{ and }} are braces. With `where`, a
    brace naming no parameter is a SpecError (a typo would otherwise reach students as it is)."""
    text = text.replace("{{", _OPEN).replace("}}", _CLOSE)

    def one(m):
        names = set(_PARAM.findall(m[1]))
        if not names <= set(params):
            if where:
                raise SpecError(f"{where}: {{{m[1]}}} names no parameter ({', '.join(sorted(names - set(params)))}"
                                f"; [params] has {', '.join(params) or 'none'})",
                                hint="write {{ and }} for braces the students should see")
            return m[0]
        if m[1].strip() in params:
            return str(params[m[1].strip()])
        try:
            return str(expr.number(m[1], params, where or "text"))
        except ValueError as exc:
            if where:
                raise SpecError(str(exc), hint=schema.HINT) from None
            return m[0]
    return _BRACED.sub(one, text).replace(_OPEN, "{").replace(_CLOSE, "}")


def load(folder: Path, params: dict | None = None) -> Exercise:
    """The Exercise of one folder, for `params` (the default variant when None)."""
    folder = Path(folder)
    data = read(folder)
    values = {**defaults(data), **(params or {})}
    where = f"{folder / TOML}"
    try:
        return _build(folder.name, data, values, where)
    except SpecError:
        raise
    except (KeyError, TypeError, ValueError, ZeroDivisionError) as exc:
        text = exc.args[0] if isinstance(exc, ValueError) and exc.args else repr(exc)
        raise SpecError(f"{where}: {text}", hint=schema.HINT) from None


def _build(key: str, data: dict, values: dict, where: str) -> Exercise:
    launch = data["launch"]
    kind = launch.get("kind", "tile")
    num = lambda v, k: expr.number(v, values, k)                                     # noqa: E731
    block = tuple(num(v, f"launch.block[{i}]") for i, v in enumerate(launch["block"]))
    tiled = kind in ("tile", "batched") or "tile" in launch
    tile = tuple(num(v, f"launch.tile[{i}]") for i, v in enumerate(launch.get("tile", block[:2])))
    tile = tile + (1,) * (2 - len(tile))
    ints = {k: v for k, v in values.items() if isinstance(v, int)}
    grid_text = tuple(render(str(g), values) for g in launch.get("grid", ()))
    if kind in ("grid-stride", "custom") and not grid_text:
        raise ValueError(f"launch.kind = {kind!r} needs launch.grid, e.g. grid = [\"8\"] or "
                         "[\"cols / 32\", \"rows / 8\"]")
    if grid_text and kind in ("tile", "batched"):
        raise ValueError(f"launch.grid: a {kind!r} launch has one block per tile; grid is for \"custom\" and "
                         "\"grid-stride\" (or leave it out)")
    trees = [expr.parse(g, {"rows", "cols", "batch"}, f"launch.grid[{i}]") for i, g in enumerate(grid_text)]
    dtypes = tuple(_dtype(render(d, values), "dtypes") for d in data.get("dtypes", [values.get("T", "float32")]))
    txt = lambda name: render_text(data.get(name, ""), values, f"{where}: {name}").strip()     # noqa: E731
    entries = list(data.get("properties", []))
    if kind == "grid-stride" and "each_element_once" not in map(_name, entries):
        entries.append("each_element_once")     # a grid-stride loop's classic bug moves elements many times
    props = tuple(_property(p, data.get("hints", {}), values, where) for p in entries)
    shapes = tuple(tuple(num(n, f"shapes[{i}]") for n in s) for i, s in enumerate(data.get("shapes", verify.SHAPES)))
    hidden = data.get("hidden", {})
    _shapes_fit(shapes, hidden, where)
    _sizes_fit(block, tile, trees, shapes)
    batched = len(shapes[0]) == 3
    args = (signature.declare(render(data["signature"], values), data.get("args", {}), batched, where)
            if "signature" in data else signature.default(bool(data.get("copy", False)), batched, C_NAME.get(
                np.dtype(dtypes[0]), "T")))
    return Exercise(
        key=key, title=txt("title"), kernel=data["kernel"], block=block, tile=tile, properties=props,
        shapes=shapes, dtypes=dtypes, lesson=data["lesson"], note=txt("note"), copy=bool(data.get("copy", False)),
        grid=_grid(trees) if trees else None, own_tiles=kind in ("tile", "batched") and "signature" not in data,
        wide=tuple(num(n, "wide") for n in data["wide"]) if "wide" in data else None,
        tiny=tuple(num(n, "tiny") for n in data.get("tiny", (2, 3))), grid_text=grid_text,
        once=bool(data.get("once", False)) or ("signature" in data and kind in ("tile", "batched")),
        points=data.get("points", 2), question=txt("question"),
        reveal=_reveal(data.get("reveal", ""), values)[0], reveal_params=_reveal(data.get("reveal", ""), values)[1],
        params=tuple(sorted(values.items())),
        variant=", ".join(f"{k} = {v}" for k, v in sorted(values.items()) if defaults(data).get(k) != v),
        args=args, signature=render(data.get("signature", ""), values), tiled=tiled,
        square=bool(hidden.get("square", False)),
        multiple_of=tuple(num(n, "hidden.multiple_of") for n in hidden["multiple_of"]) if "multiple_of" in hidden
        else None, kind=kind, ints=tuple(sorted(ints.items())),
        residues=tuple(num(n, "hidden.residues") for n in hidden["residues"]) if "residues" in hidden else None,
        largest=hidden.get("largest"))


def _shapes_fit(shapes, hidden, where) -> None:
    for s in shapes:
        if min(s) < 1:
            raise ValueError(f"shapes: {list(s)} has a size below 1")
        if hidden.get("square") and s[-1] != s[-2]:
            raise ValueError(f"shapes: {list(s)} is not square, and hidden.square = true says every shape is")
        m = hidden.get("multiple_of")
        if m and any(isinstance(x, int) and s[-2 + i] % x for i, x in enumerate(m)):
            raise ValueError(f"shapes: {list(s)} is not a multiple of hidden.multiple_of = {m}")


def _sizes_fit(block, tile, trees, shapes) -> None:
    """Every size above 0, and every grid expression evaluates on every shape (no division by zero)."""
    for name, sizes in (("launch.block", block), ("launch.tile", tile)):
        if min(sizes) < 1:
            raise ValueError(f"{name} = {list(sizes)}: every size must be at least 1")
    for i, t in enumerate(trees):
        for s in shapes:
            sizes = dict(zip(("batch", "rows", "cols")[3 - len(s):], s), batch=s[0] if len(s) == 3 else 1)
            try:
                expr.evaluate(t, sizes)
            except expr.ExprError as exc:
                raise ValueError(f"launch.grid[{i}]: {exc} (on the shape {list(s)})") from None


def _reveal(value, values) -> tuple:
    """("", ()) nothing, (name, ()) a course kernel or "solution", (name, ((P, v), ...)) with parameters."""
    if isinstance(value, str):
        return (value, ())
    params = {k: values.get(v, v) if isinstance(v, str) and v in values else v for k, v in value.get("params", {}).items()}
    for k, v in params.items():
        if isinstance(v, str) and v not in C_TYPES and not v.isidentifier():
            params[k] = expr.number(v, values, f"reveal.params.{k}")
    return (value["kernel"], tuple(sorted(params.items())))


def _property(entry, hints: dict, values: dict, where: str):
    """One entry of `properties`: "name" or {name = {parameters}}; its hint from [hints] if given there,
    as "name" or "name value..." (e.g. "coalesced ld": the hint of {coalesced = {op = "ld"}} alone)."""
    (name, kwargs), = ({entry: {}} if isinstance(entry, str) else entry).items()
    kwargs = {k: values.get(v, v) if isinstance(v, str) else v for k, v in kwargs.items()}   # "TILE": its value
    make = factory(name)
    try:
        inspect.signature(make).bind(**kwargs)
    except TypeError:
        takes = ", ".join(inspect.signature(make).parameters) or "no parameters"
        raise ValueError(f"properties: {name} takes {takes}, not {', '.join(kwargs)}") from None
    if kwargs.get("op", "ld") not in ("ld", "st", None):
        raise ValueError(f"properties: {name} op = {kwargs['op']!r}: \"ld\" (loads) or \"st\" (stores)")
    p = make(**kwargs)
    hint = hints.get(" ".join([name, *map(str, kwargs.values())])) or hints.get(name) or _fit_hint(p.hint, values)
    return properties.Property(p.name, p.test, render_text(hint, values, f"{where}: hints.{name}"),
                               p.needs)     # needs: what the run must record (owners, the shared flow)


def _name(entry) -> str:
    return entry if isinstance(entry, str) else next(iter(entry), "") if isinstance(entry, dict) else ""


def factory(name: str):
    """The property factory called `name` (schema.PROPERTIES)."""
    if name in _FALLBACKS:
        return _FALLBACKS[name]
    if name in schema.PROPERTIES and callable(getattr(properties, name, None)):
        return getattr(properties, name)
    raise ValueError(f"properties: no property {name!r}; known: {', '.join(schema.PROPERTIES)}")


def _each_element_once():
    """Each element of in loaded once and of out stored once (footprint.traffic), whatever the launch."""
    def test(run, on):
        found = footprint.traffic(None, [(on, run)])
        return found[0][0] if found else (False if not _moved(run) else None)
    return properties.Property("each element loaded and stored once", test, footprint.ONCE_HINT)


def _moved(run) -> bool:
    return any(r["space"] == "global" and r["requests"] for r in run.instructions) or bool(getattr(run, "atomics", []))


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


def _dtype(name: str, key: str):
    """A numpy type from a numpy name ("float64") or the C type a parameter T holds ("double")."""
    by_c = {c: n for n, c in _C_NAMES.items()}
    try:
        return np.dtype(C_TYPES.get(name) or by_c.get(name, name)).type
    except TypeError:
        raise ValueError(f"{key}: {name!r} is no element type (float, double, unsigned short, uint8 ...)") from None


def _grid(trees):
    def grid(rows, cols, batch=1):
        names = {"rows": int(rows), "cols": int(cols), "batch": int(batch)}
        return tuple(max(1, expr.evaluate(t, names)) for t in trees)
    return grid

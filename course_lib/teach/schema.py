"""The written schema of exercise.toml: every key, its type and allowed values, and the check that
refuses anything else with the file, the key and the fix (docs/INSTRUCTORS.md §7 prints :data:`TABLE`).

    validate(data, Path("exercises/padded_tile/exercise.toml"))    # SpecError, or None
    print(markdown())                                               # the table the docs hold

Each key is (type, default, what it is). Types: ``str``, ``bool`` (true/false, never "false"), ``int>=0``,
``lesson`` (a two-digit string of a notebook NN_*.ipynb), ``ident`` (a C identifier), ``size`` (a whole
number > 0 or an expression of [params]), ``shapes`` and the rest as the table says. Unknown keys at any
level are errors (a typo is never an exercise that silently requires nothing), and so are wrong types:
nothing is coerced. What the values mean together (expressions that name parameters, the hints' property
names, the signature's parameters) is checked where they are read (``spec``, ``signature``, ``expr``). This
module holds data and type checks; it runs nothing.
"""
from __future__ import annotations

import re
from pathlib import Path

from ..errors import ArgumentError
from .. import paths

HINT = "docs/INSTRUCTORS.md §7 lists every key of exercise.toml, its type and allowed values"
KINDS = ("tile", "batched", "grid-stride", "custom")
PROPERTIES = ("coalesced", "no_bank_conflicts", "no_races", "no_uninitialized_reads", "uses_shared",
              "vector_width", "async_copies", "each_element_once", "shares_the_work", "pipelined", "within_budget")
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_PARAM = re.compile(r"[A-Z][A-Z0-9_]*")

# key: (type, default, meaning) — the docs' table, row for row
TOP = {
    "title": ("str", "required", "one line: what the kernel does ({NAME} of [params] rendered)"),
    "lesson": ("lesson", "required", "the notebook's number as a string, \"06\" (notebooks/06_*.ipynb)"),
    "kernel": ("ident", "required", "the __global__ function the student writes"),
    "question": ("str", '""', "the markdown above the exercise; {NAME}, {2 * BY} rendered, {{ }} for braces"),
    "note": ("str", '""', "anything else `get` must say"),
    "points": ("int>=0", "2", "what the graded test cell is worth"),
    "shapes": ("shapes", "five: square, non-square, partial, 1xN, Nx1", "[rows, cols] or [batch, rows, cols], "
               "each a size; at least one"),
    "tiny": ("shape", "[2, 3]", "the smallest shape (is a loop the step limit stopped endless?)"),
    "wide": ("shape", "none", "a shape over 2^32 elements whose sampled blocks must keep 64-bit offsets"),
    "dtypes": ("types", "[T] or [\"float32\"]", "element types a kernel may move (numpy or C names)"),
    "copy": ("bool", "false", "out has in's shape (a copy, not a transpose)"),
    "once": ("bool", "false", "each element loaded and stored once, whatever the launch"),
    "leaderboard": ("bool", "false", "graded submissions ranked by exact counts in the class report (§6)"),
    "reveal": ("reveal", '""', "after a pass: a course kernel \"padded\", {kernel = \"tile\", params = "
               "{TILE = \"TILE\"}}, or \"solution\" (this exercise's, where solutions are kept)"),
    "properties": ("properties", "[]", "by name, with parameters: \"no_races\", {coalesced = {op = \"ld\"}}"),
    "hints": ("hints", "{}", "a hint per property name, or \"coalesced ld\" for one of two"),
    "launch": ("table", "required", "[launch]: kind, block, tile, grid"),
    "params": ("params", "{}", "UPPER_CASE = whole number or string: names solution.cu and the text use"),
    "variants": ("variants", "[]", "[[variants]] tables, each overriding some [params] for graded students"),
    "signature": ("str", "T* out, const T* in, int rows, int cols", "the kernel's parameter list as C"),
    "args": ("args", "{}", "[args.NAME]: each parameter of signature (below)"),
    "hidden": ("table", "{}", "[hidden]: constraints of the shapes graded students are tested on"),
}
LAUNCH = {
    "kind": ("kind", "\"tile\"", "tile (a block per tile), batched (grid.z = batch), grid-stride, custom"),
    "block": ("sizes1-3", "required", "threads per block, each a size"),
    "tile": ("sizes2", "the block's (tile, batched); none otherwise", "[columns, rows] of in one block covers: what "
             "hints name and hidden shapes walk"),
    "grid": ("grids", "required for grid-stride, custom", "expressions of rows, cols, batch and [params]"),
}
ARG = {
    "role": ("role", "in if const, else out", "in (read), out (written, poisoned first), inout (both)"),
    "shape": ("dims", "[rows, cols] (in, inout)", "a buffer's sizes, expressions of rows, cols, batch"),
    "dtype": ("str", "the element type", "a buffer's element type (a struct's: its fields')"),
    "expect": ("str", "required for out, inout", "what it holds afterwards: transpose(in), in[0::3], a"),
    "value": ("str", "required for numbers", "a number's value: an expression of rows, cols, batch"),
}
HIDDEN = {
    "square": ("bool", "false", "every shape, shown and hidden, has rows = cols (an in-place transpose)"),
    "multiple_of": ("sizes2", "the gcd of the shapes' rows and cols", "[rows, cols]: hidden sizes are multiples"),
    "residues": ("sizes2", "the tile ([rows, cols] of launch.tile)", "[rows, cols]: hidden sizes take every residue "
                 "modulo these"),
    "largest": ("int>0", "6000 (2200 square)", "hidden sizes stay below about this (a tile more at most): a launch "
                "within the checker's work limit"),
}
REVEAL = {"kernel": ("str", "required", "a course kernel (course_lib.transposes)"),
          "params": ("params", "{}", "its template parameters: numbers or names of [params]")}


class SpecError(ArgumentError):
    """An exercise folder that cannot be read: which file, which key, what to write."""


def _bad(where, key, what, fix=HINT):
    raise SpecError(f"{where}: {key}: {what}", hint=fix)


def _type_problem(kind: str, v) -> str | None:
    """What is wrong with `v` for a key of type `kind` (its wording in _EXPECTED), or None."""
    is_int = isinstance(v, int) and not isinstance(v, bool)
    sizes = lambda lo, hi: isinstance(v, list) and lo <= len(v) <= hi and all(map(_size, v))   # noqa: E731
    ok = {
        "str": lambda: isinstance(v, str), "bool": lambda: isinstance(v, bool), "int>=0": lambda: is_int and v >= 0,
        "int>0": lambda: is_int and v > 0,
        "lesson": lambda: isinstance(v, str) and re.fullmatch(r"[0-9][0-9]", v) is not None,
        "ident": lambda: isinstance(v, str) and _IDENT.fullmatch(v) is not None and len(v) <= 64,
        "kind": lambda: isinstance(v, str) and v in KINDS, "role": lambda: v in ("in", "out", "inout"),
        "table": lambda: isinstance(v, dict), "params": lambda: isinstance(v, dict),
        "hints": lambda: isinstance(v, dict), "args": lambda: isinstance(v, dict),
        "variants": lambda: isinstance(v, list), "properties": lambda: isinstance(v, list),
        "reveal": lambda: isinstance(v, (str, dict)),
        "types": lambda: isinstance(v, list) and bool(v) and all(isinstance(x, str) and x for x in v),
        "sizes1-3": lambda: sizes(1, 3), "sizes2": lambda: sizes(2, 2), "grids": lambda: sizes(1, 3),
        "dims": lambda: sizes(1, 3), "shape": lambda: sizes(2, 3),
        "shapes": lambda: isinstance(v, list) and bool(v) and all(_type_problem("shape", s) is None for s in v)
        and len({len(s) for s in v}) == 1,
    }
    return None if ok[kind]() else _EXPECTED[kind]


def _size(x) -> bool:
    return (isinstance(x, int) and not isinstance(x, bool) and x > 0) or (isinstance(x, str) and x.strip() != "")


_EXPECTED = {
    "str": "a string (in quotes)", "bool": "true or false, without quotes", "int>=0": "a whole number >= 0",
    "int>0": "a whole number > 0",
    "lesson": "a two-digit string such as \"06\" (in quotes: the notebook's number)",
    "ident": "a C identifier: letters, digits and _, not starting with a digit, at most 64 characters",
    "kind": f"one of {', '.join(map(repr, KINDS))}", "role": "one of \"in\", \"out\", \"inout\"",
    "table": "a table", "types": "a non-empty list of type names, e.g. [\"float32\", \"double\"]",
    "sizes1-3": "a list of 1 to 3 sizes (whole numbers > 0 or expressions of [params], e.g. [\"TILE\", \"BY\"])",
    "sizes2": "a list of 2 sizes (whole numbers > 0 or expressions of [params])",
    "grids": "a list of 1 to 3 expressions of rows, cols, batch and [params], e.g. [\"cols / TILE\", \"rows / TILE\"]",
    "dims": "a list of 1 to 3 sizes (expressions of rows, cols, batch)",
    "shape": "a list [rows, cols] or [batch, rows, cols] of sizes",
    "shapes": "a non-empty list of shapes, all [rows, cols] or all [batch, rows, cols], e.g. [[64, 64], [1, 4097]]",
    "params": "a table [params] of UPPER_CASE = value", "hints": "a table [hints] of property = \"hint\"",
    "args": "a table of [args.NAME] tables", "variants": "a list of [[variants]] tables",
    "properties": "a list of property names or {name = {parameter = value}} tables",
    "reveal": "a course kernel's name, \"solution\", or {kernel = \"...\", params = {...}}",
}


def _table(data: dict, fields: dict, where: Path, prefix: str) -> None:
    for key, value in data.items():
        if key not in fields:
            close = [k for k in fields if _near(k, key)]
            _bad(where, f"{prefix}{key}", "no such key" + (f" (did you mean {prefix}{close[0]}?)" if close else ""),
                 f"the keys here: {', '.join(fields)} ({HINT})")
        problem = _type_problem(fields[key][0], value)
        if problem:
            _bad(where, f"{prefix}{key}", f"{value!r} is not {problem}")
    for key, (_, default, _) in fields.items():
        if default == "required" and key not in data:
            _bad(where, f"{prefix}{key}", "missing", f"add {prefix}{key} ({fields[key][2]}; {HINT})")


def _near(a: str, b: str) -> bool:
    import difflib
    return difflib.SequenceMatcher(None, a, b).ratio() >= 0.75


def validate(data: dict, where: Path, notebooks: Path | None = None) -> None:
    """Every key of exercise.toml `data` known and of its type (SpecError naming `where` and the key)."""
    _table(data, TOP, where, "")
    _table(data["launch"], LAUNCH, where, "launch.")
    _table(data.get("hidden", {}), HIDDEN, where, "hidden.")
    for name, value in data.get("params", {}).items():
        _param(where, f"params.{name}", name, value)
    for i, v in enumerate(data.get("variants", [])):
        if not isinstance(v, dict) or not v:
            _bad(where, f"variants[{i}]", "a [[variants]] table overriding some [params]")
        for name, value in v.items():
            if name not in data.get("params", {}):
                _bad(where, f"variants[{i}].{name}", f"no [params] {name} to override",
                     f"a variant changes declared parameters only: add {name} to [params] (its default value)")
            _param(where, f"variants[{i}].{name}", name, value)
            if type(value) is not type(data["params"][name]):
                _bad(where, f"variants[{i}].{name}", f"{value!r} is not of the type of params.{name} "
                     f"({data['params'][name]!r})")
    _reveal(data.get("reveal", ""), where)
    _properties(data.get("properties", []), data.get("hints", {}), where)
    for name, table in data.get("args", {}).items():
        if not isinstance(table, dict):
            _bad(where, f"args.{name}", "a table [args.NAME] with role, shape, dtype, expect or value")
        _table(table, ARG, where, f"args.{name}.")
    if "args" in data and "signature" not in data:
        _bad(where, "args", "[args] describes the parameters of `signature`, which is missing",
             "add signature = \"...\" (the kernel's parameter list as C)")
    if "wide" in data and "signature" in data:
        _bad(where, "wide", "the 64-bit check samples blocks of the course's (out, in, rows, cols) launch only",
             "leave wide out, or the signature")
    _lesson(data["lesson"], where, notebooks)


def _param(where, key, name, value) -> None:
    if not _PARAM.fullmatch(name):
        _bad(where, key, f"{name!r} is not an UPPER_CASE name", "parameters are upper case (TILE, PAD, T): the "
             "code uses them as identifiers, the text as {NAME}")
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        _bad(where, key, f"{value!r} is not a whole number or a string", "e.g. TILE = 32, T = \"double\"")


def _reveal(value, where) -> None:
    if isinstance(value, str):
        return
    if not isinstance(value, dict):
        _bad(where, "reveal", f"{value!r} is neither a name nor {{kernel = \"...\", params = {{...}}}}")
    _table(value, REVEAL, where, "reveal.")
    for name, v in value.get("params", {}).items():
        if isinstance(v, bool) or not isinstance(v, (int, str)):
            _bad(where, f"reveal.params.{name}", f"{v!r} is not a whole number or a [params] name")


def _properties(entries, hints, where) -> None:
    if not isinstance(entries, list):
        _bad(where, "properties", "a list of names or {name = {parameter = value}} tables")
    declared = []
    for i, entry in enumerate(entries):
        if isinstance(entry, str):
            name, kwargs = entry, {}
        elif isinstance(entry, dict) and len(entry) == 1 and isinstance(next(iter(entry.values())), dict):
            (name, kwargs), = entry.items()
        else:
            _bad(where, f"properties[{i}]", f"{entry!r} is neither \"name\" nor {{name = {{parameter = value}}}}")
        if name not in PROPERTIES:
            close = [p for p in PROPERTIES if _near(p, name)]
            _bad(where, f"properties[{i}]", f"no property {name!r}" + (f" (did you mean {close[0]!r}?)" if close else ""),
                 f"the properties: {', '.join(PROPERTIES)} (course_lib/teach/properties.py, pipeline.py)")
        declared.append(" ".join([name, *map(str, kwargs.values())]))
    if not isinstance(hints, dict):
        _bad(where, "hints", "a table: property name = \"hint\"")
    names = {d.split()[0] for d in declared} | set(declared) | {"each_element_once"}
    for key, text in hints.items():
        if key not in names:
            _bad(where, f"hints.{key}", "names no property this exercise declares",
                 f"a hint's key is a property of `properties` ({', '.join(sorted(names))})")
        if not isinstance(text, str) or not text.strip():
            _bad(where, f"hints.{key}", f"{text!r} is not a hint (a non-empty string)")


def _lesson(lesson: str, where, notebooks) -> None:
    folder = Path(notebooks) if notebooks else paths.NOTEBOOKS
    found = sorted(folder.glob("[0-9][0-9]_*.ipynb")) if folder.is_dir() else []
    if found and not any(p.name.startswith(f"{lesson}_") for p in found):
        _bad(where, "lesson", f"{lesson!r} matches no notebook in {folder}",
             f"the lessons: {', '.join(sorted({p.name[:2] for p in found}))}")


def markdown() -> str:
    """The schema as the docs' tables: key, type, default, meaning."""
    rows = ["| key | type | default | what |", "|---|---|---|---|"]
    for prefix, fields in (("", TOP), ("launch.", LAUNCH), ("args.NAME.", ARG), ("hidden.", HIDDEN),
                           ("reveal.", REVEAL)):
        rows += [f"| `{prefix}{k}` | {t} | {d} | {m} |" for k, (t, d, m) in fields.items()]
    return "\n".join(rows)

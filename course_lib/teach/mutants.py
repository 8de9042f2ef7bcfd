"""Wrong kernels derived from an exercise's own solution: the mistakes a student makes, as mutations.

    for m in mutants.derive(ex, lambda p: solutions.body(key, p)):
        report = exercises.check(ex, compile(m.source))     # must fail, and name m.words

Each mutation in MUTATIONS is one documented mistake (drop the barrier, remove the padding, swap the
bounds test, 32-bit offsets, a loop step without its rows-of-threads factor, the store done twice ...).
It applies where the solution has the construct it breaks and the exercise checks the property that
catches it, and says which words the checker's report must hold: the cause, not the symptom's
shape. Nothing here names a tile size, a type or a line of one exercise, so an exercise edited in its
folder (a 64x64 padded_tile, a double variant) is mutated as it now is, and an exercise added later
gets every mutation that fits it.

The exercise's own wrong kernels, the slips a lesson knows that no mutation makes, are written in its
folder, ``exercises/<key>/wrong.toml`` (instructor-only, never published): :func:`written` reads them,
each a list of replacements in solution.cu (parameters as their names, so any variant can be mutated)
or a whole cell body, with the words the report must hold (``{TILE}``, ``{BY - 1}``: the variant's values). The same file names the derived mutations
that must still apply (``mutations``). Either kind that no longer changes the solution — an edit took the
text a replacement looks for, or the construct a mutation breaks — is a :class:`~course_lib.teach.spec.SpecError`
naming the file, the entry and the fix, never a test that silently stops testing.

This module rewrites source text; it compiles nothing and runs no kernel (tests/teach does both).
"""
from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from . import spec

BARRIER = "__syncthreads();"
_PADDED = re.compile(r"\[(\w+) \+ (\w+)\]\s*;")                 # tile[32][32 + 1];  tile[TILE][TILE + PAD];
_STORE_BOUNDS = re.compile(r"(\w+) < rows && (\w+(?: \+ \w+)?) < cols")
_FIRST_BOUNDS = re.compile(r"\b(\w+) < cols && ")
_WIDE = re.compile(r"\(size_t\)\s*")
_GRID_STEP = re.compile(r"(gridDim\.x) \* blockDim\.y \* (blockDim\.x)")
_LOOP_STEP = re.compile(r"(for \(int (\w+) = [^;]+; \2 < \w+; \2 \+= )(\w+)\)")
_STUB_LINE = re.compile(r"^[ \t]*//>.*\n", re.M)
_STORE = re.compile(r"^(\s*)(out\[[^\]\n]+\] = [^;\n]+;)[ \t]*(//[^\n]*)?$", re.M)


@dataclass(frozen=True)
class Mutant:
    """One wrong kernel: the mutation's name, what the student got wrong, the source, the words its
    report must hold (a word "a|b": either; the report may name the symptom the run met first), and, where
    the order of the report matters, the words its first problem and first hint must hold and the words no
    part of it may (``first``, ``hint``, ``never``)."""
    name: str
    what: str
    source: str
    words: tuple
    first: tuple = ()
    hint: tuple = ()
    never: tuple = ()


@dataclass(frozen=True)
class Mutation:
    """A mistake: `make(src, ex, params, body_of)` -> (what, source, words) or None where it does not fit."""
    name: str
    doc: str
    make: Callable


def _checks(ex, name: str) -> bool:
    return any(name in p.name for p in ex.properties)


def _drop_barrier(src, ex, params, body_of):
    if BARRIER in src and _checks(ex, "no races"):
        return "no barrier", src.replace(BARRIER, ""), ("no races", "__syncthreads()")


def _drop_warp_barrier(src, ex, params, body_of):
    if "__syncwarp();" in src and _checks(ex, "no races"):
        return "no __syncwarp(): lanes read what other lanes have not written yet", src.replace("__syncwarp();", ""), \
            ("no races", "__syncwarp()")


def _barrier_in_bounds(src, ex, params, body_of):
    kernel = src.find("__global__")                 # a name the kernel itself declared before the barrier
    m = _FIRST_BOUNDS.search(src[kernel:src.find(BARRIER, kernel)]) if BARRIER in src[kernel:] else None
    if m and len(ex.shapes[0]) == 2:
        first = m.group(1)
        at = src.find(BARRIER, kernel)
        return (f"the barrier only for threads with {first} < cols",
                f"{src[:at]}if ({first} < cols) {src[at:]}", ("Barrier skipped",))


def _swap_store_bounds(src, ex, params, body_of):
    swapped = _STORE_BOUNDS.sub(r"\1 < cols && \2 < rows", src)
    if swapped != src:
        return "rows and cols swapped in a bounds test", swapped, ("bounds test",)


def _no_padding(src, ex, params, body_of):
    if not _checks(ex, "bank conflicts"):
        return None
    if params.get("PAD"):
        return "not padded: a column of the tile in one bank", body_of({**params, "PAD": 0}), ("bank conflicts", "wavefronts per request", "pad")
    bare = _PADDED.sub(r"[\1];", src)
    if bare != src:
        return "not padded: a column of the tile in one bank", bare, ("bank conflicts", "wavefronts per request", "pad")


def _pad_one_more(src, ex, params, body_of):
    # one element more than the right padding: rows of 4-byte words two banks apart, 2-way conflicts
    if params.get("PAD") == 1 and params.get("T", "float") == "float" and _checks(ex, "bank conflicts"):
        return "padded by one more: still 2-way", body_of({**params, "PAD": 2}), ("bank conflicts", "2.0 wavefronts")


def _narrow_offsets(src, ex, params, body_of):
    narrow = _WIDE.sub("", src)
    if ex.wide and narrow != src and "size_t " not in narrow:     # only where a launch over 2^32 is tried
        return "32-bit offsets: every (size_t) left out", narrow, ("64 bits",)


def _grid_step_without_rows(src, ex, params, body_of):
    short = _GRID_STEP.sub(r"\1 * \2", src)
    if short != src:
        return "the grid's step without blockDim.y: every element ~8 times", short, ("more than once",)


def _loop_step_one(src, ex, params, body_of):
    short = _LOOP_STEP.sub(r"\g<1>1)", src, count=1)
    if short != src:
        return ("the tile loop steps by one row, not by the block's rows of threads", short,
                ("Out of bounds store to shared memory|loaded more than once",))


def _store_twice(src, ex, params, body_of):
    m = _STORE.search(src)
    # a value loaded from in: the compiler cannot merge the two stores (out may alias in); from a tile it would
    if m and "= in[" in m.group(2):
        twice = src[:m.start()] + f"{m.group(1)}{{ {m.group(2)} {m.group(2)} }}" + src[m.end():]
        return "every element stored twice", twice, ("more than once",)


MUTATIONS = [Mutation(f.__name__.lstrip("_"), doc, f) for f, doc in (
    (_drop_barrier, "every __syncthreads() removed: threads read the tile before the others wrote it"),
    (_drop_warp_barrier, "every __syncwarp() removed: lanes of a warp read each other's words unsynchronized"),
    (_barrier_in_bounds, "the first barrier only for threads inside the matrix's columns: some skip it"),
    (_swap_store_bounds, "the first `a < rows && b < cols` test compares with the input's rows and cols (out is cols x rows)"),
    (_no_padding, "the tile's padding removed (PAD = 0, or [N + 1] -> [N]): a column of the tile in one bank"),
    (_pad_one_more, "PAD = 2 for a float tile: rows two banks apart, 2-way conflicts"),
    (_narrow_offsets, "every (size_t) cast removed: offsets in 32 bits wrap on big matrices"),
    (_grid_step_without_rows, "a grid-stride step without blockDim.y: the rows of threads forgotten"),
    (_loop_step_one, "a tile loop's step of BY replaced by 1: each thread walks every row"),
    (_store_twice, "the store written twice: right values, twice the traffic"),
)]


def derive(ex, body_of: Callable[[dict], str]) -> list[Mutant]:
    """Every mutation that fits `ex`, applied to its solution `body_of(params)` (ex.params: its variant)."""
    params = dict(ex.params)
    code = lambda p: _STUB_LINE.sub("", body_of(p))     # noqa: E731  the //> stub lines are comments: not mutated
    src, out = code(params), []
    for m in MUTATIONS:
        made = m.make(src, ex, params, code)
        if made and made[1] != src:
            out.append(Mutant(m.name, made[0], made[1], tuple(made[2])))
    return out


def missing(m: Mutant, report_text: str, problems=()) -> list[str]:
    """The words of `m` its report does not hold ([] where the checker named the cause): `words` anywhere,
    `first` in the first problem and `hint` in its hint (`problems`: the report's), `never` nowhere."""
    has = lambda w, text: any(a in text for a in w.split("|"))    # noqa: E731
    what, hint = (problems[0] if problems else ("", ""))
    return ([w for w in m.words if not has(w, report_text)] + [f"first problem: {w}" for w in m.first if not has(w, what)]
            + [f"first hint: {w}" for w in m.hint if not has(w, hint)] + [f"never: {w}" for w in m.never if w in report_text])


# ---------------------------------------------------------------------------- the folder's own (wrong.toml)

_KEYS = {"what", "replace", "source", "words", "first", "hint", "never"}


def _read(folder: Path) -> dict:
    path = Path(folder) / spec.WRONG
    if not path.exists():
        return {}
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise spec.SpecError(f"{path}: {exc}", hint="wrong.toml: mutations = [...] and [[wrong]] tables (what, "
                             "replace or source, words); docs/INSTRUCTORS.md §7") from None
    unknown = set(data) - {"mutations", "wrong"}
    if unknown:
        raise spec.SpecError(f"{path}: {sorted(unknown)[0]}: no such key", hint="wrong.toml holds `mutations` and "
                             "[[wrong]] tables")
    return data


def written(folder: Path, ex, raw: str) -> list[Mutant]:
    """The folder's wrong.toml kernels, for `ex`'s variant: `raw` is solution.cu's cell body, parameters as
    names. A replacement whose text is not in it, or a kernel that is the solution, is a SpecError."""
    path, params, out = Path(folder) / spec.WRONG, dict(ex.params), []
    for i, w in enumerate(_read(folder).get("wrong", [])):
        where = f"{path}: wrong[{i}]"
        bad = set(w) - _KEYS if isinstance(w, dict) else {"?"}
        lists = [w.get(k) for k in ("words", "first", "hint", "never") if k in w] if not bad else [None]
        if bad or not isinstance(w.get("what"), str) or not all(map(_strings, lists)) or not (
                {"words", "first", "hint"} & set(w)) or ("replace" in w) == ("source" in w):
            raise spec.SpecError(f"{where}: {w!r}", hint="each [[wrong]] has what = \"...\", words = [\"...\"] (and/or "
                                 "first, hint: words of the first problem and its hint; never: words nowhere) and "
                                 "either replace = [old, new, ...] or source = \"the whole cell body\"")
        src = w.get("source")
        if src is None:
            pairs = w["replace"]
            if not _strings(pairs) or len(pairs) % 2:
                raise spec.SpecError(f"{where} ({w['what']}): replace = [old, new, old, new, ...] strings",
                                     hint="an even number of strings: each old text, then what replaces it")
            src = raw                     # stub lines kept: a report's line numbers are the cell's
            for old, new in zip(pairs[::2], pairs[1::2]):
                if old not in src:
                    raise spec.SpecError(f"{where} ({w['what']}): {old!r} is no longer in solution.cu",
                                         hint="the solution changed: write this wrong kernel's replacement for the "
                                              "new text (or remove the entry)")
                src = src.replace(old, new)
            if src == raw:
                raise spec.SpecError(f"{where} ({w['what']}): the replacements leave the solution as it is",
                                     hint="a wrong kernel must differ from the solution")
        words = (tuple(spec.render_text(x, params, f"{where}: {k}") for x in w.get(k, ()))     # {TILE}, {BY - 1}
                 for k in ("words", "first", "hint", "never"))
        out.append(Mutant(f"wrong[{i}]", w["what"], spec.render(src, params), *words))
    return out


def _strings(x) -> bool:
    return isinstance(x, list) and bool(x) and all(isinstance(v, str) for v in x)


def stale(folder: Path, derived: list[Mutant]) -> list[str]:
    """The mutations wrong.toml says must apply that no longer change the solution (each with the fix)."""
    declared = _read(folder).get("mutations", [])
    known = {m.name for m in MUTATIONS}
    got = {m.name for m in derived}
    out = [f"{Path(folder) / spec.WRONG}: mutations: {name!r} is no mutation (known: {', '.join(sorted(known))})"
           for name in declared if name not in known]
    out += [f"{Path(folder) / spec.WRONG}: mutations: {name!r} no longer changes the solution (the construct it "
            "breaks is gone): remove it from the list, or give the solution back what it tests"
            for name in declared if name in known and name not in got]
    return out

"""Which of a check's problems to show first: the one whose evidence points most directly at a cause.

    p = Problem("on a 96x160 matrix: ...", "a bounds test holds ...", PATTERN)   # unpacks as (what, hint)
    report.problems += ordered(problems)        # by rank, then in the order found
    stopped_hint(ex, exc)                       # an out-of-bounds access of in or out, in the exercise's terms
    did_work(runs)                              # did the kernel do anything 'already right' could be said of
    has_loops(fn)                               # does the kernel's source hold a loop (for hints that name one)
    loop_words(False, (32, 32), (32, 32))       # {fill}, {loop_bounds}: property hints' words about loops

A student reads the first hint and acts on it, so it must be the best supported. The ranks, best first:

- STOPPED: the simulator stopped the kernel at one instruction (an access out of bounds or misaligned,
  a barrier some threads skip): the line and the thread are known;
- PATTERN: a wrong result whose wrong elements form a pattern with one cause (``patterns``, and the
  other telling cases of ``wrong``: nothing written, whole tiles unwritten, values changed on the way);
- LOCATED: a race or a read of shared memory no thread wrote, at its lines (often the consequence of a
  wrong mapping, seldom its cause);
- RESULT: a wrong result whose pattern names no cause ("compare the indices");
- PROPERTY: the lesson's other properties (coalescing, bank conflicts, vector width ...); a bank
  conflict's hint first says what the kernel's declaration shows when it pads the rows' count
  (``tile[33][32]``) rather than each row.

So an out-of-bounds store at the store's line comes before a block-mapping hint drawn from which
tiles were left unwritten. Nothing here runs a kernel or judges a property.
"""
from __future__ import annotations

import re

STOPPED, PATTERN, LOCATED, RESULT, PROPERTY = range(5)

# properties whose failure names the lines at fault (a race, a read of unwritten shared memory)
_LOCATED = {"no races on shared memory", "reads only shared memory that was written"}


class Problem(tuple):
    """(what, hint), as the Report holds problems, with the rank of its evidence (STOPPED ... PROPERTY)."""
    rank: int

    def __new__(cls, what: str, hint: str, rank: int = RESULT):
        self = super().__new__(cls, (what, hint))
        self.rank = rank
        return self


def rank_of(problem) -> int:
    return getattr(problem, "rank", RESULT)


def ordered(problems) -> list[tuple[str, str]]:
    """The problems as (what, hint) pairs, best-supported first (a stable sort: found order within a rank)."""
    return [tuple(p) for p in sorted(problems, key=rank_of)]


def per_shape(found, text: str, also_words: str) -> list[Problem]:
    """One problem for [(shape, (what, hint))]: the shape whose problem ranks best, the others named after it."""
    if not found:
        return []
    best = min(range(len(found)), key=lambda i: rank_of(found[i][1]))
    (on, problem), rest = found[best], found[:best] + found[best + 1:]
    what, hint = problem
    also = f" ({also_words} {', '.join(str(s) for s, _ in rest)})" if rest else ""
    return [Problem(text.format(on=on, what=what) + also, hint, rank_of(problem))]


def judged(p, problem: str, fn=None) -> Problem:
    """A failing property's problem, ranked LOCATED when it names the lines at fault, else PROPERTY; a bank
    conflict's hint starts with what the kernel's own declaration shows (the rows padded, not each row)."""
    note = padded_rows(_code(fn)) if "bank conflicts" in p.name else None
    return Problem(f"{p.name}: {problem}", (note + "; " if note else "") + p.hint,
                   LOCATED if p.name in _LOCATED else PROPERTY)


_SHARED_2D = re.compile(r"__shared__[^;{}\[]*?\b(\w+)\s*\[([^\[\];]+)\]\s*\[([^\[\];]+)\]")


def padded_rows(code: str | None) -> str | None:
    """For a shared array declared [rows + padding][columns]: that it adds rows, not a word to each row."""
    for m in _SHARED_2D.finditer(code or ""):
        name, first, second = m[1], m[2].strip(), m[3].strip()
        if "+" in first and "+" not in second:
            return (f"{name}[{first}][{second}] pads the number of rows, not each row: the rows still start "
                    f"{second} elements apart, so the elements of a column still share banks — the padding belongs "
                    f"in the second size, {name}[{second}][{first}]")
    return None


def _code(fn) -> str | None:
    return getattr(getattr(getattr(fn, "module", None), "source", None), "code", None)


def did_work(runs) -> bool:
    """Whether the kernel did anything 'already right' could be said of: on some shape it left more than
    1/32 of out written (not the poison), or its global stores (atomics too) all land the lanes of a warp on
    different elements — a read-before-landed tile writes poison back, yet its stores are the kernel's
    work. A stub's `out[0] = in[0]` by every thread does neither: 128 bytes per warp into one 32-byte sector."""
    if any(getattr(run, "out_written", 0.0) * 32 > 1 for _, run in runs):
        return True
    rows = [r for _, run in runs for r in getattr(run, "instructions", [])
            if r["space"] == "global" and r["op"] == "st" and r["requests"]]
    atoms = [r for _, run in runs for r in getattr(run, "atomics", []) if r["space"] == "global" and r["requests"]]
    return bool(rows or atoms) and all(r["bytes"] <= 32 * r["sectors"] for r in rows)


_ACCESS = re.compile(r"Out of bounds (load from|store to) global memory: argument (\d+) ")


def stopped_hint(ex, exc, batch: int = 1) -> str | None:
    """For an access past the end of in or out: which limit each index of that access must respect,
    in the exercise's terms (out is cols x rows for a transpose; a batch's matrices one after another);
    None for any other stop."""
    m = _ACCESS.match(getattr(exc, "message", "") or "")
    if not m or m[2] not in ("0", "1"):
        return None
    if m[2] == "1":
        side, array, offset, limits = "load", "in is rows x cols", "in[row * cols + col]", "row < rows and col < cols"
    elif ex.copy:
        side, array, offset, limits = "store", "out has the shape of in", "out[row * cols + col]", \
            "row < rows and col < cols"
    else:
        side, array, offset, limits = "store", "out is cols x rows", "out[row * rows + col]", \
            "row < cols and col < rows"
    batched = ("; and matrix b of a batch begins b * rows * cols elements in, in in and in out alike (blockIdx.z * "
               "rows * cols, as size_t)") if batch > 1 else ""
    return (f"the {side}'s bounds test and its offset must agree: {array}, so {offset} needs {limits} — check which "
            f"of rows and cols each index of the {side} is compared with, and < not <={batched}")


_LOOP = re.compile(r"\b(for|while)\s*\(|\bdo\s*\{")


def has_loops(fn) -> bool | None:
    """Whether the kernel's cell (comments left out) holds a for, while or do loop; None when unknown."""
    code = _code(fn)
    return None if code is None else bool(_LOOP.search(code))


def loop_words(loops, tile, block) -> dict:
    """The words of property hints that speak of loops ({fill}, {loop_bounds}), for a kernel that has
    loops (or may: `loops` None), or has none: then a loop is named only where the block spans the
    tile's width but not its height (a 32x8 block for a 32x32 tile), so that its threads need one."""
    (tx, ty), (bx, by) = tile, block
    each = tx * ty // max(1, bx * by)
    read_back = ("read back only what was stored: the store's bounds test is about out (cols x rows), and the "
                 "block reads back its own tile")
    if loops is False and each <= 1:
        return dict(loop_bounds="", fill="with one thread per element a thread may " + read_back)
    if loops is False and bx == tx and by < ty:
        return dict(loop_bounds="", fill=f"a {bx}x{by} block fills its {tx}x{ty} tile only if each thread stores "
                    f"{each} elements: a loop over the tile's rows (step {by}) on the way in, and one over the same "
                    "rows on the way out")
    if loops is False:
        return dict(loop_bounds="", fill=f"each thread of a {bx}x{by} block stores {each} elements of its {tx}x{ty} "
                    "tile, together every one; and " + read_back)
    return dict(loop_bounds="the loop bounds and steps (a grid-stride loop steps by gridDim.x * blockDim.x, a loop "
                "over the rows of a tile by blockDim.y), ",
                fill="fill the whole tile (one loop per phase, the same rows in both) and " + read_back)

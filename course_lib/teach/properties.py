"""What an exercise requires of a kernel beyond a correct result, judged on every shape it ran on.

    p = coalesced("st")
    p.test(run, on)            # a problem (str), None (satisfied) or False (nothing to judge here)
    judge([coalesced("ld"), no_races()], runs)   # [(property, problem or None)] over all shapes

A :class:`Property` looks at one simulated launch (a ``SimRun``) and the shape it ran on
(:class:`Shape`); :func:`judge` applies each property to the run of every shape and names the
first shape where it fails (and the others). The hardware's rules are the simulator's; this module
only decides what counts as "coalesced" or "conflict-free" for a student's kernel:

- coalesced: on a shape whose rows start on 32-byte boundaries, a warp request touches no more
  sectors than its bytes need (4-byte elements: 4 per 32 lanes, 16-byte vectors: 16); where rows
  do not (1000 x 1030 floats), each 128 bytes a warp moves may straddle one extra sector at each
  end, so up to bytes/32 + 2 per 128 bytes. A column walk (one sector per lane) fails both.
- conflict-free: zero bank conflicts, whatever the shape; cp.async's writes into shared memory
  (their own rows, op "ldgsts") count as the stores they are.
- no races, no reads of shared memory no thread wrote: as the simulator's racecheck reports them
  (reading a cp.async's destination before its wait is one);
- cp.async: every global load is one, and they bring all of ``in``.
- staged in shared memory: every element of ``out`` passed through shared memory. ``runs``
  simulates the launch a second time with a byte xor-ed into every shared load
  (``scramble_shared``): an element that came through shared memory is then changed by exactly
  that byte, one that bypassed it is not, and one computed from shared data without being moved
  through it (a token ``out = in + tile[0][0]``) is neither; ``run.shared_flow`` holds the counts.
  Without that second run, touching shared memory at all is what is judged.
- each element once (:func:`each_element_once`): the global loads move no more bytes than ``in``
  holds, the stores no more than ``out``; on its own, without one tile per block (a grid-stride
  loop whose step is ``blockDim.x`` copies every element several times).
- one tile per block (:func:`one_tile_per_block`), or for a fixed grid every block and warp its share
  of out (:func:`shares_the_work`): from the owners of a whole run (``blocks``).

Atomics count as what they are: each a read and a write of memory (``SimRun.atomics``), judged
with the loads for coalescing and traffic, and with the stores. Hints may name the exercise's own
tile, block and element type ({tx}, {ty}, {bx}, {by}, {t}; {pad}: one 4-byte word of padding, in
elements; {fill} and {loop_bounds}: advice that names loops only for a kernel that has or needs them,
``evidence.loop_words``): :func:`judge` fills them in from the :class:`Shape` a run moved. It does not run kernels or compare outputs (exercises.check does).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Callable

from . import blocks
from .shape import Shape, fill

__all__ = ["Shape", "Property", "coalesced", "no_bank_conflicts", "no_races", "no_uninitialized_reads",
           "uses_shared", "vector_width", "async_copies", "each_element_once", "one_tile_per_block",
           "shares_the_work", "hinted", "judge"]

WORD = {"ld": "loads", "st": "stores", "atom": "atomics", "red": "atomics", "ldgsts": "cp.async writes"}


@dataclass(frozen=True)
class Property:
    """A requirement on a simulated run: `test(run, shape)` returns a problem description, None
    (satisfied) or False (nothing to judge, e.g. no shared access at all: not listed as passed).
    `needs` names what the run must have recorded: "owners" (which block touched which element),
    "flow" (the second run that tells whether out's data passed through shared memory)."""
    name: str
    test: Callable
    hint: str
    needs: tuple = ()

    def hint_for(self, on) -> str:
        """The hint with the exercise's tile, block, type, buffers or the student's array (``shape.fill``)."""
        return fill(self.hint, on)


def _rows(run, space, op, atomics=False):
    """Rows of `run.instructions` (and, with `atomics`, of `run.atomics`: each a load and a store)."""
    rows = [r for r in run.instructions if r["space"] == space and r["requests"] and (op is None or r["op"] == op)]
    return rows + [r for r in getattr(run, "atomics", []) if r["space"] == space and r["requests"]] if atomics else rows


def _nbytes(on, op) -> int:
    """Bytes of what the loads or stores move (a Shape; anything with rows, cols, batch and itemsize)."""
    return on.nbytes(op) if hasattr(on, "nbytes") else on.rows * on.cols * on.batch * on.itemsize


def _names(on, op) -> str:
    return on.names(op) if hasattr(on, "names") else ("in" if op == "ld" else "out")


def coalesced(op: str) -> Property:
    """Global loads/stores touch no more sectors per request than the bytes they move need."""
    def test(run, on):
        rows = _rows(run, "global", op, atomics=True)
        if not rows:
            return False
        for r in rows:
            kind = WORD[r["op"]]
            ratio = r["sectors"] / r["requests"]
            # an atomic may touch in or out: judged by the laxer rule where either's rows are misaligned
            walk = op if r["op"] == op else next((s for s in ("ld", "st") if not on.aligned(s)), op)
            if on.aligned(walk):
                ideal = max(1, r["width"])
                if ratio > ideal:
                    return (f"the global {kind} on line {r['line']} touch {ratio:.1f} sectors per request; "
                            f"{ideal} would be coalesced ({r['width']}-byte accesses by a warp)")
            else:
                per = r["bytes"] / r["requests"]
                allowed = per / 32 + 2 * max(1.0, per / 128)
                if ratio > allowed:
                    return (f"the global {kind} on line {r['line']} touch {ratio:.1f} sectors per request; "
                            f"a coalesced warp needs at most {allowed:.1f} here (rows of "
                            f"{on.row_bytes(walk)} bytes do not start on 32-byte sectors)")
        return None
    side = "read rows of {src}" if op == "ld" else "write rows of {dst}"
    return Property(f"global {WORD[op]} coalesced", test,
                    f"consecutive threads (threadIdx.x) must {side}: let threadIdx.x pick the column")


def no_bank_conflicts(op: str | None = None) -> Property:
    """Shared loads/stores (or both) with zero bank conflicts."""
    def test(run, on):
        rows = _rows(run, "shared", op)
        if not rows:
            return False
        bad = {}
        for r in rows:
            if r["conflicts"]:
                b = bad.setdefault((r["line"], r["op"]), [0, 0, 0])
                b[0] += r["wavefronts"]
                b[1] += r["requests"]
                b[2] += r["conflicts"]
        return "; ".join(f"the shared {WORD[o]} on line {n} cost {w / q:.1f} wavefronts per request ({c} bank "
                         f"conflicts in all)" for (n, o), (w, q, c) in sorted(bad.items())) or None
    return Property(f"no bank conflicts on shared {WORD.get(op, 'loads and stores')}", test,
                    "lanes of a warp reading a column of the tile share banks (as many ways as the wavefronts per "
                    "request above): pad each row by one 4-byte word ([{ty}][{tx} + {pad}]) so that consecutive rows "
                    "start in consecutive banks; a padding of an even number of words leaves rows 16 apart in one bank")


def no_races() -> Property:
    def test(run, on):
        if run.races:
            return str(run.races[0]).split("\n  hint:")[0]
        return None if _rows(run, "shared", None) else False
    return Property("no races on shared memory", test,
                    "every thread must wait until the whole tile is written before reading it: "
                    "__syncthreads() between the two phases")


def no_uninitialized_reads() -> Property:
    """No thread reads shared memory that no thread of its block wrote (the simulator's warning)."""
    def test(run, on):
        unread = [w for w in run.warnings if w.kind == "uninitialized"]
        if unread:
            return str(unread[0]).split("\n  hint:")[0]
        return None if _rows(run, "shared", None) else False
    return Property("reads only shared memory that was written", test,
                    "every element of the tile a thread reads must have been stored by some thread of the "
                    "block first: {fill}")


def uses_shared() -> Property:
    """Every element of out passed through shared memory (judged from ``run.shared_flow`` when the
    run has one: see the module's docstring), or at least the kernel touches shared memory."""
    def test(run, on):
        if not _rows(run, "shared", None, atomics=True):
            return "the kernel never touches shared memory"
        flow = getattr(run, "shared_flow", None)
        if flow is None:
            return None
        through, bypassed, mixed = flow
        total = through + bypassed + mixed
        if bypassed or mixed:
            how = []
            if bypassed:
                how.append(f"{bypassed:,} reach out unchanged when every shared-memory load is changed")
            if mixed:
                how.append(f"{mixed:,} are computed from shared data without being moved through it")
            return (f"{bypassed + mixed:,} of the {total:,} elements of out do not pass through shared memory: "
                    + "; ".join(how))
        return None
    return Property("stages the tile in shared memory", test,
                    "declare __shared__ {t} tile[{ty}][{tx}]; write it from {src}, then read it to write {dst}",
                    ("flow",))


def vector_width(nbytes: int = 16, op: str | None = None) -> Property:
    """Every global load/store (or those of `op`) moves at least `nbytes` per thread."""
    def test(run, on):
        rows = _rows(run, "global", op)
        if not rows:
            return False
        return next((f"the global {WORD[r['op']]} on line {r['line']} move {r['width']} bytes per thread"
                     for r in rows if r["width"] < nbytes), None)
    return Property(f"{nbytes}-byte global {WORD.get(op, 'loads and stores')}", test,
                    "move four floats at once: reinterpret_cast<const float4*>(in + i)[0] "
                    "(the address must be a multiple of 16 bytes)")


def async_copies() -> Property:
    """Every global load is a cp.async (LDGSTS: global memory straight into shared memory), and those
    copies bring every byte of `in` (not a few of them, the rest by another route)."""
    def test(run, on):
        rows = _rows(run, "global", "ld")
        plain = [r for r in rows if not r["text"].startswith("cp.async")]
        if plain:
            r = plain[0]
            return (f"the global loads on line {r['line']} are ordinary loads (`{r['text'].split()[0]}`), not cp.async "
                    "copies: the element goes through a register")
        need, moved = _nbytes(on, "ld"), sum(r["bytes"] for r in rows)
        if moved < need:
            return (f"cp.async copies bring {moved:,} of the {need:,} bytes of {_names(on, 'ld')}: every element "
                    "must reach shared memory by a cp.async")
        return None
    return Property("every global load a cp.async into shared memory", test,
                    "copy each element with __pipeline_memcpy_async(&tile[r][c], &in[...], sizeof(float)) instead of "
                    "tile[r][c] = in[...]; then __pipeline_commit() and __pipeline_wait_prior(0)")


def each_element_once() -> Property:
    """The global loads (atomics included) move no more bytes than `in` holds, the stores (atomics
    included) no more than `out`: no element moved twice. No parameters: the bytes of the shape."""
    def test(run, on):
        atoms = [r for r in getattr(run, "atomics", []) if r["space"] == "global"]
        short = False
        for op, verb, done in (("ld", "load", "loaded"), ("st", "store", "stored")):
            need, array = _nbytes(on, op), _names(on, op)
            moved = sum(r["bytes"] for r in _rows(run, "global", op)) + sum(r["bytes"] for r in atoms)
            short = short or moved < need    # some never moved: the result says which, and 'once' is not said
            if moved > need:
                why = ""
                if atoms:
                    a = atoms[0]
                    why = (f" (the atomics on line {a['line']}, `{a['text'].split()[0]}`, count too: an atomic "
                           f"reads and writes the element it touches, a load and a store in one)")
                return (f"the global {verb}s move {moved:,} bytes, {moved / need:.2g} times the {need:,} bytes of "
                        f"{array}: some elements are {done} more than once{why}")
        return False if short else None
    return Property("each element loaded and stored once", test,
                    "each element of in is loaded once and each element of out stored once: check {loop_bounds}"
                    "that no two threads or blocks move the same element, and use plain loads and "
                    "stores (in[i], out[i] = v), not atomics")


def one_tile_per_block(tile: tuple | None = None) -> Property:
    """Each block of the launch moves one whole tile, any one-to-one mapping of blocks to tiles;
    judged on every block (``blocks``). `tile`: (columns, rows) of in per block; None: the
    exercise's (``Exercise.tile``, which the checker puts in ``Shape.tile``)."""
    def test(run, on):
        return blocks.one_tile(run, dataclasses.replace(on, tile=tuple(tile)) if tile else on)
    return Property("one tile per block", test,
                    "spread the work over the grid the launch implies: each block moves one whole {tx}x{ty} tile "
                    "(which one is yours to choose, each tile by one block) and no block does another's (no loop "
                    "over tiles, no early return for all blocks but one)", ("owners",))


def shares_the_work() -> Property:
    """Every block and every warp of a fixed grid writes its share of out (``blocks.share``)."""
    return Property("every block and warp does its share", blocks.share, "number every thread of the whole grid "
                    "once — blockIdx.x, threadIdx.y and threadIdx.x all count — and let each take its turn: no block "
                    "or warp returns early while the others copy the matrix", ("owners",))


def hinted(p: Property, hint: str) -> Property:
    """The same property with a lesson's own hint."""
    return dataclasses.replace(p, hint=hint)


def judge(properties, runs) -> list[tuple[Property, str | None]]:
    """Each property over `runs` ([(Shape, SimRun)]): (property, problem) where problem is None when
    it held on every shape, or the first failing shape's description (other failing shapes named).
    Properties with nothing to judge on any shape are left out; a failing one's hint is filled in
    with the failing shape's tile, block and type."""
    out = []
    for p in properties:
        verdicts = [(on, p.test(run, on)) for on, run in runs]
        failed = [(on, v) for on, v in verdicts if v]
        if failed:
            (on, v), rest = failed[0], failed[1:]
            also = f" (also on {', '.join(str(s) for s, _ in rest)})" if rest else ""
            out.append((dataclasses.replace(p, hint=p.hint_for(on)), f"on {on}: {v}{also}"))
        elif any(v is None for _, v in verdicts):
            out.append((p, None))
    return out

"""What the blocks of a launch read and write: the checks a correct result alone cannot make.

    problems = spread(ex, fn, dtype, seed, runs)   # [(what, hint)]: a block that does not move one whole tile
    problems = wide(ex, fn, dtype, seed)           # the same on a launch over more than 2^32 elements
    problems = traffic(ex, runs)                   # loads or stores that move an element more than once

A kernel can write every element right and still not be the exercise: block (0, 0) may loop over
every tile while the others return, or every element may be stored twice. The launch implies one
tile per block (``Exercise.tile``: columns x rows of ``in``; ``blockIdx.z`` the matrix of a
batch). :func:`spread` judges **every block of every shape** from the runs the checker already
made (``runs.run_shapes`` records which block touched which element: ``sim.checks.owners``), with
``properties.one_tile_per_block``: any one-to-one mapping of blocks to tiles passes, and a kernel
cannot behave only in the blocks a checker looks at, because it looks at all of them. That costs
a few numpy passes over the arrays, not another simulation. Given no runs with owners, it falls
back to simulating a few blocks alone.

:func:`wide` cannot run a launch over more than 2^32 elements whole (``Exercise.wide``), so it
simulates sampled blocks *alone*, on stand-ins of the matrices' true sizes (nothing allocated)
that record every byte read and written: the last block, one in the middle, and two drawn at
random, seeded by the kernel's text and the check's seed (a kernel cannot know which will be
looked at without running the checker on that very text). Each must read exactly its tile of
``in`` and write exactly its tile of ``out``: an offset computed in 32 bits wraps, and the
simulator stops an access that lands outside an array, or the wrapped one lands outside the
block's tile. :func:`traffic` is ``properties.each_element_once`` over every run (atomics
counted as the loads and stores they are). Nothing here compares a full output (``runs`` does)
or judges coalescing (``properties``).
"""
from __future__ import annotations

import zlib

import numpy as np

from ..errors import KernelError
from ..sim.executor import Program
from ..sim.spaces.memory import GlobalMemory
from . import blocks
from .exercise import expected, input_for
from .properties import each_element_once, one_tile_per_block

SPREAD_HINT = ("spread the work over the grid the launch implies: each block moves one whole tile of its own "
               "(usually blockIdx.x picks its columns of in and blockIdx.y its rows; any one-to-one order works) "
               "and no block does another's (no loop over tiles, no early return for all blocks but one)")
WIDE_HINT = ("compute every offset in 64 bits: (size_t)row * cols + col, and for a batch (size_t)rows * cols * "
             "blockIdx.z — an int or unsigned product wraps past 2^31 or 2^32 elements before it is widened")
ONCE_HINT = each_element_once().hint


class _Recorder:
    """A stand-in's reader: the bytes of `data` (or zeros), remembering every offset asked for."""

    def __init__(self, data: np.ndarray | None):
        self.flat = None if data is None else data.reshape(-1).view(np.uint8)
        self.seen: list[np.ndarray] = []

    def __call__(self, off):
        off = np.asarray(off, np.int64)
        self.seen.append(np.unique(off))
        return self.flat[off] if self.flat is not None else np.zeros(off.shape, np.uint8)

    def offsets(self) -> np.ndarray:
        return np.unique(np.concatenate(self.seen)) if self.seen else np.zeros(0, np.int64)


def run_block(fn, ex, dims, dtype, block_id, data=None, out=None):
    """Simulate one block alone. dims = (batch, rows, cols); `data`/`out`: real arrays for the
    stand-ins to read (None: zeros). Returns (in elements read, {out element: value bits} written)."""
    batch, rows, cols = dims
    n = batch * rows * cols
    itemsize = np.dtype(dtype).itemsize
    grid, block = ex.launch(rows, cols, batch)
    checked = fn.check_launch(grid, block, (np.empty(0, dtype), np.empty(0, dtype), np.int32(rows), np.int32(cols)))
    memory, readers, params, offsets = GlobalMemory(), [_Recorder(out), _Recorder(data)], bytearray(), {}
    for i, (pname, _, psize, palign) in enumerate(fn.kernel.params):
        start = -(-len(params) // palign) * palign
        params.extend(b"\0" * (start - len(params)))
        offsets[pname] = start
        if i < 2:
            raw = memory.add_stand_in(("out", "in")[i], n * itemsize, itemsize, readers[i],
                                      label=f"argument {i} '{('out', 'in')[i]}' ({rows}x{cols} {np.dtype(dtype)})")
            raw = int(raw).to_bytes(8, "little")
        else:
            raw = np.asarray(checked.args[i]).tobytes()
        params.extend(raw[:psize].ljust(psize, b"\0"))
    Program(fn.module.parsed, fn.kernel, grid=checked.grid, block=checked.block, params=bytes(params),
            param_offsets=offsets, globals_=memory, dynamic_shared=int(checked.shared_mem), source=fn.module.code,
            filename=fn.module.filename, check_races=False, count_metrics=False, echo=False, blocks=[block_id],
            trace_block=-1, max_steps=50_000, timeout=4.0).run()
    stored = memory.buffers[0]
    elements = stored.ov_off // itemsize
    words = {}
    for e in np.unique(elements):
        part = stored.ov_val[elements == e]
        words[int(e)] = bytes(part) if part.size == itemsize else None     # None: not every byte written
    return np.unique(readers[1].offsets() // itemsize), words


def tile_of(ex, dims, block_id) -> tuple[np.ndarray, np.ndarray, str]:
    """(elements of in, the elements of out they go to, 'rows a-b, columns c-d') of one block's tile."""
    batch, rows, cols = dims
    (tx, ty), (bx, by, bz) = ex.tile, block_id
    r = np.arange(by * ty, min(rows, (by + 1) * ty), dtype=np.int64)
    c = np.arange(bx * tx, min(cols, (bx + 1) * tx), dtype=np.int64)
    rr, cc = np.meshgrid(r, c, indexing="ij")
    base = np.int64(bz) * rows * cols
    src = (base + rr * cols + cc).ravel()
    dst = (base + (rr * cols + cc if ex.copy else cc * rows + rr)).ravel()
    where = (f"rows {r[0]}-{r[-1]}, columns {c[0]}-{c[-1]}" if r.size and c.size else "no element")
    return src, dst, where + (f" of matrix {bz}" if batch > 1 else "")


def sample_blocks(grid) -> list[tuple]:
    """The last block of the grid and one in its middle; never block (0, 0, 0) unless it is the only one."""
    g = tuple(grid) + (1,) * (3 - len(grid))
    last, middle = tuple(x - 1 for x in g), tuple(x // 2 for x in g)
    return list(dict.fromkeys(b for b in (last, middle) if b != (0, 0, 0) or g == (1, 1, 1)))


def _dims(shape) -> tuple:
    return tuple(shape) if len(shape) == 3 else (1, *shape)


def _name(dims) -> str:
    return "x".join(map(str, dims[1:])) if dims[0] == 1 else f"{dims[0]} x {dims[1]}x{dims[2]}"


def _judge(ex, dims, block_id, read, written, want=None) -> tuple[str, str] | None:
    src, dst, where = tile_of(ex, dims, block_id)
    who = f"on a {_name(dims)} matrix, block {block_id} alone"
    got = np.fromiter(written, np.int64, len(written))
    if not got.size:
        return f"{who} wrote nothing; its tile is {where} of in ({src.size} elements)", SPREAD_HINT
    missing, extra = np.setdiff1d(dst, got).size, np.setdiff1d(got, dst).size
    if missing or extra:
        return (f"{who} wrote {got.size} elements of out: {extra} outside its tile ({where} of in) and "
                f"{missing} of the tile's {dst.size} not at all", SPREAD_HINT)
    if np.setdiff1d(read, src).size or np.setdiff1d(src, read).size:
        stray = np.setdiff1d(read, src).size
        return (f"{who} read {read.size} elements of in, {stray} of them outside its tile ({where})",
                "a block reads only its own tile of in: " + SPREAD_HINT)
    if want is not None and any(written[int(d)] != want[int(s)] for s, d in zip(src, dst)):
        return (f"{who} wrote its tile ({where}) with wrong values: it relies on what other blocks do",
                "a block must produce its tile by itself, from in alone: " + SPREAD_HINT)
    return None


def spread(ex, fn, dtype, seed=0, runs=None) -> list[tuple[str, str]]:
    """Every block of every run in `runs` ([(Shape, SimRun)] with owners): one whole tile each. Without
    such runs, sampled blocks of a non-square shape, each alone: its own tile, with the right values."""
    judged = [(on, run) for on, run in runs or () if getattr(run, "owners", None) and getattr(on, "tile", None)]
    if judged:
        p = one_tile_per_block()
        for on, run in judged:
            problem = blocks.one_tile(run, on)
            if problem:
                return [(f"on a {on} matrix, {problem}", p.hint_for(on))]
        return []
    shape = ex.shapes[1] if len(ex.shapes) > 1 else ex.shapes[0]
    a, on = input_for(ex, shape, dtype, seed + 100)
    dims = _dims(shape)
    grid, _ = ex.launch(on.rows, on.cols, on.batch)
    words = a.reshape(-1).view(np.dtype(f"V{a.itemsize}"))
    want = {i: bytes(words[i]) for i in range(words.size)}
    for b in sample_blocks(grid):
        read, written = run_block(fn, ex, dims, dtype, b, data=a, out=np.empty_like(expected(ex, a)))
        problem = _judge(ex, dims, b, read, written, want)
        if problem:
            return [problem]
    return []


def random_blocks(grid, fn, seed, k=2) -> list[tuple]:
    """`k` blocks of the grid drawn at random, seeded by the kernel's text and the check's seed."""
    g = tuple(grid) + (1,) * (3 - len(grid))
    rng = np.random.default_rng([zlib.crc32(fn.module.code.encode()), seed])
    return [tuple(int(rng.integers(0, n)) for n in g) for _ in range(k)]


def wide(ex, fn, dtype, seed=0) -> list[tuple[str, str]]:
    """Sampled blocks of a launch over ``ex.wide`` (more than 2^32 elements): each must move its own tile."""
    if not ex.wide:
        return []
    dims = _dims(ex.wide)
    name = _name(dims)
    big = f"on a {name} matrix ({int(np.prod(dims, dtype=np.int64)):,} elements, more than 2^32)"
    grid, _ = ex.launch(dims[1], dims[2], dims[0])
    for b in dict.fromkeys(sample_blocks(grid) + random_blocks(grid, fn, seed)):
        try:
            read, written = run_block(fn, ex, dims, dtype, b)
        except KernelError as exc:
            return [(f"{big}, block {b} stopped: {exc.message.splitlines()[0]}", exc.hint or WIDE_HINT)]
        problem = _judge(ex, dims, b, read, written)
        if problem:
            what = problem[0].replace(f"on a {name} matrix", big, 1)
            return [(what + ": an offset computed in 32 bits wrapped around", WIDE_HINT)]
    return []


def traffic(ex, runs) -> list[tuple[str, str]]:
    """Global loads and stores (atomics included) of every run against the bytes of in and out: each
    element moved once (``properties.each_element_once``)."""
    p = each_element_once()
    for on, run in runs:
        problem = p.test(run, on)
        if problem:
            return [(f"on a {on} matrix {problem}", p.hint_for(on))]
    return []

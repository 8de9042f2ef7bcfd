"""Findings and stop messages the executor raises or records, worded for a student.

- ``note_uninitialized``: a read of never-written shared memory becomes one Finding per
  source line, naming the array and element, and — when another block of the batch wrote
  that element of *its* copy — saying that shared memory is per block;
- ``limit_error``: an instruction budget or wall-clock stop inside a running loop names the loop
  (its first and last source lines) and a thread in it, or the recursion it was compiled from
  (``recursion``: how deep it got, the line of the recursive call, what a GPU's stack would do);
  a stop in straight-line code names the limit that was reached, with its value and how to raise it;
- ``divergent_barrier``, ``skipped_barrier``: threads of a block at different barriers, or some
  gone from the kernel while the others wait at one;
- ``stuck_mbarrier``: threads waiting (mbarrier.try_wait) for a phase that can no longer complete.

The executor decides *when*; this module only decides what to say.
"""
from __future__ import annotations

import numpy as np

from ...compile import ptx as ptxmod
from ...errors import BarrierError, SimulationLimit
from ..movement import mbarrier
from ..spaces.memory import SHARED_START
from . import recursion
from .finding import Finding

TILE_HINT = ("each element a thread reads must first be written by a thread of the same block, with a "
             "__syncthreads() in between: check that the code filling the array covers every element read "
             "later (a 32x8 block fills a 32x32 tile in 4 steps)")
PER_BLOCK_HINT = ("a block cannot see another block's __shared__ memory: let each block load (from global "
                  "memory) everything it reads, or exchange data through global memory in a second launch")


def note_uninitialized(program, b, slots, ins, addrs):
    key = ("uninitialized", ins.line or -ins.index)   # unrolled copies of one line: one finding
    if key in program.findings:
        program.findings[key].count += len(slots)
        return
    slot, addr = int(slots[0]), int(addrs[0])
    width = ptxmod.TYPES[ins.type][0] if ins.type in ptxmod.TYPES else 1
    what = "shared memory"
    for name, (off, size) in program.shared_vars.items():
        if off <= addr < off + max(size, 1):
            what = f"element {(addr - off) // width} of __shared__ '{name}' (counted flat)"
    message = f"reads {what}, which no thread of this block has written"
    hint = TILE_HINT
    others = writers_elsewhere(program, b, slot, addr)
    if others:
        message += (f"; block {others[0]} wrote its own copy of that element — shared memory is per "
                    f"block, each block has a private copy")
        hint = PER_BLOCK_HINT
    program.findings[key] = Finding("uninitialized", ins.line, message, len(slots), program.thread_of(b, slot),
                                    program.block_of(b, slot), hint=hint)


def writers_elsewhere(program, b, slot, addr):
    """Blocks of this batch that wrote the same shared element of their own copy."""
    r = b.races
    entry = (addr - SHARED_START) // r.granule
    if not 0 <= entry < r.per_block:
        return []
    written = np.flatnonzero(r.initialized.reshape(b.nblocks, r.per_block)[:, entry])
    mine = int(b.block_of[slot])
    return [program.block_coords(program.linear_block(b, int(k))) for k in written[:4] if k != mine]


def limit_error(program, b, cur, mask, elapsed) -> SimulationLimit:
    """The batch ran past max_steps or its timeout, stopped at instruction `cur`. Only a loop that
    is still running (the stop is inside a backward branch's body) is called a probable infinite
    loop, or a recursion when the loop is one NVRTC made of a recursive function; otherwise the
    message names the limit that was reached and how to raise it."""
    timed_out = b.steps <= program.max_steps
    blocks = f"{b.nblocks} block(s) of {program.threads_per_block} thread(s)"
    if timed_out:
        why = (f"after {elapsed:.1f} s of CPU time (timeout={program.timeout:g} seconds per batch, CPU time) its "
               f"batch of {blocks} was still running")
        raise_it = f"timeout={max(2 * program.timeout, 30):g}"
    else:
        why = (f"its batch of {blocks} executed more than max_steps={program.max_steps:,} instruction steps "
               f"(a step is one instruction over the threads at one PC)")
        raise_it = f"max_steps={max(4 * program.max_steps, 1_000_000):_}"
    live = np.flatnonzero(b.alive if mask is None else mask)
    slot = int(live[0]) if live.size else 0
    where = f"thread {program.thread_of(b, slot)} of block {program.block_of(b, slot)}"
    loop = running_loop(program, cur)
    if loop:
        message, line, hint = _looping(program, loop, why, where, raise_it)
    else:
        line = program.kernel.instructions[min(cur, len(program.kernel.instructions) - 1)].line
        message = (f"Stopped: {why}, in code that is not looping (line {line}): the kernel is long "
                   f"({len(program.kernel.instructions):,} PTX instructions; threads that take different "
                   "branches run one path after the other), not stuck.")
        hint = (f"pass {raise_it} to let it finish" + (", or simulate fewer threads at once: some blocks "
                "(blocks=[...]) or a smaller shape" if timed_out else ""))
    err = SimulationLimit(message, line=line or None, source_line=program.source_line(line),
                          filename=program.filename, thread=program.thread_of(b, slot),
                          block=program.block_of(b, slot), hint=hint)
    err.timed_out = timed_out
    err.reason = "loop" if loop else ("time" if timed_out else "steps")
    return err


def _looping(program, loop, why, where, raise_it):
    """(message, line, hint) for a stop inside a loop that is still running."""
    first, last, iterations = loop
    rec = recursion.enclosing(program.source, first, last)
    if rec is not None:
        call = rec.calls[0]
        message = (f"Stopped: {why} — a recursion at least {iterations:,} calls deep, not an ordinary loop: "
                   f"{rec.name}() (line {rec.first}) calls itself at line {call} and has not reached its base "
                   f"case ({where} is still in it). NVRTC compiled this recursion into a loop, which is why it "
                   f"got this far; a recursion it cannot turn into a loop takes a stack frame per call, and on "
                   f"a GPU a thread's stack (1 KiB by default) overflows after some tens or hundreds of calls and "
                   f"the kernel fails.")
        hint = (f"check that every call of {rec.name}() gets closer to the base case (n - 1, not n + 1; what "
                f"happens for n < 0?), and turn deep recursion into a loop; if it really is this deep and ends, "
                f"pass {raise_it}")
        return message, call, hint
    lines = f"line {first}" if first == last else f"lines {first}-{last}"
    message = (f"Stopped: {why} — probably an infinite loop: the loop at {lines} has run {iterations:,} times "
               f"and has not ended ({where} is still in it).")
    hint = ("check the loop's condition, and that its counter changes every iteration and moves towards "
            "the end (i += stride, not i + stride; no unsigned i >= 0); if the loop really runs this long, "
            f"pass {raise_it}")
    return message, first, hint


def running_loop(program, pc):
    """(first line, last line, iterations) of the most executed loop around instruction `pc`: a
    backward branch that has run and whose body [target, branch] holds `pc`; None outside loops."""
    best = None
    for ins in program.kernel.instructions:
        if ins.opcode != "bra" or not ins.operands:
            continue
        target = program.kernel.labels.get(ins.operands[0].name)
        if target is None or target > ins.index or not target <= pc <= ins.index:
            continue
        n = int(program.exec_counts[ins.index])
        if n and (best is None or n > best[0]):
            best = (n, target, ins.index)
    if best is None:
        return None
    n, lo, hi = best
    lines = [i.line for i in program.kernel.instructions[lo:hi + 1] if i.line]
    return (min(lines), max(lines), n) if lines else None


# ----------------------------------------------------------------------------- barriers

SYNC_HINT = ("every thread of a block must reach the same __syncthreads(); move it out of if/else "
             "branches that depend on threadIdx or on a bounds check")


def divergent_barrier(program, b, blk, p, w) -> BarrierError:
    """Threads of block `blk` wait at different barriers (p: PCs, w: waiting, per block)."""
    at = p[blk][w[blk]]
    groups = []
    for pc in np.unique(at):
        lanes = np.flatnonzero(w[blk] & (p[blk] == pc))
        ins = program.kernel.instructions[int(pc)]
        groups.append(f"{lanes.size} thread(s) at line {ins.line} (first: thread "
                      f"{program.thread_of(b, blk * b.tp + int(lanes[0]))})")
    ins = program.kernel.instructions[int(at.min())]
    first = int(np.flatnonzero(w[blk] & (p[blk] == at.min()))[0])
    return BarrierError(
        "Deadlock: threads of one block wait at different __syncthreads() barriers — "
        + "; ".join(groups) + ". On a GPU this hangs or silently mis-synchronises.",
        line=ins.line or None, source_line=program.source_line(ins.line), filename=program.filename,
        thread=program.thread_of(b, blk * b.tp + first), block=program.block_coords(program.linear_block(b, blk)),
        hint=SYNC_HINT)


def skipped_barrier(program, b, cur, blk, lanes) -> BarrierError:
    """`lanes` of block `blk` left the kernel, and the others are released from the barrier at `cur`."""
    code = program.kernel.instructions
    bar = code[cur]
    first = blk * b.tp + int(lanes[0])
    exit_pc = int(b.exit_pc[first])
    left = code[exit_pc]
    mine = slice(blk * b.tp, (blk + 1) * b.tp)
    waiting = int(((b.exit_pc[mine] < 0) & (b.tlin[mine] < program.threads_per_block)).sum())
    skip = _jump_over(program, cur, exit_pc)
    how = ""
    if skip is not None and skip.line != bar.line:
        text = _code(program.source_line(skip.line))
        how = f"branched around it at line {skip.line}" + (f" (`{text}`)" if text else "") + " and "
    if exit_pc >= len(code) - 1 or not left.line:     # the kernel's one shared `ret`
        how += "finished the kernel"
    else:
        text = _code(program.source_line(left.line))
        how += f"left the kernel at line {left.line}" + (f" (`{text}`)" if text else "")
    return BarrierError(
        f"Barrier skipped: {lanes.size} thread(s) of this block never reach the __syncthreads() on line "
        f"{bar.line} that the other {waiting} thread(s) wait at: they {how}. Every thread of a block must "
        "reach each __syncthreads() (CUDA Programming Guide: a barrier in conditional code only if the "
        "condition is the same for the whole block); on a GPU this can hang or release the others early.",
        line=bar.line or None, source_line=program.source_line(bar.line), filename=program.filename,
        thread=program.thread_of(b, first), block=program.block_coords(program.linear_block(b, blk)),
        hint="do not return early or put __syncthreads() inside an if that depends on the thread: let every "
             "thread run through the barrier and make only the loads and stores conditional "
             "(if (x < cols && y < rows) ...)")


def _code(line):
    """A source line as quoted in a message: its code, without a trailing // comment."""
    return " ".join((line or "").split("//")[0].split())


def _jump_over(program, bar_pc, exit_pc):
    """The executed conditional branch nearest before the barrier that jumps past it (towards the
    exit the skipping threads took): the `if` or early `return` that took them around it."""
    for ins in reversed(program.kernel.instructions[:bar_pc]):
        if ins.opcode != "bra" or ins.guard is None or not program.exec_counts[ins.index]:
            continue
        target = program.kernel.labels.get(ins.operands[0].name) if ins.operands else None
        if target is not None and bar_pc < target <= max(exit_pc, bar_pc + 1):
            return ins
    return None


def stuck_mbarrier(program, b, polling) -> BarrierError:
    """Threads in `polling` ({try_wait pc: mask}) wait for mbarrier phases, and nothing that runs can
    complete one: the arrivals or bytes those barriers still expect will never come."""
    pc = min(polling)
    slot = int(np.flatnonzero(polling[pc])[0])
    blk = int(b.block_of[slot])
    waiting = int(sum(int(m.reshape(b.nblocks, b.tp)[blk].sum()) for m in polling.values()))
    stuck = [s for s in (b.mbarriers.stuck() if b.mbarriers is not None else []) if s[0][0] == blk]

    def name_of(key):
        addr = key[1] & 0xFFFFFFFF
        var = next((n for n, (o, size) in program.shared_vars.items() if o <= addr < o + size), "")
        return f"the mbarrier at shared byte {addr - SHARED_START}" + (f" ('{var}')" if var else "")
    ins = program.kernel.instructions[pc]
    why = mbarrier.describe_stuck(stuck, name_of) if stuck else "no barrier of this block is in the middle of a phase"
    return BarrierError(
        f"Deadlock: {waiting} thread(s) of this block wait on an mbarrier for a phase that can never complete, "
        f"and no other thread of the block can run: {why}. On a GPU the kernel hangs.",
        line=ins.line or None, source_line=program.source_line(ins.line), filename=program.filename,
        thread=program.thread_of(b, slot), block=program.block_coords(program.linear_block(b, blk)),
        hint="every phase needs its init count of arrivals (one per thread that calls arrive, or the count given to "
             "init) and, with expect_tx, exactly the bytes its copies bring; a thread that returns early or waits "
             "at __syncthreads() while others wait on the barrier never arrives")

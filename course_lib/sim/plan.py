"""How a simulated launch is cut into batches of blocks, and whether it is worth starting.

- ``bytes_per_block``: what one block costs while its batch runs: the register arrays per thread
  slot (registers never live together share one), shared memory, the race detector's shadow of
  it, local memory, bookkeeping;
- ``blocks_per_batch``: as many blocks as fit both the thread budget (small batches stay in
  cache) and the memory budget (2048 blocks with 227 KB of dynamic shared memory each once
  took 10.5 GB, most of it the race detector's shadow);
- ``check_estimate`` refuses, before the first instruction, a launch whose estimated work
  (``cost.straight_line`` per batch, in thread-steps) is beyond ``max_work``, saying how long it
  would take and how to simulate a part of it; ``check_projection`` refuses, after the first
  batch, one whose measured instructions (``cost.executed``) project beyond it (loops);
  ``check_pace`` stops, after any batch, one whose CPU time so far projects beyond it: the model
  prices some instructions far below what they cost (an exact fma ~100 times its one step, a TMA
  copy), and a loop of them ran for minutes. A launch is thus stopped once its pace is known, at the
  latest when its CPU time reaches the limit, plus the batch then running (``timeout``, 8 s);
- ``room_for`` refuses, before anything is allocated, a simulation whose arrays would take more than
  ``MAX_BYTES`` (its callers count them: ``transposes`` for its matrices, the checker for its shapes);
  ``out_of_memory``: the SimulationLimit for a MemoryError that still happens.

``MAX_WORK`` is about 45 seconds of simulation on one core of the CI machine (``cost`` says what
a thread-step is); the measured pace is held to the same 45 s, or to ``max_work``'s time when that
is longer (the checker's small ``max_work`` is a model's budget, not a clock's). The executor runs;
this module only plans and words.
"""
from __future__ import annotations

import numpy as np

from ..errors import SimulationLimit
from . import cost
from .checks.races import RaceDetector
from .spaces.block_memory import row_bytes
from .spaces.host import size_text

BATCH_BYTES = 256 << 20        # memory one batch may hold
# host memory a simulation's matrices and working memory may take: a class hub gives a student 1 GiB, and
# Python, numpy, the course and a compiled kernel take about 200 MiB of it
MAX_BYTES = 768 << 20
SHRINK = "a kernel's metrics per request are the same on 1024 x 1024 as on 16384 x 16384"
MAX_SECONDS = 45
MAX_WORK = MAX_SECONDS * cost.STEPS_PER_SECOND     # thread-steps
PER_SLOT_BYTES = 96            # a batch's own arrays (block, thread, alive, exit ...) and temporaries
# the first batch runs slower than the rest (cold caches, state built on first use): padded_32x8's and
# fast's first batches at 8192 x 8192 took 2.7 times their launch's average (2026-12-05)
FIRST_BATCH_SLACK = 3.0


def bytes_per_block(program) -> int:
    slots = program.slots_per_block
    arrays = set(program.register_storage.key.values())       # registers share arrays (``registers``)
    per_slot = sum(1 if kind == "pred" else kind for kind, *_ in arrays) + PER_SLOT_BYTES
    per_slot += max(program.local_bytes, 8) if program.local_bytes else 0
    shared = row_bytes(program.shared_bytes)
    shadow = 0
    if program.check_races and program.shared_bytes:
        granule = program.race_granule()
        shadow = shared // granule * RaceDetector.bytes_per_entry(granule)
    return slots * per_slot + shared + shadow


def blocks_per_batch(program) -> int:
    by_threads = program.batch_threads // program.slots_per_block
    by_memory = program.batch_bytes // bytes_per_block(program)
    return max(1, min(by_threads, by_memory))


def _blocks_text(program, nblocks):
    if program.blocks is not None:
        return f"{nblocks:,} chosen block(s) (blocks=)"
    dims = [g for g in program.grid if g > 1]
    if len(dims) < 2:                      # a 1-D grid: "a grid of 2,147,483,647 blocks", said once
        return f"a grid of {nblocks:,} block{'s' if nblocks != 1 else ''}"
    return f"a grid of {' x '.join(map(str, dims))} = {nblocks:,} blocks"


def _duration(steps):
    s = cost.seconds(steps)
    if s < 10:
        return f"{s:.1f} seconds"
    if s < 120:
        return f"{s:.0f} seconds"
    return f"{s / 60:.0f} minutes" if s < 7200 else f"{s / 3600:.0f} hours"


def _limit(program, message, nblocks, limit=None) -> SimulationLimit:
    gx, gy, gz = program.grid
    sample = (f"blocks=[(0, 0, 0), ({gx - 1}, {gy - 1}, {gz - 1})] runs just the first and last blocks "
              "(any list of blocks works)" if program.blocks is None else "pass fewer blocks in blocks=[...]")
    limit = program.max_work if limit is None else limit
    err = SimulationLimit(
        message + f" The simulator's limit is max_work={limit:,.0f} thread-steps, about "
        f"{_duration(limit)} on one core.",
        hint=f"simulate a part of the launch: {sample}; or a smaller shape (a regular kernel's metrics per "
             "request are the same on a few tiles as on thousands); or pass a larger max_work= to wait longer")
    err.timed_out, err.reason = False, "work"
    return err


def estimate(program, nblocks, per_batch) -> float:
    """Thread-steps for the launch: each batch along the kernel's costliest path once, plus building it."""
    full, rest = divmod(nblocks, per_batch)
    steps = full * cost.straight_line(program.kernel, per_batch * program.slots_per_block)
    if rest:
        steps += cost.straight_line(program.kernel, rest * program.slots_per_block)
    return steps + cost.BUILD * len(program.kernel.instructions)


def check_estimate(program, nblocks, per_batch):
    """Before any instruction: the launch's estimated thread-steps against max_work."""
    work = estimate(program, nblocks, per_batch)
    if work > program.max_work:
        slots = nblocks * program.slots_per_block
        raise _limit(program, f"Not started: {_blocks_text(program, nblocks)} of {program.threads_per_block} "
                              f"thread(s) is {slots:,} thread slots (a block runs as whole warps of 32); "
                              f"running the kernel's {len(program.kernel.instructions)} PTX instructions "
                              f"over them would take about {_duration(work)} of simulation ({work:.2g} "
                              f"thread-steps; loops would make it longer).", nblocks)


def check_projection(program, b, nblocks):
    """After the first batch: the instructions it executed, scaled to the whole launch, against max_work."""
    if nblocks <= b.nblocks:
        return
    work = cost.executed(program.kernel, b.n, program.exec_counts) * nblocks / b.nblocks
    if work > program.max_work:
        raise _limit(program, f"Stopped after the first {b.nblocks:,} of {_blocks_text(program, nblocks)}: "
                              f"they executed {b.steps:,} instructions over {b.n:,} thread slots, so the whole "
                              f"launch would take about {_duration(work)} of simulation ({work:.2g} "
                              f"thread-steps).", nblocks)


def pace_limit(program) -> float:
    """The thread-steps a launch's measured CPU time is held to: max_work, and never under MAX_WORK."""
    return max(program.max_work, MAX_WORK)


def check_pace(program, done, total, spent, batches_run):
    """After a batch: the CPU time the launch took so far (`spent` seconds for `done` of `total` blocks),
    projected to the whole launch, against ``pace_limit``. The first batch gets ``FIRST_BATCH_SLACK``."""
    if done >= total:
        return
    work = spent * total / done * cost.STEPS_PER_SECOND
    allowed = pace_limit(program) * (FIRST_BATCH_SLACK if batches_run == 1 else 1)
    if work > allowed:
        estimated = estimate(program, total, blocks_per_batch(program))
        raise _limit(program, f"Stopped after the first {done:,} of {_blocks_text(program, total)} ({done / total:.0%}): "
                              f"they took {spent:.1f} s of CPU time, so at that pace the whole launch would take "
                              f"about {_duration(work)} of simulation ({work:.2g} thread-steps). Its instructions "
                              f"cost more than the simulator's estimate from the code ({_duration(estimated)}, "
                              f"loops once) says: a loop, or instructions simulated exactly at a high price "
                              f"(floating-point fma, tensor copies).", total, pace_limit(program))


def room_for(need: int, what: str, *, limit: int = MAX_BYTES, elsewhere: str = "",
             option: str | None = "max_bytes=") -> None:
    """Refuse, before anything is allocated, a simulation whose arrays (`what`, in words: 'a 100000 x 100000
    float32 matrix') would take `need` bytes, over `limit`. `elsewhere`: where else it can run ('t.run(a)'),
    for the hint; `option`: how to allow more (None: no way)."""
    if need <= limit:
        return
    gpu = f"; on a GPU, {elsewhere} runs it there" if elsewhere else ""
    more = f"; or pass {option} to allow more" if option else ""
    err = SimulationLimit(f"Not started: {what} needs about {size_text(need)} of memory here, over the "
                          f"simulator's limit of {size_text(limit)}",
                          hint=f"simulate a smaller shape: {SHRINK}{gpu}{more} (a class hub gives a student about "
                               "1 GiB in all)")
    err.timed_out, err.reason = False, "memory"
    raise err


def out_of_memory(program, per_batch) -> SimulationLimit:
    need = bytes_per_block(program) * per_batch
    races = " The race detector's shadow of shared memory is part of it: check_races=False drops it." \
        if program.check_races and program.shared_bytes else ""
    err = SimulationLimit(
        f"Out of memory: a batch of {per_batch} block(s) of {program.threads_per_block} thread(s) with "
        f"{program.shared_bytes:,} bytes of shared memory each needs about {need / 2**20:,.0f} MiB, more than "
        f"this machine could give.{races}",
        hint="simulate some blocks (blocks=[...]) or a smaller shape" + (", or pass check_races=False" if races else ""))
    err.timed_out, err.reason = False, "memory"
    return err


def batches(program, per_batch):
    """The batch specs the executor runs: (first, count) ranges, or lists of chosen block ids."""
    if program.blocks is None:
        total = int(np.prod(program.grid))
        return total, ((first, min(per_batch, total - first)) for first in range(0, total, per_batch))
    total = len(program.blocks)
    return total, (program.blocks[i:i + per_batch] for i in range(0, total, per_batch))

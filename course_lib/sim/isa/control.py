"""What a control instruction tells the scheduler: jump, leave the kernel, wait at a barrier, or wait
for an mbarrier's phase (a ``mbarrier.try_wait`` that failed).

An instruction's closure returns None to fall through to the next instruction, or one of these
outcomes; ``scheduler.Threads`` applies it to the threads that ran the instruction. ``threads``
and ``taken`` are boolean arrays over the batch's slots, or None for "every thread that ran it".
Nothing here decides anything: the classes only carry the facts from an instruction to the
scheduler.
"""
from __future__ import annotations


class Jump:
    """``bra``: the threads in ``taken`` continue at instruction ``target``, the others fall through."""
    __slots__ = ("taken", "target")

    def __init__(self, taken, target: int):
        self.taken, self.target = taken, target

    def apply(self, threads, pc, mask):
        threads.branch(pc, mask, self.taken, self.target)


class Exit:
    """``ret``/``exit`` (or running off the end of the code): these threads leave the kernel."""
    __slots__ = ("threads",)

    def __init__(self, leaving):
        self.threads = leaving

    def apply(self, threads, pc, mask):
        threads.leave(pc, mask, self.threads)


class Arrive:
    """``bar.sync``: these threads wait at the barrier until their block's other threads arrive."""
    __slots__ = ("threads",)

    def __init__(self, arriving):
        self.threads = arriving

    def apply(self, threads, pc, mask):
        threads.arrive(pc, mask, self.threads)


class Poll:
    """``mbarrier.try_wait`` that returned false for the threads in ``waiting``: they wait, at this
    instruction, until some mbarrier phase of the batch completes, then ask again (the others go on)."""
    __slots__ = ("threads",)

    def __init__(self, waiting):
        self.threads = waiting

    def apply(self, threads, pc, mask):
        threads.poll(pc, mask, self.threads)

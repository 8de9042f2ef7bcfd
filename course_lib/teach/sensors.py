"""Kernels that can tell where and when they run: refused by the checker.

    problem = reads_clock(fn)     # None, or (what, hint) naming the register and the line

A kernel that reads ``%clock``, ``%clock64``, ``%globaltimer`` (and its halves), or the SM and warp
it runs on (``%smid``, ``%nsmid``, ``%warpid``, ``%nwarpid``) can behave one way in the simulator
and another on a GPU — the simulator's clock and placement are not a GPU's — so a checker could be
shown a kernel other than the one that runs. The PTX of every function of the module is read,
so ``clock64()``, an ``asm`` statement and a helper function are all found.

Refused in self-study as well as in a graded run: a transpose's result has no use for time or
placement, a kernel accepted by the self-study checker and refused by the graded one would
confuse more than it helps, and a student who times a kernel does it outside the checked cell
(``%%cuda`` cells and ``Function.simulate`` still run such kernels). This module runs nothing.
"""
from __future__ import annotations

import re

_SENSOR = re.compile(r"%(clock64|clock_hi|clock|globaltimer_lo|globaltimer_hi|globaltimer|nsmid|smid|nwarpid|warpid)\b")
HINT = ("remove every read of the clock or of the SM and warp a thread runs on (clock(), clock64(), "
        "%globaltimer, %smid...) from the kernel you check: the result must come from in alone")


def reads_clock(fn) -> tuple[str, str] | None:
    """(what, hint) for the first read of a timer or placement register in `fn`'s module, or None."""
    module = fn.module.parsed
    kernels = [fn.kernel] + [k for k in module.kernels.values() if k is not fn.kernel]
    for kernel in kernels:
        for ins in kernel.instructions:
            m = _SENSOR.search(ins.text)
            if m:
                what = "timer" if m[1].startswith(("clock", "globaltimer")) else "placement"
                where = f" (line {ins.line})" if ins.line else ""
                return (f"{fn.name.split('<')[0]} reads the {what} register %{m[1]}{where}: a graded kernel's "
                        "result must not depend on time or placement, and the simulator's clock and SM are not a "
                        "GPU's", HINT)
    return None

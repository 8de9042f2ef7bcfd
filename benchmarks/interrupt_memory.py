"""What an interrupted simulation keeps in a notebook's kernel, against a finished one (issue 37's table).

    python benchmarks/interrupt_memory.py [--size 8192] [--after 9 8 3] [--root PATH] [--json FILE]

A real IPython kernel (jupyter_client, as JupyterLab runs one: tests/sim/live_kernel.py) imports
``--root``'s course_lib (this checkout by default; a ``git archive`` of an older commit for a before/after
table) and runs the issue's cells:

1. ``import numpy as np, course_lib as cl``, ``a = np.random.rand(N, N).astype(np.float32)``,
   ``k = cl.transposes.kernel('padded')``: "defined first";
2. ``for i in range(3): r = k.simulate(a)``, to the end (the first run compiles the kernel: NVRTC's library
   stays loaded, and that is most of this row's growth);
3. for each ``--after`` S: ``for i in range(50): r = k.simulate(a)``, stopped S seconds in by the kernel
   manager's ``interrupt_kernel()`` (SIGINT, what JupyterLab's stop button sends);
4. the issue's attempts to get the memory back: ``sys.last_*`` cleared (and IPython's ``InteractiveTB.tb``,
   which the issue did not know held it too), then glibc's ``malloc_trim(0)``.

After each cell the student's ``r = None; import gc; gc.collect()``, then the kernel process's resident set
(psutil). Each row says it against "defined first" and against the finished run; the issue's bar is an
interrupted run within 64 MiB of the finished one. The progress display is on (the default), so a run longer
than two seconds shows its bar. The machine's load changes the times, hence where the interrupt lands, not
what is kept. Linux (malloc_trim, RSS).
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "sim"))
from live_kernel import MiB, LiveKernel  # noqa: E402

FORGET = ("import sys; sys.last_type = sys.last_value = sys.last_traceback = None; "
          "get_ipython().InteractiveTB.tb = None")
TRIM = "import ctypes; ctypes.CDLL('libc.so.6').malloc_trim(0)"


def measure(root: Path, size: int, afters: list[float]) -> list[dict]:
    rows = []
    with LiveKernel(root) as kernel:
        def row(what, reply, seconds):
            assert kernel.run("r = None; import gc; gc.collect()")["status"] == "ok"
            rows.append(dict(what=what, rss=kernel.rss(), seconds=round(seconds, 1),
                             ended=reply["status"] if reply["status"] == "ok" else reply.get("ename")))
            print(f"  {what}: {rows[-1]['rss'] / MiB:.0f} MiB ({rows[-1]['ended']}, {seconds:.1f} s)", flush=True)

        def timed(what, cell, after=None):
            start = time.perf_counter()
            reply = kernel.run(cell) if after is None else kernel.interrupt_after(cell, after)
            row(what, reply, time.perf_counter() - start)

        timed("defined first", f"import numpy as np, course_lib as cl\n"
                               f"a = np.random.rand({size}, {size}).astype(np.float32)\n"
                               f"k = cl.transposes.kernel('padded')")
        timed("`for i in range(3): r = k.simulate(a)`, to the end", "for i in range(3): r = k.simulate(a)")
        for after in afters:
            timed(f"`for i in range(50): r = k.simulate(a)`, interrupted after {after:g} s",
                  "for i in range(50): r = k.simulate(a)", after)
        timed("then `sys.last_*` and `InteractiveTB.tb` cleared", FORGET)
        timed("then `malloc_trim(0)`", TRIM)
    return rows


def table(rows: list[dict]) -> str:
    base, finished = rows[0]["rss"], rows[1]["rss"]
    lines = ["| what the cell ran | after `r = None; gc.collect()` | against the finished run |", "|---|---|---|"]
    for r in rows:
        against = "" if r is rows[0] else f"{(r['rss'] - finished) / MiB:+.0f} MiB"
        lines.append(f"| {r['what']} | {r['rss'] / MiB:.0f} MiB ({(r['rss'] - base) / MiB:+.0f}) | {against} |")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=8192, help="N of the N x N float32 matrix (the issue's 8192)")
    parser.add_argument("--after", type=float, nargs="+", default=[9.0, 8.0, 3.0],
                        help="seconds into the loop at which to interrupt, one run each (the issue's 9 and 8; "
                             "3: in the first run, its progress bar just shown)")
    parser.add_argument("--root", type=Path, default=ROOT, help="the checkout whose course_lib the kernel imports")
    parser.add_argument("--json", type=Path, help="write the rows here as well")
    args = parser.parse_args()
    load = os.getloadavg()
    print(f"{args.root} at {args.size}x{args.size}, load {load[0]:.1f} {load[1]:.1f}", flush=True)
    rows = measure(args.root.resolve(), args.size, args.after)
    print(table(rows))
    if args.json:
        args.json.write_text(json.dumps(dict(root=str(args.root), size=args.size, load=load, rows=rows), indent=1))


if __name__ == "__main__":
    main()

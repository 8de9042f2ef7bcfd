"""What reading the machine code changes: the simulator's counts with SASS vs with the PTX alone.

    python benchmarks/ncu_compare.py --dry-run                 # every ncu_compare case
    python benchmarks/ncu_compare.py --dry-run --only fused    # the fused-access patterns

For each launch of benchmarks/ncu_compare.py it simulates the kernel twice: as the simulator
does now (NVRTC 13's PTX, counted per SASS instruction) and as it did before it read machine
code (CuPy's NVRTC 12.9 PTX, COURSE_LIB_SASS=0: one count per PTX access). It checks that both
produce the same output, and prints the launches whose metrics differ, with the fused SASS
instructions that explain the difference, then every launch whose kernel has a fused
instruction that changed nothing. No GPU needed; exit code 0 unless the outputs differ or the
machine code could not be matched somewhere.
"""
from __future__ import annotations

import os

import numpy as np

from course_lib import RawModule

_twins: dict = {}


def ptx_twin(fn):
    """The same kernel compiled as before machine code: CuPy's NVRTC, metrics of the PTX."""
    key = (id(fn.module), fn.name)
    if key not in _twins:
        m = fn.module
        before = os.environ.get("COURSE_LIB_SASS")
        os.environ["COURSE_LIB_SASS"] = "0"
        try:
            twin = RawModule(code=m.code, options=m.options, name_expressions=m.name_expressions,
                             filename=m.filename).compile()
        finally:
            if before is None:
                del os.environ["COURSE_LIB_SASS"]
            else:
                os.environ["COURSE_LIB_SASS"] = before
        _twins[key] = twin.get_function(fn.name)
    return _twins[key]


def _run(fn, grid, block, args, shared):
    run = fn.simulate(grid, block, args, shared_mem=shared, check_races=False, echo=False)
    return run, [np.asarray(a).copy() for a in args if isinstance(a, np.ndarray)]


def fused_instructions(run) -> list[str]:
    plan = run.machine
    if plan is None or plan.note:
        return []
    out = []
    for g in plan.fused_groups:
        lines = sorted({run.kernel.instructions[m].line for m in g.members})
        out.append(f"{g.sass[0].text} = {len(g.members)} PTX accesses (line {', '.join(map(str, lines))})")
    return out


def report(cases, launch_args, label, metrics, short) -> int:
    changed, quiet, bad = [], [], []
    for case in cases:
        fn, grid, block, args, shared = launch_args(case, np)
        run, out = _run(fn, grid, block, args, shared)
        fn0, grid, block, args0, shared = launch_args(case, np)
        run0, out0 = _run(ptx_twin(fn), grid, block, args0, shared)
        if any(a.tobytes() != b.tobytes() for a, b in zip(out, out0)):
            bad.append(f"{label(case)}: the two compilations' outputs differ")
        bad += [f"{label(case)}: {w}" for w in run.warnings if w.kind == "machine code"]
        diff = [f"{short[m]} {run0.metrics[m]}->{run.metrics[m]}" for m in metrics if run.metrics[m] != run0.metrics[m]]
        fused = fused_instructions(run)
        if diff:
            changed.append((label(case), diff, fused))
        elif fused:
            quiet.append((label(case), fused))
    print(f"\n{len(cases)} launches; metrics changed by reading the machine code in {len(changed)}:")
    for name, diff, fused in changed:
        print(f"  {name}: {', '.join(diff)}")
        for f in sorted(set(fused)):
            print(f"      {f}")
    print(f"\nfused or merged SASS accesses that change no metric ({len(quiet)} launches):")
    for name, fused in quiet:
        print(f"  {name}: {'; '.join(sorted(set(fused)))}")
    if bad:
        print("\nPROBLEMS:\n  " + "\n  ".join(bad))
    return 1 if bad else 0

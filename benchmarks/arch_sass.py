"""Do the course's memory counters depend on the GPU generation? Compare each kernel's machine code.

    python benchmarks/arch_sass.py --out benchmarks/results/cpu_2026-11-27_arch_sass

The simulator counts what an H100 counts: requests, sectors and wavefronts of the loads and stores
in the sm_90 machine code (ptxas may fuse neighbouring accesses into wider ones, sim/fusion.py).
The counting rules themselves are the same from Volta on (32-byte sectors, 128-byte lines, 32 banks
of 4 bytes, 16-byte accesses served a quarter-warp per wavefront: docs/memory-rules and the CUDA
programming guide's compute-capability appendix), so for a kernel the counters can differ between
generations only where ptxas emits different memory instructions. For every course kernel (the
default instance, every element size it takes) this compiles a CUBIN for sm_75, 80, 86, 89, 90,
100 and 120, lists its global and shared loads and stores (space, direction, width, in code order;
LDGSTS and bulk/TMA copies are named too) and reports, per architecture, "same", "same kinds" (the same loads and stores in another unrolling or
order: every request counts as on sm_90) or "other kinds" (a width or an instruction sm_90 does not
use). Writes OUT/arch_sass.json and OUT/arch_sass.md.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

from course_lib.compile import archs, sass
from course_lib.compile.nvrtc import entries_of
from course_lib.errors import CompileError
from course_lib.transposes import catalog, kernel

DTYPES = {1: np.uint8, 2: np.float16, 4: np.float32, 8: np.float64}
ASYNC = ("LDGSTS", "UBLKCP", "UTMALDG", "UTMASTG", "UBLKRED", "LDSM", "STSM", "MOVM")


def accesses(cubin: bytes, entry: str) -> list[str]:
    """The kernel's memory instructions in code order, as 'ld.global.16' (asynchronous copies by opcode)."""
    listing = sass.kernels(cubin)
    name = entry if entry in listing else next(iter(listing))
    out = []
    for ins in listing[name]:
        a = sass.access_of(ins.text)
        if a is not None and a.space in ("global", "shared"):
            out.append(f"{a.op}.{a.space}.{a.width}")
        elif ins.opcode.split(".")[0] in ASYNC:
            out.append(ins.opcode)
    return out


def compare(key: str, dtype) -> dict:
    fn = kernel(key, dtype).function
    per_arch, failed = {}, {}
    for sm in archs.ARCHS:
        try:
            c = fn.module.cubin_for(sm)
        except CompileError as exc:
            failed[sm] = exc.message.splitlines()[0]
            continue
        entry = c.lowered_names.get(fn.name) or entries_of(c.ptx)[0]
        per_arch[sm] = accesses(c.cubin, entry)
    ref = per_arch.get(90, [])
    verdict = {str(sm): _verdict(ref, acc) for sm, acc in per_arch.items() if sm != 90}
    return {"kernel": key, "dtype": np.dtype(dtype).name, "sm_90": ref, "verdict": verdict,
            "differs": {str(sm): acc for sm, acc in per_arch.items() if acc != ref},
            "refused": {str(k): v for k, v in failed.items()}}


def _verdict(ref: list, acc: list) -> str:
    """'same'; 'same kinds' (the same loads and stores, other unrolling or order: the per-request counts
    are the same); or 'other kinds: +... -...' (a width or an instruction sm_90 does not use, or the reverse)."""
    if acc == ref:
        return "same"
    if set(acc) == set(ref):
        return "same kinds"
    more, fewer = sorted(set(acc) - set(ref)), sorted(set(ref) - set(acc))
    return "other kinds: " + " ".join([f"+{a}" for a in more] + [f"-{a}" for a in fewer])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True)
    args = ap.parse_args(argv)
    rows = []
    for key, spec in {**catalog.SPECS, **catalog.DEMOS}.items():
        for size in spec.itemsizes:
            rows.append(compare(key, DTYPES[size]))
            r = rows[-1]
            other = {sm: v for sm, v in r["verdict"].items() if v.startswith("other")}
            print(f"{key:12s} {r['dtype']:8s} other kinds of access at: "
                  f"{'; '.join(f'sm_{sm} {v[12:]}' for sm, v in other.items()) or 'none'}"
                  + (f"; refused at {', '.join('sm_' + s for s in r['refused'])}" if r["refused"] else ""))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "arch_sass.json").write_text(json.dumps(rows, indent=1) + "\n")
    archs_ = [sm for sm in archs.ARCHS if sm != 90]
    lines = ["| kernel | dtype | " + " | ".join(f"sm_{sm}" for sm in archs_) + " |", "|---|---|" + "---|" * len(archs_)]
    for r in rows:
        cells = [r["verdict"].get(str(sm), "refused" if str(sm) in r["refused"] else "") for sm in archs_]
        lines.append(f"| {r['kernel']} | {r['dtype']} | " + " | ".join(cells) + " |")
    (out / "arch_sass.md").write_text("\n".join(lines) + "\n")
    for group in ((75, 80, 86, 89), (100, 120)):
        other = [(r["kernel"], r["dtype"]) for r in rows
                 if any(r["verdict"].get(str(sm), "").startswith("other") for sm in group)]
        print(f"sm_{'/'.join(map(str, group))}: {len(rows) - len(other)} of {len(rows)} kernel instances use the "
              f"same kinds of loads and stores as on sm_90; other kinds: {', '.join(f'{k} {d}' for k, d in other)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

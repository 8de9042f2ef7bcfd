"""On a newer GPU, pretend to be an older one ("older card" mode) and run every course kernel.

    COURSE_LIB_BACKEND=gpu python benchmarks/older_card_check.py --arch 75 --out DIR

For each course kernel (its default instance, 4-byte elements where it takes them) on a 200 x 264
random matrix with a poisoned output: with ``COURSE_LIB_ARCH=<arch>`` the course compiles PTX for
compute_<arch> (the driver JIT-compiles it, as on that card) after ptxas for sm_<arch> accepted it,
or sends the launch to the simulator with one line. The check: every element right, and the
kernel simulated exactly where the capability table (course_lib/notebook/capability.json) says
the card cannot run it. Writes DIR/older_<arch>.json and prints one line per kernel.
"""
from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import sys
from pathlib import Path


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--arch", type=int, required=True)
    ap.add_argument("--out", default=".")
    args = ap.parse_args(argv)
    os.environ["COURSE_LIB_ARCH"] = str(args.arch)
    import cupy as cp
    import numpy as np

    from course_lib.notebook import capability
    from course_lib.transposes import catalog, kernel
    from course_lib.transposes.data import poisoned, random_matrix
    table, rows, bad = capability.stored()["kernels"], {}, 0
    for key, spec in {**catalog.SPECS, **catalog.DEMOS}.items():
        dtype = {4: np.float32, 2: np.float16, 1: np.uint8, 8: np.float64}[4 if 4 in spec.itemsizes else spec.itemsizes[0]]
        t = kernel(key, dtype)
        a = random_matrix(256, 320, dtype, 3)
        out = cp.asarray(poisoned(t.out_shape(*a.shape), a.dtype))
        said = io.StringIO()
        try:
            with contextlib.redirect_stdout(said):
                t.run(cp.asarray(a), out)
                cp.cuda.runtime.deviceSynchronize()
            right = bool(np.array_equal(out.get(), t.expected(a)))
            error = ""
        except Exception as exc:            # reported, not raised: the table shows every kernel
            right, error = False, f"{type(exc).__name__}: {str(exc).splitlines()[0]}"
        simulated = "simulated as an H100" in said.getvalue()
        expect_sim = table[key]["sm"] > args.arch
        ok = right and simulated == expect_sim
        bad += not ok
        rows[key] = dict(right=right, simulated=simulated, table_says_simulated=expect_sim, ok=ok,
                         said=said.getvalue().strip(), error=error)
        print(f"{key:12s} sm_{args.arch}: {'ok ' if ok else 'BAD'} right={right} simulated={simulated} "
              f"{said.getvalue().strip()[:110]} {error[:110]}")
    Path(args.out).mkdir(parents=True, exist_ok=True)
    (Path(args.out) / f"older_{args.arch}.json").write_text(json.dumps(rows, indent=1) + "\n")
    print(f"sm_{args.arch}: {len(rows) - bad} of {len(rows)} kernels right and routed as the table says")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

"""Every exercise's solution, for every variant, checked with the GPU run switched on: the simulator's verdict,
then every shape again on the GPU (``runs.run_on_gpu``: the same random inputs, every written buffer compared).

    python benchmarks/gpu_exercises_check.py                      # every exercise with a solution here
    python benchmarks/gpu_exercises_check.py --keys inplace,aos_split

One line per (exercise, variant): "ok" once the checker passed and said "correct on the GPU too", else the
report. Exit 1 on any failure, 2 without a GPU. For the exercises whose kernel is not the course's
``(out, in, rows, cols)`` (the in-place transpose: square shapes 1x1 to 1000x1000; the three-array split:
1 to 4097 points), this is the hardware check the simulator cannot make for itself. GPU step ``exercises``
of benchmarks/gpu_session.sh.
"""
from __future__ import annotations

import argparse
import sys
import time

sys.path.insert(0, __file__.rsplit("/benchmarks/", 1)[0])

from course_lib import gpu  # noqa: E402
from course_lib.kernel.module import RawModule  # noqa: E402
from course_lib.teach import exercises as E, solutions, spec, variants  # noqa: E402
from course_lib.teach.exercise_list import folder  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--keys", default="", help="comma-separated exercise keys (default: every one with a solution)")
    args = ap.parse_args()
    if not gpu.available():
        print("no GPU here: this check needs one")
        return 2
    keys = [k for k in args.keys.split(",") if k] or solutions.keys()
    failed = 0
    for key in keys:
        defaults = spec.defaults(spec.read(folder(key)))
        for i, v in enumerate([{}] + variants.declared(key)):
            params = {**defaults, **v}
            ex = spec.load(folder(key), params)
            start = time.perf_counter()
            module = RawModule(code=solutions.body(key, params), options=("-std=c++17",))
            with solutions.self_study():
                report = E.check(ex, module.get_function(ex.kernel), gpu=True)
            ok = report.ok and "correct on the GPU too" in repr(report)
            failed += not ok
            name = ex.variant or "default"
            print(f"{key:16s} {name:48s} {'ok' if ok else 'FAILED'} ({time.perf_counter() - start:.1f} s)")
            if not ok:
                print(repr(report))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

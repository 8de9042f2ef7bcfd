"""How long a student waits for a checker: every exercise's check (its solution and its stub) and
every debug task's check, on the simulator, as a notebook cell runs them (compilation excluded; the
%%cuda cell compiled the kernel already). Best of `--repeat` runs, seconds.

    python benchmarks/check_speed.py [--repeat 3]
"""
import argparse
import os
import platform
import time

os.environ.setdefault("COURSE_LIB_BACKEND", "sim")

from course_lib.teach import debug, exercises, solutions
from course_lib.notebook import magic  # noqa: E402


def best(f, repeat):
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        f()
        times.append(time.perf_counter() - t0)
    return min(times)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    print(f"{platform.node()} ({os.cpu_count()} CPUs), {time.strftime('%Y-%m-%d')}, best of {args.repeat}, seconds")
    print(f"{'check':24s} {'shapes':>6s} {'solution':>9s} {'stub':>7s}")
    for key in solutions.keys():
        ex = exercises.get(key)
        fns = [magic.compile_cell("", src)[1][ex.kernel] for src in (solutions.body(key), solutions.stub(key))]
        t = [best(lambda fn=fn: exercises.check(ex, fn, gpu=False), args.repeat) for fn in fns]
        print(f"{key:24s} {len(ex.shapes):6d} {t[0]:9.2f} {t[1]:7.2f}")
    for key, task in debug.TASKS.items():
        fn = magic.compile_cell("", task.source())[1][task.kernel]
        t = best(lambda: debug.check(key, fn, gpu=False), args.repeat)
        print(f"{'debug ' + key:24s} {len(task.exercise.shapes):6d} {'':9s} {t:7.2f}")


if __name__ == "__main__":
    main()

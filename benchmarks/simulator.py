"""How fast is the simulator? The figures issue 3 asks for, measured in one run.

    python benchmarks/simulator.py [--skip-numba] [--json FILE]

1. 2048x2048 float32, padded 32x33 tile, 32x8 block, full metrics and race/initialisation
   checks: seconds on one core and peak memory (measured in a fresh subprocess).
2. Cost linear in threads: the same kernel at 512², 1024², 2048² (µs per thread).
3. 1024² (what a notebook slider re-runs) in seconds.
4. Against Numba's CUDA simulator (NUMBA_ENABLE_CUDASIM=1, one OS thread per CUDA thread) on
   the same 256x256 padded transpose, in the same run: the speed-up.
Needs numba only for (4): ``pip install numba``.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import textwrap
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

ONE_RUN = textwrap.dedent("""
    import json, resource, sys, time
    import numpy as np
    sys.path.insert(0, {root!r})
    from course_lib import transposes
    n = int(sys.argv[1])
    t = transposes.kernel("padded_32x8", np.float32)
    a = transposes.random_matrix(n, n, np.float32)
    t.simulate(transposes.random_matrix(64, 64, np.float32))     # compile + warm caches
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    times = []
    for _ in range(int(sys.argv[2])):  # median of a few runs: steadier than one
        start = time.perf_counter()
        out, run = t.simulate(a)
        times.append(time.perf_counter() - start)
    seconds = sorted(times)[len(times) // 2]
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    assert np.array_equal(out, a.T)
    assert run.ratio("shared", "ld") == 1.0 and not run.races
    print(json.dumps(dict(n=n, seconds=seconds, peak_mb=peak / 1024, grew_mb=(peak - before) / 1024)))
""")

NUMBA_RUN = textwrap.dedent("""
    import json, os, sys, time
    os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
    import numpy as np
    from numba import cuda, float32
    TILE, ROWS = 32, 8

    @cuda.jit
    def padded(out, inp, rows, cols):
        tile = cuda.shared.array((TILE, TILE + 1), float32)
        x = cuda.blockIdx.x * TILE + cuda.threadIdx.x
        y = cuda.blockIdx.y * TILE + cuda.threadIdx.y
        for j in range(0, TILE, ROWS):
            if x < cols and y + j < rows:
                tile[cuda.threadIdx.y + j, cuda.threadIdx.x] = inp[y + j, x]
        cuda.syncthreads()
        x = cuda.blockIdx.y * TILE + cuda.threadIdx.x
        y = cuda.blockIdx.x * TILE + cuda.threadIdx.y
        for j in range(0, TILE, ROWS):
            if x < rows and y + j < cols:
                out[y + j, x] = tile[cuda.threadIdx.x, cuda.threadIdx.y + j]

    n = int(sys.argv[1])
    a = (np.random.default_rng(0).random((n, n)) + 0.5).astype(np.float32)
    out = np.zeros_like(a)
    start = time.perf_counter()
    padded[(n // TILE, n // TILE), (TILE, ROWS)](out, a, n, n)
    seconds = time.perf_counter() - start
    assert np.array_equal(out, a.T)
    print(json.dumps(dict(n=n, seconds=seconds)))
""")


def run_child(code, *args):
    proc = subprocess.run([sys.executable, "-c", code, *map(str, args)], capture_output=True, text=True,
                          env=dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1"))
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr[-2000:])
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--skip-numba", action="store_true")
    p.add_argument("--json", help="write the figures here")
    a = p.parse_args()
    res = {}
    for n in (512, 1024, 2048):
        r = run_child(ONE_RUN.format(root=ROOT), n, 1)
        res[n] = r
        print(f"{n:5d}²  {r['seconds']:6.2f} s  {r['seconds'] / (n * n / 4) * 1e6:6.3f} µs/thread  "
              f"peak RSS {r['peak_mb']:7.0f} MB", flush=True)
    print(f"\n2048² padded 32x33, block 32x8, full metrics and checks: {res[2048]['seconds']:.2f} s "
          f"(target ≤ 2 s), peak RSS {res[2048]['peak_mb']:.0f} MB (target ≤ 2048 MB)")
    print(f"1024²: {res[1024]['seconds']:.2f} s (target ≤ 0.5 s)")
    if not a.skip_numba:
        try:
            ours = run_child(ONE_RUN.format(root=ROOT), 256, 5)
            numba = run_child(NUMBA_RUN, 256)
            res["numba_256"], res["ours_256"] = numba, ours
            print(f"256²: Numba's CUDA simulator {numba['seconds']:.2f} s, this simulator {ours['seconds']:.3f} s (median of 5) "
                  f"-> {numba['seconds'] / ours['seconds']:.0f}x faster (target ≥ 300x)")
        except RuntimeError as exc:
            print(f"Numba comparison skipped: {str(exc).strip().splitlines()[-1]}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({str(k): v for k, v in res.items()}, f, indent=1)


if __name__ == "__main__":
    main()

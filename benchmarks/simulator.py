"""How fast is the CPU simulator, and how much memory does a simulation take? Measured in one run.

    python benchmarks/simulator.py [--runs 5] [--estimates] [--big] [--skip-numba] [--root PATH] [--json FILE]

Every simulation runs in a fresh child process (``python -c``), after a 64x64 warm-up in that
child (compiling the kernel, reading its machine code), and the figure is the median over
``--runs`` children:

1. the padded 32x33 tile transpose (course kernel ``padded_32x8``, float32, block 32x8) with full
   metrics and race/initialisation checks, at 1024x1024 and 2048x2048;
2. the same kernel written in a ``%%cuda`` cell (``notebook.magic.compile_cell``), same sizes;
3. the naive one-thread-per-element transpose of notebook 00 (``%%cuda first_transpose``, block
   32x8) at 1024x1024 and 2048x2048;
4. cost per thread of (1) at 512², 1024², 2048² (is it linear?); with ``--big``, (3) once at
   16384x16384 as well (two 1 GiB arrays; the issue's 88-second launch);
5. with ``--estimates``: the up-front estimate the simulator refuses launches by
   (``course_lib.sim.plan.estimate``) against the CPU time of course kernels, one child each;
6. unless ``--skip-numba`` and if numba is installed: Numba's CUDA simulator on the same 256²
   padded transpose, for scale.

CPU time is user + system time of the child during the ``simulate`` call (the simulator uses one
core); wall time is the same call by the clock. On a shared machine compare CPU times, and look
at the load averages printed at the start and end.

"Peak memory" is the child process's resident-set high-water mark (``VmHWM`` in
``/proc/self/status``) over the ``simulate`` call, the mark reset just before the call (``5`` into
``/proc/self/clear_refs``). It includes what was resident then: Python, numpy, course_lib, NVRTC's
library after compiling, the input and output arrays (2 x 4 MiB at 1024², 2 x 16 MiB at 2048²;
the output is allocated by the call). "Own" is that peak minus the resident set just before the
call: what the simulation itself added. Linux only.

``--root PATH`` measures another checkout's course_lib (main's, for a before/after table); the
estimates need this branch's ``course_lib.sim.cost``.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import textwrap

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

PADDED_CELL = r"""
#define TILE 32
#define BLOCK_ROWS 8
__global__ void padded(float* out, const float* in, int rows, int cols)
{
    __shared__ float t[TILE][TILE + 1];
    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += BLOCK_ROWS)
        if (x < cols && y + j < rows)
            t[threadIdx.y + j][threadIdx.x] = in[(size_t)(y + j) * cols + x];
    __syncthreads();
    x = blockIdx.y * TILE + threadIdx.x;
    y = blockIdx.x * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += BLOCK_ROWS)
        if (x < rows && y + j < cols)
            out[(size_t)(y + j) * rows + x] = t[threadIdx.x][threadIdx.y + j];
}
"""

FIRST_TRANSPOSE = r"""
__global__ void first_transpose(float* out, const float* in, int rows, int cols)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < cols && y < rows)
        out[x * rows + y] = in[y * cols + x];
}
"""

ONE_RUN = textwrap.dedent("""
    import json, resource, sys, time
    sys.path.insert(0, sys.argv[1])
    import numpy as np
    from course_lib import transposes
    from course_lib.notebook.magic import compile_cell
    case, n = sys.argv[2], int(sys.argv[3])
    if case == "course":
        k = transposes.kernel("padded_32x8", np.float32)
    else:
        cell = {cells!r}[case]
        name = "padded" if case == "cuda" else "first_transpose"
        k = transposes.as_kernel(compile_cell("", cell)[1][name], block=(32, 8), tile=32 if case == "cuda" else None)
    a = np.empty((n, n), np.float32)                      # filled in strips: no large temporaries
    for i in range(0, n, 256):
        a[i:i + 256] = transposes.random_matrix(min(256, n - i), n, np.float32, seed=i)
    k.simulate(transposes.random_matrix(64, 64, np.float32))     # compile, machine code, warm caches
    status = lambda key: int(next(l for l in open("/proc/self/status") if l.startswith(key)).split()[1]) / 1024
    open("/proc/self/clear_refs", "w").write("5")              # the high-water mark starts here
    base = status("VmRSS:")
    r0, t0 = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
    out, run = k.simulate(a)
    wall, r1 = time.perf_counter() - t0, resource.getrusage(resource.RUSAGE_SELF)
    peak = status("VmHWM:")
    assert all(np.array_equal(out[i:i + 256], a[:, i:i + 256].T) for i in range(0, n, 256)), "wrong transpose"
    if case != "naive":
        assert run.ratio("shared", "ld") == 1.0 and not run.races
    print(json.dumps(dict(case=case, n=n, cpu=r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime,
                          user=r1.ru_utime - r0.ru_utime, sys=r1.ru_stime - r0.ru_stime, wall=wall,
                          minflt=r1.ru_minflt - r0.ru_minflt, peak_mb=peak, base_mb=base, own_mb=peak - base)))
""").replace("{cells!r}", repr({"cuda": PADDED_CELL, "naive": FIRST_TRANSPOSE}))

ESTIMATE_RUN = textwrap.dedent("""
    import json, resource, sys
    sys.path.insert(0, sys.argv[1])
    import numpy as np
    from course_lib import transposes
    from course_lib.sim import cost, executor, plan
    key, dt, rows, cols = sys.argv[2], np.dtype(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
    seen = {}
    check = plan.check_estimate
    def keep(program, nblocks, per_batch):
        seen["estimate"] = cost.seconds(plan.estimate(program, nblocks, per_batch))
        return check(program, nblocks, per_batch)
    plan.check_estimate = keep
    k = transposes.kernel(key, dt)
    a = transposes.random_matrix(rows, cols, dt)
    k.simulate(transposes.random_matrix(64, 64, dt))
    r0 = resource.getrusage(resource.RUSAGE_SELF)
    k.simulate(a)
    r1 = resource.getrusage(resource.RUSAGE_SELF)
    cpu = r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime
    print(json.dumps(dict(kernel=key, dtype=dt.name, shape=[rows, cols], cpu=cpu, estimate=seen["estimate"])))
""")

ESTIMATED = [("padded_32x8", "float32", 2048, 2048), ("padded_32x8", "float64", 2000, 2030),
             ("naive_row", "float32", 2048, 2048), ("naive_col", "float32", 2048, 2048),
             ("copy", "float32", 2048, 2048), ("tile", "float32", 2048, 2048), ("unrolled", "float32", 2048, 2048),
             ("rect", "float32", 2048, 2048), ("swizzle", "float32", 2048, 2048), ("vec", "float32", 2048, 2048),
             ("vec_out", "uint8", 2048, 2048), ("packed", "uint8", 2048, 2048), ("fast", "float32", 2048, 2048),
             ("warp", "float32", 2048, 2048), ("sector", "float16", 1024, 1024)]

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


def machine() -> dict:
    model = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")), "?")
    import numpy
    return dict(cpu=model, cores=os.cpu_count(), python=platform.python_version(), numpy=numpy.__version__,
                system=platform.platform(), load=os.getloadavg())


def measure(root, case, n, runs):
    rows = [run_child(ONE_RUN, root, case, n) for _ in range(runs)]
    med = {k: statistics.median(r[k] for r in rows) for k in ("cpu", "wall", "peak_mb", "own_mb", "minflt")}
    return dict(case=case, n=n, runs=rows, **med)


def report(r):
    print(f"  {r['case']:7s} {r['n']:5d}²  CPU {r['cpu']:6.3f} s  wall {r['wall']:6.3f} s  "
          f"peak {r['peak_mb']:5.0f} MB (own {r['own_mb']:4.0f} MB)  {r['cpu'] / (r['n'] ** 2) * 1e9:5.1f} ns/element",
          flush=True)


def estimates(root):
    print("\nUp-front estimate against CPU time (one child each):", flush=True)
    out = []
    for key, dt, rows, cols in ESTIMATED:
        e = run_child(ESTIMATE_RUN, root, key, dt, rows, cols)
        out.append(e)
        print(f"  {key:12s} {dt:8s} {rows}x{cols}: estimate {e['estimate']:6.2f} s, CPU {e['cpu']:6.2f} s, "
              f"ratio {e['estimate'] / e['cpu']:4.2f}", flush=True)
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--runs", type=int, default=5, help="children per figure (the median is reported)")
    p.add_argument("--root", default=ROOT, help="the checkout whose course_lib to measure")
    p.add_argument("--estimates", action="store_true", help="also the up-front estimate against CPU time")
    p.add_argument("--big", action="store_true", help="also the naive transpose at 16384x16384, once (2 GiB of arrays)")
    p.add_argument("--skip-numba", action="store_true")
    p.add_argument("--json", help="write every figure here")
    a = p.parse_args()
    res = dict(machine=machine(), root=os.path.abspath(a.root), runs=a.runs, results=[])
    print(f"{res['machine']['cpu']}, {res['machine']['cores']} cores; load {res['machine']['load']}; "
          f"course_lib from {res['root']}", flush=True)
    for case in ("course", "cuda", "naive"):
        for n in (1024, 2048):
            res["results"].append(measure(a.root, case, n, a.runs))
            report(res["results"][-1])
    res["results"].append(measure(a.root, "course", 512, a.runs))
    report(res["results"][-1])
    if a.big:
        res["results"].append(measure(a.root, "naive", 16384, 1))
        report(res["results"][-1])
    if a.estimates:
        res["estimates"] = estimates(a.root)
    if not a.skip_numba:
        try:
            numba = run_child(NUMBA_RUN, 256)
            ours = measure(a.root, "course", 256, a.runs)
            res["numba_256"], res["ours_256"] = numba, ours
            print(f"256²: Numba's CUDA simulator {numba['seconds']:.2f} s, this simulator {ours['wall']:.3f} s "
                  f"-> {numba['seconds'] / ours['wall']:.0f}x faster")
        except RuntimeError as exc:
            print(f"Numba comparison skipped: {str(exc).strip().splitlines()[-1]}")
    res["load_after"] = os.getloadavg()
    print(f"load at the end {res['load_after']}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(res, f, indent=1)


if __name__ == "__main__":
    main()

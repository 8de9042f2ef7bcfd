"""On a real GPU: the simulator's assert/trap diagnoses against what CUDA does (issue 10).

    python benchmarks/gpu_diagnoses_check.py

Steps (each prints PASS/FAIL/INFO; the script exits 0 and takes well under a minute):
1. a failed device assert, launched unguarded in a child process (it kills that CUDA context):
   the line CUDA prints is the one AssertionFailed quotes (file:line, function, block, thread);
2. __trap() and NVRTC's null-load trap, unguarded in child processes: which CUDA error the
   launch gives (INFO: the messages say "the launch fails and the CUDA context is lost");
3. the guarded launch refuses both before they run, and the context stays usable;
4. a passing assert gives the same output as the kernel without it;
5. a corrupted CUBIN in the compile cache is recompiled and launches;
6. a read-only numpy array for a non-const pointer and a big-endian array are ArgumentErrors on
   the GPU path too (nothing is launched).
"""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import textwrap

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

import numpy as np  # noqa: E402

os.environ.pop("COURSE_LIB_BACKEND", None)
import course_lib as cl  # noqa: E402

SRC = r'''
extern "C" __global__ void checked_scale(float* out, const float* in, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    assert(i < n);
    out[i] = 2.0f * in[i];
}
extern "C" __global__ void stop_on_negative(float* out, const float* in)
{
    int i = threadIdx.x;
    if (in[i] < 0.0f) __trap();
    out[i] = in[i];
}
extern "C" __global__ void through_null(float* out)
{
    float* p = nullptr;
    out[threadIdx.x] = p[threadIdx.x];
}
extern "C" __global__ void plain_scale(float* out, const float* in, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = 2.0f * in[i];
}
'''

CHILD = textwrap.dedent('''
    import sys, numpy as np
    sys.path.insert(0, {root!r})
    import course_lib as cl, cupy as cp
    src = {src!r}
    k = cl.RawModule(code=src, filename="cell.cu").get_function({name!r})
    x = np.random.default_rng(0).random(256).astype(np.float32) + 0.5
    x[37] = -1.0
    args = {{"checked_scale": lambda: (np.zeros(256, np.float32), x, np.int32(200)),
            "stop_on_negative": lambda: (np.zeros(64, np.float32), x[:64]),
            "through_null": lambda: (np.zeros(32, np.float32),)}}[{name!r}]()
    launch = {{"checked_scale": (2, 128), "stop_on_negative": (1, 64), "through_null": (1, 32)}}[{name!r}]
    try:
        k(*launch, args, guard=False)
        cp.cuda.runtime.deviceSynchronize()
        print("NO ERROR")
    except Exception as e:
        print("CUDA ERROR:", type(e).__name__, e)
    sys.stdout.flush()
''')


def child(name):
    code = CHILD.format(root=ROOT, src=SRC, name=name)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    return r.stdout + r.stderr


def report(ok, text):
    print(("PASS " if ok else "FAIL ") + text, flush=True)


def main():
    if not cl.gpu_available():
        print("INFO no GPU: nothing to check")
        return
    mod = cl.RawModule(code=SRC, filename="cell.cu")
    x = np.random.default_rng(0).random(256).astype(np.float32) + 0.5

    # 1. the assert line, simulator vs CUDA
    try:
        mod.get_function("checked_scale").simulate(2, 128, (np.zeros(256, np.float32), x, np.int32(200)))
        report(False, "1. the simulator did not stop the failing assert")
    except cl.AssertionFailed as err:
        quoted = next(line.strip() for line in err.message.splitlines() if "Assertion `" in line and "block: [" in line)
        printed = child("checked_scale")
        cuda_lines = [ln.strip() for ln in printed.splitlines() if "Assertion `" in ln]
        report(quoted in cuda_lines, f"1. CUDA printed {len(cuda_lines)} assertion line(s); the simulator's is "
                                     f"{'among them' if quoted in cuda_lines else 'NOT among them'}:\n     sim:  {quoted}\n"
                                     f"     cuda: {cuda_lines[0] if cuda_lines else printed.strip()[:300]}")
        report(len(cuda_lines) == 56, f"1b. {len(cuda_lines)} threads printed it (the simulator said 56 failed together)")

    # 2. traps, unguarded
    for name in ("stop_on_negative", "through_null"):
        out = child(name)
        print(f"INFO 2. {name} unguarded: {out.strip().splitlines()[-1] if out.strip() else '(no output)'}", flush=True)

    # 3. the guard refuses them, and the context stays usable
    x2 = x.copy()
    x2[37] = -1.0
    for name, launch, args, cls in (
            ("checked_scale", (2, 128), (np.zeros(256, np.float32), x, np.int32(200)), cl.AssertionFailed),
            ("stop_on_negative", (1, 64), (np.zeros(64, np.float32), x2[:64]), cl.KernelTrap),
            ("through_null", (1, 32), (np.zeros(32, np.float32),), cl.KernelTrap)):
        try:
            mod.get_function(name)(*launch, args)
            report(False, f"3. {name} was launched")
        except cls as err:
            report(getattr(err, "refused", False), f"3. {name} refused: {err.message.splitlines()[1][:100]}")
    out = np.zeros(256, np.float32)
    mod.get_function("checked_scale")(2, 128, (out, x, np.int32(256)))
    report(bool((out == 2 * x).all()), "3b. a correct launch after the refusals works (context usable)")

    # 4. a passing assert changes nothing
    ref = np.zeros(256, np.float32)
    mod.get_function("plain_scale")(2, 128, (ref, x, np.int32(256)))
    report(bool((out == ref).all()), "4. passing assert: same output as without it")

    # 5. a corrupted CUBIN in the cache
    from course_lib.compile import cache, nvrtc
    arch, major = cl.gpu.info().arch, cl.gpu.driver_major()
    with tempfile.TemporaryDirectory() as tmp:
        cache.CACHE_DIR = __import__("pathlib").Path(tmp)
        cache.memory.clear()
        first = nvrtc.compile_source(SRC, arch=arch, want_cubin=True, max_major=major)
        (blob,) = [p for p in cache.CACHE_DIR.iterdir() if p.suffix == ".cubin"]
        blob.write_bytes(first.cubin[:100])
        cache.memory.clear()
        again = nvrtc.compile_source(SRC, arch=arch, want_cubin=True, max_major=major)
        fresh = cl.RawModule(code=SRC + "\n// fresh\n", filename="cell.cu").get_function("plain_scale")
        out2 = np.zeros(256, np.float32)
        fresh(2, 128, (out2, x, np.int32(256)))
        report(again.cubin == first.cubin and bool((out2 == 2 * x).all()),
               "5. truncated CUBIN recompiled; launches from a fresh cache work")

    # 6. argument misreads on the GPU path
    frozen = np.zeros(256, np.float32)
    frozen.setflags(write=False)
    for what, args in (("read-only out", (frozen, x, np.int32(256))),
                       ("big-endian in", (np.zeros(256, np.float32), x.astype(">f4"), np.int32(256)))):
        try:
            mod.get_function("plain_scale")(2, 128, args)
            report(False, f"6. {what} was launched")
        except cl.ArgumentError as err:
            report(True, f"6. {what}: {err.message[:90]}")


if __name__ == "__main__":
    try:
        main()
    except Exception as exc:  # report, never crash the session script
        import traceback
        traceback.print_exc()
        print(f"FAIL unexpected {type(exc).__name__}: {exc}")

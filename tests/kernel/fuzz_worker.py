"""The child process of the fuzz test (tests/kernel/test_fuzz.py): runs one case per line of stdin
through the public API and answers one JSON line on the stdout it was started with.

A case is plain JSON made by the parent's hypothesis strategies:

- ``{"kind": "module", "code", "options", "names", "get", "launch": {...} | null, "expect": {...} | null}``:
  ``RawModule(code=, options=, name_expressions=)``, ``get_function(get)``, then, with ``launch``,
  ``Function.simulate(grid, block, args, shared_mem=)`` under small simulator limits; with ``expect``
  (an unmutated kernel of the grammar), the output array is compared with numpy's answer;
- ``{"kind": "magic", "line", "cell"}``: ``%%cuda``'s ``compile_cell`` (and ``parse_line``).

Answers: ``ok``; ``error`` (a course_lib KernelError: its type and hint); ``raw`` (any other exception,
with its traceback); ``wrong`` (ran, but the output is not numpy's). The parent sees a crash (a
segfault in NVRTC, say) as the end of this process. This file is not a test module (no ``test_``).
"""
import json
import os
import sys
import traceback

import numpy as np

# the protocol owns the real stdout; anything course_lib prints goes to stderr
_PROTOCOL = os.fdopen(os.dup(1), "w")
os.dup2(2, 1)

import course_lib  # noqa: E402  (after the stdout swap: importing may print)
from course_lib.errors import KernelError  # noqa: E402
from course_lib.notebook import magic  # noqa: E402

POISON = -1000
LIMITS = dict(max_steps=5_000, max_work=14e9, timeout=20.0)   # max_work: about 2 s of simulation (sim.cost)


def value(v):
    """JSON -> Python: {"np": dtype, "v": x} is a numpy scalar, lists are tuples (grid and block)."""
    if isinstance(v, dict) and "np" in v:
        return np.dtype(v["np"]).type(v["v"])
    if isinstance(v, list):
        return tuple(value(x) for x in v)
    return v


def make_arg(spec, rng):
    """One kernel argument from its spec: an array ("in" data or "poison"), or a scalar."""
    if "array" not in spec:
        return value(spec["scalar"])
    dt = np.dtype(spec["array"])
    n = spec["n"]
    a = rng.integers(-50, 51, size=n).astype(dt) if spec["fill"] == "in" else np.full(n, POISON).astype(dt)
    layout = spec.get("layout", "C")
    if layout == "2d":
        a = a.reshape(1, n)
    elif layout == "F":                      # a transposed view: not contiguous
        a = np.tile(a, (2, 1)).T
    elif layout == "strided":
        a = np.repeat(a, 2)[::2]
    elif layout == "readonly":
        a.flags.writeable = False
    elif layout == "list":
        return a.tolist()
    elif layout == "bigendian":
        a = a.astype(dt.newbyteorder(">"))
    return a


def expected(exp, args, grid, block):
    """What the grammar's kernel writes: out[i] = in[i] * a + b for the indices its guard allows."""
    src, out, n = args[exp["in"]].reshape(-1), args[exp["out"]].reshape(-1), int(args[exp["n"]])
    g = grid if isinstance(grid, tuple) else (grid,)
    b = block if isinstance(block, tuple) else (block,)
    threads = int(g[0]) * int(b[0])
    count = {"if": min(n, threads), "return": min(n, threads), "none": threads, "loop": n}[exp["guard"]]
    want = np.full(out.shape, POISON).astype(out.dtype)
    k = max(count, 0)
    if k > out.size or k > src.size:
        return None                          # the kernel must have faulted: success is wrong
    want[:k] = (src[:k].astype(np.int64) * exp["a"] + exp["b"]).astype(out.dtype)
    return want


def run_module(case):
    mod = course_lib.RawModule(code=value(case["code"]), options=value(case["options"]),
                               name_expressions=value(case["names"]))
    fn = mod.get_function(value(case["get"]))
    launch = case.get("launch")
    if launch is None:
        return {"outcome": "ok"}
    rng = np.random.default_rng(launch.get("seed", 0))
    args = [make_arg(s, rng) for s in launch["args"]]
    grid, block = value(launch["grid"]), value(launch["block"])
    passed = value(launch["not_a_tuple"]) if "not_a_tuple" in launch else args
    fn.simulate(grid, block, passed, shared_mem=value(launch["shared_mem"]), progress=False, echo=False, **LIMITS)
    exp = case.get("expect")
    if exp is None:
        return {"outcome": "ok"}
    want = expected(exp, args, grid, block)
    got = args[exp["out"]].reshape(-1)
    if want is None or not np.array_equal(got, want):
        bad = "the launch ran though it writes past the arrays" if want is None else (
            f"{int(np.sum(got != want))} of {got.size} elements differ; first at "
            f"{int(np.argmax(got != want))}: got {got[np.argmax(got != want)]}, want {want[np.argmax(got != want)]}")
        return {"outcome": "wrong", "detail": bad}
    return {"outcome": "ok"}


def run_magic(case):
    magic.parse_line(case["line"])
    _, names = magic.compile_cell(case["line"], case["cell"])
    magic.describe(names)
    return {"outcome": "ok"}


def run(case):
    if case["kind"] == "segfault":           # the harness's own check: a crash must come back as one
        import ctypes
        ctypes.string_at(0)
    try:
        return (run_magic if case["kind"] == "magic" else run_module)(case)
    except KernelError as exc:
        return {"outcome": "error", "type": type(exc).__name__, "hint": exc.hint or "", "message": str(exc)[:600]}
    except Exception as exc:  # noqa: BLE001 - exactly what the fuzz test looks for
        return {"outcome": "raw", "type": type(exc).__name__, "message": str(exc)[:600],
                "traceback": traceback.format_exc()[-3000:]}


def main():
    print(f"fuzz worker: course_lib from {course_lib.__file__}", file=sys.stderr)
    for line in sys.stdin:
        result = run(json.loads(line))
        _PROTOCOL.write(json.dumps(result, default=str) + "\n")
        _PROTOCOL.flush()


if __name__ == "__main__":
    main()

"""Property-based fuzz of the public API (issue 26 item 7), slow tier: whatever a student types,
the answer is a correct result or a course_lib error with a hint, never a crash or a raw exception.

Inputs: kernels from a small grammar of valid CUDA (out[i] = in[i] * A + B in one of eight bodies:
four bounds guards, static or dynamic shared memory, a barrier some threads skip, an endless loop
when n < 0; plain or a template; five element types) with mutations (a deleted character or token,
swapped tokens, a misspelt keyword, a stray character, a repeated line) so that compile errors and
runtime faults both occur; NVRTC options; name expressions; grids, blocks and dynamic shared memory
from valid to absurd; argument lists with wrong counts, types, dtypes, layouts and sizes; and
``%%cuda`` lines with random flags. An unmutated kernel that runs must write exactly numpy's
answer where its guard lets it, and leave the poison elsewhere.

Every case runs in one child process (``fuzz_worker.py``), so NVRTC segfaulting on some text fails
the example with its input instead of killing pytest; the child is restarted after a crash. The
simulator's own limits (steps, work) bound each run; the harness only kills a child that answers
nothing for HANG_S seconds, and reports that as a hang, never as a timing. Examples are
derandomized so CI sees the same cases; ``COURSE_LIB_FUZZ=500`` explores 500 random ones per test,
``COURSE_LIB_FUZZ_SURVEY=file`` records every answer there instead of stopping at the first failure.
"""
import json
import os
import re
import select
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, example, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(sys.platform == "win32", reason="the harness selects on a pipe")]

WORKER = Path(__file__).with_name("fuzz_worker.py")
ROOT = Path(__file__).resolve().parents[2]
HANG_S = 300
RANDOM = int(os.environ.get("COURSE_LIB_FUZZ", "0"))


def fuzz(n):
    return settings(max_examples=RANDOM or n, deadline=None, database=None, derandomize=not RANDOM,
                    suppress_health_check=list(HealthCheck), print_blob=False)


class Worker:
    """One child running fuzz_worker.py; :meth:`run` answers a case, or says how the child died."""

    def __init__(self, folder):
        self.folder = folder
        self.proc = None

    def _start(self):
        # the script's folder, not the cwd, leads sys.path: put this checkout's course_lib first
        path = os.pathsep.join([str(ROOT)] + [p for p in [os.environ.get("PYTHONPATH")] if p])
        env = dict(os.environ, COURSE_LIB_CACHE=str(self.folder / "cache"), COURSE_LIB_BACKEND="sim",
                   PYTHONPATH=path)
        self.err = open(self.folder / "stderr.txt", "w+")
        self.proc = subprocess.Popen([sys.executable, str(WORKER)], cwd=ROOT, env=env, text=True,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.err)

    def run(self, case) -> dict:
        if self.proc is None or self.proc.poll() is not None:
            self._start()
        try:
            self.proc.stdin.write(json.dumps(case) + "\n")
            self.proc.stdin.flush()
        except BrokenPipeError:
            return self._died()
        if not select.select([self.proc.stdout], [], [], HANG_S)[0]:
            self.proc.kill()
            return {**self._died(), "outcome": "hang"}
        line = self.proc.stdout.readline()
        return json.loads(line) if line else self._died()

    def _died(self):
        rc = self.proc.wait()
        self.err.seek(0)
        tail = self.err.read()[-1500:]
        self.proc = None
        return {"outcome": "crash", "rc": rc, "stderr": tail}

    def close(self):
        if self.proc is not None:
            self.proc.stdin.close()
            self.proc.wait(timeout=60)


@pytest.fixture(scope="module")
def worker():
    with tempfile.TemporaryDirectory() as folder:
        w = Worker(Path(folder))
        yield w
        w.close()


SURVEY = os.environ.get("COURSE_LIB_FUZZ_SURVEY")     # a file: record every answer there, assert nothing


def judge(worker, case):
    """The property: a correct result, or a course_lib error whose hint is not empty."""
    r = worker.run(case)
    shown = json.dumps(case)
    if SURVEY:
        with open(SURVEY, "a") as f:
            f.write(json.dumps(dict(result=r, input=case)) + "\n")
        return r
    assert r["outcome"] in ("ok", "error"), f"{r['outcome']}: {json.dumps(r)[:3500]}\ninput: {shown}"
    if r["outcome"] == "error":
        assert r["hint"].strip(), f"{r['type']} without a hint: {r['message']}\ninput: {shown}"
    return r


# ----------------------------------------------------------------------------- kernels

CTYPES = {"float": "float32", "double": "float64", "int": "int32", "unsigned int": "uint32", "short": "int16"}
BODIES = {
    "if": "    if (i < n) out[i] = in[i] * A + B;\n",
    "return": "    if (i >= n) return;\n    out[i] = in[i] * A + B;\n",
    "none": "    out[i] = in[i] * A + B;\n",
    "loop": "    for (int j = i; j < n; j += blockDim.x * gridDim.x)\n        out[j] = in[j] * A + B;\n",
    "shared": "    __shared__ T s[S];\n    if (i < n) s[threadIdx.x] = in[i];\n    __syncthreads();\n"
              "    if (i < n) out[i] = s[threadIdx.x] * A + B;\n",
    # sized by shared_mem= at launch: too few bytes is an out-of-bounds access
    "extern": "    extern __shared__ unsigned char raw[];\n    T* s = reinterpret_cast<T*>(raw);\n"
              "    if (i < n) s[threadIdx.x] = in[i];\n    __syncthreads();\n"
              "    if (i < n) out[i] = s[threadIdx.x] * A + B;\n",
    "spin": "    while (n < 0) { }\n    if (i < n) out[i] = in[i] * A + B;\n",          # endless when n < 0
    "barrier": "    if (i < n) __syncthreads();\n    if (i < n) out[i] = in[i] * A + B;\n",  # some threads skip it
}
SAME_AS_IF = ("shared", "extern", "spin", "barrier")
KEYWORDS = ["template", "typename", "__global__", "__shared__", "__syncthreads", "blockIdx", "threadIdx",
            "blockDim", "gridDim", "int", "void", "return", "if", "for", "const", "float", "double", "unsigned"]


@st.composite
def grammar_kernels(draw):
    """A valid kernel: its source, the name to ask for, and what numpy says it computes."""
    ctype = draw(st.sampled_from(sorted(CTYPES)))
    a, b = draw(st.sampled_from([1, 2, 3, -1])), draw(st.sampled_from([0, 1, -2]))
    guard = draw(st.sampled_from(sorted(BODIES)))
    template, const = draw(st.booleans()), draw(st.booleans())
    name = draw(st.sampled_from(["k", "scale", "axpb"]))
    body = BODIES[guard].replace("[S]", f"[{draw(st.sampled_from([32, 64, 256]))}]").replace("B;", f"{b};")
    head = "template <typename T, int A>\n" if template else ""
    src = (f"{head}__global__ void {name}({'const ' if const else ''}T* in, T* out, int n)\n{{\n"
           f"    int i = blockIdx.x * blockDim.x + threadIdx.x;\n{body}}}\n")
    if not template:
        src = re.sub(r"\bA\b", str(a), re.sub(r"\bT\b", ctype, src))
    if draw(st.booleans()):      # a neighbour the module also defines
        src = "__device__ int twice(int x) { return 2 * x; }\n" + src
    return dict(src=src, name=name, get=f"{name}<{ctype}, {a}>" if template else name, template=template,
                dtype=CTYPES[ctype], const=const,
                expect=dict(a=a, b=b, guard="if" if guard in SAME_AS_IF else guard, **{"in": 0, "out": 1, "n": 2}))


def _typo(word, draw):
    i = draw(st.integers(0, len(word) - 1))
    how = draw(st.sampled_from(["drop", "swap", "double", "replace"]))
    if how == "drop":
        return word[:i] + word[i + 1:]
    if how == "swap" and i + 1 < len(word):
        return word[:i] + word[i + 1] + word[i] + word[i + 2:]
    if how == "double":
        return word[:i] + word[i] + word[i:]
    return word[:i] + draw(st.sampled_from("aeiourtyx_1")) + word[i + 1:]


@st.composite
def mutated(draw, src, header=False):
    """The source with one mistake a student makes; with `header`, in the template's first line
    (where NVRTC 12.9 and 13.0 crashed on a misspelt 'typename' once a name expression was added)."""
    tokens = re.findall(r"\w+|[^\w\s]|\s+", src)
    solid = [i for i, t in enumerate(tokens) if not t.isspace()]
    if header:
        end = next(i for i, t in enumerate(tokens) if t == ">")
        solid = [i for i in solid if i <= end and "template" in tokens[:i + 1]]
    how = draw(st.sampled_from(["delete_token", "swap_tokens", "typo", "typo"] if header else
                               ["delete_char", "delete_token", "swap_tokens", "typo", "typo", "insert",
                                "duplicate_line", "paste"]))
    if how == "paste":           # copied from slides or a UTF-16 file; '\ud800' is half a UTF-16 pair
        i = draw(st.integers(0, len(src)))
        return src[:i] + draw(st.sampled_from(["\u201c", "\u2019", "\u00a0", "\u2014", "\u00b5", "\x00",
                                               "\ud800"])) + src[i:]
    if how == "delete_char":
        i = draw(st.integers(0, len(src) - 1))
        return src[:i] + src[i + 1:]
    if how == "insert":
        i = draw(st.integers(0, len(src)))
        return src[:i] + draw(st.sampled_from(list(";{}()<>*&,.[]#\"'/\\=-+"))) + src[i:]
    if how == "duplicate_line":
        lines = src.splitlines(keepends=True)
        i = draw(st.integers(0, len(lines) - 1))
        return "".join(lines[:i + 1] + lines[i:])
    k = draw(st.sampled_from(solid))
    if how == "delete_token":
        tokens[k] = ""
    elif how == "swap_tokens":
        j = solid[min(solid.index(k) + 1, len(solid) - 1)]
        tokens[k], tokens[j] = tokens[j], tokens[k]
    else:
        words = sorted({tokens[i] for i in solid if tokens[i] in KEYWORDS})    # each word as likely
        word = draw(st.sampled_from(words)) if words else None
        k = draw(st.sampled_from([i for i in solid if tokens[i] == word] if word else solid))
        tokens[k] = _typo(tokens[k], draw)
    return "".join(tokens)


OPTIONS = ["-std=c++17", "-std=c++14", "--use_fast_math", "-lineinfo", "-G", "-default-device",
           "-maxrregcount=32", "--fmad=false", "-O3", "--bogus", "-arch=sm_80", "-DA=2", "-Dn=0", "", "-I", "-std="]


def bad_names(k):
    n = k["name"]
    return st.sampled_from([n, f"{n}<float>", f"{n}<flot, 2>", f"{n}<<", "", "missing", f"{n}<float, 2, 3>",
                            f"{n}<float, x>", f"q<int>", f"{n}<double, 1>", "k<", ">", f"{n}<int, -1>"])


# ----------------------------------------------------------------------------- launches

EDGE_DIMS = [0, -1, 1025, 2**31 - 1, 2**31, [1, 65536], [1, 1, 65], [32, 33], [2, 0], 1.5, "4", None, True,
             [], [1, 2, 3, 4], {"np": "int64", "v": 4}, {"np": "float32", "v": 2.0}, [2**31 - 1, 65535]]


def dims(xs):
    good = st.one_of(st.sampled_from(xs), st.tuples(st.sampled_from(xs), st.sampled_from([1, 2])))
    return st.one_of(good, good, good, st.sampled_from(EDGE_DIMS))


SHARED = [0, 0, 0, 1024, 48 * 1024, 227 * 1024, 227 * 1024 + 1, 10**12, -1, 1.5, "0", None, True]
DTYPES = ["float32", "float64", "int32", "uint32", "int16", "int64", "uint8", "bool", "complex64", "object"]
LAYOUTS = ["C", "2d", "F", "strided", "readonly", "list", "bigendian"]
N_VALUES = [{"np": "int64", "v": 5}, {"np": "int16", "v": 3}, 3.0, 3.5, "3", None, 2**40, True, [3],
            {"np": "float32", "v": 4.0}, float("nan"), -7]


@st.composite
def launches(draw, k):
    """Grid, block, shared memory and arguments for grammar kernel `k`; `expect` survives only the
    changes that keep the arguments in place."""
    size = draw(st.sampled_from([0, 1, 31, 100, 257]))
    n = draw(st.one_of(st.just(size), st.integers(-3, 300)))
    args = [dict(array=k["dtype"], n=size, fill="in"), dict(array=k["dtype"], n=size, fill="poison"),
            dict(scalar=n)]
    expect = k["expect"]
    how = draw(st.sampled_from(["none"] * 4 + ["count", "dtype", "layout", "n", "not_a_tuple"]))
    if how == "count":
        args = draw(st.sampled_from([args[:2], args + [dict(scalar=1)], []]))
        expect = None
    elif how == "dtype":
        args[draw(st.sampled_from([0, 1]))]["array"] = draw(st.sampled_from(DTYPES))
    elif how == "layout":
        args[draw(st.sampled_from([0, 1]))]["layout"] = draw(st.sampled_from(LAYOUTS))
    elif how == "n":
        args[2]["scalar"] = draw(st.sampled_from(N_VALUES))
    launch = dict(grid=draw(dims([1, 2, 3, 5])), block=draw(dims([1, 7, 32, 64, 96, 256])),
                  shared_mem=draw(st.sampled_from(SHARED)), args=args, seed=draw(st.integers(0, 9)))
    if how == "not_a_tuple":
        launch["not_a_tuple"] = draw(st.sampled_from([5, None, "abc", {"np": "int32", "v": 1}]))
    return launch, expect


@st.composite
def module_cases(draw):
    """A grammar kernel, maybe with one mistake, NVRTC options, name expressions and a launch."""
    k = draw(grammar_kernels())
    src = draw(st.one_of(st.just(k["src"]), mutated(k["src"], header=k["template"] and draw(st.booleans()))))
    options = draw(st.lists(st.sampled_from(OPTIONS), max_size=2))
    names = [k["get"]] if k["template"] and draw(st.booleans()) else []
    get = draw(st.one_of(st.just(k["get"]), bad_names(k))) if draw(st.booleans()) else k["get"]
    names += draw(st.lists(bad_names(k), max_size=1))
    launch, expect = draw(launches(k))
    clean = src == k["src"] and get == k["get"] and not any(o.startswith("-D") for o in options)
    return dict(kind="module", code=src, options=options, names=names, get=get, launch=launch,
                expect=expect if clean else None)


@st.composite
def launch_cases(draw):
    """A valid grammar kernel and a launch of it, from correct to absurd."""
    k = draw(grammar_kernels())
    launch, expect = draw(launches(k))
    return dict(kind="module", code=k["src"], options=[], names=[], get=k["get"], launch=launch, expect=expect)


@st.composite
def magic_cases(draw):
    """A %%cuda line of random flags over a grammar kernel's cell, maybe with one mistake."""
    k = draw(grammar_kernels())
    cell = draw(st.one_of(st.just(k["src"]), mutated(k["src"], header=k["template"] and draw(st.booleans()))))
    words = ["-DTILE=32", "-D", "TILE=4", "-q", "--quiet", "--std=c++17", "-std=c++14", "--use_fast_math",
             "-O3", "--bogus", "'", '"', "=", "123", "-DA=1", "-D'X=1'", "--name", "mod", "-n", "--name=m",
             "-i", f"'{k['get']}'", f"x={k['get']}", f"--instantiate={k['get']}", "'k<float,'", "=k",
             f"{k['name']}=", "--instantiate", "-i=", "\\", "#", "-Dn=(", "--define", "Q"]
    return dict(kind="magic", line=" ".join(draw(st.lists(st.sampled_from(words), max_size=5))), cell=cell)


# what killed the notebook's process before nvrtc_lib checked a source alone first (NVRTC 12.9/13.0)
TYPO_IN_TEMPLATE = "template <trowpename T, int N> __global__ void k(T* a) { a[0] = N; }"
NO_TYPE_NAME = "template <typename , int A>\n__global__ void k(T* in, T* out, int n) { out[0] = in[0]; }"


@given(case=module_cases())
@example(case=dict(kind="module", code=TYPO_IN_TEMPLATE, options=[], names=["k<float, 3>"], get="k<float, 3>",
                   launch=None))
@example(case=dict(kind="module", code=NO_TYPE_NAME, options=[], names=["k<float, 1>"], get="k<float, 1>",
                   launch=None))
@fuzz(80)
def test_mutated_kernels_options_and_names_compile_run_or_say_why(worker, case):
    judge(worker, case)


@given(case=launch_cases())
@fuzz(120)
def test_launches_with_random_grids_blocks_shared_memory_and_arguments(worker, case):
    judge(worker, case)


@given(case=magic_cases())
@example(case=dict(kind="magic", line='-i "k=k<float, 3>"', cell=TYPO_IN_TEMPLATE))
@fuzz(60)
def test_cuda_magic_lines_with_random_flags(worker, case):
    judge(worker, case)


def test_the_harness_reports_a_crash_and_goes_on(worker):
    r = worker.run({"kind": "segfault"})
    assert r["outcome"] == "crash" and r["rc"] == -11
    cell = "__global__ void k(float* a) { a[threadIdx.x] = 1; }\n"
    assert worker.run(dict(kind="magic", line="-q", cell=cell))["outcome"] == "ok"      # a new child

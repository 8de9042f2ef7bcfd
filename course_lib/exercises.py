"""Exercises: a kernel the student completes in a ``%%cuda`` cell, and a checker that explains.

    ex = exercises.get("shared_tile")
    ex                                        # what to write, how it is launched, what is checked
    exercises.check(ex, transpose_tile)       # last line of the cell after the student's %%cuda cell
    exercises.check("shared_tile")            # the same: finds `transpose_tile` in the notebook

An :class:`Exercise` is a spec: the kernel's name (contract ``T* out, const T* in, int rows,
int cols``), its launch (block, and the tile one block covers, so grid = ceil(cols / tile_x),
ceil(rows / tile_y)), the shapes to try and the properties the lesson is about. ``check`` runs
the kernel in the simulator (and on the GPU when there is one) on random data with a poisoned
output, compares every element, then tests the properties on the first shape. It answers with a
:class:`Report`: each problem with a hint, or a short success line. It never raises for a wrong
kernel; a KernelError from the simulator (out of bounds, barrier misuse) becomes a problem.

Solutions stay out of student notebooks by markers inside the cell (see docs/NOTEBOOK_API.md)::

    // BEGIN SOLUTION
    //> int x = /* TODO */ 0;                 <- the stub line the student gets ('//> ' removed)
    int x = blockIdx.x * 32 + threadIdx.x;    <- the instructor's solution (removed)
    // END SOLUTION

:func:`strip_solutions` is the one implementation of that convention; build tools call it.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from . import nvrtc, verify
from .backend import CellKernel
from .errors import KernelError
from .transposes import C_TYPE, poisoned, random_matrix

WORD = {"ld": "loads", "st": "stores"}


# ---------------------------------------------------------------------------- properties

@dataclass(frozen=True)
class Property:
    """A requirement on the simulated run: `test(run)` returns a problem description, None
    (satisfied) or False (nothing to judge, e.g. no shared access at all: not listed as passed)."""
    name: str
    test: Callable
    hint: str


def _rows(run, space, op):
    return [r for r in run.instructions if r["space"] == space and r["requests"] and (op is None or r["op"] == op)]


def _each(space, op, problem):
    """A test that applies `problem(row)` to every instruction of (space, op); False if none."""
    def test(run):
        rows = _rows(run, space, op)
        return next((p for p in map(problem, rows) if p), None) if rows else False
    return test


def coalesced(op: str) -> Property:
    """Global loads/stores touch no more sectors per request than the access width needs
    (4-byte elements: 4 sectors per 32 lanes; 16-byte vectors: 16)."""
    def problem(r):
        ratio, ideal = r["sectors"] / r["requests"], max(1, r["width"])
        return ratio > ideal and (f"the global {WORD[op]} on line {r['line']} touch {ratio:.1f} sectors per "
                                  f"request; {ideal} would be coalesced ({r['width']}-byte accesses by a warp)")
    side = "read rows of in" if op == "ld" else "write rows of out"
    return Property(f"global {WORD[op]} coalesced", _each("global", op, problem),
                    f"consecutive threads (threadIdx.x) must {side}: let threadIdx.x pick the column")


def no_bank_conflicts(op: str | None = None) -> Property:
    """Shared loads/stores (or both) with zero bank conflicts."""
    def test(run):
        if not _rows(run, "shared", op):
            return False
        bad = {}
        for r in _rows(run, "shared", op):
            if r["conflicts"]:
                b = bad.setdefault((r["line"], r["op"]), [0, 0, 0])
                b[0] += r["wavefronts"]
                b[1] += r["requests"]
                b[2] += r["conflicts"]
        return "; ".join(f"the shared {WORD[o]} on line {n} cost {w / q:.1f} wavefronts per request ({c} bank "
                         f"conflicts in all)" for (n, o), (w, q, c) in sorted(bad.items())) or None
    return Property(f"no bank conflicts on shared {WORD.get(op, 'loads and stores')}", test,
                    "threads of a warp reading a column hit one bank: pad each row of the tile "
                    "([32][32 + 1]) so that consecutive rows start in different banks")


def no_races() -> Property:
    def test(run):
        return f"{run.races[0]}" if run.races else (None if _rows(run, "shared", None) else False)
    return Property("no races on shared memory", test,
                    "every thread must wait until the whole tile is written before reading it: "
                    "__syncthreads() between the two phases")


def uses_shared() -> Property:
    def test(run):
        return None if _rows(run, "shared", None) else "the kernel never touches shared memory"
    return Property("stages the tile in shared memory", test,
                    "declare __shared__ float tile[32][32]; write it from in, then read it to write out")


def vector_width(nbytes: int = 16, op: str | None = None) -> Property:
    """Every global load/store (or those of `op`) moves at least `nbytes` per thread."""
    def problem(r):
        return r["width"] < nbytes and f"the global {WORD[r['op']]} on line {r['line']} move {r['width']} bytes per thread"
    return Property(f"{nbytes}-byte global {WORD.get(op, 'loads and stores')}", _each("global", op, problem),
                    "move four floats at once: reinterpret_cast<const float4*>(in + i)[0] "
                    "(the address must be a multiple of 16 bytes)")


# ---------------------------------------------------------------------------- exercises

@dataclass(frozen=True)
class Exercise:
    key: str
    title: str
    kernel: str                        # the __global__ function the student writes
    block: tuple                       # threads per block
    tile: tuple                        # (columns, rows) of `in` one block covers
    properties: tuple = ()
    shapes: tuple = tuple(verify.SHAPES)   # square, non-square, not a multiple of 32, 1xN, Nx1
    dtypes: tuple = (np.float32,)
    lesson: str = ""
    note: str = ""                     # anything else the student must know (shape limits...)

    def __repr__(self):
        t = np.dtype(self.dtypes[0]).type
        lines = [f"Exercise '{self.key}' (notebook {self.lesson}): {self.title}",
                 f"  write: __global__ void {self.kernel}({C_TYPE[np.dtype(t)]}* out, const "
                 f"{C_TYPE[np.dtype(t)]}* in, int rows, int cols)   // in: rows x cols, out: cols x rows",
                 f"  launch: blocks of {self.block[0]}x{self.block[1]} threads, one per {self.tile[0]}x{self.tile[1]} "
                 f"tile: grid = (ceil(cols / {self.tile[0]}), ceil(rows / {self.tile[1]}))",
                 "  shapes tried: " + ", ".join(f"{r}x{c}" for r, c in self.shapes)]
        lines += [f"  required: {p.name}" for p in self.properties]
        if self.note:
            lines.append(f"  note: {self.note}")
        return "\n".join(lines)


EXERCISES: dict[str, Exercise] = {}


def define(ex: Exercise) -> Exercise:
    EXERCISES[ex.key] = ex
    return ex


def get(key: str) -> Exercise:
    """The exercise named `key`; its repr tells the student what to write.  get("vectorized")"""
    try:
        return EXERCISES[key]
    except KeyError:
        raise KeyError(f"no exercise '{key}'; known: {', '.join(EXERCISES)}") from None


define(Exercise("column_read", "the naive transpose that reads columns and writes rows", "transpose_col",
                (32, 8), (8, 32), (coalesced("st"),), lesson="03",
                note="one block covers 8 columns x 32 rows of in: threadIdx.x (32 values) must walk down a "
                     "column of in, i.e. along a row of out; no shared memory needed"))
define(Exercise("shared_tile", "transpose through a 32x32 shared-memory tile", "transpose_tile",
                (32, 32), (32, 32), (uses_shared(), coalesced("ld"), coalesced("st"), no_races()), lesson="04"))
define(Exercise("padded_tile", "a shared tile without bank conflicts", "transpose_padded",
                (32, 32), (32, 32), (uses_shared(), coalesced("ld"), coalesced("st"), no_bank_conflicts(), no_races()),
                lesson="05"))
define(Exercise("tile_32x8", "32x8 threads move a 32x32 tile, four elements each", "transpose_32x8",
                (32, 8), (32, 32), (uses_shared(), coalesced("ld"), coalesced("st"), no_bank_conflicts(), no_races()),
                lesson="06"))
define(Exercise("vectorized", "float4 loads and stores through a conflict-free tile", "transpose_vec4",
                (8, 32), (32, 32), (vector_width(16), coalesced("ld"), coalesced("st"), no_bank_conflicts(), no_races()),
                shapes=((64, 64), (96, 160), (100, 132), (4, 1028), (1028, 4)), lesson="07",
                note="rows and cols are multiples of 4, so every row starts on a 16-byte boundary"))


# notebooks 08 and 09 (tested in tests/test_lessons_b.py): properties with the lesson's own hints
def _hinted(p: Property, hint: str) -> Property:
    return Property(p.name, p.test, hint)


define(Exercise("aos_struct", "structs of 6 floats to six arrays, coalesced and conflict-free (Giles)", "aos_to_soa",
                (32, 4), (6, 128),
                (_hinted(uses_shared(), "stage the warp's 32 structs in shared memory: store each element where it "
                                        "arrives (n = lane + 32m), read them back struct by struct"),
                 _hinted(coalesced("ld"), "let lane l read element n = l + 32m of the warp's 32 * I consecutive floats, "
                                          "not its own struct"),
                 coalesced("st"),
                 _hinted(no_bank_conflicts(), "write I = P * F (P a power of two, F odd): k = i + j*I first conflicts "
                                              "when j*I is a multiple of 32, at j*I = 32F; one word of padding after "
                                              "every 32F elements, k = n + n / (32F), moves the rest to other banks"),
                 _hinted(no_races(), "lanes read fields other lanes wrote: __syncwarp() between the writes and the "
                                     "reads")),
                shapes=((256, 6), (1000, 6), (100, 6), (1, 6), (37, 6)), lesson="08",
                note="in is rows structs x 6 floats (cols is always 6), out is 6 arrays of rows floats; each warp "
                     "of a 32x4 block moves 32 structs; the shared array is declared for you"))
define(Exercise("packed_b16", "16-bit elements moved as 32-bit words, turned with __byte_perm", "transpose_b16",
                (32, 8), (64, 32),
                (uses_shared(),
                 _hinted(vector_width(4), "move two 16-bit elements at once as one 32-bit word: "
                                          "*reinterpret_cast<const unsigned*>(in + i) (i even)"),
                 coalesced("ld"), coalesced("st"),
                 _hinted(no_bank_conflicts(), "the word tile is read by column: pad it by one word, unsigned w[32][32 + 1]"),
                 no_races()),
                shapes=((64, 64), (96, 160), (1000, 1030), (2, 4098), (4098, 2)), dtypes=(np.uint16,), lesson="09",
                note="rows and cols are even, so every row starts on a 4-byte word; __byte_perm(a, b, s) builds a word "
                     "from the 8 bytes of a (bytes 0-3) and b (bytes 4-7): hex digit k of s, counted from the right, "
                     "picks result byte k"))


# ---------------------------------------------------------------------------- checking

@dataclass
class Report:
    """The checker's answer: ``ok``, each problem with its hint, and what passed."""
    exercise: str
    problems: list = field(default_factory=list)     # [(what, hint)]
    passed: list = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    def __bool__(self):
        return self.ok

    def __repr__(self):
        if self.ok:
            return f"✓ {self.exercise}: all checks pass — " + "; ".join(self.passed) + ". Well done!"
        lines = [f"✗ {self.exercise}: {len(self.problems)} problem(s)"]
        for what, hint in self.problems:
            lines += [f"  • {what}", f"    hint: {hint}"]
        if self.passed:
            lines.append("  already right: " + "; ".join(self.passed))
        return "\n".join(lines)

    def _repr_html_(self):
        import html
        color = "#2a9d8f" if self.ok else "#e63946"
        return f"<pre style='color:{color};white-space:pre-wrap'>{html.escape(repr(self))}</pre>"


def check(exercise, kernel=None, *, gpu: bool | None = None, seed: int = 0) -> Report:
    """Run the student's kernel over the exercise's shapes and properties; return a Report.

        exercises.check("padded_tile", transpose_padded)
    """
    ex = get(exercise) if isinstance(exercise, str) else exercise
    report = Report(ex.key)
    fn = _find(ex, kernel, report)
    if fn is None:
        return report
    k = CellKernel(fn, ex.block, ex.tile)
    dtype = k.dtype if k.dtype is not None else np.dtype(ex.dtypes[0])
    first_run, wrong, crash = None, [], None
    for i, (rows, cols) in enumerate(ex.shapes):
        a = random_matrix(rows, cols, dtype, seed + i)
        try:
            out, run = k.simulate(a, check_races=(i == 0))
        except KernelError as exc:
            crash = (f"on a {rows}x{cols} matrix the simulator stopped the kernel: {exc.message}"
                     + (f" (line {exc.line})" if exc.line else ""),
                     exc.hint or "check the bounds tests: every index must stay inside in and out")
            break
        first_run = first_run or run
        m = verify.compare(out, np.ascontiguousarray(a.T), ex.tile[0])
        if not m.ok:
            wrong.append(((rows, cols), m))
    if wrong:
        (rows, cols), m = wrong[0]
        also = "" if len(wrong) == 1 else " (also wrong on " + ", ".join(f"{r}x{c}" for (r, c), _ in wrong[1:]) + ")"
        report.problems.append((f"on a {rows}x{cols} matrix: {m}{also}", _hint_for(m, rows, cols, ex)))
    if crash:
        report.problems.append(crash)
    if first_run is None:
        return report
    if not wrong and not crash:
        report.passed.append(f"correct on {len(ex.shapes)} shapes")
    for p in ex.properties:
        problem = p.test(first_run)
        if problem is False:
            continue
        if problem:
            report.problems.append((f"{p.name}: {problem}", p.hint))
        else:
            report.passed.append(p.name)
    if (gpu is None and nvrtc.gpu_available()) or gpu:
        _check_gpu(ex, k, dtype, report, seed)
    return report


def _find(ex, kernel, report):
    from .magic import Template
    from .module import Function
    if kernel is None:
        try:
            from IPython import get_ipython
            kernel = get_ipython().user_ns.get(ex.kernel)
        except (ImportError, AttributeError):
            kernel = None
        if kernel is None:
            report.problems.append((f"there is no kernel named {ex.kernel} yet",
                                    f"run the %%cuda cell that defines __global__ void {ex.kernel}(...) first"))
            return None
    if isinstance(kernel, Template):
        report.problems.append((f"{kernel.name} is a template", f"check one instance: {kernel.name}[np.float32, ...]"))
        return None
    if not isinstance(kernel, Function):
        report.problems.append((f"{kernel!r} is not a compiled kernel",
                                f"pass the name the %%cuda cell bound, e.g. check('{ex.key}', {ex.kernel})"))
        return None
    sig = kernel.signature or []
    shape_ok = len(sig) == 4 and sig[0].pointer and sig[1].pointer and not sig[2].pointer and not sig[3].pointer
    if not shape_ok:
        have = ", ".join(f"{p.ctype} {p.name}" for p in sig)
        report.problems.append((f"{kernel.name}({have}) does not take (T* out, const T* in, int rows, int cols)",
                                "keep the parameter list of the exercise: out first, then in, then rows and cols"))
        return None
    if sig[0].dtype is not None and sig[0].dtype not in [np.dtype(d) for d in ex.dtypes]:
        report.problems.append((f"{kernel.name} moves {sig[0].base}; this exercise is about "
                                + ", ".join(C_TYPE[np.dtype(d)] for d in ex.dtypes),
                                "use the element type of the exercise's stub"))
        return None
    return kernel


def _hint_for(m, rows, cols, ex) -> str:
    if m.unwritten == m.total:
        return "nothing was written: every element of out must be stored by some thread"
    if "last, partial block" in m.region or (m.unwritten and (rows % ex.tile[1] or cols % ex.tile[0])):
        return ("the matrix is not a multiple of the tile: threads past the edge must skip loading and storing, "
                "but the others must still do their part — test rows and cols separately on each side")
    if m.region == "every element is wrong" or m.wrong > m.total // 2:
        hint = "out is cols x rows: element (r, c) of in goes to out[c * rows + r]"
        if any(p.name == uses_shared().name for p in ex.properties):   # tile hints only for tiled exercises
            hint += ("; after the barrier each thread reads the tile transposed (tile[threadIdx.x][...]) and the "
                     "block lands at the mirrored place")
        return hint
    return "compare the indices used to read in and to write out for the elements listed above"


def _check_gpu(ex, k, dtype, report, seed):
    import cupy as cp
    for i, (rows, cols) in enumerate(ex.shapes):
        a = random_matrix(rows, cols, dtype, seed + i)
        out = cp.asarray(poisoned((cols, rows), dtype))
        try:
            k.run(cp.asarray(a), out)
            cp.cuda.runtime.deviceSynchronize()
        except Exception as exc:
            report.problems.append((f"on the GPU, a {rows}x{cols} matrix: {str(exc).splitlines()[0]}",
                                    "the simulator passed it: look for a race or an uninitialised read"))
            return
        m = verify.compare(out.get(), np.ascontiguousarray(a.T), ex.tile[0])
        if not m.ok:
            report.problems.append((f"on the GPU, a {rows}x{cols} matrix: {m}",
                                    "the simulator passed it: a missing __syncthreads() shows up only on a GPU sometimes"))
            return
    report.passed.append("correct on the GPU too")


# ---------------------------------------------------------------------------- solution markers

BEGIN, END, STUB = "BEGIN SOLUTION", "END SOLUTION", ">"
_MARK = re.compile(r"^(?P<indent>\s*)(?P<comment>//|#)\s*(?P<what>BEGIN SOLUTION|END SOLUTION)\b.*$")


def strip_solutions(text: str, todo: str = "TODO: your code here") -> str:
    """The student version of a cell: each BEGIN/END SOLUTION block becomes its stub lines
    (lines in the block starting with '//> ' or '#> ', marker removed) or, if it has none,
    one '// TODO: your code here' comment at the marker's indentation. Raises ValueError for
    unbalanced markers (so a build fails loudly instead of leaking a solution)."""
    out, block, start = [], None, None
    for n, line in enumerate(text.splitlines(keepends=True), 1):
        m = _MARK.match(line.rstrip("\n"))
        if m and m["what"] == BEGIN:
            if block is not None:
                raise ValueError(f"line {n}: BEGIN SOLUTION inside the solution block opened on line {start}")
            block, start, head = [], n, m
        elif m and m["what"] == END:
            if block is None:
                raise ValueError(f"line {n}: END SOLUTION without BEGIN SOLUTION")
            stub_re = re.compile(r"^(\s*)" + re.escape(head["comment"]) + re.escape(STUB) + r" ?(.*)$")
            stubs = [stub_re.match(b.rstrip("\n")) for b in block]
            stubs = [s[1] + s[2] + "\n" for s in stubs if s]
            out += stubs or [f"{head['indent']}{head['comment']} {todo}\n"]
            block = None
        elif block is not None:
            block.append(line)
        else:
            out.append(line)
    if block is not None:
        raise ValueError(f"line {start}: BEGIN SOLUTION is never closed by END SOLUTION")
    return "".join(out)


def has_solution(text: str) -> bool:
    """True when the text holds a solution block (cells a build must strip).

        [c for c in nb.cells if has_solution(c.source)]
    """
    return any(_MARK.match(line) and BEGIN in line for line in text.splitlines())

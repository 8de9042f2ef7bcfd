"""Debug this kernel: a broken kernel from the mistakes catalog, a checker that says when it is
fixed, and a ladder of hints.

    cl.debug.task("debug_04")                # what the kernel should do, and what to run
    # the notebook's %%cuda cell holds the broken kernel (cl.debug.source(key)): the student edits it
    cl.debug.check("debug_04", fix_me)       # not fixed yet (with the diagnosis) / fixed
    cl.debug.hint("debug_04")                # one rung per call: where to look, why, the fix

Each :class:`DebugTask` takes its kernel from ``course_lib.mistakes`` (the catalog's source, its
kernel renamed ``fix_me``) and judges a fix with
``exercises.check`` on an :class:`~course_lib.exercises.Exercise` of the same launch: every
shape, every element, the lesson's properties, races and barriers — so a "fix" that hides the
symptom on one shape, or rewrites the kernel into something the lesson is not about, is not
fixed. Tasks are named after their notebook (``debug_04``), not after the bug: the name must not
give the answer away. Hints go from a nudge to the catalog's fix; the explanation comes with success.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from . import exercises, mistakes
from .exercises import Exercise, Report
from .properties import coalesced, hinted, no_races, no_uninitialized_reads, uses_shared

ODD = ((64, 64), (96, 40), (100, 70), (1000, 1030), (1, 300), (300, 1))


@dataclass(frozen=True)
class DebugTask:
    key: str                 # debug_NN: NN is the notebook
    mistake_key: str         # the mistakes.CATALOG entry it comes from
    kernel: str              # its name in the notebook's %%cuda cell
    lesson: str
    goal: str                # what the kernel is meant to do
    exercise: Exercise       # how a fix is judged
    hints: tuple             # nudge -> concept -> fix

    @property
    def mistake(self):
        return mistakes.get(self.mistake_key)

    def source(self) -> str:
        """The broken kernel as the notebook's %%cuda cell body holds it."""
        return re.sub(r"\bvoid\s+\w+\s*\(", f"void {self.kernel}(", self.mistake.source, count=1).rstrip("\n")

    def __repr__(self):
        ex = self.exercise
        return "\n".join([
            f"Debug this kernel ({self.key}, notebook {self.lesson})",
            f"  {self.kernel} should {self.goal}.",
            f"  It is launched with blocks of {ex.block[0]}x{ex.block[1]} threads"
            + ("" if ex.grid else f", one per {ex.tile[0]}x{ex.tile[1]} tile") + ", and it is broken.",
            f"  1. run cl.debug.check('{self.key}', {self.kernel}): what does it say, on which shapes?",
            f"  2. fix the %%cuda cell {self.kernel} is in, run it, then the check again;",
            f"  stuck? cl.debug.hint('{self.key}') gives one hint per call ({len(self.hints)} in all)."])


TASKS: dict[str, DebugTask] = {}
_next_hint: dict[str, int] = {}


def _add(task: DebugTask):
    TASKS[task.key] = task


def task(key: str) -> DebugTask:
    if key not in TASKS:
        raise KeyError(f"no debug task '{key}'; known: {', '.join(TASKS)}")
    return TASKS[key]


def source(key: str) -> str:
    return task(key).source()


class DebugReport(Report):
    """A Report that ends with what went wrong (when fixed) or where the hints are (when not)."""

    def __init__(self, report: Report, t: DebugTask):
        super().__init__(t.key, report.problems, report.passed)
        self.task = t

    def __repr__(self):
        if self.ok:
            return (f"✓ {self.task.key}: fixed — " + "; ".join(self.passed) + ".\n"
                    f"  What went wrong: {self.task.mistake.explanation}")
        return (super().__repr__().replace(f"✗ {self.task.key}:", f"✗ {self.task.key}: not fixed yet,", 1)
                + f"\n  stuck? cl.debug.hint('{self.task.key}') — one hint per call, {len(self.task.hints)} in all")


def check(key: str, kernel=None, *, gpu: bool | None = None) -> DebugReport:
    """Is the student's version of the kernel fixed? (every shape, every element, the properties)"""
    t = task(key)
    return DebugReport(exercises.check(t.exercise, kernel, gpu=gpu), t)


def hint(key: str, n: int | None = None) -> str:
    """Hint number n (1-based), or the next one: each call climbs one rung of the ladder."""
    t = task(key)
    if n is None:
        n = _next_hint.get(key, 0) + 1
        _next_hint[key] = min(n, len(t.hints))
    n = max(1, min(n, len(t.hints)))
    more = (f" (cl.debug.hint('{key}') again for the next)" if n < len(t.hints) else " (the last one)")
    return _Hint(f"hint {n} of {len(t.hints)} for {key}{more}:\n  {t.hints[n - 1]}")


class _Hint(str):
    def __repr__(self):
        return str(self)


# ---------------------------------------------------------------------------- the tasks

def _ex(key, block, tile, props, **kw):
    return Exercise(key, "fix the broken kernel", "fix_me", block, tile, props, **kw)


_add(DebugTask("debug_03", "swapped_rows_cols", "fix_me", "03", "transpose in (rows x cols) into out (cols x rows), "
               "one element per thread, reading rows of in",
               _ex("debug_03", (32, 8), (32, 8), (coalesced("ld"),), shapes=ODD),
               ("Run the check: on which shapes is the result right, on which wrong? What is different about "
                "the shapes where it is right?",
                "It is right only on square matrices. out is cols x rows, so one row of out is `rows` elements "
                "long: look at the row length used in the store's index.",
                mistakes.get("swapped_rows_cols").fix)))
_add(DebugTask("debug_04", "missing_syncthreads", "fix_me", "04", "transpose through a padded 32x32 shared tile",
               _ex("debug_04", (32, 32), (32, 32),
                   (uses_shared(), coalesced("ld"), coalesced("st"), no_races(), no_uninitialized_reads())),
               ("The output may even be right in the simulator: read the race the check reports. Which line "
                "writes the element, which line reads it, and are they the same thread?",
                "Thread (x, y) reads tile[x][y], which thread (y, x) stored — usually in another warp, and warps "
                "run in any order. Something must make every reader wait until every writer is done.",
                mistakes.get("missing_syncthreads").fix)))
_add(DebugTask("debug_05", "bounds_on_remapped_index", "fix_me", "05", "transpose in (rows x cols) into out (cols x rows) "
               "the CUDA_Freshman way: blocks of 32x16 threads, one element each, the tile read column-first",
               _ex("debug_05", (32, 16), (32, 16),
                   (uses_shared(), coalesced("ld"), coalesced("st"), no_races(), no_uninitialized_reads()), shapes=ODD),
               ("Run the check: on which shapes is it right, and where does it stop? Which element of in does the "
                "thread that stopped load, and which element's coordinates does the test above that load look at?",
                "After step 3, ix and iy name the thread's element of out, not of in: the load is guarded by "
                "another element's test, and its own is never tested. Each test also needs the limits of the matrix "
                "its element is in: out is nx x ny.",
                mistakes.get("bounds_on_remapped_index").fix)))
_add(DebugTask("debug_06", "uninitialized_shared", "fix_me", "06", "transpose a 32x32 tile with 32x8 threads, four "
               "elements per thread",
               _ex("debug_06", (32, 8), (32, 32),
                   (uses_shared(), coalesced("ld"), coalesced("st"), no_races(), no_uninitialized_reads())),
               ("The check says threads read tile elements that no thread wrote. With 32 x 8 threads, how many "
                "rows of the tile does the first phase fill? How many does the second phase read?",
                "One store per thread fills 8 of the 32 rows; the read-out loop reads all 32. The filling phase "
                "needs the same loop over j as the read-out, with its own bounds test.",
                mistakes.get("uninitialized_shared").fix)))
_add(DebugTask("debug_07", "misaligned_float4", "fix_me", "07", "copy in to out (both rows x cols), one block per row, "
               "with 16-byte loads and stores where the row allows them",
               _ex("debug_07", (32, 1), (1, 1), (coalesced("ld"), coalesced("st")),
                   shapes=((64, 64), (10, 30), (96, 160), (100, 70), (1, 4097), (300, 1)), copy=True,
                   grid=lambda rows, cols: (rows,)),
               ("Where does the check stop the kernel: which row, and at which byte does that row start? "
                "And on the shapes where it runs, which elements are never written?",
                "A float4 access needs an address that is a multiple of 16 bytes; row r starts at "
                "r * cols * 4 bytes. And cols / 4 vectors leave the last cols % 4 elements of every row behind.",
                mistakes.get("misaligned_float4").fix)))
_add(DebugTask("debug_10", "missing_bounds_check", "fix_me", "10", "transpose in (rows x cols) into out (cols x rows), "
               "one element per thread",
               _ex("debug_10", (32, 8), (32, 8),
                   (hinted(coalesced("ld"), "keep threadIdx.x on the columns of in: the fix is a test, not a new "
                                            "mapping"),), shapes=ODD),
               ("On which shapes does the check stop the kernel, and on which does it pass? What do the "
                "passing shapes have in common?",
                "The grid is rounded up to whole blocks, so the last blocks have threads past the edge of the "
                "matrix; every one of them still loads and stores.",
                mistakes.get("missing_bounds_check").fix)))

"""Notebook 12's judgement before its pipeline exercise: when does tile s + 1's copy overlap tile s's work?

    from course_lib.lessons import overlap
    overlap.predict(transpose_pipeline, now=None, pipelined=None)   # stored: asks, reveals nothing
    overlap.predict(transpose_pipeline, now=0, pipelined=1)         # the student's answers: graded, explained

The student's kernel (a %%cuda Function with the async_pipeline exercise's signature) is simulated on the
exercise's first shape, and ``teach.pipeline.in_flight_at_reads`` reads from its PTX order how many groups
of cp.async copies a thread may still have on their way while it reads a tile from shared memory: 0 for
one stage at a time (the loop the exercise gives), 1 for a two-buffer pipeline. The two questions: that
number for the kernel as it is now, and what it must be for the next tile's copies to travel while this
one is written. Nothing is revealed until both are answered, as with ``cl.predict``.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import ArgumentError
from ..teach import exercises, pipeline

QUESTION = ("while a thread reads tile s from shared memory, how many groups of its copies (tiles) are still on "
            "their way?")
WHY_NOW = {0: "every read of the tile comes after a wait that leaves no group in flight (__pipeline_wait_prior(0), "
              "or a wait that leaves only an empty group): tile s + 1's copies start after tile s is written",
           1: "one group with copies is still on its way while the tile is read: the next tile travels during this "
              "one's work"}
WHY_PIPELINED = ("one: tile s + 1's group must already be committed when the thread waits, and the wait must leave "
                 "exactly the newest group in flight; a wait leaves in flight the newest N groups it is told to, so "
                 "with two buffers N is 1, and the last tile, which has no next one, must still commit a group (an "
                 "empty one) for that wait to mean the same")


@dataclass
class Answer:
    words: str
    guess: int | None
    actual: int
    why: str


@dataclass
class Overlap:
    answers: list

    def __repr__(self):
        lines = [f"Predict, then see: {QUESTION}"]
        width = max(len(a.words) for a in self.answers)
        if any(a.guess is None for a in self.answers):
            lines += [f"  {a.words:{width}s}  your guess: {'?' if a.guess is None else a.guess}" for a in self.answers]
            lines.append("  Replace each None with your guess (a number) and run the cell again: the answers appear "
                         "only then.")
            return "\n".join(lines)
        for a in self.answers:
            mark = "✓" if a.guess == a.actual else "✗"
            lines.append(f"  {mark} {a.words:{width}s}  you: {a.guess}   the kernel's order of copies and waits: "
                         f"{a.actual}")
            lines.append(f"      why: {a.why}")
        right = sum(a.guess == a.actual for a in self.answers)
        lines.append(f"  {right} of {len(self.answers)} right")
        return "\n".join(lines)


def in_flight(kernel, shape=None, ex=None) -> int:
    """Groups of copies in flight at the kernel's shared reads, simulated on the launch of `ex` (by default
    the async_pipeline exercise as the notebook states it) for its element type."""
    ex = ex or exercises.get("async_pipeline")
    rows, cols = shape or ex.shapes[0][-2:]
    dtype = ex.dtypes[0]
    a = (np.random.default_rng(0).random((rows, cols)) * 100 + 1).astype(dtype)
    out = np.zeros((cols, rows), dtype)
    grid, block = ex.launch(rows, cols)
    run = kernel.simulate(grid, block, (out, a, np.int32(rows), np.int32(cols)), check_races=False, echo=False,
                          progress=False)
    return pipeline.in_flight_at_reads(run)


def predict(kernel, *, now: int | None = None, pipelined: int | None = None) -> Overlap:
    """The two questions of the module's docstring for `kernel`; None = not answered yet."""
    for name, guess in (("now", now), ("pipelined", pipelined)):
        if guess is not None and (isinstance(guess, bool) or not isinstance(guess, int)):
            raise ArgumentError(f"{name}={guess!r}: a guess is a whole number of groups",
                                hint=f"e.g. {name}=0, or {name}=None while you think")
    if not hasattr(kernel, "simulate"):
        raise ArgumentError(f"predict needs the %%cuda kernel (transpose_pipeline), not {type(kernel).__name__}",
                            hint="overlap.predict(transpose_pipeline, now=None, pipelined=None)")
    actual = in_flight(kernel) if now is not None and pipelined is not None else 0
    return Overlap([Answer("your kernel as it is now", now, actual, WHY_NOW[min(actual, 1)]),
                    Answer("a pipeline: tile s + 1's copies overlap tile s's work", pipelined, 1, WHY_PIPELINED)])
